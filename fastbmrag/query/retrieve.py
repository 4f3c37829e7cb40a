"""Retrieval: the edges that pass a filter, by similarity to the question (or in filter order
without an embedding)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbmrag.query.options import QueryOptions
from fastbmrag.store.base import Filter, Hit

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def retrieve(
    collection: Collection,
    vector: Any,
    flt: Filter | None,
    *,
    matched: int,
    options: QueryOptions,
) -> list[Hit]:
    """Vector search (``vector`` None: filter order via scroll, no score)."""
    if vector is None:
        hits: list[Hit] = []
        for hit in collection.scroll(flt):
            hits.append(hit)
            if not options.all and len(hits) >= options.top_k:
                break
        return hits
    limit = max(matched, 1) if options.all else options.top_k
    hits = collection.search(vector, flt, limit=limit, score_threshold=options.min_score)
    if options.all and options.min_score is None and len(hits) < matched:
        seen = {h.id for h in hits}
        hits += [h for h in collection.scroll(flt) if h.id not in seen]
    return hits
