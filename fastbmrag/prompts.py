"""Every prompt and every structured-output schema, in one place.

These are the product's most tuned text. Two rules shape them:

* Prompt tokens are cheap, completion tokens are the bill (a local 14B model
  reads thousands of prompt tokens per second but writes ~40 per second), so
  the output schemas use short keys, ask for a *brief* draft description (stage
  2 rewrites it), and never ask the model to echo input beyond one short
  evidence quote.
* The vocabularies of entity and relationship types are closed (JSON-schema
  enums), so Ollama's constrained decoding cannot invent new ones.

Relationship types are anchored in BioRED's association types (Association,
Positive/Negative_Correlation, Bind, Drug_Interaction, Cotreatment) and the
fastbmRAG paper's types (causal, risk factor, protective factor, biomarker,
target, modifier, regulation, expression), with up- and down-regulation split
out because the questions users ask need the direction.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# --- closed vocabularies ------------------------------------------------------------------------

ENTITY_TYPES: dict[str, str] = {
    "gene": "gene or gene product (protein, mRNA, miRNA)",
    "disease": "disease, disorder, phenotype or symptom",
    "chemical": "chemical, drug, hormone or metabolite",
    "variant": "sequence variant or mutation (e.g. rs123, BRAF V600E)",
    "pathway": "pathway or biological process (e.g. NF-kB signalling, apoptosis)",
    "cell": "cell type, tissue or organ",
    "other": "anything else (organism, procedure, exposure...)",
}

RELATIONSHIP_TYPES: dict[str, str] = {
    "causes": "source causes or drives target",
    "risk_factor_for": "source raises the risk of target",
    "protects_against": "source lowers the risk or severity of target",
    "treats": "source (drug, therapy) treats or improves target",
    "biomarker_of": "source marks, diagnoses or predicts target",
    "targets": "source (drug, chemical) acts on target (gene, pathway)",
    "upregulates": "source increases the expression or activity of target",
    "downregulates": "source decreases the expression or activity of target",
    "regulates": "source regulates target, direction not stated",
    "upregulated_in": "source (gene, protein) is higher in target (disease, tissue)",
    "downregulated_in": "source (gene, protein) is lower in target (disease, tissue)",
    "expressed_in": "source is expressed or present in target (cell, tissue)",
    "binds": "source physically binds target",
    "interacts_with": "source interacts with target (drug-drug, protein-protein)",
    "modifies": "source (variant, gene) modifies the effect or course of target",
    "part_of": "source belongs to target (gene in pathway, cell in tissue)",
    "positive_correlation": "source and target rise and fall together",
    "negative_correlation": "source rises when target falls",
    "associated_with": "any other stated association",
}

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

# --- stage 1: draft relations from title + abstract ----------------------------------------------


class DraftRelation(BaseModel):
    src: str = Field(min_length=1, max_length=200)
    src_type: EntityType
    rel: RelationshipType
    tgt: str = Field(min_length=1, max_length=200)
    tgt_type: EntityType
    desc: str = Field(max_length=600)
    ev: str = Field(default="", max_length=400)


class Draft(BaseModel):
    """Stage-1 output: the relations a paper's abstract states."""

    r: list[DraftRelation] = Field(default_factory=list, max_length=40)


def _bullets(items: dict[str, str]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in items.items())


EXTRACT_SYSTEM = (
    "You extract a knowledge graph from a biomedical abstract. Return JSON "
    '{"r": [relations]}; each relation has src, src_type, rel, tgt, tgt_type, desc, ev.\n'
    "Rules: only relations the text states; entity names as written in the text (full name "
    "or symbol, no abbreviation expansion needed); direction matters (src acts on / is in tgt); "
    "desc = one short sentence; ev = a quote of at most 15 words copied verbatim from the text. "
    'At most 20 relations, the most important first. No relation -> {"r": []}.\n'
    f"Entity types:\n{_bullets(ENTITY_TYPES)}\n"
    f"Relationship types:\n{_bullets(RELATIONSHIP_TYPES)}"
)


def extract_messages(title: str, abstract: str) -> list[dict[str, str]]:
    text = f"Title: {title}\n\n{abstract}" if title else abstract
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": text},
    ]


# --- stage 2: refine every relation of a paper from its main-text passages ------------------------


class RefinedRelation(BaseModel):
    i: int = Field(ge=1)
    desc: str = Field(min_length=1, max_length=1200)
    ev: str = Field(default="", max_length=400)


class Refinement(BaseModel):
    """Stage-2 output: a new description for each numbered relation."""

    r: list[RefinedRelation] = Field(default_factory=list)


REFINE_SYSTEM = (
    "You refine knowledge-graph relations extracted from a paper's abstract, using passages "
    "from the paper's main text. For each numbered relation, write desc: 1-3 sentences stating "
    "what the passages say about that relation (mechanism, direction, model or population, "
    "effect size when given); use only the listed passages and the draft; ev = a quote of at "
    "most 20 words copied verbatim from one of its passages. Return JSON "
    '{"r": [{"i": <relation number>, "desc": "...", "ev": "..."}]} with one item per relation.'
)


def refine_messages(
    title: str,
    passages: list[tuple[int, str]],
    relations: list[tuple[int, str, list[int]]],
) -> list[dict[str, str]]:
    """``passages``: (passage number, text); ``relations``: (number, "src rel tgt: draft", passage numbers)."""
    lines = [f"Paper: {title}" if title else "Paper:", "", "Passages:"]
    lines += [f"[P{n}] {text}" for n, text in passages]
    lines += ["", "Relations:"]
    for n, statement, used in relations:
        refs = ", ".join(f"P{p}" for p in used)
        lines.append(f"{n}. {statement} (passages {refs})")
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


class QuestionParse(BaseModel):
    """What a question asks for, beyond the entities the dictionaries link."""

    rels: list[RelationshipType] = Field(default_factory=list, max_length=8)
    ans: AnswerType = "any"


PARSE_SYSTEM = (
    "You analyse a biomedical question asked of a knowledge graph of typed relations "
    "(source -relationship-> target). Return JSON "
    '{"rels": [relationship types], "ans": "<answer entity type>"}.\n'
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
    "directions (up/down, increases/decreases) and disagreements between papers. If the "
    "evidence does not answer the question, say so. Return JSON "
    '{"answer": "..."}.'
)

PARTIAL_SYSTEM = (
    "You summarise what one group of numbered evidence items (relations extracted from papers) "
    "says about a biomedical question. Use only the evidence; keep every relevant finding; "
    "cite each statement with its item numbers in square brackets, e.g. [12][15]. Items that "
    'do not bear on the question are left out. Return JSON {"answer": "..."}.'
)

MERGE_SYSTEM = (
    "You answer a biomedical question by merging partial answers, each written from a "
    "different group of evidence items and citing them as [n]. Keep the citations exactly as "
    "given (never renumber, never invent one), merge findings that agree, state disagreements. "
    'Return JSON {"answer": "..."}.'
)


def answer_messages(question: str, evidence: list[str]) -> list[dict[str, str]]:
    """``evidence``: lines already numbered ``[n] ...``."""
    user = f"Question: {question}\n\nEvidence:\n" + "\n".join(evidence)
    return [{"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": user}]


def partial_messages(question: str, evidence: list[str]) -> list[dict[str, str]]:
    user = f"Question: {question}\n\nEvidence:\n" + "\n".join(evidence)
    return [{"role": "system", "content": PARTIAL_SYSTEM}, {"role": "user", "content": user}]


def merge_messages(question: str, partials: list[str]) -> list[dict[str, str]]:
    parts = "\n\n".join(f"Partial answer {i}:\n{p}" for i, p in enumerate(partials, 1))
    user = f"Question: {question}\n\n{parts}"
    return [{"role": "system", "content": MERGE_SYSTEM}, {"role": "user", "content": user}]
