"""What `fastbmrag status` reports of a collection: read from its ledger alone, so that it
works while an update holds the store."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


def collection_status(
    coll: Collection, max_failed: int | None = 100, normalizer: Normalizer | None = None
) -> dict[str, Any]:
    """Papers by state (and the first ``max_failed`` failures), edges, entities, the
    supplementary concepts among them (with a heading the ``normalizer`` knows, and without), the last
    run, the vector size and the size on disk."""
    ledger = coll.ledger
    counts = ledger.paper_counts()
    run = ledger.runs.last()
    size = ledger.get_meta("vector_size")
    return {
        "collection": coll.name,
        "backend": coll.backend,
        "location": coll.location,
        "ledger": str(ledger.path),
        "papers": {**counts, "total": sum(counts.values())},
        "retracted_papers": len(ledger.retracted()),
        # done papers by study design, and by where the design came from
        "designs": ledger.labels.counts(),
        "failed": [
            {"paper_id": p.paper_id, "error": p.error, "updated_at": p.updated_at}
            for p in ledger.papers("failed", limit=max_failed)
        ],
        "edges": ledger.edge_count(),
        "distinct_edges": ledger.distinct_edge_count(),
        "entities": ledger.node_count(),
        "supplementary": _supplementary(ledger.supplementary_ids(), normalizer),
        "vector_size": int(size) if size else None,
        "outdated_papers": ledger.outdated_papers(),
        "last_run": asdict(run) if run else None,
        "size_on_disk": coll.size_on_disk(),
    }


def _supplementary(ids: list[str], normalizer: Normalizer | None) -> dict[str, int]:
    """How many of the graph's ids are MeSH supplementary concepts (the C ids PubTator3 gives),
    and how many of them sit under a heading descriptor the vocabularies know (a filter on the
    heading finds their edges)."""
    under = sum(1 for i in ids if normalizer is not None and normalizer.ancestors(i))
    return {"ids": len(ids), "with_heading": under, "without_heading": len(ids) - under}
