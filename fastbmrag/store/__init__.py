"""Storage: Qdrant Edge (embedded) or a Qdrant server for edges; SQLite ledger for state.

The indexer, query and sync code use :class:`Collection` (store + ledger + weights + locking);
the store classes are importable from their modules (:mod:`fastbmrag.store.edge`,
:mod:`fastbmrag.store.server`) so that importing this package does not load qdrant-client.
"""

from fastbmrag.store.base import (
    EdgeRef,
    Filter,
    Hit,
    Match,
    Point,
    Range,
    Store,
    edge_point_id,
    node_key,
)
from fastbmrag.store.collection import DEFAULT_OPTIMIZE_MIN_POINTS, Collection, PaperEdges
from fastbmrag.store.history import RunRecord, SyncState
from fastbmrag.store.ledger import Ledger, PaperState
from fastbmrag.store.places import list_collections

__all__ = [
    "DEFAULT_OPTIMIZE_MIN_POINTS",
    "Collection",
    "EdgeRef",
    "Filter",
    "Hit",
    "Ledger",
    "Match",
    "PaperEdges",
    "PaperState",
    "Point",
    "Range",
    "RunRecord",
    "Store",
    "SyncState",
    "edge_point_id",
    "list_collections",
    "node_key",
]
