"""Where papers agree and where they disagree about a pair of entities."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from fastbmrag.graph.edges import (
    Edge,
    Studies,
    ledger_edges,
    node_names,
    opposed,
    papers_by_design,
)

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def consensus(edges: Iterable[tuple[str, str, str, Any, bool]]) -> list[dict[str, Any]]:
    """Per (source, target) pair: each relationship type with the items that found it
    (``relations``) and those that only restate it as known before (``cited``), and whether two
    of the types say opposite things (``conflict``). ``edges``: (source, type, target, item,
    background) with item a paper id or an evidence number."""
    pairs: dict[tuple[str, str], dict[str, dict[Any, bool]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for source, rel, target, item, background in edges:
        items = pairs[(source, target)][rel]
        items[item] = items.get(item, True) and background  # a finding once: a finding
    out = []
    for (source, target), by_type in pairs.items():
        types = sorted(by_type)
        conflict = any(opposed(a, b) for a, b in itertools.combinations(types, 2))
        out.append({
            "source": source, "target": target, "conflict": conflict,
            "relations": {t: [i for i, b in by_type[t].items() if not b] for t in types},
            "cited": {t: c for t in types if (c := [i for i, b in by_type[t].items() if b])},
        })  # fmt: skip
    return out


def stating(pair: dict[str, Any]) -> dict[str, list[Any]]:
    """A :func:`consensus` pair's items per relationship type, those that found it and those
    that cite it together."""
    return {t: [*found, *pair["cited"].get(t, [])] for t, found in pair["relations"].items()}


def contradictions(
    collection: Collection, entity_keys: Sequence[str] = (), studies: Studies | None = None
) -> list[dict[str, Any]]:
    """The pairs whose papers disagree (opposite relationship types), most papers first, with
    their papers counted by study design. The papers of a retracted side are named in
    ``retracted``; a pair whose disagreement rests on retracted papers alone says so
    (``only_with_retracted``)."""
    retracted = collection.ledger.retracted()
    found = disagreements(
        ledger_edges(collection, retracted=True, studies=studies),
        node_names(collection),
        entity_keys,
    )
    labels = collection.ledger.labels.all()  # once, not per pair
    for pair in found:
        sides = stating(pair)
        pair["papers_by_design"] = papers_by_design(
            labels, {p for ps in sides.values() for p in ps}
        )
        pair["retracted"] = {
            rel: [p for p in papers if p in retracted]
            for rel, papers in sides.items()
            if any(p in retracted for p in papers)
        }
        kept = [rel for rel, papers in sides.items() if set(papers) - retracted]
        pair["only_with_retracted"] = not any(
            opposed(a, b) for a, b in itertools.combinations(kept, 2)
        )
    return found


def disagreements(
    edges: list[Edge], names: dict[str, dict[str, Any]], entity_keys: Sequence[str]
) -> list[dict[str, Any]]:
    """The pairs that ``edges`` relate by opposite relationship types (about ``entity_keys``
    when given), with the papers on each side: what :func:`contradictions` and the follow-up
    questions read."""
    wanted = set(entity_keys)
    rows = [
        (e.source, e.relationship_type, e.target, e.paper_id, e.background)
        for e in edges
        if not wanted or e.source in wanted or e.target in wanted
    ]
    found = []
    for pair in consensus(rows):
        if not pair["conflict"]:
            continue
        papers = {p for ps in stating(pair).values() for p in ps}
        pair["papers"] = len(papers)
        pair["source_name"] = names.get(pair["source"], {}).get("name", pair["source"])
        pair["target_name"] = names.get(pair["target"], {}).get("name", pair["target"])
        found.append(pair)
    return sorted(found, key=lambda p: (-p["papers"], p["source_name"], p["target_name"]))
