"""Deterministic, content-dependent answers for the fake model server.

``pipeline_responder`` answers the indexer's two structured calls the way a
careful model would, from the text it is given:

* ``Draft`` (stage 1): reads the numbered sentences, finds gene-like symbols and
  disease words, lists each entity once and relates each gene to the first
  disease (or to the next gene), citing the sentence that names the gene.
* ``Refinement`` (stage 2): for each numbered relation, a description built from
  the first sentence of its first listed passage, citing that sentence as [n].

Anything else returns None, so a server can fall back to its generic,
schema-driven answer. Used by the test-suite and by the benchmark scripts.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

_GENE = re.compile(r"\b[A-Z][A-Z0-9]{1,7}(?:-[0-9A-Z\u03b1\u03b2\u03b3]{1,3})?\b")
_NOT_GENES = {
    "DNA", "RNA", "PCR", "USA", "WHO", "CI", "OR", "HR", "BMI", "ELISA", "II", "III", "IV", "VI",
    "MRI", "CT", "ROC", "AUC", "SD", "SE", "SEM", "NS", "AND", "THE", "OF", "IN", "RR", "UK", "ICU",
    "HIV", "PET", "ECG", "EEG", "IQR", "US", "EU", "IVF", "COVID", "RT", "RT-PCR", "NMR", "MS", "HPLC",
}  # fmt: skip
_DISEASE = re.compile(
    r"\b(?:[A-Za-z]+(?:osis|itis|oma|emia|aemia|pathy)|(?:[a-z]+ )?(?:cancer|carcinoma|disease|"
    r"syndrome|infection|infertility|diabetes|hypertension))\b"
)
_NUMBERED = re.compile(r"^\[(\d+)\] (.*)$")
_HEADING = re.compile(r"^P(\d+)(?: \((.*)\))?$")
_REL_LINE = re.compile(r"^(\d+)\. (.*) \(in (P[0-9, P]+)\)$")
_GENE_RELS = ("upregulated_in", "downregulated_in", "biomarker_of", "associated_with")


def schema_title(request: dict[str, Any]) -> str:
    fmt = request.get("format")
    if isinstance(fmt, dict):
        return str(fmt.get("title", ""))
    rf = request.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") or {}
    return str(schema.get("title", ""))


def task_text(request: dict[str, Any]) -> str:
    """The first user message: the task itself (a repair request appends further turns)."""
    for msg in request.get("messages", []):
        if msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


def _h(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def numbered_sentences(text: str) -> list[tuple[int, str]]:
    """The ``[n] sentence`` lines of a prompt."""
    return [
        (int(m.group(1)), m.group(2)) for line in text.splitlines() if (m := _NUMBERED.match(line))
    ]


def draft_answer(text: str) -> dict[str, Any]:
    genes: list[tuple[str, int]] = []  # (symbol, sentence number)
    diseases: list[tuple[str, int]] = []
    for number, sent in numbered_sentences(text):
        for m in _GENE.finditer(sent):
            sym = m.group(0)
            known = sym in _NOT_GENES or any(g == sym for g, _ in genes)
            if not known and len(sym) >= 3 and sum(c.isupper() for c in sym) >= 2:
                genes.append((sym, number))
        for m in _DISEASE.finditer(sent):
            name = m.group(0).strip()
            if len(name) >= 6 and name.lower() not in (d.lower() for d, _ in diseases):
                diseases.append((name, number))
    entities: list[list[Any]] = []
    numbers: dict[str, int] = {}

    def entity(name: str, etype: str) -> int:
        if name not in numbers:
            numbers[name] = len(entities) + 1
            entities.append([numbers[name], name, etype])
        return numbers[name]

    relations: list[list[Any]] = []
    for i, (gene, number) in enumerate(genes[:8]):
        if diseases:
            rel, (tgt, tgt_number), tgt_type = (
                _GENE_RELS[_h(gene) % len(_GENE_RELS)],
                diseases[0],
                "disease",
            )
        elif i + 1 < len(genes):
            rel, (tgt, tgt_number), tgt_type = "regulates", genes[i + 1], "gene"
        else:
            continue
        cited = sorted({number, tgt_number}) if tgt_number != number else [number]
        s = entity(gene, "gene")
        relations.append([s, rel, entity(tgt, tgt_type), cited])
    return {"k": study_code(text), "e": entities, "r": relations}


_DESIGN_CUES = (
    ("M", r"meta-analys|systematic review"),
    ("R", r"randomi[sz]ed"),
    ("T", r"\btrial\b"),
    ("O", r"\bcohort|case-control|cross-sectional"),
    ("C", r"\bcase report|we report a|\bcase series"),
    ("V", r"\breview\b"),
    ("A", r"\bmice\b|\bmouse\b|\brats?\b|\bcell lines?\b|\bin vitro\b"),
)
_ORGANISM_CUES = (
    ("h", r"\bpatients?\b|\bwomen\b|\bmen\b|\bparticipants\b|\bhumans?\b|\bchildren\b"),
    ("m", r"\bmice\b|\bmouse\b"),
    ("r", r"\brats?\b"),
    ("c", r"\bcells?\b|\bcell lines?\b|\bin vitro\b"),
)


def study_code(text: str) -> str:
    """The design and organisms code a careful model gives from the abstract's words."""
    low = text.lower()
    design = next((c for c, cue in _DESIGN_CUES if re.search(cue, low)), "X")
    return design + "".join(c for c, cue in _ORGANISM_CUES if re.search(cue, low))


def refine_answer(text: str) -> dict[str, Any]:
    first_of: dict[int, tuple[int, str]] = {}  # passage -> its first listed sentence
    passage = 0
    items: list[list[Any]] = []
    for line in text.splitlines():
        if m := _HEADING.match(line):
            passage = int(m.group(1))
        elif m := _NUMBERED.match(line):
            first_of.setdefault(passage, (int(m.group(1)), m.group(2)))
        elif m := _REL_LINE.match(line):
            first = int(m.group(3).split(",")[0].strip().lstrip("P"))
            number, sentence = first_of.get(first, (0, ""))
            statement = m.group(2).split(". Abstract:")[0]
            described = f"{statement}, as the main text reports: " + " ".join(sentence.split()[:25])
            items.append([int(m.group(1)), f"{described} [{number}]."])
    return {"r": items}


def pipeline_responder(request: dict[str, Any]) -> dict[str, Any] | None:
    title = schema_title(request)
    if title == "Draft":
        return draft_answer(task_text(request))
    if title == "Refinement":
        return refine_answer(task_text(request))
    return None


# --- query ----------------------------------------------------------------------------------------
#
# ``query_responder`` answers the three query calls the way a careful model would:
#
# * ``QuestionParse``: the question's entities found as the draft finds a paper's (gene-like
#   symbols, disease words; an acronym of a method or procedure as "other", a cell-death or
#   signalling process as "pathway"), and keyword rules over the question (regulation words ->
#   up/down relations, "pathway" -> pathway, "mutation"/"variant" -> variant,
#   "cause"/"mechanism" -> causal relations, "role of" -> any relation).
# * ``Answer`` / ``PartialAnswer``: one sentence per cited evidence line ("[n] A rel B: ..."),
#   citing it; for a merge request, the partial answers joined, citations kept.

_EVIDENCE_LINE = re.compile(r"^\[(\d+)\] (.*?)(?::| \u2014 | -- )", re.M)
_CITATION = re.compile(r"\[(\d+)\]")
_REGULATION = ("upregulated_in", "downregulated_in", "upregulates", "downregulates")
_CAUSAL = ("causes", "risk_factor_for", "upregulates", "downregulates", "regulates")
_CONTRIBUTES = ("causes", "risk_factor_for", "associated_with")


# A disease a question names: a word and a disease word ("Alzheimer disease", "type 2 diabetes").
_QUESTION_DISEASE = re.compile(
    r"\b(?:[A-Za-z]+(?:osis|itis|oma|emia|aemia|pathy)|(?:type \d )?diabetes|(?:[A-Za-z]+(?:'s)? )?"
    r"(?:cancer|carcinoma|disease|syndrome|infection|infertility|hypertension))\b"
)
_PROCESS = re.compile(r"\b(?:[a-z]+ cell death|apoptosis|autophagy|[A-Za-z-]+ signall?ing)\b")


def question_entities(question: str) -> list[list[str]]:
    """``[name, type]`` of each entity the question names, left to right."""
    found: list[tuple[int, str, str]] = []
    for m in _GENE.finditer(question):
        sym = m.group(0)
        if sym in _NOT_GENES:
            found.append((m.start(), sym, "other"))
        elif len(sym) >= 3 and sum(c.isupper() for c in sym) >= 2:
            found.append((m.start(), sym, "gene"))
    found += [
        (m.start(), m.group(0).strip(), "disease") for m in _QUESTION_DISEASE.finditer(question)
    ]
    found += [(m.start(), m.group(0), "pathway") for m in _PROCESS.finditer(question)]
    return [[name, t] for _start, name, t in sorted(found)][:8]


def parse_answer(question: str) -> dict[str, Any]:
    q = question.lower()
    rels: list[str] = []
    ans = "any"
    if "regulated" in q or "expression" in q:
        rels = list(_REGULATION)
    if "pathway" in q:
        ans = "pathway"
        rels = rels or ["part_of", *_CONTRIBUTES]
    if "mutation" in q or "variant" in q or "polymorphism" in q:
        ans = "variant"
        rels = rels or ["modifies", *_CONTRIBUTES]
    if ("mechanism" in q or "cause" in q) and not rels:
        rels = list(_CAUSAL)
    if "contribute" in q and not rels:
        rels = list(_CONTRIBUTES)
    if re.search(r"\bwhich genes?\b|\bwhat genes?\b", q):
        ans = "gene"
    return {"ents": question_entities(question), "rels": rels, "ans": ans}


def answer_text(text: str) -> dict[str, Any]:
    if "Partial answer " in text:
        parts = re.split(r"Partial answer \d+:\n", text)[1:]
        merged = " ".join(p.strip() for p in parts if p.strip())
        return {"answer": merged or "The evidence does not answer the question."}
    sentences = [f"{m.group(2).strip()} [{m.group(1)}]." for m in _EVIDENCE_LINE.finditer(text)][
        :12
    ]
    if not sentences:
        return {"answer": "The evidence does not answer the question."}
    return {"answer": " ".join(sentences)}


def query_responder(request: dict[str, Any]) -> dict[str, Any] | None:
    title = schema_title(request)
    if title == "QuestionParse":
        return parse_answer(task_text(request).removeprefix("Question: "))
    if title in ("Answer", "PartialAnswer"):
        return answer_text(task_text(request))
    return None


def responder(request: dict[str, Any]) -> dict[str, Any] | str:
    """Indexing and query answers together, else the fake's generic schema instance.

    Pass it straight to ``FakeOllama(responder=responder)`` for an end-to-end run.
    """
    from fastbmrag.testing.answers import schema_instance_responder

    return (
        pipeline_responder(request)
        or query_responder(request)
        or schema_instance_responder(request)
    )


def naming(named: dict[str, str], relation: str) -> Any:
    """A responder whose draft names the ``named`` names (name as written -> the type it gives)
    that each sentence writes, relating the two of a sentence that writes two by ``relation``,
    as a model would; every other request as :func:`responder` answers it."""

    def drafted(request: dict[str, Any]) -> dict[str, Any] | str:
        if schema_title(request) != "Draft":
            return responder(request)
        entities: list[list[Any]] = []
        relations: list[list[Any]] = []
        for number, sentence in numbered_sentences(task_text(request)):
            here = [n for n in named if n.lower() in sentence.lower()]
            for name in here:
                if name not in [e[1] for e in entities]:
                    entities.append([len(entities) + 1, name, named[name]])
            if len(here) == 2:
                ids = [next(e[0] for e in entities if e[1] == n) for n in here]
                relations.append([ids[0], relation, ids[1], [number]])
        return {"e": entities, "r": relations}

    return drafted
