"""What `fastbmrag status` reports of a collection: read from its ledger alone, so that it
works while an update holds the store."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def collection_status(coll: Collection, max_failed: int | None = 100) -> dict[str, Any]:
    """Papers by state (and the first ``max_failed`` failures), edges, entities, the last run,
    the vector size and the size on disk."""
    ledger = coll.ledger
    counts = ledger.paper_counts()
    run = ledger.last_run()
    size = ledger.get_meta("vector_size")
    return {
        "collection": coll.name,
        "backend": coll.backend,
        "location": coll.location,
        "ledger": str(ledger.path),
        "papers": {**counts, "total": sum(counts.values())},
        "retracted_papers": len(ledger.retracted()),
        # done papers by study design, and by where the design came from
        "designs": ledger.study_counts(),
        "failed": [
            {"paper_id": p.paper_id, "error": p.error, "updated_at": p.updated_at}
            for p in ledger.papers("failed", limit=max_failed)
        ],
        "edges": ledger.edge_count(),
        "distinct_edges": ledger.distinct_edge_count(),
        "entities": ledger.node_count(),
        "vector_size": int(size) if size else None,
        "outdated_papers": ledger.outdated_papers(),
        "last_run": asdict(run) if run else None,
        "size_on_disk": coll.size_on_disk(),
    }
