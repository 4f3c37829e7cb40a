"""The query filters that are one condition on an edge's payload, described once, as data.

Each row of :data:`PAYLOAD_FILTERS` names a filter (its CLI flags, and the QueryOptions /
FilterSpec field and keyword of the same name), the payload field, the condition and its help
text; the store filter, the JSON, the descriptions, the CLI options and ``RAG.edges`` are derived
from the table. Adding such a filter is a row here and a field in QueryOptions and FilterSpec.
Entities (resolved through the vocabularies, joined or not) and the minimum weight (turned into
degree bounds from the collection) are not payload conditions and are handled in
:mod:`fastbmrag.query`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastbmrag.papers.design import DESIGNS, ORGANISMS
from fastbmrag.prompts import ENTITY_TYPES
from fastbmrag.store.base import Filter, Match, Range


@dataclass(frozen=True, slots=True)
class PayloadFilter:
    """A query filter that is one condition on the edge payload, described once: its option
    (CLI flag, QueryOptions field and FilterSpec field of the same name), the payload field, the
    condition and the help text. Everything else (the store filter, the JSON, the description,
    the CLI options, ``RAG.edges``) is derived from :data:`PAYLOAD_FILTERS`."""

    name: str  # QueryOptions / FilterSpec field and keyword
    flags: tuple[str, ...]  # CLI flags
    field: str  # payload field; "type" with condition "either" means source_type / target_type
    condition: str  # "any" (one of the values), "either" (either end), "from" / "to" (a range)
    help: str
    label: str  # in descriptions of the filters
    cast: type = str  # an int for years
    choices: tuple[str, ...] = ()  # the values allowed, where the project declares them

    @property
    def multiple(self) -> bool:
        return self.condition in ("any", "either")


PAYLOAD_FILTERS = (
    PayloadFilter("relationship_types", ("-r", "--relation"), "relationship_type", "any",
                  "Relationship type (upregulated_in, causes, ...); repeatable. Replaces the "
                  "parsed types.", "relations"),
    PayloadFilter("entity_types", ("-t", "--entity-type"), "type", "either",
                  "Edges with this entity type on either end; repeatable. Replaces the parsed "
                  "answer type.", "types", choices=tuple(ENTITY_TYPES)),
    PayloadFilter("since", ("--since",), "year", "from", "Papers from this year on.",
                  "years from", int),
    PayloadFilter("until", ("--until",), "year", "to", "Papers up to this year.", "years to",
                  int),
    PayloadFilter("paper_ids", ("--paper-id",), "paper_id", "any",
                  "Only edges of this paper; repeatable.", "papers"),
    PayloadFilter("journals", ("--journal",), "journal", "any",
                  "Only papers of this journal (exact name); repeatable.", "journals"),
    PayloadFilter("pmids", ("--pmid",), "pmid", "any", "Only papers with this PMID; repeatable.",
                  "PMIDs"),
    PayloadFilter("designs", ("--design",), "design", "any",
                  f"Only papers of this study design ({', '.join(DESIGNS)}; RCT, ... too); "
                  "repeatable or comma-separated.", "designs"),
    PayloadFilter("organisms", ("--organism",), "organisms", "any",
                  f"Only papers that studied this organism ({', '.join(ORGANISMS)}); "
                  "repeatable or comma-separated.", "organisms"),
)  # fmt: skip


def payload_conditions(values: dict[str, Any]) -> list[Match | Range | Filter]:
    """The store conditions of the payload filters given in ``values`` (name -> value), in
    the table's order; the two bounds of a range make one condition."""
    must: list[Match | Range | Filter] = []
    ranges: dict[str, dict[str, Any]] = {}
    for f in PAYLOAD_FILTERS:
        value = values.get(f.name)
        if value in (None, ()):
            continue
        if f.condition == "any":
            must.append(Match(f.field, any_of=tuple(value)))
        elif f.condition == "either":
            must.append(either_end(f.field, value))
        else:
            if f.field not in ranges:
                ranges[f.field] = {}
                must.append(Range(f.field))  # replaced below by the range with its bounds
            ranges[f.field]["gte" if f.condition == "from" else "lte"] = value
    return [
        Range(c.key, **ranges[c.key]) if isinstance(c, Range) and c.key in ranges else c
        for c in must
    ]


def either_end(what: str, values: Sequence[str]) -> Filter:
    vals = tuple(dict.fromkeys(values))
    return Filter(
        should=(Match(f"source_{what}", any_of=vals), Match(f"target_{what}", any_of=vals))
    )
