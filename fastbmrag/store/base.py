"""The store interface used by the pipeline and by query, and a backend-neutral filter.

Two implementations: Qdrant Edge (embedded, default) and a Qdrant server via
qdrant-client. Both translate :class:`Filter` into their own filter objects.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastbmrag.util.closing import Closing

# Fixed namespace of edge point ids (uuid5(NAMESPACE_DNS, "edges.fastbmrag")). Never change it:
# every stored point id is derived from it.
EDGE_NAMESPACE = uuid.UUID("23858c6d-a8ea-5be5-a599-16f4f3b50d67")


def edge_point_id(paper_id: str, source_key: str, relationship_type: str, target_key: str) -> str:
    """The point id of one edge of one paper: UUID5 of its key, so re-indexing overwrites."""
    name = "\x1f".join((paper_id, source_key, relationship_type, target_key))
    return str(uuid.uuid5(EDGE_NAMESPACE, name))


def name_form(name: str) -> str:
    """A name as the collection's gazetteer keys it: casefolded, spaces collapsed."""
    return " ".join(name.casefold().split())


def node_key(ontology_id: str | None, entity_type: str, normalized_name: str) -> str:
    """Node identity for degrees and weights: the ontology id, else ``type:name`` casefolded."""
    if ontology_id:
        return ontology_id
    return f"{entity_type}:{normalized_name.casefold()}"


@dataclass(frozen=True, slots=True)
class EdgeRef:
    """What the ledger keeps about one stored edge: enough for degrees, entities and export."""

    source_key: str
    source_name: str
    source_type: str
    source_id: str | None
    relationship_type: str
    target_key: str
    target_name: str
    target_type: str
    target_id: str | None
    source_raw: str = ""  # the names as the paper wrote them
    target_raw: str = ""
    finding: str = "finding"  # or "background" (text.findings)

    @property
    def triple(self) -> tuple[str, str, str]:
        """The distinct-edge identity: (source_key, relationship_type, target_key)."""
        return (self.source_key, self.relationship_type, self.target_key)


def vector_list(v: Sequence[float] | np.ndarray) -> list[float]:
    """A vector as the flat list of float32 values both Qdrant clients take."""
    out: list[float] = np.asarray(v, dtype=np.float32).ravel().tolist()
    return out


@dataclass(frozen=True, slots=True)
class Match:
    """``key`` equals ``value``, or equals any of ``any_of``; with neither, ``key`` is missing,
    null or empty."""

    key: str
    value: str | int | bool | None = None
    any_of: tuple[str | int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Range:
    key: str
    gte: float | None = None
    lte: float | None = None
    gt: float | None = None
    lt: float | None = None


@dataclass(frozen=True, slots=True)
class Words:
    """Every word of ``text`` is in ``key``, a field with a full-text index (in any order; case
    and English stop words aside where the backend's index says so)."""

    key: str
    text: str


@dataclass(frozen=True, slots=True)
class HasId:
    """The point's id is one of ``ids``."""

    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Filter:
    """All of ``must``, at least one of ``should`` (when given), none of ``must_not``."""

    must: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.must or self.should or self.must_not)

    def and_(self, *conditions: Condition) -> Filter:
        return Filter(self.must + tuple(conditions), self.should, self.must_not)


Condition = Match | Range | Words | Filter | HasId


# How many edges a boosted search scores, in multiples of those it returns: a filtered search
# costs about its limit (at 200,000 edges, 11 ms for 50, 25 ms for 250), and an edge beyond the
# most similar twice the limit that earn a boost would need a boost larger than the spread
# of similarity between them to rank in (docs/benchmarks.md, "Retrieval").
CANDIDATES = 2


@dataclass(frozen=True, slots=True)
class Boost:
    """The edges matching ``flt`` rank as if ``weight`` more similar to the query (an edge
    matching several boosts earns the largest). ``name`` says why: it becomes ``kept_by``."""

    name: str
    weight: float
    flt: Filter


def earning(flt: Filter | None, boosts: Sequence[Boost]) -> Filter:
    """The edges passing ``flt`` that earn one of ``boosts``: the candidates a boosted search
    scores (:meth:`Store.boosted`)."""
    return (flt or Filter()).and_(Filter(should=tuple(b.flt for b in boosts)))


@dataclass(slots=True)
class Point:
    id: str  # UUID string
    vector: Sequence[float] | np.ndarray
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Hit:
    id: str
    score: float | None
    payload: dict[str, Any]


class Store(ABC, Closing):
    """One collection of edges."""

    location: str  # shard path or server URL + collection, for `status`

    @abstractmethod
    def vector_size(self) -> int | None:
        """The collection's vector size, or None if it does not exist yet."""

    @abstractmethod
    def ensure_collection(self, vector_size: int) -> None:
        """Create the collection (cosine, payload indexes) or check its vector size.

        Raises DimensionMismatch when it exists with another size.
        """

    @abstractmethod
    def upsert(self, points: Sequence[Point]) -> None: ...

    @abstractmethod
    def delete(self, flt: Filter) -> None: ...

    @abstractmethod
    def search(
        self,
        vector: Sequence[float] | np.ndarray,
        flt: Filter | None = None,
        limit: int = 10,
        score_threshold: float | None = None,
    ) -> list[Hit]: ...

    @abstractmethod
    def boosted(
        self,
        vector: Sequence[float] | np.ndarray,
        flt: Filter | None,
        boosts: Sequence[Boost],
        limit: int,
    ) -> list[Hit]:
        """The ``limit`` edges passing ``flt`` and some boost with the highest similarity plus
        the largest weight of the boosts each matches, in one multi-stage query: the
        ``CANDIDATES * limit`` most similar edges that earn some boost, scored by a formula."""

    @abstractmethod
    def scroll(self, flt: Filter | None = None, batch_size: int = 256) -> Iterator[Hit]:
        """Every point matching ``flt`` (score None), paged through the store."""

    @abstractmethod
    def count(self, flt: Filter | None = None) -> int: ...

    @abstractmethod
    def set_payload(self, payload: dict[str, Any], flt: Filter) -> None:
        """Merge ``payload`` into every point matching ``flt``."""

    @abstractmethod
    def paper_ids(self) -> set[str]:
        """Distinct paper ids present in the store."""

    @abstractmethod
    def flush(self) -> None:
        """Make every preceding write durable."""

    def optimize(self) -> None:  # noqa: B027 - optional for backends that manage it themselves
        """Build indexes after large batches (no-op where the server does it)."""

    def indexed_fields(self) -> dict[str, str] | None:
        """Payload field -> index kind, where the backend can tell (None: it cannot)."""
        return None

    def unindexed_points(self) -> int:
        """Points not yet covered by a vector index (searched by brute force until optimised)."""
        return 0

    def size_on_disk(self) -> int | None:
        return None

    @abstractmethod
    def close(self) -> None: ...
