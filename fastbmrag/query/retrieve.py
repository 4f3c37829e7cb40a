"""Retrieval: the edges that pass a filter, by similarity to the question (:func:`retrieve`; in
filter order without an embedding), as numbered evidence (:func:`as_evidence`). A question's own
ranking is :mod:`fastbmrag.query.rank`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbmrag.query.result import EdgeResult
from fastbmrag.store.base import Filter, Hit

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def retrieve(
    collection: Collection,
    vector: Any,
    flt: Filter | None,
    *,
    limit: int | None,
    min_score: float | None,
) -> list[Hit]:
    """The ``limit`` edges passing ``flt`` most similar to ``vector`` (None: every one), above
    ``min_score``; with no vector, in filter order via scroll, with no score."""
    if vector is None:
        hits: list[Hit] = []
        for hit in collection.scroll(flt):
            hits.append(hit)
            if limit is not None and len(hits) >= limit:
                break
        return hits
    matched = collection.count(flt) if limit is None else limit
    if matched == 0:
        return []
    hits = collection.search(vector, flt, limit=matched, score_threshold=min_score)
    # edges of equal similarity in the order of their ids, not of where the store keeps them:
    # a collection indexed again answers in the same order
    hits.sort(key=lambda h: (-(h.score or 0.0), h.id))
    if limit is None and min_score is None and len(hits) < matched:
        seen = {h.id for h in hits}
        hits += [h for h in collection.scroll(flt) if h.id not in seen]
    return hits


def as_evidence(collection: Collection, hits: list[Hit]) -> list[EdgeResult]:
    """The hits as numbered evidence items, with current degrees and weights."""
    if not hits:
        return []
    payloads = collection.with_degrees([h.payload for h in hits])
    return [
        EdgeResult(i, h.id, h.score, p.pop("weight"), p)
        for i, (h, p) in enumerate(zip(hits, payloads, strict=True), 1)
    ]
