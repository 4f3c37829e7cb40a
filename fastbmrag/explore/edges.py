"""The collection's edges as the ledger holds them, the names of its nodes, and which relationship types say opposite things."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastbmrag.prompts import OPPOSITE_RELATIONS

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def opposed(a: str, b: str) -> bool:
    """Whether two relationship types say opposite things (:data:`~fastbmrag.prompts.OPPOSITE_RELATIONS`)."""
    return frozenset((a, b)) in OPPOSITE_RELATIONS


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
    edges = [Edge(*row) for row in collection.ledger.edge_rows()]
    gone = set() if retracted else collection.ledger.retracted()
    return [e for e in edges if e.paper_id not in gone] if gone else edges


def node_names(collection: Collection) -> dict[str, dict[str, Any]]:
    """Node key -> name, type, ontology id and degree."""
    return {
        key: {"name": name, "type": etype, "id": ontology_id, "degree": degree}
        for key, name, etype, ontology_id, degree in collection.ledger.entities()
    }
