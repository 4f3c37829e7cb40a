"""Answers that use the graph itself, with no model call: where papers agree and where they
disagree, paths between two entities, an entity's card, follow-up questions, and the edges as a
networkx graph.

Everything is computed from the ledger's edges (who is related to whom, by which relation, in
which paper) and, for the sentences behind a hop, the stored payloads of those edges only.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastbmrag.store.base import Filter, Match
from fastbmrag.store.payload import evidence_of

if TYPE_CHECKING:
    import networkx

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


# --- consensus and contradictions -------------------------------------------------------------


def consensus(edges: Iterable[tuple[str, str, str, Any]]) -> list[dict[str, Any]]:
    """Per (source, target) pair: each relationship type with the items that state it, and
    whether two of the types say opposite things (``conflict``). ``edges``: (source, type,
    target, item) with item a paper id or an evidence number."""
    pairs: dict[tuple[str, str], dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for source, rel, target, item in edges:
        if item not in pairs[(source, target)][rel]:
            pairs[(source, target)][rel].append(item)
    out = []
    for (source, target), by_type in pairs.items():
        types = sorted(by_type)
        conflict = any(opposed(a, b) for a, b in itertools.combinations(types, 2))
        out.append({"source": source, "target": target, "conflict": conflict,
                    "relations": {t: by_type[t] for t in types}})  # fmt: skip
    return out


def contradictions(collection: Collection, entity_keys: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The pairs whose papers disagree (opposite relationship types), most papers first. The
    papers of a retracted side are named in ``retracted``; a pair whose disagreement rests
    on retracted papers alone says so (``only_with_retracted``)."""
    retracted = collection.retracted_papers()
    found = _contradictions(
        ledger_edges(collection, retracted=True), node_names(collection), entity_keys
    )
    for pair in found:
        pair["retracted"] = {
            rel: [p for p in papers if p in retracted]
            for rel, papers in pair["relations"].items()
            if any(p in retracted for p in papers)
        }
        kept = [rel for rel, papers in pair["relations"].items() if set(papers) - retracted]
        pair["only_with_retracted"] = not any(
            opposed(a, b) for a, b in itertools.combinations(kept, 2)
        )
    return found


def _contradictions(
    edges: list[Edge], names: dict[str, dict[str, Any]], entity_keys: Sequence[str]
) -> list[dict[str, Any]]:
    wanted = set(entity_keys)
    rows = [
        (e.source, e.relationship_type, e.target, e.paper_id)
        for e in edges
        if not wanted or e.source in wanted or e.target in wanted
    ]
    found = []
    for pair in consensus(rows):
        if not pair["conflict"]:
            continue
        papers = {p for ps in pair["relations"].values() for p in ps}
        pair["papers"] = len(papers)
        pair["source_name"] = names.get(pair["source"], {}).get("name", pair["source"])
        pair["target_name"] = names.get(pair["target"], {}).get("name", pair["target"])
        found.append(pair)
    return sorted(found, key=lambda p: (-p["papers"], p["source_name"], p["target_name"]))


# --- paths --------------------------------------------------------------------------------------


def paths(
    collection: Collection, start: Sequence[str], end: Sequence[str], *, max_hops: int = 3,
    limit: int = 5,
) -> list[list[dict[str, Any]]]:  # fmt: skip
    """The best-supported paths between two entities (node keys; several keys: any of them):
    fewest hops, then the most papers behind the weakest hop, then the highest node degrees.
    Each hop: its relation (in its stored direction), the papers stating it, and one evidence
    sentence with its paper."""
    import networkx

    edges = ledger_edges(collection)
    g = networkx.Graph()
    for e in edges:
        if e.source != e.target:
            g.add_edge(e.source, e.target)
    names = node_names(collection)
    found: list[list[str]] = []
    for a, b in itertools.product(start, end):
        if a in g and b in g and a != b:
            found += networkx.all_simple_paths(g, a, b, cutoff=max_hops)
    by_pair: dict[frozenset[str], list[Edge]] = defaultdict(list)
    for e in edges:
        by_pair[frozenset((e.source, e.target))].append(e)

    def support(path: list[str]) -> tuple[int, int, int]:
        weakest = min(len({e.paper_id for e in by_pair[frozenset(h)]}) for h in _steps(path))
        degree = min(names.get(k, {}).get("degree", 0) for k in path)
        return (len(path), -weakest, -degree)

    best = sorted({tuple(p) for p in found}, key=lambda p: support(list(p)))[:limit]
    hops_needed = [by_pair[frozenset(h)] for p in best for h in _steps(p)]
    sentences = _evidence(collection, [e for hop in hops_needed for e in hop])
    return [
        [_hop(a, b, by_pair[frozenset((a, b))], names, sentences) for a, b in _steps(p)]
        for p in best
    ]


def _steps(path: Sequence[str]) -> list[tuple[str, str]]:
    return list(zip(path[:-1], path[1:], strict=True))


def _hop(
    a: str, b: str, edges: list[Edge], names: dict[str, Any], sentences: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    counts = Counter((e.source, e.relationship_type, e.target) for e in edges)
    (source, rel, target), _ = counts.most_common(1)[0]
    stating = [
        e for e in edges if (e.source, e.relationship_type, e.target) == (source, rel, target)
    ]
    cited = next((sentences[e.point_id] for e in stating if e.point_id in sentences), None)
    return {
        "from": names.get(a, {}).get("name", a),
        "from_id": names.get(a, {}).get("id"),
        "to": names.get(b, {}).get("name", b),
        "to_id": names.get(b, {}).get("id"),
        "source": names.get(source, {}).get("name", source),
        "source_id": names.get(source, {}).get("id"),
        "relationship_type": rel,
        "target": names.get(target, {}).get("name", target),
        "target_id": names.get(target, {}).get("id"),
        "papers": sorted({e.paper_id for e in stating}),
        "evidence": cited,
    }


def _evidence(collection: Collection, edges: Sequence[Edge]) -> dict[str, dict[str, Any]]:
    """point id -> {"text", "paper_id"}: the first evidence sentence of each of these edges."""
    if not edges:
        return {}
    ids = {e.point_id for e in edges}
    flt = Filter(must=(Match("paper_id", any_of=tuple(sorted({e.paper_id for e in edges}))),))
    out = {}
    for hit in collection.scroll(flt):
        if hit.id in ids:
            ev = evidence_of(hit.payload)
            text = ev[0]["text"] if ev else str(hit.payload.get("description") or "")
            out[hit.id] = {"text": text, "paper_id": hit.payload.get("paper_id")}
    return out


# --- entity cards and follow-ups --------------------------------------------------------------


def entity_card(collection: Collection, key: str, facts: dict[str, Any]) -> dict[str, Any]:
    """What the vocabulary says (``facts``) and what the collection holds about node ``key``:
    degree and weight, relations by type with paper counts, the strongest partners, papers by
    year."""
    names = node_names(collection)
    node = names.get(key, {})
    everything = ledger_edges(collection, retracted=True)
    retracted = collection.retracted_papers()
    touching = [
        e for e in everything if key in (e.source, e.target) and e.paper_id not in retracted
    ]
    left_out = {
        e.paper_id for e in everything if key in (e.source, e.target) and e.paper_id in retracted
    }
    by_type: dict[str, set[str]] = defaultdict(set)
    partners: dict[str, set[str]] = defaultdict(set)
    for e in touching:
        by_type[e.relationship_type].add(e.paper_id)
        partners[e.target if e.source == key else e.source].add(e.paper_id)
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
    nodes = max(collection.node_count(), 1)
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
        "relations": {t: len(p) for t, p in sorted(by_type.items(), key=lambda kv: -len(kv[1]))},
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
        "retracted_papers": sorted(left_out),  # about it too, and left out of the above
    }


def vocabulary_card(
    name: str, type_: str, ontology_id: str | None, facts: dict[str, Any]
) -> dict[str, Any]:
    """The card of a vocabulary entry no edge of the collection is about: its facts alone, the
    fields of :func:`entity_card` empty."""
    return {
        "key": None, "name": name, "type": type_, "id": ontology_id, "vocabulary": facts,
        "in_collection": False, "degree": 0, "weight": 0.0, "relations": {}, "partners": [],
        "papers": 0, "papers_by_year": {}, "retracted_papers": [],
    }  # fmt: skip


def as_digraph(payloads: Iterable[dict[str, Any]]) -> networkx.DiGraph:
    """Edge payloads (with their weights) as a directed graph: a node per entity (name, type,
    ontology id), an edge per (source, target) with every relation between them
    (``relations``: type, paper, description) and the pair's largest weight."""
    import networkx

    g = networkx.DiGraph()
    for p in payloads:
        for side in ("source", "target"):
            g.add_node(p[f"{side}_key"], name=p[side], type=p[f"{side}_type"],
                       ontology_id=p[f"{side}_id"] or None)  # fmt: skip
        u, v = p["source_key"], p["target_key"]
        if not g.has_edge(u, v):
            g.add_edge(u, v, relations=[], weight=0.0)
        data = g.edges[u, v]
        data["relations"].append(
            {k: p.get(k) for k in ("relationship_type", "paper_id", "description")}
        )
        data["weight"] = max(data["weight"], p.get("weight") or 0.0)
    return g


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
    for pair in _contradictions(edges, names, entity_keys)[:1]:
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


# --- the collection at a glance ----------------------------------------------------------------

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
    done = collection.done_papers()[-recent:][::-1]
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
