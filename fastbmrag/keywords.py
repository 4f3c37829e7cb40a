"""The Python API's keyword arguments as a type checker sees them: one ``TypedDict`` per
declared options dataclass (:mod:`fastbmrag.declared`). Written by ``scripts/gen_keywords.py``
from the declarations; a test holds it to them. Do not edit by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict


class QueryKeywords(TypedDict, total=False):
    """:class:`~fastbmrag.query.options.QueryOptions`'s fields."""

    top_k: int
    all: bool
    min_score: float | None
    no_answer: bool
    no_llm_parse: bool
    link: bool
    match: str
    entities: str | Sequence[str]
    sources: str | Sequence[str]
    targets: str | Sequence[str]
    paper_ids: str | Sequence[str]
    pmids: str | Sequence[str]
    journals: str | Sequence[str]
    since: int | None
    until: int | None
    designs: str | Sequence[str]
    organisms: str | Sequence[str]
    entity_types: str | Sequence[str]
    relationship_types: str | Sequence[str]
    min_weight: float | None
    exact: bool
    fallback: bool
    rank: str
    include_retracted: bool
    findings_only: bool
    answer_model: str | None
    answer_batch: int
    concurrency: int


class UpdateKeywords(TypedDict, total=False):
    """:class:`~fastbmrag.index.options.UpdateOptions`'s fields."""

    force: bool
    dry_run: bool
    refine: bool
    concurrency: int
    chunk_chars: int
    chunk_overlap: int
    top_k: int
    min_similarity: float
    commit_every: int
    commit_seconds: float
    num_predict: int | None
    wait: float
    pubtator: bool
    findings_model: bool
    background_threshold: float | None
    strict: bool


class ExportKeywords(TypedDict, total=False):
    """:class:`~fastbmrag.store.admin.ExportOptions`'s fields."""

    raw: bool


class PathKeywords(TypedDict, total=False):
    """:class:`~fastbmrag.explore.commands.PathOptions`'s fields."""

    designs: str | Sequence[str]
    organisms: str | Sequence[str]
    findings_only: bool
    start: str
    end: str
    max_hops: int


class DigestKeywords(TypedDict, total=False):
    """:class:`~fastbmrag.explore.commands.DigestOptions`'s fields."""

    findings_only: bool
    since: str
