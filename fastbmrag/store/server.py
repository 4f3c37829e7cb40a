"""Qdrant server / cluster store through qdrant-client (same schema and indexes as embedded).

Tests pass a ``QdrantClient(location=":memory:")``: qdrant-client's local mode stands in for a
server there (it ignores payload indexes, which only changes speed; its full-text match
keeps the stop words a server's text index drops).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from fastbmrag.errors import DimensionMismatch, StoreError
from fastbmrag.store.base import (
    NOT_FOUND,
    WORDS_B,
    WORDS_K,
    Condition,
    Expr,
    Filter,
    HasId,
    Hit,
    Point,
    Range,
    Ranking,
    Stage,
    Store,
    Words,
    ordered,
    vector_list,
)
from fastbmrag.store.payload import INDEXES  # payload field -> index kind
from fastbmrag.util.wording import option_named

UPSERT_BATCH = 256
_LOCAL_INDEX_WARNING = "Payload indexes have no effect in the local Qdrant"


# the ends' names: as the embedded store indexes them (store/edge.py)
TEXT_INDEX = models.TextIndexParams(
    type=models.TextIndexType.TEXT,
    tokenizer=models.TokenizerType.WORD,
    lowercase=True,
    stopwords=models.Language.ENGLISH,
)
# the names' stems (text.stems): split on spaces, scored by BM25, as the embedded store does
BM25_INDEX = models.TextIndexParams(
    type=models.TextIndexType.TEXT, tokenizer=models.TokenizerType.WORD, lowercase=True,
    scoring=True,
)  # fmt: skip
# each index kind of the declared fields (fastbmrag.fields)
SCHEMAS: dict[str, Any] = {
    "keyword": models.PayloadSchemaType.KEYWORD, "integer": models.PayloadSchemaType.INTEGER,
    "text": TEXT_INDEX, "bm25": BM25_INDEX,
}  # fmt: skip

WORDS_BM25 = models.TextQueryScoring(bm25=models.Bm25Params(k=WORDS_K, b=WORDS_B))


def _condition(cond: Condition) -> Any:
    if isinstance(cond, Filter):
        return to_qdrant_filter(cond)
    if isinstance(cond, Words):
        return models.FieldCondition(key=cond.key, match=models.MatchText(text=cond.text))
    if isinstance(cond, HasId):
        return models.HasIdCondition(has_id=list(cond.ids))
    if isinstance(cond, Range):
        return models.FieldCondition(
            key=cond.key, range=models.Range(gte=cond.gte, gt=cond.gt, lte=cond.lte, lt=cond.lt)
        )
    if cond.any_of is not None:
        return models.FieldCondition(key=cond.key, match=models.MatchAny(any=list(cond.any_of)))  # type: ignore[arg-type]
    if cond.value is None:
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=cond.key))
    return models.FieldCondition(key=cond.key, match=models.MatchValue(value=cond.value))


def _expression(node: Expr) -> Any:
    """A ranking's formula (:meth:`~fastbmrag.store.base.Ranking.plan`) as qdrant-client's."""
    op, args = node[0], node[1:]
    if op == "score":
        return f"$score[{args[0]}]"
    if op == "const":
        return float(args[0])
    if op == "cond":
        return _condition(args[0])
    if op == "div":
        return models.DivExpression(
            div=models.DivParams(left=_expression(args[0]), right=_expression(args[1]))
        )
    parts = [_expression(a) for a in args]
    if op == "sum":
        return models.SumExpression(sum=parts)
    if op == "mult":
        return models.MultExpression(mult=parts)
    if op == "min":
        return models.MinExpression(min=parts)
    return models.MaxExpression(max=parts)


def to_qdrant_filter(flt: Filter | None) -> models.Filter | None:
    """Translate the backend-neutral filter into a qdrant-client filter."""
    if flt is None or not flt:
        return None
    return models.Filter(
        must=[_condition(c) for c in flt.must] or None,
        should=[_condition(c) for c in flt.should] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


class ServerStore(Store):
    """One collection on a Qdrant server (or qdrant-client local mode)."""

    backend = "server"

    def __init__(
        self, client: QdrantClient, collection: str, *, location: str | None = None
    ) -> None:
        self.client = client
        self.collection = collection
        self.location = location or f"qdrant:{collection}"
        self._owns_client = False

    @classmethod
    def connect(cls, url: str, collection: str, api_key: str | None = None) -> ServerStore:
        """Connect to ``url`` (``:memory:`` gives an in-process throwaway store)."""
        try:
            if url == ":memory:":
                client = QdrantClient(location=":memory:")
            else:  # no version check: its thread warns with a traceback-like path; a server
                # that does not answer, or answers wrong, is named by the call that needs it
                client = QdrantClient(url=url, api_key=api_key, check_compatibility=False)
        except Exception as err:  # qdrant-client raises assorted errors for a bad URL
            raise StoreError(f"Cannot use the Qdrant server at {url}: {err}") from err
        store = cls(client, collection, location=f"{url.rstrip('/')}/collections/{collection}")
        store._owns_client = True
        return store

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (StoreError, ValueError):
            raise
        except Exception as err:
            raise StoreError(
                f"Qdrant at {self.location} refused to {what}: {err}. Check {option_named('qdrant_url')} / "
                f"QDRANT_URL and {option_named('qdrant_api_key')} / QDRANT_API_KEY"
            ) from err

    # -- schema -----------------------------------------------------------------------------
    def vector_size(self) -> int | None:
        if not self._call("check the collection", self.client.collection_exists, self.collection):
            return None
        info = self._call("describe the collection", self.client.get_collection, self.collection)
        vectors = info.config.params.vectors
        if isinstance(vectors, models.VectorParams):
            return int(vectors.size)
        if isinstance(vectors, dict) and "" in vectors:
            return int(vectors[""].size)
        raise StoreError(
            f"Qdrant collection {self.collection!r} uses named vectors: it was not made by fastbmrag"
        )

    def ensure_collection(self, vector_size: int) -> None:
        size = self.vector_size()
        if size is not None:
            if size != vector_size:
                raise DimensionMismatch(
                    f"Qdrant collection {self.collection!r} holds {size}-d vectors, not "
                    f"{vector_size}-d: use the embedding model it was built with, or a new collection"
                )
            self.upgrade_indexes()
            return
        self._call(
            "create the collection",
            self.client.create_collection,
            self.collection,
            vectors_config=models.VectorParams(size=vector_size, distance=models.Distance.COSINE),
        )
        self._indexes(list(INDEXES))

    def indexed_fields(self) -> dict[str, str] | None:
        """Payload field -> index type, as the server reports it (None where it reports none:
        qdrant-client's local mode keeps no payload index)."""
        if not self._exists():
            return None
        info = self._call("describe the collection", self.client.get_collection, self.collection)
        schema = info.payload_schema or {}
        kinds = {k: str(getattr(v, "data_type", "")).rsplit(".", 1)[-1] for k, v in schema.items()}
        return kinds or None

    def upgrade_indexes(self) -> None:
        if self.vector_size() is None:
            return
        info = self._call("describe the collection", self.client.get_collection, self.collection)
        have = set(info.payload_schema or {})
        self._indexes([f for f in INDEXES if f not in have] if have else [])

    def _indexes(self, names: list[str]) -> None:
        """Create the declared payload indexes of these fields (a collection made by an
        earlier version gets those it lacks)."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_LOCAL_INDEX_WARNING)
            for name in names:
                self._call(
                    "create a payload index",
                    self.client.create_payload_index,
                    self.collection,
                    name,
                    field_schema=SCHEMAS[INDEXES[name]],
                    wait=True,
                )

    def _exists(self) -> bool:
        return bool(
            self._call("check the collection", self.client.collection_exists, self.collection)
        )

    # -- writes -----------------------------------------------------------------------------
    def upsert(self, points: Sequence[Point]) -> None:
        for i in range(0, len(points), UPSERT_BATCH):
            batch = [
                models.PointStruct(id=p.id, vector=vector_list(p.vector), payload=p.payload)
                for p in points[i : i + UPSERT_BATCH]
            ]
            self._call("store edges", self.client.upsert, self.collection, batch, wait=True)

    def delete(self, flt: Filter) -> None:
        qf = to_qdrant_filter(flt)
        if qf is None:
            raise ValueError("refusing to delete with an empty filter")
        if not self._exists():
            return
        self._call(
            "delete edges",
            self.client.delete,
            self.collection,
            points_selector=models.FilterSelector(filter=qf),
            wait=True,
        )

    def set_payload(self, payload: dict[str, Any], flt: Filter) -> None:
        qf = to_qdrant_filter(flt)
        if qf is None:
            raise ValueError("refusing to set a payload with an empty filter")
        if not self._exists():
            return
        self._call(
            "update payloads",
            self.client.set_payload,
            self.collection,
            payload=payload,
            points=models.FilterSelector(filter=qf),
            wait=True,
        )

    def flush(self) -> None:
        """Writes use ``wait=True``: the server has them in its WAL when they return."""

    # -- reads ------------------------------------------------------------------------------
    def search(
        self,
        vector: Sequence[float] | np.ndarray,
        flt: Filter | None = None,
        limit: int = 10,
        score_threshold: float | None = None,
    ) -> list[Hit]:
        if not self._exists():
            return []
        res = self._call(
            "search",
            self.client.query_points,
            self.collection,
            query=vector_list(vector),
            query_filter=to_qdrant_filter(flt),
            limit=limit,
            score_threshold=score_threshold,
            with_payload=True,
            with_vectors=False,
        )
        return [Hit(str(p.id), p.score, p.payload or {}) for p in res.points]

    def ranked(
        self,
        vector: Sequence[float] | np.ndarray | None,
        flt: Filter | None,
        ranking: Ranking,
        limit: int,
    ) -> list[Hit]:
        if not ranking or limit < 1 or not self._exists():
            return []
        near = None if vector is None else vector_list(vector)
        stages, formula = ranking.plan(near is not None, flt, limit)

        def stage(s: Stage) -> models.Prefetch:
            query: Any = near if s.query == "near" else None
            if s.query == "words":
                query = models.TextQuery(
                    text=models.TextQueryInput(query=ranking.words, scoring=WORDS_BM25)
                )
            return models.Prefetch(
                query=query, using=ranking.field if s.query == "words" else None,
                filter=to_qdrant_filter(s.flt), limit=s.limit, score_threshold=s.threshold,
                prefetch=[stage(s.inner)] if s.inner else None,
            )  # fmt: skip

        res = self._call(
            "search",
            self.client.query_points,
            self.collection,
            prefetch=[stage(s) for s in stages],
            query=models.FormulaQuery(
                formula=_expression(formula),
                defaults={f"$score[{i}]": NOT_FOUND[s.query] for i, s in enumerate(stages)},
            ),
            score_threshold=Ranking.score_floor(near is not None),
            limit=limit,
            with_payload=True,
            with_vectors=near is not None,
        )
        return ordered([(str(p.id), p.score, p.payload or {}, p.vector) for p in res.points],
                       vector)  # fmt: skip

    def scroll(self, flt: Filter | None = None, batch_size: int = 256) -> Iterator[Hit]:
        if not self._exists():
            return
        qf = to_qdrant_filter(flt)
        offset: Any = None
        while True:
            records, offset = self._call(
                "read edges",
                self.client.scroll,
                self.collection,
                scroll_filter=qf,
                limit=batch_size,
                offset=offset,
                with_payload=True,
                with_vectors=False,
            )
            for r in records:
                yield Hit(str(r.id), None, r.payload or {})
            if offset is None:
                return

    def count(self, flt: Filter | None = None) -> int:
        if not self._exists():
            return 0
        res = self._call(
            "count edges",
            self.client.count,
            self.collection,
            count_filter=to_qdrant_filter(flt),
            exact=True,
        )
        return int(res.count)

    def paper_ids(self) -> set[str]:
        ids: set[str] = set()
        if not self._exists():
            return ids
        offset: Any = None
        while True:
            records, offset = self._call(
                "read paper ids",
                self.client.scroll,
                self.collection,
                limit=1024,
                offset=offset,
                with_payload=["paper_id"],
                with_vectors=False,
            )
            ids.update(str(r.payload["paper_id"]) for r in records if r.payload)
            if offset is None:
                return ids

    def close(self) -> None:
        if self._owns_client:
            self.client.close()
