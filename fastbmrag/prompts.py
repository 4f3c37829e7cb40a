"""Every prompt and every structured-output schema, in one place.

These are the product's most tuned text. Two rules shape them:

* Prompt tokens are cheap, completion tokens are the bill (a local 14B model
  reads thousands of prompt tokens per second but writes ~40 per second), so
  the model points and the program quotes: every item of an answer is a JSON
  array (a schema tuple, ``prefixItems``: no keys to write, counted in real
  tokens 44 % fewer than objects with one-letter keys), the model cites numbered
  sentences instead of copying them, and the only prose it writes is stage 2's
  refined description.
* The vocabularies of entity and relationship types are closed (JSON-schema
  enums), so Ollama's constrained decoding cannot invent new ones.

Relationship types are anchored in BioRED's association types (Association,
Positive/Negative_Correlation, Bind, Drug_Interaction, Cotreatment) and the
fastbmRAG paper's types (causal, risk factor, protective factor, biomarker,
target, modifier, regulation, expression), with up- and down-regulation split
out because the questions users ask need the direction.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from fastbmrag.fields import ENTITY_TYPES, RELATIONSHIP_TYPES
from fastbmrag.papers.design import (
    CODE_PATTERN,
    DESIGN_CODES,
    DESIGN_WORDS,
    ORGANISM_CODES,
    from_code,
)
from fastbmrag.text.citations import unreferenced

# --- closed vocabularies ------------------------------------------------------------------------

# Pairs of relationship types that say opposite things about the same pair of entities (a
# contradiction between papers).
OPPOSITE_RELATIONS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("upregulated_in", "downregulated_in"),
        ("upregulates", "downregulates"),
        ("causes", "protects_against"),
        ("risk_factor_for", "protects_against"),
        ("positive_correlation", "negative_correlation"),
    )
)

# The same names as types for the schemas (tests/test_declarations.py ties them to the tables).
EntityType = Literal["gene", "disease", "chemical", "variant", "pathway", "cell", "other"]
RelationshipType = Literal[
    "causes",
    "risk_factor_for",
    "protects_against",
    "treats",
    "biomarker_of",
    "targets",
    "upregulates",
    "downregulates",
    "regulates",
    "upregulated_in",
    "downregulated_in",
    "expressed_in",
    "binds",
    "interacts_with",
    "modifies",
    "part_of",
    "positive_correlation",
    "negative_correlation",
    "associated_with",
]


def _bullets(items: dict[str, str]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in items.items())


# --- stage 1: draft relations from title + abstract ----------------------------------------------
#
# The model points, the program quotes: the draft names each entity once and cites, for every
# relation, the numbers of the sentences that state it. It writes no description and no quote:
# an abstract-only relation's description and evidence are its cited sentences, cut from the
# paper by the program (fastbmrag.text.sentences), so they are verbatim by construction and cost no
# decode tokens. A relation refers to its entities by their number, which the model writes
# next to each name so that it never has to count list positions. Each item is a JSON array
# (``[1, "IL-6", "gene"]``, ``[1, "upregulated_in", 2, [3, 4]]``): a tuple schema keeps the
# types' constrained decoding without a key to write.

MAX_NAME_CHARS = 120


class DraftEntity(NamedTuple):
    """``[number, name as written, type]``"""

    i: Annotated[int, Field(ge=1)]
    n: Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
    t: EntityType


class DraftRelation(NamedTuple):
    """``[source number, relationship type, target number, [sentence numbers]]``; a sentence that
    restates what was known before is cited as its negative number (``[-2]``): what a relation's
    role costs in decode tokens is nothing (``[-2`` is as many tokens as ``[2``)."""

    s: Annotated[int, Field(ge=1)]
    r: RelationshipType
    o: Annotated[int, Field(ge=1)]
    c: Annotated[list[int], Field(min_length=1, max_length=6)]


def _salvage(items: Any, item_type: Any) -> tuple[list[Any], int]:
    """The items of a list that validate as ``item_type`` (others become None), and how many
    failed."""
    adapter = _adapter(item_type)
    out: list[Any] = []
    bad = 0
    for item in items:
        try:
            out.append(adapter.validate_python(item))
        except ValidationError:
            out.append(None)
            bad += 1
    return out, bad


@functools.cache
def _adapter(item_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(item_type)


class Draft(BaseModel):
    """Stage-1 output: the entities of a paper's title + abstract and the relations it states.

    Validation salvages: an entity or relation that does not validate (an unknown type code,
    an over-long name, a relation naming an entity number that is not listed) is dropped and
    counted in ``dropped``; the others are kept. Only an answer that is not this shape at all
    fails (and gets its repair attempt).
    """

    # the study: its design's code, then its organisms' (papers.design: "Rh", "Amc"); "" for
    # an answer without a valid one
    k: str = Field(default="", json_schema_extra={"pattern": CODE_PATTERN})
    e: list[DraftEntity] = Field(default_factory=list, max_length=60)
    r: list[DraftRelation] = Field(default_factory=list, max_length=40)
    _dropped: int = PrivateAttr(default=0)

    @property
    def dropped(self) -> int:
        return self._dropped

    @model_validator(mode="wrap")
    @classmethod
    def _salvage_items(cls, data: Any, handler: ModelWrapValidatorHandler[Draft]) -> Draft:
        if not (
            isinstance(data, dict)
            and isinstance(data.get("e", []), list)
            and isinstance(data.get("r", []), list)
        ):
            return handler(data)
        entities, _ = _salvage(data.get("e", []), DraftEntity)
        relations, dropped = _salvage(data.get("r", []), DraftRelation)
        by_number = {e.i: e for e in entities if e is not None}
        kept: list[DraftRelation] = []
        for rel in relations:
            if rel is None:
                continue
            if rel.s in by_number and rel.o in by_number and len(kept) < 40:
                kept.append(rel)
            else:
                dropped += 1
        code = data.get("k")
        study = code if isinstance(code, str) and from_code(code)[0] else ""
        draft = handler({"k": study, "e": list(by_number.values())[:60], "r": kept})
        draft._dropped = dropped
        return draft


EXTRACT_SYSTEM = (
    "You extract a knowledge graph from a biomedical abstract whose sentences are numbered "
    "[1], [2], ... ([1] is the title). Return JSON "
    '{"k": study, "e": [entities], "r": [relations]}.\n'
    "k: study design ("
    + ", ".join(f"{c} {DESIGN_WORDS[d]}" for c, d in DESIGN_CODES.items())
    + ") then organisms ("
    + ", ".join(f"{c} {o}" for c, o in ORGANISM_CODES.items())
    + '): "Rh".\n'
    "e: every entity that a relation uses, once, as [its number 1, 2, 3 ..., its name as "
    'written in the text (full name or symbol), its type], e.g. [1, "IL-6", "gene"].\n'
    "r: every relation the text states, as [source entity number, relationship type, target "
    "entity number, [the numbers of the sentences that state it]], e.g. "
    '[1, "upregulated_in", 2, [3, 4]]. Direction matters: the source acts on, or is in, the '
    "target. A sentence that restates what was known before, not this paper's own result, is "
    "cited as its negative number: [-2].\n"
    "Only relations the text states; at most 20, the most important first. "
    'No relation -> {"e": [], "r": []}.\n'
    f"Entity types:\n{_bullets(ENTITY_TYPES)}\n"
    f"Relationship types:\n{_bullets(RELATIONSHIP_TYPES)}"
)


def numbered(sentences: list[str], first: int = 1) -> str:
    """Sentences one per line, each behind its number: ``[3] text``."""
    return "\n".join(f"[{n}] {unreferenced(s)}" for n, s in enumerate(sentences, first))


def extract_messages(sentences: list[str]) -> list[dict[str, str]]:
    """``sentences``: the title, then the abstract's sentences."""
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": numbered(sentences)},
    ]


# --- stage 2: refine every relation of a paper from its main-text passages ------------------------
#
# The model writes the one text that is the product, the refined description, and cites the
# main-text sentences behind it inline as [n]; the program cuts those sentences from the paper as
# the evidence and strips the markers from the stored description.


class RefinedRelation(NamedTuple):
    """``[relation number, refined description citing sentences as [n]]``"""

    i: Annotated[int, Field(ge=1)]
    d: Annotated[str, Field(min_length=1, max_length=1200)]


class Refinement(BaseModel):
    """Stage-2 output: a refined description for each numbered relation (invalid items dropped)."""

    r: list[RefinedRelation] = Field(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _salvage_items(
        cls, data: Any, handler: ModelWrapValidatorHandler[Refinement]
    ) -> Refinement:
        if isinstance(data, dict) and isinstance(data.get("r", []), list):
            items, _ = _salvage(data.get("r", []), RefinedRelation)
            return handler({"r": [x for x in items if x is not None]})
        return handler(data)


REFINE_SYSTEM = (
    "You refine knowledge-graph relations extracted from a paper's abstract, using numbered "
    "sentences from the paper's main text. For each numbered relation, write d: 1-3 sentences "
    "stating what the main-text sentences say about that relation (mechanism, direction, model "
    "or population, effect size when given), each statement followed by the numbers of the "
    "sentences that support it, e.g. [12] or [12][14]. Use only the listed sentences. Leave out "
    "a relation they do not bear on. Return JSON "
    '{"r": [[<relation number>, "<its refined description>"], ...]}.'
)


def refine_messages(
    title: str,
    passages: list[tuple[str, list[tuple[int, str]]]],
    relations: list[tuple[int, str, list[str]]],
) -> list[dict[str, str]]:
    """``passages``: (heading such as "P4 (Results)", [(sentence number, text)]);
    ``relations``: (number, statement with its abstract sentences, passage headings)."""
    lines = [f"Paper: {title}" if title else "Paper:", "", "Main-text sentences:"]
    for heading, sentences in passages:
        lines.append(heading)
        lines += [f"[{n}] {unreferenced(text)}" for n, text in sentences]
    lines += ["", "Relations:"]
    for n, statement, used in relations:
        lines.append(f"{n}. {unreferenced(statement)} (in {', '.join(used)})")
    return [
        {"role": "system", "content": REFINE_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]


def relation_statement(src: str, rel: str, tgt: str) -> str:
    """How a relation is written in prompts and in the text that gets embedded."""
    return f"{src} {rel.replace('_', ' ')} {tgt}"


# --- query ------------------------------------------------------------------------------------
#
# A question costs at most three chat calls when it retrieves <= ANSWER_BATCH edges: one to
# parse what the dictionaries cannot give (wanted relationship types, answer entity type), one
# to answer. Beyond ANSWER_BATCH edges the answer is map-reduced: each group of numbered
# evidence items is summarised (PartialAnswer), then the summaries are merged (Answer). The
# evidence numbers [n] are global, so citations survive the merge unchanged.

AnswerType = Literal["gene", "disease", "chemical", "variant", "pathway", "cell", "other", "any"]


class QuestionEntity(NamedTuple):
    """``[name as the question writes it, type]``"""

    n: Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
    t: EntityType


class QuestionParse(BaseModel):
    """What a question names and asks for: its entities as written, with their types (the
    normaliser grounds them), the relationship types and the answer's entity type."""

    ents: list[QuestionEntity] = Field(default_factory=list, max_length=8)
    rels: list[RelationshipType] = Field(default_factory=list, max_length=8)
    ans: AnswerType = "any"


PARSE_SYSTEM = (
    "You analyse a biomedical question asked of a knowledge graph of typed relations "
    "(source -relationship-> target). Return JSON "
    '{"ents": [[name, type]], "rels": [relationship types], "ans": "<answer entity type>"}.\n'
    "ents: each biomedical entity the question names, exactly as written, with its type "
    '(e.g. [["IL-6", "gene"], ["endometriosis", "disease"]]; a procedure, method or exposure '
    'is "other"); [] when it names none.\n'
    "rels: the relationship types whose edges answer the question (at most 6; [] when any "
    "relation may answer it, e.g. 'what is the role of X'). ans: the entity type the question "
    'asks for ("which genes ..." -> "gene"), or "any".\n'
    f"Entity types:\n{_bullets(ENTITY_TYPES)}\n"
    f"Relationship types:\n{_bullets(RELATIONSHIP_TYPES)}"
)


def parse_messages(question: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": PARSE_SYSTEM},
        {"role": "user", "content": f"Question: {question}"},
    ]


class Answer(BaseModel):
    """The final answer; cites evidence items as [n]."""

    answer: str = Field(min_length=1, max_length=6000)


class PartialAnswer(BaseModel):
    """What one group of evidence items says about the question; cites them as [n]."""

    answer: str = Field(min_length=1, max_length=3000)


ANSWER_SYSTEM = (
    "You answer a biomedical question from numbered evidence items, each a relation extracted "
    "from one paper. Use only the evidence. Cite every statement with the numbers of the "
    "items that support it, in square brackets: [3] or [2][7]. Group related findings, state "
    "directions (up/down, increases/decreases) and disagreements between papers. Each item "
    "names its paper's study design: say which findings rest on stronger designs "
    "(meta-analyses and randomised trials before observational, case, animal and cell "
    "studies). An item marked BACKGROUND is what its paper cites as known before: never "
    "present it as that paper's result. If the evidence does not answer the question, say so. "
    'Return JSON {"answer": "..."}.'
)

PARTIAL_SYSTEM = (
    "You summarise what one group of numbered evidence items (relations extracted from papers) "
    "says about a biomedical question. Use only the evidence; keep every relevant finding; "
    "cite each statement with its item numbers in square brackets, e.g. [12][15]; say which "
    "items marked BACKGROUND a paper only cites as known. Items that do not bear on the "
    'question are left out. Return JSON {"answer": "..."}.'
)

MERGE_SYSTEM = (
    "You answer a biomedical question by merging partial answers, each written from a "
    "different group of evidence items and citing them as [n]. Keep the citations exactly as "
    "given (never renumber, never invent one), merge findings that agree, state disagreements. "
    'Return JSON {"answer": "..."}.'
)


def _evidence_block(question: str, evidence: list[str], agreement: list[str]) -> str:
    user = f"Question: {question}\n\nEvidence:\n" + "\n".join(evidence)
    if agreement:
        user += "\n\nAgreement between papers (state it; cite both sides of a disagreement):\n"
        user += "\n".join(agreement)
    return user


def answer_messages(
    question: str, evidence: list[str], agreement: list[str] | None = None
) -> list[dict[str, str]]:
    """``evidence``: lines already numbered ``[n] ...``; ``agreement``: per entity pair, the
    relationship types the items state and whether papers disagree."""
    user = _evidence_block(question, evidence, agreement or [])
    return [{"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": user}]


def partial_messages(
    question: str, evidence: list[str], agreement: list[str] | None = None
) -> list[dict[str, str]]:
    user = _evidence_block(question, evidence, agreement or [])
    return [{"role": "system", "content": PARTIAL_SYSTEM}, {"role": "user", "content": user}]


def merge_messages(question: str, partials: list[str]) -> list[dict[str, str]]:
    parts = "\n\n".join(f"Partial answer {i}:\n{p}" for i, p in enumerate(partials, 1))
    user = f"Question: {question}\n\n{parts}"
    return [{"role": "system", "content": MERGE_SYSTEM}, {"role": "user", "content": user}]
