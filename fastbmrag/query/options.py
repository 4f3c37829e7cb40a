"""What a query can be told: :class:`QueryOptions`, every option of `fastbmrag query`, the API
and the web page, with its default and its check, declared once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from fastbmrag import config
from fastbmrag.errors import InputError
from fastbmrag.papers.design import DESIGNS, ORGANISMS, named_design, named_organism
from fastbmrag.prompts import ENTITY_TYPES, RELATIONSHIP_TYPES
from fastbmrag.query.filters import PAYLOAD_FILTERS

ANSWER_BATCH = 50  # evidence items per answer call; more are map-reduced
MIN_YEAR, MAX_YEAR = 1800, 2100  # a publication year, as the papers' readers take it
MATCH_MODES = ("all", "any")
RANKS = ("score", "design")
FORMATS = ("text", "json", "markdown")


def _tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _named(
    values: tuple[str, ...], named: Any, known: dict[str, str], what: str
) -> tuple[str, ...]:
    """Comma-separated values as their keys ("RCT, meta-analysis" -> rct, meta-analysis)."""
    out: list[str] = []
    for value in (v for given in values for v in str(given).split(",") if v.strip()):
        key = named(value)
        if not key:
            raise InputError(f"Unknown {what} {value.strip()!r}: use one of {', '.join(known)}")
        out.append(key)
    return tuple(dict.fromkeys(out))


@dataclass
class QueryOptions:
    """Everything a query can be told. Filter fields given here override the question's parse."""

    top_k: int = config.DEFAULT_QUERY_TOP_K
    all: bool = False  # every edge passing filters + threshold
    min_score: float | None = config.DEFAULT_MIN_SCORE
    no_answer: bool = False  # retrieved edges only, 0 chat calls
    no_llm_parse: bool = False  # skip the parse call (relations / answer type)
    link: bool = True  # link genes/diseases/chemicals in the question with the dictionaries
    match: str = "all"  # how several entities combine: "all" (an edge joins two) | "any"
    entities: tuple[str, ...] = ()  # names or ids, on either end
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    entity_types: tuple[str, ...] = ()  # either end has one of these types
    relationship_types: tuple[str, ...] = ()
    since: int | None = None
    until: int | None = None
    paper_ids: tuple[str, ...] = ()
    journals: tuple[str, ...] = ()
    pmids: tuple[str, ...] = ()
    designs: tuple[str, ...] = ()  # papers.design: "rct", "meta-analysis", ...
    organisms: tuple[str, ...] = ()  # "human", "mouse", ...
    min_weight: float | None = None
    exact: bool = False  # entity filters match the entity itself, not what is below it
    fallback: bool = True  # relax filters that match nothing, down to no filter
    include_retracted: bool = False  # keep the edges of retracted papers (marked) in answers
    rank: str = "score"  # "design": stronger study designs first, similarity within each
    answer_model: str | None = None
    answer_batch: int = ANSWER_BATCH
    concurrency: int = config.DEFAULT_CONCURRENCY  # answer calls in flight (map-reduce)

    def __post_init__(self) -> None:
        for switch in fields(self):  # True or False ("false" is a word, and true)
            value = getattr(self, switch.name)
            if switch.type in ("bool", bool) and not isinstance(value, bool):
                raise InputError(
                    f"{switch.name} must be True or False, got {value!r}", field=switch.name
                )
        multiple = [f.name for f in PAYLOAD_FILTERS if f.multiple]
        for name in ("entities", "sources", "targets", *multiple):
            setattr(self, name, _tuple(getattr(self, name)))
        for f in PAYLOAD_FILTERS:
            if f.multiple and any(not str(v).strip() for v in getattr(self, f.name)):
                raise InputError(
                    f"{f.name} holds an empty value: pass a value or leave it out", field=f.name
                )
        self.designs = _named(self.designs, named_design, DESIGNS, "design")
        self.organisms = _named(self.organisms, named_organism, ORGANISMS, "organism")
        self.entity_types = tuple(t.lower() for t in self.entity_types)
        self.relationship_types = tuple(
            r.lower().replace("-", "_").replace(" ", "_") for r in self.relationship_types
        )
        if (
            isinstance(self.top_k, bool)
            or not isinstance(self.top_k, int)
            or not 1 <= self.top_k <= config.MAX_TOP_K
        ):
            raise InputError(
                f"top_k must be a whole number from 1 to {config.MAX_TOP_K:,} (all: every edge), "
                f"got {self.top_k!r}",
                field="top_k",
            )
        for name in ("since", "until"):
            year = getattr(self, name)
            if year is not None and (
                isinstance(year, bool)
                or not isinstance(year, int)
                or not MIN_YEAR <= year <= MAX_YEAR
            ):
                raise InputError(
                    f"{name} must be a year from {MIN_YEAR} to {MAX_YEAR} (e.g. 2015), got {year!r}",
                    field=name,
                )
        bad_pmid = next((p for p in self.pmids if not p.strip().isdigit()), None)
        if bad_pmid is not None:
            raise InputError(
                f"pmids: {bad_pmid!r} is no PubMed id (digits only: 24111943)", field="pmids"
            )
        if self.answer_batch < 1 or self.concurrency < 1:
            raise InputError("answer_batch and concurrency must be at least 1")
        if self.rank not in RANKS:
            raise InputError(
                f"rank must be one of {', '.join(RANKS)}, got {self.rank!r}", field="rank"
            )
        if self.match not in MATCH_MODES:
            raise InputError(
                f"match must be one of {', '.join(MATCH_MODES)}, got '{self.match}'", field="match"
            )
        bad = [t for t in self.entity_types if t not in ENTITY_TYPES]
        if bad:
            raise InputError(
                f"Unknown entity type '{bad[0]}': use one of {', '.join(ENTITY_TYPES)}"
            )
        bad = [r for r in self.relationship_types if r not in RELATIONSHIP_TYPES]
        if bad:
            raise InputError(
                f"Unknown relationship type '{bad[0]}': use one of {', '.join(RELATIONSHIP_TYPES)}"
            )
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InputError(
                f"since {self.since} is after the until year {self.until}: swap them", field="since"
            )
        if self.min_weight is not None and not 0.0 <= self.min_weight <= 1.0:
            raise InputError(
                f"min_weight must be between 0 and 1, got {self.min_weight}", field="min_weight"
            )
        if self.min_score is not None and not -1.0 <= self.min_score <= 1.0:
            raise InputError(
                f"min_score must be a cosine similarity between -1 and 1, got {self.min_score}",
                field="min_score",
            )

    @classmethod
    def field_names(cls) -> set[str]:
        return {f.name for f in fields(cls)}


def options_from(values: dict[str, Any], keys: Iterable[str] | None = None) -> QueryOptions:
    """QueryOptions from a dict, ignoring keys it does not know (CLI kwargs, API kwargs)."""
    names = QueryOptions.field_names() if keys is None else set(keys)
    return QueryOptions(**{k: v for k, v in values.items() if k in names})
