"""Paths between two entities, each hop with the papers and the sentences behind it."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastbmrag.graph.edges import Edge, Studies, ledger_edges, node_names
from fastbmrag.store.base import Filter, Match
from fastbmrag.store.payload import evidence_of

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


DEFAULT_HOPS = 3  # the most hops a path takes unless told (PathOptions.max_hops)


def paths(
    collection: Collection, start: Sequence[str], end: Sequence[str], *,
    max_hops: int = DEFAULT_HOPS, limit: int = 5, studies: Studies | None = None,
) -> list[list[dict[str, Any]]]:  # fmt: skip
    """The best-supported paths between two entities (node keys; several keys: any of them):
    fewest hops, then the most papers behind the weakest hop, then the highest node degrees.
    Each hop: its relation (in its stored direction), the papers stating it, and one evidence
    sentence with its paper."""
    import networkx

    edges = ledger_edges(collection, studies=studies)
    g = networkx.Graph()
    for e in edges:
        if e.source != e.target:
            g.add_edge(e.source, e.target)
    names = node_names(collection)
    found: list[list[str]] = []
    for a, b in itertools.product(start, end):
        if a in g and b in g and a != b:
            found += networkx.all_simple_paths(g, a, b, cutoff=max_hops)
    by_pair: dict[frozenset[str], list[Edge]] = defaultdict(list)
    for e in edges:
        by_pair[frozenset((e.source, e.target))].append(e)

    def support(path: list[str]) -> tuple[int, int, int]:
        weakest = min(len({e.paper_id for e in by_pair[frozenset(h)]}) for h in _steps(path))
        degree = min(names.get(k, {}).get("degree", 0) for k in path)
        return (len(path), -weakest, -degree)

    best = sorted({tuple(p) for p in found}, key=lambda p: support(list(p)))[:limit]
    hops_needed = [by_pair[frozenset(h)] for p in best for h in _steps(p)]
    sentences = _evidence(collection, [e for hop in hops_needed for e in hop])
    return [
        [_hop(a, b, by_pair[frozenset((a, b))], names, sentences) for a, b in _steps(p)]
        for p in best
    ]


def _steps(path: Sequence[str]) -> list[tuple[str, str]]:
    return list(zip(path[:-1], path[1:], strict=True))


def _hop(
    a: str, b: str, edges: list[Edge], names: dict[str, Any], sentences: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    counts = Counter((e.source, e.relationship_type, e.target) for e in edges)
    (source, rel, target), _ = counts.most_common(1)[0]
    stating = [
        e for e in edges if (e.source, e.relationship_type, e.target) == (source, rel, target)
    ]
    cited = next((sentences[e.point_id] for e in stating if e.point_id in sentences), None)
    return {
        "from": names.get(a, {}).get("name", a),
        "from_id": names.get(a, {}).get("id"),
        "to": names.get(b, {}).get("name", b),
        "to_id": names.get(b, {}).get("id"),
        "source": names.get(source, {}).get("name", source),
        "source_id": names.get(source, {}).get("id"),
        "relationship_type": rel,
        "target": names.get(target, {}).get("name", target),
        "target_id": names.get(target, {}).get("id"),
        "papers": sorted({e.paper_id for e in stating}),
        "evidence": cited,
    }


def _evidence(collection: Collection, edges: Sequence[Edge]) -> dict[str, dict[str, Any]]:
    """point id -> {"text", "paper_id"}: the first evidence sentence of each of these edges."""
    if not edges:
        return {}
    ids = {e.point_id for e in edges}
    flt = Filter(must=(Match("paper_id", any_of=tuple(sorted({e.paper_id for e in edges}))),))
    out = {}
    for hit in collection.scroll(flt):
        if hit.id in ids:
            ev = evidence_of(hit.payload)
            text = ev[0]["text"] if ev else str(hit.payload.get("description") or "")
            out[hit.id] = {"text": text, "paper_id": hit.payload.get("paper_id")}
    return out
