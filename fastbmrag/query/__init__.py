"""Answer a question from a collection: link, filter, search, answer with citations.

Modules, in the order a query runs through them: :mod:`~fastbmrag.query.options` (what a query
can be told), :mod:`~fastbmrag.query.entities` (linking, the parse call),
:mod:`~fastbmrag.query.spec` (filters, relaxations, "no evidence"),
:mod:`~fastbmrag.query.retrieve` (search), :mod:`~fastbmrag.query.answer` (evidence items, the
answer calls, citations, agreement), :mod:`~fastbmrag.query.result` (the result and its
rendering) and :mod:`~fastbmrag.query.run` (:func:`aquery`, the steps in order).

Steps, and what each may cost::

    question --dictionaries--> linked entities (genes, diseases, chemicals; no LLM)
             --1 chat call--> wanted relationship types + answer entity type (--no-llm-parse: 0)
             --1 embed--> question vector
    filters (entities on either end, types, relations, years, papers, journals, min weight)
             --Qdrant--> count, then vector search (top_k, or every match with --all)
    edges --1 chat call (<= answer_batch edges) | map-reduce--> answer citing [n]
          --> citations checked --> references (paper_id, PMID/PMCID, title, journal, year)

A question that retrieves <= ``answer_batch`` (50) edges costs at most 3 chat calls (in
practice 2). ``--no-answer`` costs 0 chat calls.

Several linked entities: with ``match="all"`` (default) and exactly two entities, an edge
must connect both (IL1B -> endometriosis); with more, or ``match="any"``, an edge must
touch at least one. When the filters match no edge the search relaxes only what was
inferred, and says so first in the answer: two entities "all" -> "any", then without the
LLM-parsed relationship and answer types (``fallback=False``: neither). The question's
entities and the flags are never dropped: with no edge about them the result is "no
evidence" (:func:`~fastbmrag.query.spec.no_evidence`), with no answer call, never an answer from unrelated edges.

``--all`` searches with ``limit`` = the number of edges that pass the filters, so every
matching edge above the score threshold comes back ranked by similarity; when no score
threshold is set and the index returned fewer, the rest are added from a scroll of the
filter (score None, at the end).
"""

from __future__ import annotations

from fastbmrag.query.entities import Entity, Parse, resolve_entity
from fastbmrag.query.options import FORMATS, QueryOptions
from fastbmrag.query.result import EdgeResult, QueryResult, render
from fastbmrag.query.run import aquery, query
from fastbmrag.query.spec import FilterSpec, build_spec

__all__ = [
    "FORMATS",
    "EdgeResult",
    "Entity",
    "FilterSpec",
    "Parse",
    "QueryOptions",
    "QueryResult",
    "aquery",
    "build_spec",
    "query",
    "render",
    "resolve_entity",
]
