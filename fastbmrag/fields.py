"""Every field of a stored edge, declared once: one field of :class:`StoredEdge`, the table of them
all (:data:`EDGE_FIELDS`, its rows). A field declares its type and the value it has where none
is given, and with :func:`column` its payload index, its ledger column, where its value comes
from, what an edge stored by an earlier version gets, and the query filters on it (each a
declared option: a flag, an API keyword, an input of the page's form, a row of
``/api/options``). A stored payload is read by attribute through :meth:`StoredEdge.of`.

Everything else follows from the table: the payload a paper's edges are stored with
(:func:`fastbmrag.store.payload.edge_payload`), both stores' payload indexes (made with a new
collection, and the missing ones added when an older one is opened for writing), the ledger's
edge columns, the values an older collection's edges get when it is next opened for writing,
every export's columns, the query's filters (:data:`fastbmrag.query.filters.PAYLOAD_FILTERS`)
and their options (:class:`fastbmrag.query.options.QueryOptions`). A field of a paper's record
(``paper=True``) takes its value from the paper: a reader's field or an input column of its name.

It imports only the study designs' and organisms' names, so that every layer may read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from fastbmrag.papers.design import DESIGNS, ORGANISMS

# --- the closed vocabularies of an edge's types ---------------------------------------------

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

MIN_YEAR, MAX_YEAR = 1800, 2100  # a publication year, as the papers' readers take it


@dataclass(frozen=True, slots=True)
class FieldFilter:
    """A query filter that is one condition on an edge field: its option (the QueryOptions
    field, API keyword and page input ``name``; the command line's ``flags``), the condition
    (``any``: one of the values; ``either``: either end's field, ``source_type`` read as
    ``type``; ``from`` / ``to``: a range's bound), the help and the label of a description of
    the filters. ``field`` is set from the row."""

    name: str
    flags: tuple[str, ...]
    condition: str
    help: str
    label: str
    choices: tuple[str, ...] = ()  # the values allowed, where the project declares them
    low: int | None = None  # a bound's range (a year)
    high: int | None = None
    title: str = ""  # its input's label on the page ("": its name)
    field: str = ""

    @property
    def multiple(self) -> bool:
        return self.condition in ("any", "either")


@dataclass(frozen=True, slots=True)
class EdgeField:
    """One field of a stored edge: its value where none is given (``default``; a list's is
    copied), its payload ``index`` ("keyword", "integer", "text": the words of a text,
    "bm25": scored words; "" none: every index costs each segment's open), its ``ledger``
    column's SQL type ("" none), whether it is the ``paper``'s (its record's field or input
    column of that name), what an edge an earlier version stored without it gets (``before``:
    a function of the payload, else the default), and the ``filters`` a query has on it."""

    name: str
    default: Any = ""
    index: str = ""
    ledger: str = ""
    paper: bool = False
    before: Callable[[dict[str, Any]], Any] | None = None
    filters: tuple[FieldFilter, ...] = ()

    def empty(self) -> Any:
        """Its default, a fresh one where it is a list or a dict."""
        return type(self.default)() if isinstance(self.default, list | dict) else self.default

    def value_before(self, payload: dict[str, Any]) -> Any:
        """The value of an edge stored without this field."""
        return self.before(payload) if self.before is not None else self.empty()


def words_of(payload: dict[str, Any]) -> str:
    """The ``words`` of a stored edge, from its names (a payload stored before names were kept
    has its ends' names and names as written)."""
    from fastbmrag.text.stems import edge_words

    names = payload.get("names") or [
        payload.get(f) or "" for f in ("source_raw", "source", "target_raw", "target")
    ]
    return edge_words(n for n in names if isinstance(n, str))


def _any(name: str, flags: tuple[str, ...], help: str, label: str, **more: Any) -> FieldFilter:
    return FieldFilter(name, flags, "any", help, label, **more)


ROW = "fastbmrag.fields"  # where a field of StoredEdge keeps its row (dataclasses' metadata)


def column(
    default: Any = "",
    *,
    index: str = "",
    ledger: str = "",
    paper: bool = False,
    before: Callable[[dict[str, Any]], Any] | None = None,
    filters: tuple[FieldFilter, ...] = (),
) -> Any:
    """One field of :class:`StoredEdge`, its row of the table (:class:`EdgeField`'s parts)."""
    row = {"index": index, "ledger": ledger, "paper": paper, "before": before, "filters": filters}
    if isinstance(default, list):
        return field(default_factory=list, metadata={ROW: row})
    return field(default=default, metadata={ROW: row})


@dataclass(slots=True)
class StoredEdge:
    """A stored edge, read by attribute (:meth:`of`). Its fields, in order, are the table of
    every field (:data:`EDGE_FIELDS`): each declares its type and default and, with
    :func:`column`, its payload index, ledger column, whether it is the paper's, what an edge
    an earlier version stored without it gets, and the query filters on it."""

    # the paper (copied onto every edge of it)
    paper_id: str = column(index="keyword", paper=True, filters=(
        _any("paper_ids", ("--paper-id",), "Only edges of this paper; repeatable.", "papers"),))
    pmid: str = column(index="keyword", paper=True, filters=(
        _any("pmids", ("--pmid",), "Only papers with this PMID; repeatable.", "PMIDs",
             title="PMIDs"),))
    pmcid: str = column(paper=True)
    doi: str = column(paper=True)
    title: str = column(paper=True)
    journal: str = column(index="keyword", paper=True, filters=(
        _any("journals", ("--journal",), "Only papers of this journal (exact name); repeatable.",
             "journals"),))
    year: int | None = column(None, index="integer", paper=True, filters=(
        FieldFilter("since", ("--since",), "from", "Papers from this year on.", "years from",
                    low=MIN_YEAR, high=MAX_YEAR, title="From year"),
        FieldFilter("until", ("--until",), "to", "Papers up to this year.", "years to",
                    low=MIN_YEAR, high=MAX_YEAR, title="To year")))
    authors: str = column(paper=True)
    paper_weight: float | None = column(None, paper=True)
    # the study (papers.design): its design, the organisms studied, and where each label came
    # from ("metadata": the record; "model": the model's reading of the abstract; "": unknown)
    design: str = column(index="keyword", filters=(
        _any("designs", ("--design",), f"Only papers of this study design ({', '.join(DESIGNS)}; "
             "RCT, ... too); repeatable or comma-separated.", "designs"),))
    design_from: str = column()
    organisms: list[str] = column([], index="keyword", filters=(
        _any("organisms", ("--organism",), "Only papers that studied this organism "
             f"({', '.join(ORGANISMS)}); repeatable or comma-separated.", "organisms"),))
    organisms_from: str = column()
    # the source entity: normalised name, ontology id, type, name as written, how it matched,
    # and the node key behind degrees and weights (the ledger holds the degrees; shards written
    # before it did may still carry ``source_degree``/``target_degree``, which nothing reads).
    # Only the fields a filter reads are indexed: queries match an entity by its key (or its
    # ancestors) or by the words of its names (``names``), never by its id alone.
    source: str = column()
    source_id: str = column()
    source_key: str = column(index="keyword")
    source_type: str = column(index="keyword", filters=(
        FieldFilter("entity_types", ("-t", "--entity-type"), "either",
                    "Edges with this entity type on either end; repeatable. Replaces the parsed "
                    "answer type.", "types", choices=tuple(ENTITY_TYPES)),))
    # "model": the type the model gave; "vocabulary": the model's type gave no id and exactly
    # one other type did ("COVID-19" typed gene is the disease)
    source_type_from: str = column("model")
    # MeSH ancestors or HGNC gene groups: a filter on a broader concept matches this end
    source_ancestors: list[str] = column([], index="keyword")
    source_raw: str = column()
    source_match: str = column()
    # where the id came from: "pubtator" (NCBI's annotation of this paper), "dictionary", "none"
    source_grounding: str = column()
    # the target entity, likewise
    target: str = column()
    target_id: str = column()
    target_key: str = column(index="keyword")
    target_type: str = column(index="keyword")
    target_type_from: str = column("model")
    target_ancestors: list[str] = column([], index="keyword")
    target_raw: str = column()
    target_match: str = column()
    target_grounding: str = column()
    relationship_type: str = column(index="keyword", filters=(
        _any("relationship_types", ("-r", "--relation"), "Relationship type (upregulated_in, "
             "causes, ...); repeatable. Replaces the parsed types.", "relations"),))
    # both ends' names as written and as normalised, once each: a question's entity selects
    # the edges that write all the words of one of its names (a full-text index)
    names: list[str] = column([], index="text")
    # the stems of those names, space-separated: a question's words meet an edge here, scored
    # by BM25 (an index with scoring) with the collection's own IDF
    words: str = column(index="bm25", before=words_of)
    description: str = column()
    description_source: str = column("cited")
    # the sentences behind the description: [{text, where, passage, section, start, end}]
    evidence: list[dict[str, Any]] = column([])
    # 1 when the paper was retracted (its reader said so, or a sync found it since): answers
    # leave such edges out unless asked for them
    retracted: int = column(0, index="integer")
    # "finding": the paper's own result; "background": what it restates as known before
    # (text.findings), and where that came from ("text", "model", "classifier", "": neither
    # said). An edge stored by an earlier version counts as a finding.
    finding: str = column("finding", index="keyword", ledger="TEXT")
    finding_from: str = column()
    # the findings model's probability that the paper restates it, None where it did not decide
    background_p: float | None = column(None)

    @classmethod
    def of(cls, payload: dict[str, Any]) -> StoredEdge:
        """The edge a stored payload holds: a field it lacks (stored by an earlier version)
        has the value it stands for there; other names (an input column, a degree) are not
        read."""
        made = _ROWS.get(cls) or _ROWS.setdefault(cls, rows(cls))
        return cls(**{r.name: payload[r.name] if r.name in payload else r.value_before(payload)
                      for r in made})  # fmt: skip


_ROWS: dict[type[StoredEdge], tuple[EdgeField, ...]] = {}  # StoredEdge.of's rows, by class


def rows(cls: type[StoredEdge]) -> tuple[EdgeField, ...]:
    """The table's rows: one per field of ``cls`` (:class:`StoredEdge`, or one adding fields)."""
    return tuple(
        EdgeField(f.name, f.default_factory() if callable(f.default_factory) else f.default,
                  **f.metadata[ROW])  # fmt: skip
        for f in fields(cls)
    )


# Every field of a stored edge, in order: the rows of :class:`StoredEdge`
EDGE_FIELDS: tuple[EdgeField, ...] = rows(StoredEdge)


def filters_of(rows: tuple[EdgeField, ...]) -> tuple[FieldFilter, ...]:
    """The query filters of these rows, in the table's order, each with the field it reads."""
    return tuple(
        replace(f, field=row.name.removeprefix("source_") if f.condition == "either" else row.name)
        for row in rows
        for f in row.filters
    )


def indexed(rows: tuple[EdgeField, ...]) -> dict[str, str]:
    """Payload field -> index kind, for the rows with an index."""
    return {row.name: row.index for row in rows if row.index}

