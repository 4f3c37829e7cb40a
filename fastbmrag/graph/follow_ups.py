"""Follow-up questions the graph around an answer can answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from fastbmrag.graph.consensus import disagreements
from fastbmrag.graph.edges import ledger_edges, node_names

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def follow_ups(
    collection: Collection,
    entity_keys: Sequence[str],
    covered: Iterable[str],
    n: int = 3,
    ancestors: Callable[[str], Sequence[str]] | None = None,
) -> list[str]:
    """Up to ``n`` questions the graph around the question's entities can answer and the answer
    did not cover: an open contradiction first, then a narrower or broader concept with evidence
    (from ``ancestors``: MeSH trees, HGNC gene groups), then the strongest neighbours left out."""
    if not entity_keys:
        return []
    names = node_names(collection)
    edges = ledger_edges(collection)  # read once for both uses below
    covered = set(covered)
    asked = set(entity_keys)
    out = []
    for pair in disagreements(edges, names, entity_keys)[:1]:
        out.append(
            f"Do papers agree on how {pair['source_name']} relates to {pair['target_name']}?"
        )
    if ancestors is not None:
        for key, node in names.items():
            if key in asked or key in covered or not node["id"]:
                continue
            above = set(ancestors(node["id"]))
            if above & asked:
                out.append(f"What is known about {node['name']}, a narrower concept?")
                break
        for key in entity_keys:
            broader = [a for a in ancestors(key) if a in names and a not in asked]
            if broader:
                out.append(f"What is known about {names[broader[0]]['name']}, a broader concept?")
                break
    counts: Counter[str] = Counter()
    for e in edges:
        for mine, other in ((e.source, e.target), (e.target, e.source)):
            if mine in asked and other not in covered and other not in asked:
                counts[other] += 1
    for other, _ in counts.most_common():
        if len(out) >= n:
            break
        mine = next(k for k in entity_keys if k in names)
        out.append(
            f"What is the relation between {names.get(mine, {}).get('name', mine)} and "
            f"{names.get(other, {}).get('name', other)}?"
        )
    return out[:n]
