"""The collection at a glance, for a start page, and entity search by name or id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbmrag.graph.edges import node_names
from fastbmrag.store.base import Filter, Match

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


OVERVIEW_TYPES = ("gene", "disease", "chemical")


def overview(collection: Collection, *, top: int = 8, recent: int = 5) -> dict[str, Any]:
    """What a start page shows: the most connected genes, diseases and chemicals (with their
    degree and weight), the papers indexed last, and questions built from them."""
    names = node_names(collection)
    nodes = max(len(names), 1)
    # grounded entities first: a name the vocabularies gave no id ("CC", "ELISA") is no gene
    ranked = sorted(
        names.items(), key=lambda kv: (not kv[1]["id"], -kv[1]["degree"], kv[1]["name"])
    )
    most: dict[str, list[dict[str, Any]]] = {}
    for etype in OVERVIEW_TYPES:
        most[etype] = [
            {"name": n["name"], "id": n["id"], "degree": n["degree"],
             "weight": round(n["degree"] / nodes, 6)}
            for _key, n in ranked if n["type"] == etype
        ][:top]  # fmt: skip
    done = collection.ledger.papers("done")[-recent:][::-1]
    titles: dict[str, dict[str, Any]] = {}
    if done:
        flt = Filter(must=(Match("paper_id", any_of=tuple(p.paper_id for p in done)),))
        for hit in collection.scroll(flt):
            pid = str(hit.payload.get("paper_id"))
            titles.setdefault(pid, {k: hit.payload.get(k) for k in PAPER_KEYS})
    papers = [titles.get(p.paper_id, {"paper_id": p.paper_id}) | {"indexed": p.updated_at}
              for p in done]  # fmt: skip
    return {"top": most, "recent_papers": papers, "examples": _examples(most)}


PAPER_KEYS = ("paper_id", "title", "journal", "year", "pmid", "pmcid", "doi")


def _examples(most: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Questions a newcomer can click, about the collection's most connected entities."""
    genes, diseases, chemicals = (most[t] for t in OVERVIEW_TYPES)
    out = []
    if genes and diseases:
        out.append(f"What is the role of {genes[0]['name']} in {diseases[0]['name']}?")
    if diseases:
        out.append(f"Which genes are up- or down-regulated in {diseases[0]['name']}?")
    if chemicals and diseases:
        out.append(f"Does {chemicals[0]['name']} treat {diseases[0]['name']}?")
    if len(genes) > 1:
        out.append(f"How are {genes[0]['name']} and {genes[1]['name']} related?")
    return out


def find_entities(collection: Collection, text: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """The collection's entities whose name or id starts with ``text`` (then those that hold
    it), most connected first: completion for an entity search."""
    want = text.casefold().strip()
    if not want:
        return []
    starts, holds = [], []
    for key, n in node_names(collection).items():
        name = str(n["name"]).casefold()
        ident = str(n["id"] or "").casefold()
        row = {"key": key, **n}
        if name.startswith(want) or ident.startswith(want):
            starts.append(row)
        elif want in name:
            holds.append(row)
    order = sorted(starts, key=lambda r: -r["degree"]) + sorted(holds, key=lambda r: -r["degree"])
    return order[:limit]
