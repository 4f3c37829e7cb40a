"""Retrieval: the edges that pass a filter, by similarity to the question (:func:`retrieve`), or
by similarity plus what the question names (:func:`ranked`); in filter order without an
embedding."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.result import EdgeResult
from fastbmrag.store.base import Boost, Filter, HasId, Hit

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


def ranked(
    collection: Collection, vector: Any, flt: Filter | None, boosts: list[Boost], *, limit: int
) -> list[tuple[Hit, set[str]]]:
    """The ``limit`` edges passing ``flt`` and some of the ``boosts`` with the highest
    similarity to ``vector`` plus the largest weight of the boosts each matches, scored in the
    store in one query (:meth:`~fastbmrag.store.base.Store.boosted`); each hit with the names of
    the boosts it matches, its score its similarity. Without a vector: each boost's edges in
    filter order, the largest first."""
    if vector is None:
        hits: list[Hit] = []
        seen: set[str] = set()
        for b in sorted(boosts, key=lambda b: -b.weight):
            for hit in collection.scroll((flt or Filter()).and_(b.flt)):
                if len(hits) >= limit:
                    break
                if hit.id not in seen:
                    hits.append(hit)
                    seen.add(hit.id)
    else:
        hits = collection.store.boosted(vector, flt, boosts, limit=limit)
    ids = tuple(h.id for h in hits)
    matched: dict[str, set[str]] = {i: set() for i in ids}
    for b in boosts if ids else ():
        for hit in collection.scroll(Filter(must=(HasId(ids), b.flt))):
            matched[hit.id].add(b.name)
    weight = {b.name: b.weight for b in boosts}

    def boost(hit: Hit) -> float:
        return max((weight[m] for m in matched[hit.id]), default=0.0)

    if vector is not None:  # equal scores in the order of their ids, as :func:`retrieve` gives
        hits.sort(key=lambda h: (-(h.score or 0.0), h.id))
        hits = [replace(h, score=(h.score or 0.0) - boost(h)) for h in hits]
    return [(h, matched[h.id]) for h in hits]


def as_evidence(collection: Collection, hits: list[Hit]) -> list[EdgeResult]:
    """The hits as numbered evidence items, with current degrees and weights."""
    if not hits:
        return []
    payloads = collection.with_degrees([h.payload for h in hits])
    return [
        EdgeResult(i, h.id, h.score, p.pop("weight"), p)
        for i, (h, p) in enumerate(zip(hits, payloads, strict=True), 1)
    ]
