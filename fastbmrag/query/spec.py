"""The filters of one query (:class:`FilterSpec`): built from the options, the linked entities
and the parse; turned into a store filter; relaxed, only in what was inferred, when nothing
matches; and, when nothing is left, why (:func:`no_evidence`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import Entity, Parse, resolve_entity
from fastbmrag.query.filters import PAYLOAD_FILTERS, payload_conditions
from fastbmrag.query.options import QueryOptions
from fastbmrag.store.base import Condition, Filter, Match, Words
from fastbmrag.text.findings import BACKGROUND
from fastbmrag.util.wording import counted, option_named
from fastbmrag.vocab.rules.keys import in_both_numbers

RETRACTED = Match("retracted", value=1)  # an edge of a retracted paper
TYPES = ("relationship_types", "entity_types")  # the flags', else the parse's
RESTATED = Match("finding", value=BACKGROUND)  # what a paper restates as known (text.findings)

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


@dataclass
class FilterSpec:
    """The filters of one query, before they become a store :class:`Filter`."""

    entities: list[Entity] = field(default_factory=list)
    # the query's declared options: its payload filters (but the two types, below), minimum
    # weight, retracted papers and findings are read from them, never copied
    options: QueryOptions = field(default_factory=QueryOptions)
    match: str = "all"
    # the relationship and answer types: the flags', else the parse's (relaxed when nothing
    # matches)
    relationship_types: tuple[str, ...] = ()
    relationship_types_from: str = "none"  # "flag" | "parse" | "none"
    entity_types: tuple[str, ...] = ()
    entity_types_from: str = "none"
    exact: bool = False
    # an entity with names also selects the edges whose ends write one (the collection has
    # the names' full-text index)
    by_name: bool = True
    # whether the edges carry their names' stems for a question's words to meet (a collection
    # stored before, until opened for writing: only what the question names relates an edge)
    by_words: bool = True
    # set from the collection: it holds retracted papers, and they are to be left out
    hide_retracted: bool = False

    @property
    def effective_match(self) -> str:
        either = [e for e in self.entities if e.role == "either"]
        return "all" if self.match == "all" and len(either) == 2 else "any"

    # the store condition of min_weight, resolved from the collection's degrees beforehand
    weight_filter: Filter | None = None

    @property
    def min_weight(self) -> float | None:
        return self.options.min_weight

    @property
    def include_retracted(self) -> bool:
        return self.options.include_retracted

    @property
    def findings_only(self) -> bool:
        return self.options.findings_only

    def payload_values(self) -> dict[str, Any]:
        """The payload filters' values: the options', the two types this spec's."""
        return {
            f.name: getattr(self, f.name) if f.name in TYPES else self.options.filtered(f.name)
            for f in PAYLOAD_FILTERS
        }

    def is_empty(self) -> bool:
        given = [v for v in self.payload_values().values() if v not in (None, ())]
        return not (self.entities or given or self.min_weight is not None)

    def resolve_weight(self, collection: Collection) -> FilterSpec:
        """This spec with ``min_weight`` turned into conditions on the stored degrees."""
        if self.min_weight is None:
            return self
        return FilterSpec(
            **{**self.__dict__, "weight_filter": collection.min_weight_filter(self.min_weight)}
        )

    def to_filter(self) -> Filter:
        if self.min_weight is not None and self.weight_filter is None:
            raise ValueError("min_weight needs resolve_weight(collection) before to_filter()")
        must: list[Condition] = []
        either = [e for e in self.entities if e.role == "either"]
        if either and self.effective_match == "all":
            must += [self.about([e]) for e in either]
        elif either:
            must.append(self.about(either))
        for role in ("source", "target"):
            chosen = [e for e in self.entities if e.role == role]
            if chosen:
                must.append(self.about(chosen, (role,)))
        must += payload_conditions(self.payload_values())
        if self.weight_filter:
            must.append(self.weight_filter)
        hidden = [RETRACTED] * (self.hide_retracted and not self.include_retracted)
        hidden += [RESTATED] * self.findings_only
        return Filter(must=tuple(must), must_not=tuple(hidden))

    def about(self, entities: list[Entity], ends: tuple[str, ...] = ("source", "target")) -> Filter:
        """Edges with one of ``entities`` at one of ``ends``: the entity itself, (unless
        ``exact``) a concept below it in MeSH or a gene of its HGNC gene group, or (``by_name``)
        an end that writes all the words of one of its names."""
        keys = tuple(dict.fromkeys(k for e in entities for k in e.node_keys()))
        # only a concept with others below it needs the ancestors: a leaf costs no condition
        ids = tuple(dict.fromkeys(e.id for e in entities if e.id and e.expanded_to > 1))
        should: list[Condition] = [Match(f"{end}_key", any_of=keys) for end in ends]
        if ids and not self.exact:
            should += [Match(f"{end}_ancestors", any_of=ids) for end in ends]
        if self.by_name:  # both ends' names (a question's entities are either end)
            should += named(entities).should
        return Filter(should=tuple(should))

    def to_dict(self) -> dict[str, Any]:
        values = {
            k: list(v) if isinstance(v, tuple) else v for k, v in self.payload_values().items()
        }
        return {
            "entities": [e.to_dict() for e in self.entities],
            "match": self.effective_match if self.entities else None,
            **values,
            "relationship_types_from": self.relationship_types_from,
            "entity_types_from": self.entity_types_from,
            "min_weight": self.min_weight,
            "exact": self.exact,
            "include_retracted": self.include_retracted,
            "findings_only": self.findings_only,
        }


def named(entities: list[Entity]) -> Filter:
    """Edges one of whose ends writes every word of a name of one of ``entities`` (the last
    word in either number; case aside, as the full-text index reads them)."""
    forms = {f.casefold(): f for e in entities for n in e.names for f in in_both_numbers(n)}
    return Filter(should=tuple(Words("names", f) for f in forms.values()))


def build_spec(
    options: QueryOptions, linked: list[Entity], parse: Parse, normalizer: Normalizer | None
) -> FilterSpec:
    """Flags override the parse: entities, relationship types and entity types each come from
    the flags when given, else from the question."""
    flagged = [resolve_entity(v, normalizer) for v in options.entities]
    flagged += [resolve_entity(v, normalizer, "source") for v in options.sources]
    flagged += [resolve_entity(v, normalizer, "target") for v in options.targets]
    entities = flagged or (linked if options.link else [])
    if normalizer is not None and not options.exact:
        entities = [
            replace(e, expanded_to=normalizer.covers(e.id)) if e.id else e for e in entities
        ]
    spec = FilterSpec(entities=entities, options=options, match=options.match, exact=options.exact)
    if options.filtered("relationship_types"):
        spec.relationship_types = options.filtered("relationship_types")
        spec.relationship_types_from = "flag"
    elif parse.relationship_types:
        spec.relationship_types, spec.relationship_types_from = parse.relationship_types, "parse"
    if options.filtered("entity_types"):
        spec.entity_types, spec.entity_types_from = options.filtered("entity_types"), "flag"
    elif parse.answer_type:
        spec.entity_types, spec.entity_types_from = (parse.answer_type,), "parse"
    return spec


def relaxations(spec: FilterSpec, fallback: bool) -> list[tuple[str | None, FilterSpec]]:
    """The specs to try in order, each with a note on what was relaxed (None for the first).

    Only what was inferred is relaxed: two entities of the question joined by an edge become
    edges touching either, then the relationship and answer types parsed from the question are
    dropped. Entities and flags never are: a search without them would answer another question.
    ``fallback`` False tries ``spec`` alone.
    """
    out: list[tuple[str | None, FilterSpec]] = [(None, spec)]
    if not fallback:
        return out
    cur = spec
    if cur.effective_match == "all" and any(e.origin == "question" for e in cur.entities):
        cur = FilterSpec(**{**cur.__dict__, "match": "any"})
        out.append(("edges touching any of the question's entities instead of joining them", cur))
    if cur.relationship_types_from == "parse" or cur.entity_types_from == "parse":
        changes: dict[str, Any] = {}
        if cur.relationship_types_from == "parse":
            changes.update(relationship_types=(), relationship_types_from="none")
        if cur.entity_types_from == "parse":
            changes.update(entity_types=(), entity_types_from="none")
        cur = FilterSpec(**{**cur.__dict__, **changes})
        out.append(("without the relationship/answer types parsed from the question", cur))
    return out


def no_evidence(
    collection: Collection,
    spec: FilterSpec,
    used: FilterSpec,
    matched: int,
    min_score: float | None,
) -> dict[str, Any]:
    """Why the collection has nothing to answer from, what was searched, and the entities of the
    collection closest to a searched one that has no edge."""
    name = collection_name(collection)
    searched = [f"{e.name} ({e.id})" if e.id else e.name for e in spec.entities]
    closest: list[dict[str, Any]] = []
    if matched:
        reason = (
            f"{counted(matched, 'edge')} passed the filters ({describe(used)}) but none is similar enough "
            f"to the question ({option_named('min_score')} {min_score}; -1 keeps every edge)"
        )
    else:
        missing = [
            e for e in spec.entities
            if collection.count(
                FilterSpec(
                    entities=[e], match="any", exact=spec.exact, by_name=spec.by_name
                ).to_filter()
            )
            == 0
        ]  # fmt: skip
        for e in missing:
            closest += closest_entities(collection, e.name, e.type)
            if e.name != e.text:
                closest += closest_entities(collection, e.text, e.type)
        closest = list({(c["name"], c["type"]): c for c in closest}.values())[:8]
        if missing:
            about = " or ".join(f"{e.name} ({e.id})" if e.id else e.name for e in missing)
            reason = f"the collection '{name}' holds no edge about {about}"
        elif spec.entities:
            reason = f"no edge of the collection '{name}' matches {describe(used)}"
        elif used.is_empty():
            reason = f"the collection '{name}' holds no edges"
        else:
            reason = f"no edge of the collection '{name}' matches the filters ({describe(used)})"
    return {"reason": reason, "searched": searched, "closest": closest}


def absent_evidence(collection: Collection, absent: list[Any]) -> dict[str, Any]:
    """Why nothing answers a question every name of which the collection lacks (``absent``: the
    question's :class:`~fastbmrag.query.understand.Mention` s), with the closest entities."""
    closest: list[dict[str, Any]] = []
    for m in absent:
        closest += closest_entities(collection, m.name, m.type)
        if m.name.casefold() != m.text.casefold():
            closest += closest_entities(collection, m.text, m.type)
    closest = list({(c["name"], c["type"]): c for c in closest}.values())[:8]
    about = " or ".join(m.label for m in absent)
    return {
        "reason": f"the collection '{collection_name(collection)}' holds no edge about {about}",
        "searched": [m.label for m in absent],
        "closest": closest,
    }


def closest_entities(
    collection: Collection, name: str, entity_type: str | None = None, n: int = 5
) -> list[dict[str, Any]]:
    """Entities of the graph whose names read closest to ``name`` (difflib ratio >= 0.6), of
    ``entity_type`` when given: what to suggest when a name has no edge."""
    import difflib

    by_name: dict[str, list[tuple[str, str, str, str | None, int]]] = {}
    for row in collection.ledger.entities():
        if row[4] > 0 and (entity_type in (None, "auto") or row[2] == entity_type):
            by_name.setdefault(row[1].casefold(), []).append(row)
    key = name.casefold()
    close = difflib.get_close_matches(key, list(by_name), n=n, cutoff=0.6)
    rows = [row for c in close for row in by_name[c]]
    rows.sort(
        key=lambda r: (-difflib.SequenceMatcher(None, key, r[1].casefold()).ratio(), -r[4], r[1])
    )
    return [{"name": r[1], "id": r[3], "type": r[2], "degree": r[4]} for r in rows][:n]


def describe(spec: FilterSpec) -> str:
    parts = []
    if spec.entities:
        joined = " and " if spec.effective_match == "all" else " or "
        parts.append(joined.join(e.id or e.name for e in spec.entities))
    for f in PAYLOAD_FILTERS:
        value = spec.payload_values()[f.name]
        if value not in (None, ()):
            parts.append(f"{f.label} " + ("/".join(value) if f.multiple else str(value)))
    if spec.min_weight is not None:
        parts.append(f"weight >= {spec.min_weight}")
    return ", ".join(parts) or "none"


def collection_name(collection: Collection) -> str:
    return str(getattr(collection, "name", "") or "")
