"""The collection's edges as the ledger holds them, the names of its nodes, and which relationship types say opposite things."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


# Relationship types that say opposite things about the same pair.
OPPOSITES: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("upregulated_in", "downregulated_in"),
        ("upregulates", "downregulates"),
        ("causes", "protects_against"),
        ("risk_factor_for", "protects_against"),
        ("positive_correlation", "negative_correlation"),
    )
)


def opposed(a: str, b: str) -> bool:
    return frozenset((a, b)) in OPPOSITES


@dataclass(frozen=True, slots=True)
class Edge:
    """One stored edge as the ledger knows it."""

    point_id: str
    paper_id: str
    source: str  # node key
    relationship_type: str
    target: str


def ledger_edges(collection: Collection, *, retracted: bool = False) -> list[Edge]:
    """The collection's edges; those of retracted papers only with ``retracted``."""
    edges = [Edge(*row) for row in collection.edge_rows()]
    gone = set() if retracted else collection.retracted_papers()
    return [e for e in edges if e.paper_id not in gone] if gone else edges


def node_names(collection: Collection) -> dict[str, dict[str, Any]]:
    """Node key -> name, type, ontology id and degree."""
    return {
        key: {"name": name, "type": etype, "id": ontology_id, "degree": degree}
        for key, name, etype, ontology_id, degree in collection.entities()
    }
