"""The payload of a stored edge: every field, its type and whether Qdrant indexes it.

:class:`EdgePayload` is the one declaration. The pipeline builds it, the stores derive their
payload indexes from it (:data:`KEYWORD_FIELDS`, :data:`INTEGER_FIELDS`),
query and export read evidence through :func:`evidence_of`. A paper's extra input columns
(any CSV column without a known meaning) travel in ``extra`` and are stored as top-level
fields beside the declared ones.

Payload versions: 1 had ``draft_description``, ``refined``, ``chunks`` and ``evidence`` as a
quote string; 2 has ``description_source`` and ``evidence`` as a list of sentences with their
place in the paper; 3 adds ``source_ancestors`` / ``target_ancestors`` (what each end belongs
to: its MeSH ancestors, its HGNC gene groups), which hierarchical filters match. A collection's ledger records the version each paper was stored with.

4 adds ``names``: both ends' names as written and as normalised, with a full-text index, so
that a question's entity selects the edges that write one of its names, grounded or not.

5 adds ``words``: the stems of those names, which a question's words are scored against by
BM25 with the collection's own IDF (:mod:`fastbmrag.text.stems`). An older payload gets it
from its names when its collection is next opened for writing (:func:`words_of`).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

PAYLOAD_VERSION = 5
NAMES_VERSION = 4  # the first version whose edges carry ``names``

CITED = "cited"  # the description is the relation's cited abstract sentences, verbatim
REFINED = "refined"  # the description was written by stage 2 from main-text sentences


def _index(kind: str, default: Any = "") -> Any:
    return field(default=default, metadata={"index": kind})


@dataclass(slots=True)
class EdgePayload:
    # the paper (copied onto every edge of it)
    paper_id: str = _index("keyword")
    pmid: str = _index("keyword")
    pmcid: str = ""
    doi: str = ""
    title: str = ""
    journal: str = _index("keyword")
    year: int | None = _index("integer", None)
    authors: str = ""
    paper_weight: float | None = None
    # the study (papers.design): its design, the organisms studied, and where each label came
    # from ("metadata": the record; "model": the model's reading of the abstract; "": unknown)
    design: str = _index("keyword")
    design_from: str = ""
    organisms: list[str] = field(default_factory=list, metadata={"index": "keyword"})
    organisms_from: str = ""
    # the source entity: normalised name, ontology id, type, name as written, how it matched,
    # and the node key behind degrees and weights (the ledger holds the degrees; shards written before
    # it did may still carry ``source_degree``/``target_degree``, which nothing reads). Only
    # the fields a filter reads are indexed: queries match an entity by its key (or its
    # ancestors) or by the words of its names (``names``), never by its id alone, and every
    # index costs each segment's open.
    source: str = ""
    source_id: str = ""
    source_key: str = _index("keyword")
    source_type: str = _index("keyword")
    # "model": the type the model gave; "vocabulary": the model's type gave no id and exactly
    # one other type did ("COVID-19" typed gene is the disease)
    source_type_from: str = "model"
    # MeSH ancestors or HGNC gene groups: a filter on a broader concept matches this end
    source_ancestors: list[str] = field(default_factory=list, metadata={"index": "keyword"})
    source_raw: str = ""
    source_match: str = ""
    # where the id came from: "pubtator" (NCBI's annotation of this paper), "dictionary", "none"
    source_grounding: str = ""
    # the target entity, likewise
    target: str = ""
    target_id: str = ""
    target_key: str = _index("keyword")
    target_type: str = _index("keyword")
    target_type_from: str = "model"
    target_ancestors: list[str] = field(default_factory=list, metadata={"index": "keyword"})
    target_raw: str = ""
    target_match: str = ""
    target_grounding: str = ""
    relationship_type: str = _index("keyword")
    # both ends' names as written and as normalised, once each: a question's entity selects the
    # edges that write all the words of one of its names (a full-text index)
    names: list[str] = field(default_factory=list, metadata={"index": "text"})
    # the stems of those names, space-separated: a question's words meet an edge here, scored
    # by BM25 (an index with scoring) with the collection's own IDF
    words: str = _index("bm25")
    description: str = ""
    description_source: str = CITED
    # the sentences behind the description: [{text, where, passage, section, start, end}]
    evidence: list[dict[str, Any]] = field(default_factory=list)
    # 1 when the paper was retracted (its reader said so, or a sync found it since): answers
    # leave such edges out unless asked for them; an older payload without it is 0
    retracted: int = _index("integer", 0)
    # "finding": the paper's own result; "background": what it restates as known before
    # (text.findings), and where that came from ("text", "model", "": neither said, taken as a
    # finding). An edge stored by an earlier version has neither and counts as a finding.
    finding: str = _index("keyword", "finding")
    finding_from: str = ""
    # the findings model's probability that the paper restates it (finding_from "classifier"),
    # None where the model did not decide (not installed, or an edge stored before it)
    background_p: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The stored payload: extra columns first, the declared fields over them. An extra
        column named as a field that is declared or computed on reading (``point_id``,
        ``weight``...) is kept as ``input_`` and its name: it never stands for that field."""
        out = {f"input_{k}" if k in TAKEN else k: v for k, v in self.extra.items()}
        for f in fields(self):
            if f.name != "extra":
                out[f.name] = getattr(self, f.name)
        return out


def _indexed(kind: str) -> tuple[str, ...]:
    return tuple(f.name for f in fields(EdgePayload) if f.metadata.get("index") == kind)


# Names an edge's fields take on reading: its point id, the degrees and weight of
# store.weights.with_degrees, a search's score
COMPUTED = ("point_id", "weight", "source_degree", "target_degree", "score")
TAKEN = frozenset((*(f.name for f in fields(EdgePayload)), *COMPUTED))

# Each declared field's value where a payload lacks it (a factory for a list or a dict).
_DEFAULTS: dict[str, Any] = {
    f.name: f.default_factory if f.default is MISSING else f.default
    for f in fields(EdgePayload) if f.name != "extra"
}  # fmt: skip

# Payload fields with an index, by index kind (declared order).
KEYWORD_FIELDS = _indexed("keyword")
INTEGER_FIELDS = _indexed("integer")
TEXT_FIELDS = _indexed("text")  # names
BM25_FIELDS = _indexed("bm25")  # words


def words_of(payload: dict[str, Any]) -> str:
    """The ``words`` of a stored edge, from its names (a payload stored before names were kept
    has its ends' names and names as written)."""
    from fastbmrag.text.stems import edge_words

    names = payload.get("names") or [
        payload.get(f) or "" for f in ("source_raw", "source", "target_raw", "target")
    ]
    return edge_words(n for n in names if isinstance(n, str))


def completed(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every declared field: one a collection built by an earlier version
    lacks takes the value it stands for there (``finding``: "finding", ``background_p``: None),
    so that every export has every column."""
    missing = {n: v for n, v in _DEFAULTS.items() if n not in payload}
    return {**payload, **{n: v() if callable(v) else v for n, v in missing.items()}}


def evidence_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """An edge's evidence sentences, also from a version-1 payload (one quote string)."""
    value = payload.get("evidence")
    if isinstance(value, list):
        return [e for e in value if isinstance(e, dict) and e.get("text")]
    if isinstance(value, str) and value.strip():
        return [{"text": value, "where": None, "passage": None, "section": "", "start": None,
                 "end": None}]  # fmt: skip
    return []
