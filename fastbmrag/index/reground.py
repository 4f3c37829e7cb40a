"""Papers that NCBI had not annotated when they were indexed, grounded once PubTator3 has them
(:func:`reground_papers`, run by ``sync``).

No chat call: each stored edge keeps its names as the model wrote them, its description and
the sentences it cites, so its ends are grounded again from the store alone (an end PubTator3
does not annotate keeps its id). The edges are embedded again (the embedding cache answers
those whose statement did not change) and committed as the paper's new edges, exactly as a
re-index commits them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastbmrag.index.grounding import PUBTATOR, PaperGrounding
from fastbmrag.llm.base import LLMClient
from fastbmrag.papers.pubtator import PubTatorClient, Request
from fastbmrag.prompts import relation_statement
from fastbmrag.store.base import EdgeRef, Filter, Match, Point, edge_point_id, node_key
from fastbmrag.store.collection import Collection, PaperEdges
from fastbmrag.store.payload import evidence_of, ledger_columns
from fastbmrag.vocab.base import Normalizer

ROLES = ("source", "target")


@dataclass(frozen=True)
class _Cited:
    text: str
    where: str


def reground_papers(
    collection: Collection, client: PubTatorClient, llm: LLMClient, normalizer: Normalizer
) -> tuple[int, int, int]:
    """Re-ground the papers the ledger lists as not yet annotated that PubTator3 now annotates:
    how many, and the embedding requests that took (no chat call) and the texts the cache
    answered. Closes ``llm``."""
    papers = asyncio.run(_reground(collection, client, llm, normalizer))
    used = llm.accounting.total()
    return papers, used.calls, used.cached


async def _reground(
    collection: Collection, client: PubTatorClient, llm: LLMClient, normalizer: Normalizer
) -> int:
    try:
        pending = collection.ledger.not_yet_grounded()
        if not pending:
            return 0
        requests = {pid: Request(*key.split(":", 1)) for pid, key in pending}
        docs = await asyncio.to_thread(client.documents, list(requests.values()), refresh=True)
        done: list[PaperEdges] = []
        for pid, req in requests.items():
            doc = docs.get(req.key)
            state = collection.ledger.paper_state(pid)
            if doc is None or state is None:
                continue
            grounding = PaperGrounding(doc, normalizer)
            hits = list(collection.scroll(Filter(must=(Match("paper_id", pid),))))
            payloads = _rekeyed([h.payload for h in hits], grounding, normalizer)
            texts = [
                f"{relation_statement(p['source'], p['relationship_type'], p['target'])}. "
                f"{p.get('description', '')}"
                for p in payloads
            ]
            vectors: Any = await llm.embed(texts) if texts else []
            points = [
                Point(
                    edge_point_id(pid, p["source_key"], p["relationship_type"], p["target_key"]),
                    vector,
                    p,
                )
                for p, vector in zip(payloads, vectors, strict=True)
            ]
            refs = [_ref(p) for p in payloads]
            done.append(PaperEdges(pid, state.content_hash, points, refs, (PUBTATOR, req.key)))
        collection.commit_papers(done)
        return len(done)
    finally:
        await llm.aclose()


def _rekeyed(
    payloads: list[dict[str, Any]], grounding: PaperGrounding, normalizer: Normalizer
) -> list[dict[str, Any]]:
    """The payloads with each end PubTator3 now grounds re-keyed; one edge per triple, and no
    edge whose two ends became one entity."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for old in payloads:
        p = dict(old)
        cited = [_Cited(e["text"], e.get("where") or "") for e in evidence_of(p)]
        for role in ROLES:
            raw, etype = p.get(f"{role}_raw") or p.get(role, ""), p.get(f"{role}_type", "")
            found = grounding.ground(raw, etype, cited)
            if found is None or not found.ontology_id:
                continue
            oid = found.ontology_id
            p.update({
                role: found.normalized_name,
                f"{role}_id": oid,
                f"{role}_key": node_key(oid, p[f"{role}_type"], found.normalized_name),
                f"{role}_ancestors": list(normalizer.ancestors(oid)),
                f"{role}_match": found.matched_by,
                f"{role}_grounding": PUBTATOR,
            })  # fmt: skip
        triple = (p["source_key"], p["relationship_type"], p["target_key"])
        if p["source_key"] != p["target_key"] and triple not in out:
            out[triple] = p
    return list(out.values())


def _ref(p: dict[str, Any]) -> EdgeRef:
    ends: dict[str, Any] = {}
    for role in ROLES:
        ends[f"{role}_key"] = p[f"{role}_key"]
        ends[f"{role}_name"] = p.get(role, "")
        ends[f"{role}_type"] = p.get(f"{role}_type", "")
        ends[f"{role}_id"] = p.get(f"{role}_id") or None
        ends[f"{role}_raw"] = p.get(f"{role}_raw", "")
    return EdgeRef(**ends, relationship_type=p["relationship_type"], columns=ledger_columns(p))
