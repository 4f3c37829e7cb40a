"""A collection: its store (embedded shard or server collection) + its ledger + locking + weights.

Layout of ``<working-dir>/<name>/``::

    ledger.sqlite   papers, edge refs, entity degrees, runs, sync state (SQLite, WAL)
    shard/          the Qdrant Edge shard (embedded backend only)
    lock            held (flock) by the one process updating the collection
    shard.lock      held (flock) by the one process that has the embedded shard open

Writes follow one order, so that a crash at any instant leaves each paper either done with all
its edges, or pending with none (the next writer to open the collection finishes the job):

1. journal the paper in the ledger;
2. delete the paper's points, upsert its new points, flush the store (durable);
3. one SQLite transaction: edge refs, degrees, stale-weight queue, paper done, journal cleared.

Weights follow the fastbmRAG paper: node weight = degree / number of nodes; edge weight =
min(source weight, target weight). Points carry their nodes' degrees (``source_degree``,
``target_degree``, integers with a payload index), never the weight itself, because the number
of nodes changes with every paper. ``weight >= w`` is then exactly ``source_degree >= k and
target_degree >= k`` with ``k`` the smallest degree whose weight reaches ``w`` — two range
conditions evaluated inside Qdrant. After a batch, :meth:`Collection.refresh_weights` rewrites the
degree payload of the edges touching the nodes whose degree changed, and nothing else.

Except for hubs: a hub's degree changes with nearly every batch and it touches a large share of
all edges (a 500-edge nightly update of a 200k-edge collection refreshed nodes whose degrees sum
to 147,582, most of its points: 45 s, docs/benchmarks.md "Storage"). A
changed node of degree >= ``defer_min_degree`` (at most ``MAX_DEFERRED`` of them, the largest)
keeps older degrees in its edges' payload until the next optimise, and the ledger's queue of
stale nodes holds its current degree. Filters and weights stay exact: the ``--min-weight``
filter judges a stale node's edges by its current degree (its key, matched in Qdrant), and
:meth:`Collection.current_payload` gives a payload its current degrees for display and export.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

from fastbmrag.errors import (
    CollectionNotFound,
    DimensionMismatch,
    LockedError,
    StoreBusy,
    StoreError,
    StoreLost,
)
from fastbmrag.store.base import EdgeRef, Filter, Match, Point, Range, Store
from fastbmrag.store.ledger import Ledger, PaperState, RunRecord, SyncState
from fastbmrag.store.payload import edge_weight
from fastbmrag.store.places import (
    LEDGER_FILE,
    LOCK_FILE,
    SHARD_DIR,
    SHARD_LOCK_FILE,
    FileLock,
    check_name,
    command_line,
    holder_line,
    list_collections,
    stamp,
)

log = logging.getLogger(__name__)


# Build the HNSW index once at least this many points are searched by brute force. Below it a
# nightly update of a few hundred edges returns at once, and brute force over <= 20k 1024-d
# vectors costs a few ms per query (docs/benchmarks.md, "Storage").
DEFAULT_OPTIMIZE_MIN_POINTS = 20_000
# How long a reader waits for another *reader* (a query) to let go of the embedded shard.
DEFAULT_BUSY_TIMEOUT = 10.0
_SET_PAYLOAD_CHUNK = 512
# Changed nodes of at least this degree are rewritten at the next optimise rather than after
# every batch (module docstring); at most MAX_DEFERRED of them, so that the --min-weight filter
# that names them stays small.
DEFAULT_DEFER_MIN_DEGREE = 100
MAX_DEFERRED = 256


class PaperEdges(NamedTuple):
    """One paper's edges for :meth:`Collection.commit_papers` (``points[i]`` is ``refs[i]``)."""

    paper_id: str
    content_hash: str | None
    points: list[Point]
    refs: list[EdgeRef]


class Collection:
    """One collection of edges. Open it with :meth:`reader`, :meth:`writer` or
    :meth:`ledger_only`; use it as a context manager."""

    def __init__(
        self,
        name: str,
        directory: Path,
        ledger: Ledger,
        store: Store | None,
        *,
        backend: str,
        writable: bool = False,
        locks: Sequence[FileLock] = (),
        optimize_min_points: int = DEFAULT_OPTIMIZE_MIN_POINTS,
        defer_min_degree: int = DEFAULT_DEFER_MIN_DEGREE,
    ) -> None:
        self.name = name
        self.directory = directory
        self.ledger = ledger
        self._store = store
        self.backend = backend
        self.writable = writable
        self.optimize_min_points = optimize_min_points
        self.defer_min_degree = defer_min_degree
        self._locks = list(locks)
        self._mutex = threading.RLock()
        self._dim: int | None = None
        self._closed = False
        self._location: str | None = None
        self._indexed: dict[str, str] | None = None
        self._indexed_read = False

    # -- opening ----------------------------------------------------------------------------
    @staticmethod
    def exists(working_dir: Path, name: str) -> bool:
        """Whether collection ``name`` is under ``working_dir`` (nothing is created); an invalid
        name is InputError."""
        check_name(name)
        return (Path(working_dir).expanduser() / name / LEDGER_FILE).is_file()

    @classmethod
    def reader(cls, working_dir: Path, name: str, **options: Any) -> Collection:
        """Open collection ``name`` for reading (a query, an export). ``options``: ``qdrant_url``,
        ``api_key``, ``store``, ``command``, ``busy_timeout``."""
        return cls._open(working_dir, name, **options)

    @classmethod
    def writer(
        cls, working_dir: Path, name: str, *, create: bool = False, **options: Any
    ) -> Collection:
        """Open collection ``name`` for writing (``create``: make it when missing): takes the
        collection lock (LockedError if another process has it) and finishes anything a killed
        writer left. ``options`` as for :meth:`reader`, plus ``optimize_min_points`` and
        ``defer_min_degree``."""
        return cls._open(working_dir, name, write=True, create=create, **options)

    @classmethod
    def ledger_only(cls, working_dir: Path, name: str, **options: Any) -> Collection:
        """Open collection ``name``'s ledger without its store (``status``, the papers already
        indexed): works while an update holds the collection."""
        return cls._open(working_dir, name, ledger_only=True, **options)

    @classmethod
    def _open(
        cls,
        working_dir: Path,
        name: str,
        *,
        qdrant_url: str | None = None,
        api_key: str | None = None,
        write: bool = False,
        create: bool = False,
        ledger_only: bool = False,
        store: Store | None = None,
        command: str | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        optimize_min_points: int = DEFAULT_OPTIMIZE_MIN_POINTS,
        defer_min_degree: int = DEFAULT_DEFER_MIN_DEGREE,
        repair: bool = False,
    ) -> Collection:
        """Open (or with ``create``, create) collection ``name`` under ``working_dir``: the one
        opener behind :meth:`reader`, :meth:`writer` and :meth:`ledger_only`. ``store`` injects a
        ready store (tests, custom backends) instead of the embedded shard or ``qdrant_url``.
        A store that lost edges the ledger lists is StoreLost, unless a writer opens it with
        ``repair`` (:meth:`check_intact`).
        """
        check_name(name)
        working_dir = Path(working_dir).expanduser()
        directory = working_dir / name
        if not (directory / LEDGER_FILE).is_file():
            if not create:
                existing = list_collections(working_dir)
                known = ", ".join(existing) if existing else "none yet"
                raise CollectionNotFound(
                    f"No collection '{name}' in {working_dir} (collections there: {known}): "
                    "check --collection and --working-dir, or index papers with `fastbmrag update`"
                )
            directory.mkdir(parents=True, exist_ok=True)
        info = {
            "pid": os.getpid(),
            "command": command or command_line(),
            "started_at": stamp(),
        }
        locks: list[FileLock] = []
        ledger: Ledger | None = None
        opened: Store | None = None
        try:
            if write:
                lock = FileLock(directory / LOCK_FILE)
                if not lock.try_acquire(info):
                    raise LockedError(
                        f"Collection '{name}' is being updated by {holder_line(lock.holder())}: "
                        "wait for it to finish"
                    )
                locks.append(lock)
            ledger = Ledger(directory / LEDGER_FILE)
            if store is not None:
                backend = getattr(store, "backend", "custom")
            else:
                backend = "server" if qdrant_url else "embedded"
            if store is not None:
                opened = store
            elif ledger_only:
                opened = None
            elif qdrant_url:
                from fastbmrag.store.server import ServerStore

                opened = ServerStore.connect(qdrant_url, name, api_key=api_key)
            else:
                locks.append(
                    cls._take_shard(
                        directory,
                        name,
                        {**info, "mode": "write" if write else "read"},
                        busy_timeout,
                    )
                )
                from fastbmrag.store.edge import EdgeStore

                opened = EdgeStore(directory / SHARD_DIR)
            coll = cls(
                name,
                directory,
                ledger,
                opened,
                backend=backend,
                writable=write,
                locks=locks,
                optimize_min_points=optimize_min_points,
                defer_min_degree=defer_min_degree,
            )
        except BaseException:
            if opened is not None and store is None:
                opened.close()
            if ledger is not None:
                ledger.close()
            for lock in reversed(locks):
                lock.release()
            raise
        if qdrant_url and opened is None:
            coll._location = f"{qdrant_url.rstrip('/')}/collections/{name}"
        try:
            if write and opened is not None:
                coll.recover()
            coll.check_intact(repair=repair and write)
        except BaseException:
            coll.close()
            raise
        return coll

    def check_intact(self, *, repair: bool = False) -> None:
        """StoreLost when the ledger lists edges that the store does not hold: the shard folder
        was deleted or damaged, the server collection dropped. With ``repair`` (a writer asked to
        re-index, ``update --force``), the papers whose edges are gone are set back to pending
        instead, so that the run indexes them again."""
        listed = self.ledger.edge_count()
        if not listed or self.ledger.journal():  # a half-done commit: recover() finishes it
            return
        if self._store is None:  # ledger only: an embedded shard must at least be there
            if self.backend != "embedded" or (self.directory / SHARD_DIR).is_dir():
                return
            held = 0
        else:
            held = self._store.count()
        if held >= listed:
            return
        if not repair:
            raise StoreLost(
                f"Collection '{self.name}' lists {listed:,} edges but its store at "
                f"{self.location} holds {held:,}: the store was deleted or damaged. Index the "
                f"papers again with `fastbmrag update --force -c {self.name} INPUTS`, or start "
                f"afresh by removing {self.directory}"
            )
        present = self.store.paper_ids() if held else set()
        lost = [p.paper_id for p in self.ledger.papers("done") if p.paper_id not in present]
        self.ledger.remove_papers(lost, keep_as_pending=True)
        log.warning(
            "Collection '%s': the edges of %d papers were missing from its store; they are "
            "indexed again when they are in the input",
            self.name,
            len(lost),
        )

    @staticmethod
    def _take_shard(directory: Path, name: str, info: dict[str, Any], timeout: float) -> FileLock:
        lock = FileLock(directory / SHARD_LOCK_FILE)
        deadline = time.monotonic() + timeout
        while not lock.try_acquire(info):
            holder = lock.holder()
            if holder.get("mode") == "write" or time.monotonic() >= deadline:
                doing = "being updated" if holder.get("mode") == "write" else "open"
                raise StoreBusy(
                    f"Collection '{name}' is {doing} by {holder_line(holder)}, and its embedded store "
                    "can be open in one process at a time: wait for it to finish, or run a "
                    "Qdrant server and use --qdrant-url / QDRANT_URL to query during updates"
                )
            time.sleep(0.1)
        return lock

    # -- basics -----------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        if self._store is None:
            raise StoreError(f"Collection '{self.name}' was opened without its store")
        return self._store

    @property
    def location(self) -> str:
        """Where the edges are: the shard folder, or the server URL and collection."""
        if self._store is not None:
            return self._store.location
        return self._location or str(self.directory / SHARD_DIR)

    def _require_write(self) -> None:
        if not self.writable:
            raise StoreError(
                f"Collection '{self.name}' is open read-only: open it with write=True to change it"
            )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.writable and self._store is not None:
                try:
                    self.refresh_weights()
                except StoreError as err:  # the queue is kept: the next writer finishes it
                    log.warning("Weights of collection '%s' not refreshed: %s", self.name, err)
        finally:
            try:
                if self._store is not None:
                    self._store.close()
            finally:
                self.ledger.close()
                for lock in reversed(self._locks):
                    lock.release()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema -----------------------------------------------------------------------------
    def check_vector_size(self, dim: int) -> int | None:
        """The store's vector size (None: no vectors yet); DimensionMismatch when it is not
        ``dim``, the embedding model's."""
        current = self.store.vector_size()
        if current is not None and current != dim:
            raise DimensionMismatch(
                f"Collection '{self.name}' holds {current}-d vectors but the embedding model "
                f"gives {dim}-d vectors: use the embedding model the collection was built with "
                "(--embed-model / FASTBMRAG_EMBED_MODEL), or index into a new --collection"
            )
        return current

    def ensure_vector_size(self, dim: int) -> None:
        """Create the store for ``dim``-d vectors, or check it holds them (DimensionMismatch)."""
        with self._mutex:
            if self._dim == dim:
                return
            current = self.check_vector_size(dim)
            if current is None:
                self._require_write()
                self.store.ensure_collection(dim)
                self.ledger.set_meta("vector_size", str(dim))
            self._dim = dim

    # -- papers -----------------------------------------------------------------------------
    def paper_state(self, paper_id: str) -> PaperState | None:
        return self.ledger.paper_state(paper_id)

    def paper_states(self, paper_ids: Iterable[str]) -> dict[str, PaperState]:
        return self.ledger.paper_states(paper_ids)

    def mark_pending(self, paper_id: str, content_hash: str | None) -> None:
        self.ledger.mark_pending(paper_id, content_hash)

    def mark_failed(self, paper_id: str, content_hash: str | None, error: str) -> None:
        self.ledger.mark_failed(paper_id, content_hash, error)

    def failed_papers(self) -> list[PaperState]:
        return self.ledger.papers("failed")

    def commit_paper(
        self, paper_id: str, content_hash: str | None, points: list[Point], refs: list[EdgeRef]
    ) -> None:
        """Make ``points`` exactly the paper's edges (durably), then mark the paper done.

        ``points[i]`` is the edge described by ``refs[i]``. Their payloads must hold everything
        but ``source_degree``/``target_degree``, which are set here (as are ``paper_id``,
        ``source_key`` and ``target_key``, from the arguments).
        """
        self.commit_papers([PaperEdges(paper_id, content_hash, points, refs)])

    def commit_papers(self, papers: Sequence[PaperEdges]) -> None:
        """:meth:`commit_paper` for several papers with one store flush and one ledger
        transaction (all of them done, or after a crash all of them pending and absent).

        Cheaper per paper than :meth:`commit_paper`: the flush (tens of ms) is shared.
        """
        batch = {p.paper_id: p for p in papers}  # the same paper twice: the last one wins
        if not batch:
            return
        for p in batch.values():
            if len(p.points) != len(p.refs):
                raise ValueError(f"{len(p.points)} points but {len(p.refs)} refs for {p.paper_id}")
        with self._mutex:
            self._require_write()
            first = next((p.points[0] for p in batch.values() if p.points), None)
            if first is not None:
                self.ensure_vector_size(len(first.vector))
            degrees = self.ledger.preview_degrees({pid: p.refs for pid, p in batch.items()})
            retracted = self.ledger.retracted() & batch.keys()  # stays flagged when re-indexed
            for pid, p in batch.items():
                for point, ref in zip(p.points, p.refs, strict=True):
                    if pid in retracted:
                        point.payload["retracted"] = 1
                    point.payload["paper_id"] = pid
                    point.payload["source_key"] = ref.source_key
                    point.payload["target_key"] = ref.target_key
                    point.payload["source_degree"] = degrees[ref.source_key]
                    point.payload["target_degree"] = degrees[ref.target_key]
            ids = list(batch)
            self.ledger.journal_begin(ids, "commit")
            self._delete_points_of(ids)
            self.store.upsert([pt for p in batch.values() for pt in p.points])
            self.store.flush()
            self.ledger.apply_papers(
                [
                    (
                        pid,
                        p.content_hash,
                        [(pt.id, r) for pt, r in zip(p.points, p.refs, strict=True)],
                    )
                    for pid, p in batch.items()
                ]
            )

    def _delete_points_of(self, paper_ids: Sequence[str]) -> None:
        for i in range(0, len(paper_ids), _SET_PAYLOAD_CHUNK):
            chunk = tuple(paper_ids[i : i + _SET_PAYLOAD_CHUNK])
            if len(chunk) == 1:
                self.store.delete(Filter(must=(Match("paper_id", chunk[0]),)))
            else:
                self.store.delete(Filter(must=(Match("paper_id", any_of=chunk),)))

    def delete_papers(self, paper_ids: Iterable[str]) -> int:
        """Remove the papers' edges and ledger rows; degrees and weights follow.

        Returns the number of edges removed.
        """
        ids = list(dict.fromkeys(paper_ids))
        if not ids:
            return 0
        with self._mutex:
            self._require_write()
            self.ledger.journal_begin(ids, "delete")
            self._delete_points_of(ids)
            self.store.flush()
            removed, _changed = self.ledger.remove_papers(ids)
            self.refresh_weights()
            return removed

    def recover(self) -> dict[str, int]:
        """Finish what a crashed writer left: journaled papers and stale weights.

        A paper journaled for commit has unknown edges in the store: they are removed and the
        paper is left pending (the next run indexes it again). A journaled delete is completed.
        """
        with self._mutex:
            self._require_write()
            journal = self.ledger.journal()
            commits = [pid for pid, op in journal.items() if op == "commit"]
            deletes = [pid for pid, op in journal.items() if op == "delete"]
            self._delete_points_of(list(journal))
            if journal:
                # a crash inside a flush of a shard without a write-ahead log can leave a point
                # whose payload was not written: no paper id, so no paper's filter finds it
                self.store.delete(Filter(must=(Match("paper_id", None),)))
                self.store.flush()
            if commits:
                self.ledger.remove_papers(commits, keep_as_pending=True)
            if deletes:
                self.ledger.remove_papers(deletes)
            refreshed = self.refresh_weights()
            return {"reset": len(commits), "deleted": len(deletes), "refreshed": refreshed}

    # -- weights ----------------------------------------------------------------------------
    def refresh_weights(self, full: bool = False) -> int:
        """Rewrite ``source_degree``/``target_degree`` of the edges touching nodes whose degree
        changed since the last refresh, except hubs deferred to the next optimise (all of them
        with ``full``). Returns the number of nodes refreshed."""
        with self._mutex:
            self._require_write()
            stale = self.ledger.stale_nodes()
            if not full:
                hubs = sorted((k for k, d in stale.items() if d >= self.defer_min_degree),
                              key=lambda k: (-stale[k], k))  # fmt: skip
                for key in hubs[:MAX_DEFERRED]:
                    del stale[key]
            if not stale:
                return 0
            by_degree: dict[int, list[str]] = defaultdict(list)
            for key, degree in stale.items():
                if degree > 0:  # a node with degree 0 has no edges left
                    by_degree[degree].append(key)
            for degree, keys in by_degree.items():
                for i in range(0, len(keys), _SET_PAYLOAD_CHUNK):
                    chunk = tuple(keys[i : i + _SET_PAYLOAD_CHUNK])
                    for side in ("source", "target"):
                        self.store.set_payload(
                            {f"{side}_degree": degree},
                            Filter(must=(Match(f"{side}_key", any_of=chunk),)),
                        )
            self.store.flush()
            self.ledger.clear_stale(stale)
            return len(stale)

    def node_count(self) -> int:
        """Number of nodes in the graph (entities with at least one edge)."""
        return self.ledger.node_count()

    def min_degree(self, threshold: float) -> int:
        """Smallest degree ``d`` with ``d / node_count() >= threshold`` (float arithmetic, the
        same as :meth:`edge_weight`)."""
        n = self.node_count()
        if threshold <= 0 or n == 0:
            return 0
        k = max(0, math.ceil(threshold * n))
        while k > 0 and (k - 1) / n >= threshold:
            k -= 1
        while k / n < threshold:
            k += 1
        return k

    def min_weight_filter(self, threshold: float) -> Filter:
        """Edges whose weight is >= ``threshold``, as conditions Qdrant evaluates: a range on
        each end's degree; the edges of nodes whose stored degree is stale are judged by their
        key and current degree instead."""
        k = self.min_degree(threshold)
        if k <= 0:
            return Filter()
        stale = self.stale_nodes()
        if not stale:
            return Filter(must=(Range("source_degree", gte=k), Range("target_degree", gte=k)))
        keys = tuple(sorted(stale))
        passing = tuple(key for key in keys if stale[key] >= k)
        ends: list[Match | Range | Filter] = []
        for end in ("source", "target"):
            fresh = Filter(
                must=(Range(f"{end}_degree", gte=k),), must_not=(Match(f"{end}_key", any_of=keys),)
            )
            ends.append(
                Filter(should=(fresh, Match(f"{end}_key", any_of=passing))) if passing else fresh
            )
        return Filter(must=tuple(ends))

    def indexed_fields(self) -> dict[str, str] | None:
        """The store's payload indexes (None where the backend cannot tell), read once per open."""
        if not self._indexed_read:
            self._indexed = self.store.indexed_fields()
            self._indexed_read = True
        return self._indexed

    def similar_entities(
        self, name: str, entity_type: str | None = None, n: int = 5
    ) -> list[dict[str, Any]]:
        """Entities of the graph whose names read closest to ``name`` (difflib ratio >= 0.6),
        of ``entity_type`` when given: what to suggest when a name has no edge."""
        import difflib

        by_name: dict[str, list[tuple[str, str, str, str | None, int]]] = {}
        for row in self.ledger.entities():
            if row[4] > 0 and (entity_type in (None, "auto") or row[2] == entity_type):
                by_name.setdefault(row[1].casefold(), []).append(row)
        key = name.casefold()
        close = difflib.get_close_matches(key, list(by_name), n=n, cutoff=0.6)
        rows = [row for c in close for row in by_name[c]]
        rows.sort(
            key=lambda r: (
                -difflib.SequenceMatcher(None, key, r[1].casefold()).ratio(),
                -r[4],
                r[1],
            )
        )
        out = [{"name": r[1], "id": r[3], "type": r[2], "degree": r[4]} for r in rows]
        return out[:n]

    def stale_nodes(self) -> dict[str, int]:
        """Node key -> current degree, for the nodes whose edges still carry an older one
        (hubs deferred to the next optimise, or a batch not yet refreshed)."""
        return self.ledger.stale_nodes()

    @staticmethod
    def current_payload(payload: dict[str, Any], stale: dict[str, int]) -> dict[str, Any]:
        """``payload`` with current degrees (a copy where ``stale``, from :meth:`stale_nodes`,
        has one of its nodes)."""
        source, target = payload.get("source_key"), payload.get("target_key")
        if source not in stale and target not in stale:
            return payload
        out = dict(payload)
        if source in stale:
            out["source_degree"] = stale[source]
        if target in stale:
            out["target_degree"] = stale[target]
        return out

    def edge_weight(
        self,
        payload: dict[str, Any],
        n_nodes: int | None = None,
        stale: dict[str, int] | None = None,
    ) -> float:
        """min(source weight, target weight) of a stored edge, for display. Pass ``n_nodes``
        (:meth:`node_count`) and ``stale`` (:meth:`stale_nodes`) when weighing many edges."""
        n = self.node_count() if n_nodes is None else n_nodes
        payload = self.current_payload(payload, self.stale_nodes() if stale is None else stale)
        return edge_weight(payload, n) or 0.0

    # -- maintenance ------------------------------------------------------------------------
    def optimize(self, force: bool = False) -> bool:
        """Build the vector index if at least ``optimize_min_points`` points lack one (or
        ``force``). Returns whether it ran. Call it after a batch."""
        with self._mutex:
            self._require_write()
            if not force and self.store.unindexed_points() < self.optimize_min_points:
                return False
            self.refresh_weights(full=True)  # the deferred hubs too: small beside the HNSW build
            self.store.optimize()
            return True

    # -- runs and sync state ----------------------------------------------------------------
    def record_run_start(self, command: str, args: dict[str, Any] | None = None) -> int:
        return self.ledger.record_run_start(command, args)

    def record_run_end(self, run_id: int, summary: dict[str, Any]) -> None:
        self.ledger.record_run_end(run_id, summary)

    def last_run(self) -> RunRecord | None:
        return self.ledger.last_run()

    def get_sync_state(self, query: str) -> SyncState | None:
        return self.ledger.get_sync_state(query)

    def set_sync_state(self, query: str, last_date: str, **info: Any) -> None:
        self.ledger.set_sync_state(query, last_date, **info)

    # -- status -----------------------------------------------------------------------------
    def size_on_disk(self) -> int:
        from fastbmrag.store.edge import dir_size

        return dir_size(self.directory)

    def mark_retracted(self, paper_ids: Iterable[str], source: str) -> list[str]:
        """Flag the edges of these done papers as retracted (``retracted`` = 1) without
        re-extracting them, and record it; returns the papers not flagged before."""
        with self._mutex:
            self._require_write()
            new = self.ledger.not_yet_retracted(paper_ids)
            for i in range(0, len(new), _SET_PAYLOAD_CHUNK):
                chunk = tuple(new[i : i + _SET_PAYLOAD_CHUNK])
                self.store.set_payload(
                    {"retracted": 1}, Filter(must=(Match("paper_id", any_of=chunk),))
                )
            if new:  # the store first: a crash before the ledger records it flags them again
                self.store.flush()
                self.ledger.note_retracted(new, source)
            return new

    def retracted_papers(self) -> set[str]:
        return self.ledger.retracted()

    def retraction_candidates(self) -> list[str]:
        """The done papers a PubMed search can find retracted: those whose id is a PMID, not
        yet recorded as retracted."""
        known = self.ledger.retracted()
        return [
            p.paper_id
            for p in self.ledger.papers("done")
            if p.paper_id.isdigit() and p.paper_id not in known
        ]

    def stats(self, max_failed: int | None = 100) -> dict[str, Any]:
        """Everything `fastbmrag status` shows (from the ledger only: works during an update)."""
        counts = self.ledger.paper_counts()
        failed = self.ledger.papers("failed", limit=max_failed)
        run = self.ledger.last_run()
        size = self.ledger.get_meta("vector_size")
        return {
            "collection": self.name,
            "backend": self.backend,
            "location": self.location,
            "ledger": str(self.ledger.path),
            "papers": {**counts, "total": sum(counts.values())},
            "retracted_papers": len(self.ledger.retracted()),
            "failed": [
                {"paper_id": p.paper_id, "error": p.error, "updated_at": p.updated_at}
                for p in failed
            ],
            "edges": self.ledger.edge_count(),
            "distinct_edges": self.ledger.distinct_edge_count(),
            "entities": self.ledger.node_count(),
            "vector_size": int(size) if size else None,
            "stale_nodes": len(self.ledger.stale_nodes()),
            "outdated_papers": self.ledger.outdated_papers(),
            "last_run": asdict(run) if run else None,
            "size_on_disk": self.size_on_disk(),
        }
