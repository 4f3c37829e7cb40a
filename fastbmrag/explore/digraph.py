"""The edges as a networkx graph."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx


def as_digraph(payloads: Iterable[dict[str, Any]]) -> networkx.DiGraph:
    """Edge payloads (with their weights) as a directed graph: a node per entity (name, type,
    ontology id), an edge per (source, target) with every relation between them
    (``relations``: type, paper, description) and the pair's largest weight."""
    import networkx

    g = networkx.DiGraph()
    for p in payloads:
        for side in ("source", "target"):
            g.add_node(p[f"{side}_key"], name=p[side], type=p[f"{side}_type"],
                       ontology_id=p[f"{side}_id"] or None)  # fmt: skip
        u, v = p["source_key"], p["target_key"]
        if not g.has_edge(u, v):
            g.add_edge(u, v, relations=[], weight=0.0)
        data = g.edges[u, v]
        data["relations"].append(
            {k: p.get(k) for k in ("relationship_type", "paper_id", "description")}
        )
        data["weight"] = max(data["weight"], p.get("weight") or 0.0)
    return g
