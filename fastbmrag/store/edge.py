"""Embedded store: one Qdrant Edge shard (qdrant-edge-py, Qdrant's engine in-process).

Only one process may open a shard directory at a time (Qdrant Edge locks its WAL).
:class:`fastbmrag.store.collection.Collection` guards that with a lock file and turns
contention into :class:`~fastbmrag.errors.StoreBusy`; this class maps the engine's own
"WouldBlock" error to the same exception as a last line of defence.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from fastbmrag.errors import DimensionMismatch, StoreBusy, StoreError
from fastbmrag.store import pagecache
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

CONFIG_FILE = "edge_config.json"
UPSERT_BATCH = 512

# No write-ahead log in shards created by this version: a write is durable once flush() returns,
# which is all the collection relies on (it flushes before a paper is marked done in the ledger,
# and after a crash deletes what journaled papers may have left, see Collection.recover). The WAL
# only duplicated every vector on disk: without it loads that flush often are up to ~1.3x faster
# and an open does not re-read the log's last 32 MB segment (~0.1 s; docs/benchmarks.md,
# "Storage"). Fixed when a shard is created; older shards keep theirs.
WAL_ENABLED = False

# Payload indexes are memory-mapped files pre-warmed into the page cache when the shard opens,
# instead of being deserialised onto the heap: loading the 16 indexes that way was most of the open
# time, which every `fastbmrag query` call pays. Cold (mapped, not pre-warmed) opens no faster
# here and makes the first filtered query after an open 3-6x slower (docs/benchmarks.md,
# "Storage").
INDEX_MEMORY = qe.Memory.Cached

# Vectors are memory-mapped and read through the page cache on first use, not pre-warmed at
# open: pre-warming the 800 MB of a 200k-edge shard was most of the ~0.9 s an open took, paid
# by every `fastbmrag query` call, while a search touches only the vectors it scores. Opens at
# 200k: ~0.3 s instead of ~0.9 s; in-process searches stay under the 50 ms target once the
# pages are mapped (docs/benchmarks.md, "Query"). The OS may also evict the vectors under memory
# pressure instead of the process holding them. Fixed when a segment is built.
VECTOR_MEMORY = qe.Memory.Cold

# Vectors are stored as 16-bit floats: half the disk, the page cache and the memory an index
# build maps, and builds about twice as fast, for a search whose top 50 are those of an exact
# float32 scan (recall@50 in docs/benchmarks.md, "Memory"). Fixed when a shard is created;
# older shards keep float32.
VECTOR_DATATYPE = qe.VectorStorageDatatype.Float16

# No merge makes a segment of more than this many KB of vectors (32,768 1024-d float16
# vectors). An update indexes as it goes (an index build once 20,000 points lack one,
# ``Collection.optimize``), so each build reads the points of one such step, never the whole
# collection, and no merge of two steps reads more: `update`'s memory is bounded whatever the
# collection's size (docs/benchmarks.md, "Memory"). Fixed when a shard is created.
MAX_SEGMENT_KB = 64 * 1024


# Segment folders an open does not read in full: the vectors and the payloads are read on use
# (a search reads those of the points it visits or returns).
READ_ON_USE = frozenset({"vector_storage", "payload_storage"})


def readahead_files(path: Path) -> list[str]:
    """The files of the shard at ``path`` that opening it reads in full: the payload indexes
    (pre-warmed, see ``INDEX_MEMORY``), the HNSW graph, the id trackers, the segment configs."""
    out: list[str] = []
    for root, dirs, files in os.walk(path / "segments"):
        dirs[:] = [d for d in dirs if d not in READ_ON_USE]
        out.extend(os.path.join(root, name) for name in files)
    return out


def unallocated(path: Path) -> int:
    """Bytes of :func:`readahead_files` that the volume has not allocated yet: the holes of
    files the engine made at their full size. An open reads those files in full, and a volume
    that allocates a page for a read of a hole (a tmpfs, a RAM disk:
    :func:`~fastbmrag.store.places.allocates_on_read`) needs that much room, else the process
    dies of SIGBUS."""
    total = 0
    for name in readahead_files(path):
        try:
            st = os.stat(name)
        except OSError:  # a segment replaced while walking
            continue
        total += max(0, st.st_size - st.st_blocks * 512)
    return total


def readahead(path: Path) -> Any:
    """Start the disk reads of an open of the shard at ``path`` without waiting for them.

    A separate process reads :func:`readahead_files` into the page cache
    (:mod:`fastbmrag.store.pagecache`). A command that calls this first, then spends a few
    hundred ms importing modules and loading vocabularies, finds the files in memory when it
    opens the shard: on a cold page cache the open of a 200k-edge shard goes from ~0.3 s to
    ~0.09 s (docs/benchmarks.md, "Query"). Returns the reader's ``subprocess.Popen``, or None
    where there is no shard or no reader could start.
    """
    if not (path / CONFIG_FILE).is_file():
        return None
    return pagecache.start(readahead_files(path))


def _index_params(kind: str) -> Any:
    if kind == "keyword":
        return qe.KeywordIndexParams(memory=INDEX_MEMORY)
    if kind == "text":  # names: words, lowercased, English stop words out; no stemmer (it
        # makes "emergency" of "emerged"): a query spells a name's number itself
        return qe.TextIndexParams(
            tokenizer=qe.TokenizerType.Word,
            lowercase=True,
            stopwords=qe.StopwordsSet(languages={qe.Language.English}),
            memory=INDEX_MEMORY,
        )
    if kind == "bm25":  # stems (text.stems): split on spaces, scored by BM25
        return qe.TextIndexParams(
            tokenizer=qe.TokenizerType.Word, lowercase=True, scoring=True, memory=INDEX_MEMORY
        )
    return qe.IntegerIndexParams(lookup=True, range=True, memory=INDEX_MEMORY)



def _condition(cond: Condition) -> Any:
    if isinstance(cond, Filter):
        return to_edge_filter(cond)
    if isinstance(cond, Words):
        return qe.FieldCondition(cond.key, match=qe.MatchText(cond.text))
    if isinstance(cond, HasId):
        return qe.HasIdCondition(set(cond.ids))
    if isinstance(cond, Range):
        return qe.FieldCondition(
            cond.key, range=qe.RangeFloat(gte=cond.gte, gt=cond.gt, lte=cond.lte, lt=cond.lt)
        )
    if cond.any_of is not None:
        return qe.FieldCondition(cond.key, match=qe.MatchAny(list(cond.any_of)))  # type: ignore[arg-type]
    if cond.value is None:
        return qe.IsEmptyCondition(cond.key)
    return qe.FieldCondition(cond.key, match=qe.MatchValue(cond.value))


def _expression(node: Expr) -> Any:
    """A ranking's formula (:meth:`~fastbmrag.store.base.Ranking.plan`) as Qdrant Edge's."""
    X, op, args = qe.Expression, node[0], node[1:]
    if op == "score":
        return X.Variable(f"$score[{args[0]}]")
    if op == "const":
        return X.Constant(float(args[0]))
    if op == "cond":
        return X.Condition(_condition(args[0]))
    if op == "div":
        return X.Div(_expression(args[0]), _expression(args[1]), 0.0)
    make = {"sum": X.Sum, "max": X.Max, "min": X.Min, "mult": X.Mult}[op]
    return make([_expression(a) for a in args])


def to_edge_filter(flt: Filter | None) -> qe.Filter | None:
    """Translate the backend-neutral filter into a Qdrant Edge filter."""
    if flt is None or not flt:
        return None
    return qe.Filter(
        must=[_condition(c) for c in flt.must] or None,
        should=[_condition(c) for c in flt.should] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


def _busy(path: Path, err: Exception) -> StoreBusy:
    return StoreBusy(
        f"The embedded store {path} is open in another process ({err}): wait for it to finish, "
        f"or run a Qdrant server and use {option_named('qdrant_url')}"
    )


def dir_size(path: Path) -> int:
    """Bytes used by the files under ``path`` (0 when it does not exist)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512  # not sparse size
            except OSError:  # a segment file replaced while walking
                continue
    return total


class EdgeStore(Store):
    """A Qdrant Edge shard at ``path`` (created on the first :meth:`ensure_collection`)."""

    backend = "embedded"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self._shard: qe.EdgeShard | None = None
        self._size: int | None = None
        self._dirty = False  # writes since the last flush (a reader's close needs no flush)
        if (self.path / CONFIG_FILE).exists():
            self._size = self._config_size()
            try:
                self._shard = qe.EdgeShard.load(str(self.path))
            except Exception as err:  # the bindings raise a bare Exception
                if "WouldBlock" in str(err):
                    raise _busy(self.path, err) from err
                raise StoreError(
                    f"Cannot open the embedded store {self.path}: {err}. If the files are damaged, "
                    "delete that folder and its ledger.sqlite beside it, then index again"
                ) from err

    # -- schema -----------------------------------------------------------------------------
    def _config_size(self) -> int | None:
        try:
            data = json.loads((self.path / CONFIG_FILE).read_text())
            return int(data["vectors"][""]["size"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def vector_size(self) -> int | None:
        return self._size if self._shard is not None else None

    def ensure_collection(self, vector_size: int) -> None:
        if self._shard is not None:
            if self._size != vector_size:
                raise DimensionMismatch(
                    f"The store {self.path} holds {self._size}-d vectors, not {vector_size}-d: "
                    "use the embedding model the collection was built with, or a new collection"
                )
            self.upgrade_indexes()
            return
        self.path.mkdir(parents=True, exist_ok=True)
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(
                size=vector_size,
                distance=qe.Distance.Cosine,
                memory=VECTOR_MEMORY,
                datatype=VECTOR_DATATYPE,
            ),
            wal_enabled=WAL_ENABLED,
            optimizers=qe.EdgeOptimizersConfig(max_segment_size=MAX_SEGMENT_KB),
        )
        shard = qe.EdgeShard.create(str(self.path), config)
        for name, kind in INDEXES.items():
            shard.update(qe.UpdateOperation.create_field_index(name, _index_params(kind)))
        shard.flush()
        self._shard, self._size = shard, vector_size

    def upgrade_indexes(self) -> None:
        """Give a shard made by an earlier version the payload indexes of this one (missing
        fields, or indexes loaded onto the heap at open): rebuilt from the stored payloads. An
        index of a field no filter reads any more is dropped (each costs every segment's
        open)."""
        shard = self._require()
        schema = shard.info().payload_schema
        changed = False
        for name in schema.keys() - INDEXES.keys():
            shard.update(qe.UpdateOperation.delete_field_index(name))
            changed = True
        for name, kind in INDEXES.items():
            have = schema.get(name)
            if have is not None and getattr(have.params, "memory", None) == INDEX_MEMORY:
                continue
            if have is not None:
                shard.update(qe.UpdateOperation.delete_field_index(name))
            shard.update(qe.UpdateOperation.create_field_index(name, _index_params(kind)))
            changed = True
        if changed:
            shard.flush()

    def indexed_fields(self) -> dict[str, str]:
        """Payload field -> index type name, as the shard reports it."""
        if self._shard is None:
            return {}
        schema = self._shard.info().payload_schema
        return {k: str(v.data_type).rsplit(".", 1)[-1] for k, v in schema.items()}

    # -- writes -----------------------------------------------------------------------------
    def _require(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(
                f"The embedded store {self.path} has no collection yet: index papers first"
            )
        return self._shard

    def upsert(self, points: Sequence[Point]) -> None:
        if not points:
            return
        shard = self._require()
        self._dirty = True
        for i in range(0, len(points), UPSERT_BATCH):
            batch = [
                qe.Point(p.id, vector_list(p.vector), p.payload)
                for p in points[i : i + UPSERT_BATCH]
            ]
            shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete(self, flt: Filter) -> None:
        if self._shard is None:
            return
        edge_filter = to_edge_filter(flt)
        if edge_filter is None:
            raise ValueError("refusing to delete with an empty filter")
        self._shard.update(qe.UpdateOperation.delete_points_by_filter(edge_filter))
        self._dirty = True

    def set_payload(self, payload: dict[str, Any], flt: Filter) -> None:
        if self._shard is None:
            return
        edge_filter = to_edge_filter(flt)
        if edge_filter is None:
            raise ValueError("refusing to set a payload with an empty filter")
        self._shard.update(qe.UpdateOperation.set_payload_by_filter(edge_filter, payload))
        self._dirty = True

    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()
            self._dirty = False

    def optimize(self) -> None:
        if self._shard is not None:
            self._shard.optimize()
            self._shard.flush()

    # -- reads ------------------------------------------------------------------------------
    def search(
        self,
        vector: Sequence[float] | np.ndarray,
        flt: Filter | None = None,
        limit: int = 10,
        score_threshold: float | None = None,
    ) -> list[Hit]:
        if self._shard is None:
            return []
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(vector_list(vector)),
            filter=to_edge_filter(flt),
            score_threshold=score_threshold,
            with_payload=True,
            with_vector=False,
        )
        return [Hit(str(p.id), p.score, p.payload or {}) for p in self._shard.query(request)]

    def ranked(
        self,
        vector: Sequence[float] | np.ndarray | None,
        flt: Filter | None,
        ranking: Ranking,
        limit: int,
    ) -> list[Hit]:
        if self._shard is None or not ranking or limit < 1:
            return []
        near = None if vector is None else qe.Query.Nearest(vector_list(vector))
        stages, formula = ranking.plan(near is not None, flt, limit)

        def stage(s: Stage) -> qe.Prefetch:
            query: Any = near if s.query == "near" else None
            if s.query == "words":
                scoring = qe.Bm25Params(k=WORDS_K, b=WORDS_B)
                query = qe.TextQuery(ranking.field, ranking.words, scoring)
            return qe.Prefetch(limit=s.limit, query=query, filter=to_edge_filter(s.flt),
                               score_threshold=s.threshold,
                               prefetches=[stage(s.inner)] if s.inner else None)  # fmt: skip

        request = qe.QueryRequest(
            limit=limit,
            query=qe.Formula(_expression(formula),
                             defaults={f"$score[{i}]": NOT_FOUND[s.query]
                                       for i, s in enumerate(stages)}),  # fmt: skip
            prefetches=[stage(s) for s in stages],
            score_threshold=Ranking.score_floor(near is not None),
            with_payload=True,
            with_vector=near is not None,
        )
        found = [(str(p.id), p.score, p.payload or {}, p.vector) for p in self._shard.query(request)]
        return ordered(found, vector)

    def scroll(self, flt: Filter | None = None, batch_size: int = 256) -> Iterator[Hit]:
        if self._shard is None:
            return
        offset: Any = None
        edge_filter = to_edge_filter(flt)
        while True:
            records, offset = self._shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=batch_size,
                    filter=edge_filter,
                    with_payload=True,
                    with_vector=False,
                )
            )
            for r in records:
                yield Hit(str(r.id), None, r.payload or {})
            if offset is None:
                return

    def count(self, flt: Filter | None = None) -> int:
        if self._shard is None:
            return 0
        if flt is None or not flt:  # the shard keeps the number: no count of every point
            return int(self._shard.info().points_count)
        return int(self._shard.count(qe.CountRequest(exact=True, filter=to_edge_filter(flt))))

    def paper_ids(self) -> set[str]:
        if self._shard is None:
            return set()
        n = self.count()
        if n == 0:
            return set()
        hits = self._shard.facet(qe.FacetRequest("paper_id", limit=n, exact=True))
        return {str(h.value) for h in hits if h.count > 0}

    def unindexed_points(self) -> int:
        if self._shard is None:
            return 0
        info = self._shard.info()
        return max(0, int(info.points_count) - int(info.indexed_vectors_count))

    def size_on_disk(self) -> int | None:
        return dir_size(self.path)

    def close(self) -> None:
        if self._shard is not None:
            shard, self._shard = self._shard, None
            if self._dirty:
                shard.flush()
            shard.close()
