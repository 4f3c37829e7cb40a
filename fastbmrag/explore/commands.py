"""The graph commands of a workspace (:class:`fastbmrag.RAG`), no model call: the start page,
entity completion and cards, contradictions, paths, the digest and its watched entities, the
concepts below one, and the edges as a DataFrame or a networkx graph. Names and ids are
resolved as a query's entities are (:func:`fastbmrag.query.resolve_entity`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastbmrag.declared import check, option, options_of, values_of
from fastbmrag.errors import InputError
from fastbmrag.explore.digest import LAST
from fastbmrag.explore.paths import DEFAULT_HOPS
from fastbmrag.query.options import findings_only_option
from fastbmrag.store.admin import status
from fastbmrag.util.wording import operation_named, option_named

if TYPE_CHECKING:
    from typing import Unpack

    import networkx
    import pandas

    from fastbmrag.keywords import QueryKeywords
    from fastbmrag.store.workspace import Workspace


MAX_HOPS = 6  # a path of more hops says little: every entity is a few hops from every other
MAX_FOUND = 50  # entities one completion lists
MAX_NEIGHBOURS = 200  # edges the page lists around an entity
NAME = "an entity's name or id as text (IL1B, HGNC:5992)"  # what a name must be


def _name(help: str) -> Any:
    """A positional entity name or id, declared."""
    return option(help=help, argument=True, kind=NAME)


def _as_query(name: str) -> Any:
    """The query's declared option ``name`` (its flag, help and default), for a graph command:
    the papers of a study design or organism, and only their findings, are said alike."""
    from dataclasses import fields

    from fastbmrag.query.options import QueryOptions

    f = next(f for f in fields(QueryOptions) if f.name == name)
    return field(default=f.default, metadata=f.metadata)


@dataclass(kw_only=True)
class StudyOptions:
    """The papers a graph command reads, said as a query's filters say them: their study
    designs and organisms (as keys, or their names: "RCT, meta-analysis"), and only what they
    found (not what they restate as known)."""

    designs: tuple[str, ...] = _as_query("designs")
    organisms: tuple[str, ...] = _as_query("organisms")
    findings_only: bool = _as_query("findings_only")

    def __post_init__(self) -> None:
        check(self)
        self.studies()  # the designs and organisms, checked

    def studies(self) -> Any:
        """The study filter (:class:`fastbmrag.explore.Studies`), its values checked."""
        return _studies(self.designs, self.organisms, self.findings_only)


@dataclass
class FindOptions:
    """What an entity search (the page's completion) is told."""

    text: str = option(help="Text an entity's name or id begins with or holds.", argument=True,
                       kind=NAME)  # fmt: skip
    limit: int = option(10, low=1, high=MAX_FOUND, whole=True, help="Entities listed at most.")

    def __post_init__(self) -> None:
        check(self)


@dataclass
class EntityOptions(StudyOptions):
    """What an entity's card is told."""

    name: str = _name("The entity's name or id.")


@dataclass
class NeighbourOptions:
    """What the edges around an entity are told."""

    name: str = _name("The entity's name or id.")
    limit: int = option(30, low=1, high=MAX_NEIGHBOURS, whole=True,
                        help="Edges listed at most, the heaviest first.")  # fmt: skip

    def __post_init__(self) -> None:
        check(self)


@dataclass
class PathOptions(StudyOptions):
    """What `path` is told."""

    start: str = _name("Where the path starts: an entity's name or id.")
    end: str = _name("Where it ends.")
    max_hops: int = option(
        DEFAULT_HOPS, flag="--max-hops", low=1, high=MAX_HOPS, whole=True,
        help="Most hops a path may take.",
    )  # fmt: skip


@dataclass
class ContradictionOptions(StudyOptions):
    """What `contradictions` is told."""

    entity: str | None = option(None, flag="--entity", short="-e", kind=NAME,
                                help="Only pairs this entity (name or id) is part of.")  # fmt: skip


@dataclass
class DigestOptions:
    """What `digest` can be told."""

    findings_only: bool = findings_only_option()
    since: str = option(
        LAST, flag="--since", kind="'last', a run number or a date as text",
        help="'last' (the last update or sync), a run number (that run and the later ones; 0: "
        "everything) or a date (YYYY-MM-DD).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)


def node_keys(rag: Workspace, name: str) -> tuple[str, ...]:
    """The node keys a name or id (IL1B, HGNC:5992, endometriosis) can have."""
    from fastbmrag.query import resolve_entity

    return resolve_entity(name, rag.normalizer()).node_keys()


def overview(rag: Workspace) -> dict[str, Any]:
    """The collection at a glance (a start page): counts, the last update, the most
    connected genes, diseases and chemicals, the papers indexed last, example questions."""
    from fastbmrag.explore import overview

    stats = status(rag, max_failed=0)
    with rag.reader(command="overview") as coll:
        return {
            "collection": stats["collection"],
            "papers": stats["papers"]["done"],
            "edges": stats["edges"],
            "entities": stats["entities"],
            "retracted_papers": stats["retracted_papers"],
            "last_update": (stats["last_run"] or {}).get("ended_at"),
            **overview(coll),
        }


def find_entities(rag: Workspace, text: str, limit: int = 10) -> list[dict[str, Any]]:
    """The collection's entities named or identified by ``text`` (a prefix first), at most
    ``limit`` (1 to 50)."""
    from fastbmrag.explore import find_entities

    FindOptions(text, limit)
    with rag.reader(command="entity") as coll:
        return find_entities(coll, text, limit=limit)


def contradictions(
    rag: Workspace, entity: str | None = None, *, designs: Any = (), organisms: Any = (),
    findings_only: bool = False,
) -> list[dict[str, Any]]:
    """The entity pairs whose papers disagree (opposite relationship types), most papers
    first; with ``entity``, only pairs it is part of; ``designs`` / ``organisms``: only
    papers of these study designs and organisms (as a query's); ``findings_only``: only the
    edges the papers found, not those they restate as known."""
    from fastbmrag.explore import contradictions, node_names
    from fastbmrag.query import resolve_entity

    studies = ContradictionOptions(entity=entity, designs=designs, organisms=organisms,
                                   findings_only=findings_only).studies()  # fmt: skip
    if entity is None:
        with rag.ledger() as coll:
            return contradictions(coll, (), studies)
    found = resolve_entity(entity, rag.normalizer())  # "" is an error there
    with rag.ledger() as coll:
        known = node_names(coll)
        if not any(k in known for k in found.node_keys()):
            raise _absent(entity, found, coll.name, "so no pair holds it")
        return contradictions(coll, found.node_keys(), studies)


def path(
    rag: Workspace, start: str, end: str, *, max_hops: int = DEFAULT_HOPS, designs: Any = (),
    organisms: Any = (), findings_only: bool = False,
) -> list[list[dict[str, Any]]]:
    """The best-supported paths between two entities, each hop with its relation, papers
    and an evidence sentence; ``designs`` / ``organisms`` / ``findings_only`` as for
    :meth:`contradictions`."""
    from fastbmrag.explore import node_names, paths
    from fastbmrag.query import resolve_entity

    studies = PathOptions(start=start, end=end, max_hops=max_hops, designs=designs,
                          organisms=organisms, findings_only=findings_only).studies()  # fmt: skip
    norm = rag.normalizer()
    ends = [resolve_entity(start, norm), resolve_entity(end, norm)]
    if set(ends[0].node_keys()) & set(ends[1].node_keys()):
        named = f"{ends[0].name} ({ends[0].id})" if ends[0].id else repr(start)
        raise InputError(
            f"{start!r} and {end!r} both name {named}: a path joins two different entities"
        )
    with rag.reader(command="path") as coll:
        known = node_names(coll)
        for given, found in zip((start, end), ends, strict=True):
            if not any(k in known for k in found.node_keys()):
                raise _absent(given, found, coll.name, "so no path reaches it")
        return paths(coll, ends[0].node_keys(), ends[1].node_keys(), max_hops=max_hops,
                     studies=studies)  # fmt: skip


def entity(
    rag: Workspace, name: str, *, designs: Any = (), organisms: Any = (),
    findings_only: bool = False,
) -> dict[str, Any]:
    """An entity's card: vocabulary facts and what the collection holds about it (in the
    papers of ``designs`` / ``organisms``, ``findings_only``, as for :meth:`contradictions`),
    its papers counted by study design. An entry of the vocabularies that no edge is about gets
    its facts alone (``in_collection`` false) and the ``narrower`` concepts that have edges; a
    name neither knows is an InputError (naming the narrower concepts, where some have edges)."""
    from fastbmrag.explore import entity_card, node_names, vocabulary_card
    from fastbmrag.query import resolve_entity

    studies = EntityOptions(name=name, designs=designs, organisms=organisms,
                            findings_only=findings_only).studies()  # fmt: skip
    norm = rag.normalizer()
    found = resolve_entity(name, norm)
    with rag.reader(command="entity") as coll:
        known = node_names(coll)
        key = next((k for k in found.node_keys() if k in known), None)
        if key is not None:
            ontology_id = known[key]["id"]
            facts: dict[str, Any] = norm.facts(ontology_id) if ontology_id else {}
            return {**entity_card(coll, key, facts, studies), "narrower": []}
    facts = norm.facts(found.id) if found.id else {}
    below = narrower(rag, name)
    if facts:
        return {**vocabulary_card(found.name, found.type, found.id, facts), "narrower": below}
    if below:
        raise InputError(
            f"No edge of the collection is about {name!r} itself, but some are about concepts "
            f"below it: {', '.join(below)}; ask for one of those, or ask a question with "
            f"{option_named('entities')} {name}"
        )
    raise InputError(
        f"No edge of the collection is about {name!r}, and the vocabularies do not know it: "
        "check the name, or list the collection's entities with an export"
    )


def digest(rag: Workspace, since: str = LAST, *, findings_only: bool = False) -> dict[str, Any]:
    """What the runs since ``since`` changed (:mod:`fastbmrag.explore.digest`): new papers and
    edges by entity, watched ones first, pairs that newly disagree or agree, retractions; with
    ``findings_only``, only the edges the papers found. No model call."""
    from fastbmrag.explore.digest import digest

    opts = DigestOptions(since=since, findings_only=findings_only)
    with rag.reader(command="digest") as coll:
        return digest(coll, opts.since, findings_only=opts.findings_only)


def watch(rag: Workspace, names: Sequence[str]) -> list[tuple[str, str]]:
    """Watch these entities (names or ids, normalised as a query's ``entities`` are): their
    news come first in a digest. The (node key, name) watched."""
    from fastbmrag.explore import node_names
    from fastbmrag.query import resolve_entity

    norm = rag.normalizer()
    with rag.ledger() as coll:
        known = node_names(coll)
        chosen = []
        for name in values_of(names, "names"):
            found = resolve_entity(name, norm)
            keys = found.node_keys()
            key = next((k for k in keys if k in known), None)
            if key is None and not (found.id and norm.facts(found.id)):
                raise InputError(
                    f"{name!r} is no entity of collection '{coll.name}' and the vocabularies "
                    "know no such name or id: watch a name or id they know (IL6, HGNC:6018, "
                    "D004715)"
                )
            key = key or keys[0]
            chosen.append((key, known.get(key, {}).get("name") or found.name))
        coll.ledger.watches.add(chosen)
    return chosen


def unwatch(rag: Workspace, names: Sequence[str]) -> int:
    """Stop watching these entities (names, ids or the keys ``watched`` lists): how many."""
    from fastbmrag.query import resolve_entity

    norm = rag.normalizer()
    with rag.ledger() as coll:
        watched = coll.ledger.watches.all()
        keys = set()
        for name in values_of(names, "names"):
            named = {k for k, n in watched.items() if name in (k, n)}
            keys |= named or set(resolve_entity(name, norm).node_keys())
        return coll.ledger.watches.remove(sorted(keys))


def watched(rag: Workspace) -> dict[str, str]:
    """Node key -> name of the watched entities."""
    with rag.ledger() as coll:
        return coll.ledger.watches.all()


def narrower(rag: Workspace, name: str, limit: int = 5) -> list[str]:
    """The collection's entities below a concept (MeSH descendants, an HGNC gene group's
    genes), most connected first: where to look when no edge is about the concept itself."""
    from fastbmrag.explore import node_names
    from fastbmrag.query import resolve_entity

    if not isinstance(name, str):
        raise InputError(f"name must be {NAME}, got {name!r}", field="name")
    norm = rag.normalizer()
    concept = resolve_entity(name, norm).id
    if not concept:
        return []
    with rag.reader(command="entity") as coll:
        below = [
            e for e in node_names(coll).values() if e["id"] and concept in norm.ancestors(e["id"])
        ]
    return [e["name"] for e in sorted(below, key=lambda e: -e["degree"])[:limit]]


def edges(rag: Workspace, **filters: Unpack[QueryKeywords]) -> pandas.DataFrame:
    """Every edge passing the query filters (``entities``, ``relationship_types``,
    ``since``, ``min_weight``, ...): one row per edge, its payload and current weight."""
    import pandas

    from fastbmrag.store.payload import completed

    rows = [{"point_id": p, **completed(payload)} for p, payload in _edges(rag, dict(filters))]
    if not rows:  # no edge: the columns all the same
        from fastbmrag.store.payload import FIELDS

        return pandas.DataFrame(columns=["point_id", *FIELDS, "weight"])
    return pandas.DataFrame(rows)


# what the page shows of each edge around an entity
NEIGHBOUR_FIELDS = ("point_id", "source", "source_type", "source_key", "target", "target_type",
                    "target_key", "relationship_type", "paper_id", "weight")  # fmt: skip


def neighbours(rag: Workspace, name: str, limit: int = 30) -> list[dict[str, Any]]:
    """The edges about an entity, the heaviest first, at most ``limit`` (1 to 200): each its
    ends, relationship type, paper and weight."""
    NeighbourOptions(name, limit)
    frame = edges(rag, entities=[name])
    rows = frame.sort_values("weight", ascending=False).head(limit) if len(frame) else frame
    return [{k: r[k] for k in NEIGHBOUR_FIELDS} for r in rows.to_dict("records")]


def graph(rag: Workspace, **filters: Unpack[QueryKeywords]) -> networkx.DiGraph:
    """The edges passing the query filters as a directed graph: a node per entity (name,
    type, ontology id), an edge per (source, target) with every relation between them
    (``relations``: type, paper, description) and the pair's largest weight."""
    from fastbmrag.explore import as_digraph

    return as_digraph(payload for _, payload in _edges(rag, dict(filters)))


def _edges(rag: Workspace, filters: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    from fastbmrag.query import FilterSpec, Parse, QueryOptions, build_spec

    opts = options_of(QueryOptions, {**filters, "link": False})
    with rag.reader(command="edges") as coll:
        spec: FilterSpec = build_spec(opts, [], Parse(), rag.normalizer())
        spec = spec.resolve_weight(coll)
        for hit in coll.edges(spec.to_filter() or None):
            yield hit.id, hit.payload


def _studies(designs: Any, organisms: Any, findings_only: bool = False) -> Any:
    """The study filter of a graph command, its designs and organisms checked as a query's."""
    from fastbmrag.explore import Studies
    from fastbmrag.query.options import study_filter

    return Studies(*study_filter(designs, organisms), findings_only=findings_only)


def _absent(given: str, found: Any, collection: str, so: str) -> InputError:
    """The error for an entity (``found``: its resolution) no edge of the collection is about."""
    named = f"{found.name} ({found.id})" if found.id else repr(given)
    return InputError(
        f"{named} is not in collection '{collection}': no edge is about it, {so} "
        f"({operation_named('entity', given)} says what the vocabularies know of it)"
    )
