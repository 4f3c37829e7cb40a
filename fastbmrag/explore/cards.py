"""An entity's card: what the vocabularies say of it and what the collection holds about it."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from fastbmrag.graph.edges import Studies, ledger_edges, node_names, papers_by_design
from fastbmrag.store.base import Filter, Match

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def entity_card(
    collection: Collection, key: str, facts: dict[str, Any], studies: Studies | None = None
) -> dict[str, Any]:
    """What the vocabulary says (``facts``) and what the collection holds about node ``key``
    (in the papers ``studies`` passes): degree and weight, relations by type with the papers
    that found each and, apart (``cited``), those that only state it as known before,
    the strongest partners, papers by year and by study design."""
    names = node_names(collection)
    node = names.get(key, {})
    everything = ledger_edges(collection, retracted=True, studies=studies)
    retracted = collection.ledger.retracted()
    touching = [
        e for e in everything if key in (e.source, e.target) and e.paper_id not in retracted
    ]
    left_out = {
        e.paper_id for e in everything if key in (e.source, e.target) and e.paper_id in retracted
    }
    by_type: dict[str, set[str]] = defaultdict(set)  # the papers that found it
    cited: dict[str, set[str]] = defaultdict(set)  # those that state it as known before
    partners: dict[str, set[str]] = defaultdict(set)
    for e in touching:
        (cited if e.background else by_type)[e.relationship_type].add(e.paper_id)
        partners[e.target if e.source == key else e.source].add(e.paper_id)
    for t, ps in cited.items():
        ps -= by_type.get(t, set())  # a paper that found it counts once, as finding it
    years: Counter[int] = Counter()
    papers = sorted({e.paper_id for e in touching})
    if papers:
        seen: set[str] = set()
        flt = Filter(must=(Match("paper_id", any_of=tuple(papers)),))
        for hit in collection.scroll(flt):
            pid = str(hit.payload.get("paper_id"))
            if pid not in seen and hit.payload.get("year"):
                seen.add(pid)
                years[int(hit.payload["year"])] += 1
    nodes = max(collection.ledger.node_count(), 1)
    strongest = sorted(
        partners, key=lambda k: (-len(partners[k]), -names.get(k, {}).get("degree", 0))
    )
    return {
        "key": key,
        "name": node.get("name", facts.get("name", key)),
        "type": node.get("type"),
        "id": node.get("id"),
        "vocabulary": facts,
        "in_collection": True,
        "degree": node.get("degree", 0),
        "weight": round(node.get("degree", 0) / nodes, 6),
        "relations": {t: len(by_type[t]) for t in sorted(
            by_type.keys() | cited.keys(), key=lambda t: (-len(by_type[t]), -len(cited[t]), t))},
        "cited": {t: len(ps) for t, ps in sorted(cited.items()) if ps},  # fmt: skip
        "partners": [
            {
                "name": names.get(k, {}).get("name", k),
                "id": names.get(k, {}).get("id"),
                "papers": len(partners[k]),
            }
            for k in strongest[:10]
        ],  # fmt: skip
        "papers": len(papers),
        "papers_by_year": dict(sorted(years.items())),
        "papers_by_design": papers_by_design(collection.ledger.labels.all(), set(papers)),
        "retracted_papers": sorted(left_out),  # about it too, and left out of the above
    }


def vocabulary_card(
    name: str, type_: str, ontology_id: str | None, facts: dict[str, Any]
) -> dict[str, Any]:
    """The card of a vocabulary entry no edge of the collection is about: its facts alone, the
    fields of :func:`entity_card` empty."""
    return {
        "key": None, "name": name, "type": type_, "id": ontology_id, "vocabulary": facts,
        "in_collection": False, "degree": 0, "weight": 0.0, "relations": {}, "cited": {}, "partners": [],
        "papers": 0, "papers_by_year": {}, "papers_by_design": {}, "retracted_papers": [],
    }  # fmt: skip
