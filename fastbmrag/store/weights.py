"""Edge weights, pure functions over degrees (the ledger holds the degrees).

Weights follow the fastbmRAG paper: node weight = degree / number of nodes; edge weight =
min(source weight, target weight). Points carry their nodes' keys (``source_key``,
``target_key``, indexed), never a degree or a weight, because both change with every paper: a
commit writes the paper's own points and nothing else in the store (rewriting the degree
payload of every edge of a node whose degree changed moved indexed points back to the unindexed
segment and made `update`'s memory grow with the collection: docs/benchmarks.md, "Memory").
``weight >= w`` becomes a condition on the keys (:func:`weight_filter`), and payloads get their
current degrees and weight for display and export (:func:`with_degrees`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from fastbmrag.store.base import Filter, Match

ENDS = ("source", "target")


def edge_weight(payload: Mapping[str, Any], n_nodes: int) -> float | None:
    """An edge's weight: the degree of its less connected end over the collection's number of
    nodes, from a payload with current degrees (:func:`with_degrees`); None for a payload
    without them."""
    try:
        degree = min(int(payload["source_degree"]), int(payload["target_degree"]))
    except (KeyError, TypeError, ValueError):
        return None
    return degree / n_nodes if n_nodes else 0.0


def min_degree(threshold: float, n_nodes: int) -> int:
    """Smallest degree ``d`` with ``d / n_nodes >= threshold`` (float arithmetic, the same as
    :func:`edge_weight`); 0 when every node passes."""
    if threshold <= 0 or n_nodes == 0:
        return 0
    k = max(0, math.ceil(threshold * n_nodes))
    while k > 0 and (k - 1) / n_nodes >= threshold:
        k -= 1
    while k / n_nodes < threshold:
        k += 1
    return k


def weight_filter(passing: Sequence[str], failing: Sequence[str]) -> Filter:
    """Edges whose two ends are among the ``passing`` node keys, as conditions Qdrant
    evaluates: both ends among them, or, where they are the longer list, neither end among the
    ``failing`` ones."""
    if not failing:
        return Filter()
    if len(passing) <= len(failing):
        return Filter(must=tuple(Match(f"{end}_key", any_of=tuple(passing)) for end in ENDS))
    return Filter(must_not=tuple(Match(f"{end}_key", any_of=tuple(failing)) for end in ENDS))


def with_degrees(
    payloads: Sequence[Mapping[str, Any]], degrees: Mapping[str, int], n_nodes: int
) -> list[dict[str, Any]]:
    """Copies of ``payloads`` with their ends' degrees (``source_degree``, ``target_degree``)
    and ``weight``."""
    out = []
    for payload in payloads:
        shown = dict(payload)
        for end in ENDS:
            shown[f"{end}_degree"] = degrees.get(str(payload.get(f"{end}_key")), 0)
        shown["weight"] = edge_weight(shown, n_nodes) or 0.0
        out.append(shown)
    return out
