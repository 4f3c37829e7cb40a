"""Every field of a stored edge, declared once (:data:`EDGE_FIELDS`): one row holds its name and
the value it has where none is given, its payload index, its ledger column, where its value comes
from, what an edge stored by an earlier version gets, and the query filters on it (each a
declared option: a flag, an API keyword, an input of the page's form, a row of ``/api/options``).

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
from dataclasses import dataclass, replace
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


EDGE_FIELDS: tuple[EdgeField, ...] = (
    # the paper (copied onto every edge of it)
    EdgeField("paper_id", index="keyword", paper=True, filters=(
        _any("paper_ids", ("--paper-id",), "Only edges of this paper; repeatable.", "papers"),)),
    EdgeField("pmid", index="keyword", paper=True, filters=(
        _any("pmids", ("--pmid",), "Only papers with this PMID; repeatable.", "PMIDs",
             title="PMIDs"),)),
    EdgeField("pmcid", paper=True),
    EdgeField("doi", paper=True),
    EdgeField("title", paper=True),
    EdgeField("journal", index="keyword", paper=True, filters=(
        _any("journals", ("--journal",), "Only papers of this journal (exact name); repeatable.",
             "journals"),)),
    EdgeField("year", None, index="integer", paper=True, filters=(
        FieldFilter("since", ("--since",), "from", "Papers from this year on.", "years from",
                    low=MIN_YEAR, high=MAX_YEAR, title="From year"),
        FieldFilter("until", ("--until",), "to", "Papers up to this year.", "years to",
                    low=MIN_YEAR, high=MAX_YEAR, title="To year"))),
    EdgeField("authors", paper=True),
    EdgeField("paper_weight", None, paper=True),
    # the study (papers.design): its design, the organisms studied, and where each label came
    # from ("metadata": the record; "model": the model's reading of the abstract; "": unknown)
    EdgeField("design", index="keyword", filters=(
        _any("designs", ("--design",), f"Only papers of this study design ({', '.join(DESIGNS)}; "
             "RCT, ... too); repeatable or comma-separated.", "designs"),)),
    EdgeField("design_from"),
    EdgeField("organisms", [], index="keyword", filters=(
        _any("organisms", ("--organism",), "Only papers that studied this organism "
             f"({', '.join(ORGANISMS)}); repeatable or comma-separated.", "organisms"),)),
    EdgeField("organisms_from"),
    # the source entity: normalised name, ontology id, type, name as written, how it matched,
    # and the node key behind degrees and weights (the ledger holds the degrees; shards written
    # before it did may still carry ``source_degree``/``target_degree``, which nothing reads).
    # Only the fields a filter reads are indexed: queries match an entity by its key (or its
    # ancestors) or by the words of its names (``names``), never by its id alone.
    EdgeField("source"),
    EdgeField("source_id"),
    EdgeField("source_key", index="keyword"),
    EdgeField("source_type", index="keyword", filters=(
        FieldFilter("entity_types", ("-t", "--entity-type"), "either",
                    "Edges with this entity type on either end; repeatable. Replaces the parsed "
                    "answer type.", "types", choices=tuple(ENTITY_TYPES)),)),
    # "model": the type the model gave; "vocabulary": the model's type gave no id and exactly
    # one other type did ("COVID-19" typed gene is the disease)
    EdgeField("source_type_from", "model"),
    # MeSH ancestors or HGNC gene groups: a filter on a broader concept matches this end
    EdgeField("source_ancestors", [], index="keyword"),
    EdgeField("source_raw"),
    EdgeField("source_match"),
    # where the id came from: "pubtator" (NCBI's annotation of this paper), "dictionary", "none"
    EdgeField("source_grounding"),
    # the target entity, likewise
    EdgeField("target"),
    EdgeField("target_id"),
    EdgeField("target_key", index="keyword"),
    EdgeField("target_type", index="keyword"),
    EdgeField("target_type_from", "model"),
    EdgeField("target_ancestors", [], index="keyword"),
    EdgeField("target_raw"),
    EdgeField("target_match"),
    EdgeField("target_grounding"),
    EdgeField("relationship_type", index="keyword", filters=(
        _any("relationship_types", ("-r", "--relation"), "Relationship type (upregulated_in, "
             "causes, ...); repeatable. Replaces the parsed types.", "relations"),)),
    # both ends' names as written and as normalised, once each: a question's entity selects
    # the edges that write all the words of one of its names (a full-text index)
    EdgeField("names", [], index="text"),
    # the stems of those names, space-separated: a question's words meet an edge here, scored
    # by BM25 (an index with scoring) with the collection's own IDF
    EdgeField("words", index="bm25", before=words_of),
    EdgeField("description"),
    EdgeField("description_source", "cited"),
    # the sentences behind the description: [{text, where, passage, section, start, end}]
    EdgeField("evidence", []),
    # 1 when the paper was retracted (its reader said so, or a sync found it since): answers
    # leave such edges out unless asked for them
    EdgeField("retracted", 0, index="integer"),
    # "finding": the paper's own result; "background": what it restates as known before
    # (text.findings), and where that came from ("text", "model", "classifier", "": neither
    # said). An edge stored by an earlier version counts as a finding.
    EdgeField("finding", "finding", index="keyword", ledger="TEXT"),
    EdgeField("finding_from"),
    # the findings model's probability that the paper restates it, None where it did not decide
    EdgeField("background_p", None),
)  # fmt: skip


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

