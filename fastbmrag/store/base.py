"""The store interface used by the pipeline and by query, and a backend-neutral filter.

Two implementations: Qdrant Edge (embedded, default) and a Qdrant server via
qdrant-client. Both translate :class:`Filter` into their own filter objects.
"""

from __future__ import annotations

import re
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
    # the ledger's declared edge columns (fastbmrag.fields: ``finding``, "finding" or
    # "background" of text.findings, ...), by name; one not given has its field's default
    columns: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def finding(self) -> str:
        return str(self.columns.get("finding", "finding"))

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


# How many edges each stage of a ranked search scores, in multiples of those it returns: a search
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
    """The edges passing ``flt`` that earn one of ``boosts``: the candidates a ranked search
    scores for them (:meth:`Store.ranked`)."""
    return (flt or Filter()).and_(Filter(should=tuple(b.flt for b in boosts)))


# How many edges the words' BM25 search passes on to be scored by similarity, at least: the
# edges that share the question's rarest words, most of them first.
WORD_CANDIDATES = 500

# BM25's term-frequency saturation and length normalisation for the words: no length
# normalisation (b = 0), so a long name does not weaken a word it shares, and a word's score is
# its IDF in the collection (each stem is stored once per edge)
WORDS_K, WORDS_B = 1.2, 0.0


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a ranked search (backend-neutral): the ``limit`` best edges passing
    ``flt`` by ``query`` ("near": similarity to the question's vector; "words": BM25 of the
    ranking's words), above ``threshold``; ``inner``'s edges alone where given."""

    query: str | None
    flt: Filter | None
    limit: int
    threshold: float | None = None
    inner: Stage | None = None


# A formula over the stages' scores (backend-neutral), as nested tuples: ("score", i) the score
# stage i gave (its default where it did not find the edge), ("const", v), ("cond", Filter) 1
# where the edge passes it, else 0, and ("sum" | "max" | "min" | "mult" | "div", *operands).
Expr = tuple[Any, ...]

# where a stage did not find an edge: below any similarity, and no words
NOT_FOUND = {"near": -2.0, "words": 0.0, None: 0.0}


@dataclass(frozen=True, slots=True)
class Ranking:
    """How a question ranks the edges passing a filter, as one value turned into one store
    request (:meth:`plan`, :meth:`Store.ranked`). An edge is a candidate where it earns one of
    ``boosts`` (among the most similar that do), or where the BM25 score of ``words`` against
    its ``field`` (the collection's own IDF) passes ``words_floor`` (among the most similar of
    those that share the rarest words). It scores its
    similarity plus the largest weight it earns: a boost's, or for its words ``words_weight``
    in the proportion their BM25 bears to ``words_full`` (all of it from there). Equal scores
    come in the order of the ids."""

    boosts: tuple[Boost, ...] = ()
    words: str = ""
    words_floor: float = 0.0
    words_weight: float = 0.0
    words_full: float = 0.0
    field: str = "words"

    def __bool__(self) -> bool:
        return bool(self.boosts or self.words)

    def plan(self, scored: bool, flt: Filter | None, limit: int) -> tuple[list[Stage], Expr]:
        """The stages of the one request and the formula that scores what they find: the
        edges found only by the words' BM25 stage, with no similarity, fall below any score
        (:data:`NOT_FOUND`) and are dropped (:meth:`score_floor`)."""
        near = "near" if scored else None
        stages: list[Stage] = []
        earned: list[Expr] = [("mult", ("const", b.weight), ("cond", b.flt)) for b in self.boosts]
        if self.boosts:
            stages.append(Stage(near, earning(flt, self.boosts), limit * CANDIDATES))
        if self.words:
            words = Stage("words", flt, max(limit * CANDIDATES, WORD_CANDIDATES),
                          self.words_floor)  # fmt: skip
            if scored:  # the most similar of those its words relate
                stages.append(Stage(near, None, limit * CANDIDATES, inner=words))
            stages.append(words)  # its BM25, which the formula reads: > 0 where it relates
            full = max(self.words_full, self.words_floor, 1e-6)
            related = ("min", ("const", 1.0), ("div", ("score", len(stages) - 1),
                                               ("const", full)))  # fmt: skip
            earned.append(("mult", ("const", self.words_weight), related))
        score: Expr = ("max", *earned, ("const", 0.0))
        similar = [("score", i) for i, s in enumerate(stages) if s.query == "near"]
        if similar:
            score = ("sum", ("max", *similar), score)
        return stages, score

    @staticmethod
    def score_floor(scored: bool) -> float | None:
        """The final score below which an edge of :meth:`plan`'s request has no similarity:
        found by the words' stage alone, not among the most similar it relates."""
        return NOT_FOUND["near"] + 0.5 if scored else None

    def earned(self, hit: Hit) -> Boost | None:
        """The largest boost a returned edge earns, read from its id and payload (None: it is
        a candidate by its words alone, earning ``words_weight``)."""
        return max(
            (b for b in self.boosts if admits(b.flt, hit.id, hit.payload)),
            key=lambda b: b.weight, default=None,
        )  # fmt: skip


# The English stop words a full-text index leaves out (the stores' indexes of ``names``: NLTK's
# English list, as Qdrant's)
STOP_WORDS = frozenset(["i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "couldn", "didn", "doesn", "hadn", "hasn", "haven", "isn", "ma", "mightn", "mustn", "needn", "shan", "shouldn", "wasn", "weren", "won", "wouldn"])


def ordered(found: list[tuple[str, float, dict[str, Any], Any]], vector: Any) -> list[Hit]:
    """The points a ranked search returned (id, score, payload, stored vector) best first,
    equal scores in the order of their ids (a collection indexed again answers in the same
    order), each hit's score its similarity to ``vector`` (the cosine of the stored vector,
    which the formula's score adds a boost to); without a vector, score None."""
    found = sorted(found, key=lambda f: (-f[1], f[0]))
    if vector is None:
        return [Hit(i, None, p) for i, _, p, _ in found]
    q = np.asarray(vector, dtype=np.float64).ravel()
    q = q / (np.linalg.norm(q) or 1.0)

    def cosine(v: Any) -> float:
        v = np.asarray(v, dtype=np.float64).ravel()
        return float(q @ v / (np.linalg.norm(v) or 1.0))

    return [Hit(i, cosine(v), p) for i, _, p, v in found]


def _tokens(text: str) -> set[str]:
    """The words of a full-text index (Qdrant's word tokenizer, lower-cased)."""
    return set(re.findall(r"[^\W_]+", text.lower()))


def _holds(cond: Condition, point_id: str, payload: dict[str, Any]) -> bool:
    if isinstance(cond, Filter):
        return admits(cond, point_id, payload)
    if isinstance(cond, HasId):
        return point_id in cond.ids
    value = payload.get(cond.key)
    values = value if isinstance(value, list) else [] if value is None else [value]
    if isinstance(cond, Words):  # every word of the text among the field's (all its values')
        wanted = _tokens(cond.text) - STOP_WORDS
        return bool(wanted) and wanted <= {t for v in values for t in _tokens(str(v))}
    if isinstance(cond, Range):
        return any(
            isinstance(v, int | float)
            and (cond.gte is None or v >= cond.gte) and (cond.gt is None or v > cond.gt)
            and (cond.lte is None or v <= cond.lte) and (cond.lt is None or v < cond.lt)
            for v in values
        )  # fmt: skip
    if cond.any_of is not None:
        return any(v in cond.any_of for v in values)
    if cond.value is None:
        return not values or all(v in ("", None) for v in values)
    return cond.value in values


def admits(flt: Filter, point_id: str, payload: dict[str, Any]) -> bool:
    """Whether the point of ``point_id`` with ``payload`` passes ``flt``, as the stores decide
    (what a returned edge earned is read from its payload, with no other read)."""
    return (
        all(_holds(c, point_id, payload) for c in flt.must)
        and (not flt.should or any(_holds(c, point_id, payload) for c in flt.should))
        and not any(_holds(c, point_id, payload) for c in flt.must_not)
    )


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
    def ranked(
        self,
        vector: Sequence[float] | np.ndarray | None,
        flt: Filter | None,
        ranking: Ranking,
        limit: int,
    ) -> list[Hit]:
        """The ``limit`` candidates of ``ranking`` among the edges passing ``flt``, best first,
        in one multi-stage query: the ``CANDIDATES * limit`` most similar edges that earn some
        boost and those of the :data:`WORD_CANDIDATES` best by their words' BM25 that pass its
        floor, scored by a formula (each hit's score: similarity plus the boost it earns).
        Without a vector: by the boost each earns (score None)."""

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

    def upgrade_indexes(self) -> None:  # noqa: B027 - a custom backend may keep none
        """Add the payload indexes of this version that a store made by an earlier one lacks."""

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
