"""The payload of a stored edge: every field, its type and whether Qdrant indexes it.

Its fields are declared in :data:`fastbmrag.fields.EDGE_FIELDS`: the pipeline builds it with
:func:`edge_payload`, the stores derive their payload indexes from the table (:data:`INDEXES`),
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
from its names when its collection is next opened for writing
(:func:`fastbmrag.fields.words_of`).
"""

from __future__ import annotations

from typing import Any

from fastbmrag.fields import EDGE_FIELDS, indexed

PAYLOAD_VERSION = 5
NAMES_VERSION = 4  # the first version whose edges carry ``names``

CITED = "cited"  # the description is the relation's cited abstract sentences, verbatim
REFINED = "refined"  # the description was written by stage 2 from main-text sentences

FIELDS = tuple(row.name for row in EDGE_FIELDS)  # the declared fields, in the table's order
# Names an edge's fields take on reading: its point id, the degrees and weight of
# store.weights.with_degrees, a search's score
COMPUTED = ("point_id", "weight", "source_degree", "target_degree", "score")
TAKEN = frozenset((*FIELDS, *COMPUTED))

# Payload field -> index kind (declared order), and the fields of each kind
INDEXES = indexed(EDGE_FIELDS)
KEYWORD_FIELDS = tuple(n for n, kind in INDEXES.items() if kind == "keyword")
INTEGER_FIELDS = tuple(n for n, kind in INDEXES.items() if kind == "integer")
TEXT_FIELDS = tuple(n for n, kind in INDEXES.items() if kind == "text")  # names
BM25_FIELDS = tuple(n for n, kind in INDEXES.items() if kind == "bm25")  # words
# The indexed fields an edge stored without gets its value of when its collection is next
# opened for writing, so that a filter on them reads every edge: those whose value there is
# worked out, or is no empty one (an absent field and an empty list are alike to a filter)
BACKFILLED = tuple(
    row for row in EDGE_FIELDS
    if row.index and (row.before is not None or row.default not in ("", None, [], {}))
)  # fmt: skip
# The fields the ledger keeps a column of, with its SQL type and the value of a row without
LEDGER_FIELDS = tuple(row for row in EDGE_FIELDS if row.ledger)
# The fields of a paper's record, copied onto every edge of it
PAPER_FIELDS = tuple(row.name for row in EDGE_FIELDS if row.paper)


def edge_payload(values: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored payload of an edge: every declared field, from ``values`` or its default, in
    the table's order, after the paper's ``extra`` columns (any input column without a known
    meaning). An extra column named as a field that is declared or computed on reading
    (``point_id``, ``weight``...) is kept as ``input_`` and its name: it never stands for that
    field. A name in ``values`` that is no declared field is a programming error (TypeError)."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise TypeError(f"no declared edge field {unknown[0]!r} (fastbmrag.fields.EDGE_FIELDS)")
    out = {f"input_{k}" if k in TAKEN else k: v for k, v in (extra or {}).items()}
    for row in EDGE_FIELDS:
        out[row.name] = values[row.name] if row.name in values else row.empty()
    return out


def ledger_columns(payload: dict[str, Any]) -> dict[str, Any]:
    """The values of the ledger's declared edge columns (:data:`LEDGER_FIELDS`) of a stored
    payload (an older one: the value it stands for)."""
    return {row.name: payload.get(row.name, row.value_before(payload)) for row in LEDGER_FIELDS}


def completed(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every declared field: one a collection built by an earlier version
    lacks takes the value it stands for there (``finding``: "finding", ``background_p``: None),
    so that every export has every column."""
    missing = [row for row in EDGE_FIELDS if row.name not in payload]
    return {**payload, **{row.name: row.value_before(payload) for row in missing}}


def evidence_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """An edge's evidence sentences, also from a version-1 payload (one quote string)."""
    value = payload.get("evidence")
    if isinstance(value, list):
        return [e for e in value if isinstance(e, dict) and e.get("text")]
    if isinstance(value, str) and value.strip():
        return [{"text": value, "where": None, "passage": None, "section": "", "start": None,
                 "end": None}]  # fmt: skip
    return []
