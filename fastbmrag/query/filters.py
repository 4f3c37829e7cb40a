"""The query filters that are one condition on an edge's payload: each declared with its edge
field (:data:`fastbmrag.fields.EDGE_FIELDS`), its flags, condition and help; the store filter,
the JSON, the descriptions, the options of :class:`~fastbmrag.query.options.QueryOptions` (the
command line's flags, the API's keywords, the page's inputs) are derived from them. Entities
(resolved through the vocabularies, joined or not) and the minimum weight (turned into degree
bounds from the collection) are not payload conditions and are handled in :mod:`fastbmrag.query`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastbmrag.fields import EDGE_FIELDS, FieldFilter, filters_of
from fastbmrag.store.base import Filter, Match, Range

PayloadFilter = FieldFilter  # a filter of the table, with the payload field it reads
PAYLOAD_FILTERS: tuple[FieldFilter, ...] = filters_of(EDGE_FIELDS)


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
