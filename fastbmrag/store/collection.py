"""A collection: its store (embedded shard or server collection) + its ledger + locking + weights.
It is opened by :mod:`fastbmrag.store.opening` (locks, ledger, store, recovery, the intact check).

Layout of ``<working-dir>/<name>/``::

    ledger.sqlite   papers, edge refs, entity degrees, runs, sync state (SQLite, WAL)
    shard/          the Qdrant Edge shard (embedded backend only)
    lock            held (flock) by the one process updating the collection
    shard.lock      held (flock) by the one process that has the embedded shard open

Writes follow one order, so that a crash at any instant leaves each paper either done with all
its edges, or pending with none (the next writer to open the collection finishes the job):

1. journal the paper in the ledger;
2. delete the paper's points, upsert its new points, flush the store (durable);
3. one SQLite transaction: edge refs, degrees, paper done, journal cleared.

Weights are pure functions over the ledger's degrees (:mod:`fastbmrag.store.weights`): a commit
writes the paper's own points and nothing else in the store; ``weight >= w`` is resolved from
the ledger when a query asks for it (:meth:`min_weight_filter`), and :meth:`with_degrees` gives
payloads their current degrees and weight for display and export.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from fastbmrag.errors import (
    DimensionMismatch,
    StoreError,
)
from fastbmrag.papers.design import METADATA
from fastbmrag.store import weights
from fastbmrag.store.base import EdgeRef, Filter, HasId, Hit, Match, Point, Store
from fastbmrag.store.ledger import Ledger
from fastbmrag.store.opening import open_collection
from fastbmrag.store.payload import BACKFILLED
from fastbmrag.store.places import (
    LEDGER_FILE,
    SHARD_DIR,
    WRITE_FREE,
    FileLock,
    check_name,
    check_space,
)
from fastbmrag.util.closing import Closing
from fastbmrag.util.wording import option_named

if TYPE_CHECKING:
    from fastbmrag.papers.model import Paper

log = logging.getLogger(__name__)


# Build the HNSW index once at least this many points are searched by brute force. Below it a
# nightly update of a few hundred edges returns at once, and brute force over <= 20k 1024-d
# vectors costs a few ms per query (docs/benchmarks.md, "Storage"). An update asks after every
# commit, so a long one indexes as it goes, a segment of about this many points at a time.
DEFAULT_OPTIMIZE_MIN_POINTS = 20_000
_SET_PAYLOAD_CHUNK = 512


# Disk a stored edge takes at most, with its share of the indexes and a segment rebuild's copy.
POINT_BYTES = 64 * 1024
# a sync asks PubMed again for the publication types and check tags of the papers indexed
# between a week and a year ago whose records did not say their study yet (NLM indexes a
# citation weeks to months after it appears)
RELABEL_DAYS = (7, 365)


class PaperEdges(NamedTuple):
    """One paper's edges for :meth:`Collection.commit_papers` (``points[i]`` is ``refs[i]``)."""

    paper_id: str
    content_hash: str | None
    points: list[Point]
    refs: list[EdgeRef]
    # (state, request) of a paper with a PMID or PMCID: "pubtator" or "not_yet" (a later sync
    # re-grounds it), and its PubTator3 request key; None: ids from the dictionaries only
    grounding: tuple[str, str] | None = None
    # (design, organisms ";"-joined, design_from, organisms_from): the paper's study
    study: tuple[str, str, str, str] | None = None
    retracted: bool = False  # its own record says it is retracted


class Collection(Closing):
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
        location: str | None = None,
    ) -> None:
        self.name = name
        self.directory = directory
        self.ledger = ledger
        self._store = store
        self.backend = backend
        self.writable = writable
        self.optimize_min_points = optimize_min_points
        self._locks = list(locks)
        self._mutex = threading.RLock()
        self._dim: int | None = None
        self._closed = False
        self._location = location
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
        return open_collection(cls, working_dir, name, **options)

    @classmethod
    def writer(
        cls,
        working_dir: Path,
        name: str,
        *,
        create: bool = False,
        optimize_min_points: int = DEFAULT_OPTIMIZE_MIN_POINTS,
        **options: Any,
    ) -> Collection:
        """Open collection ``name`` for writing (``create``: make it when missing): takes the
        collection lock (LockedError if another process has it) and finishes anything a killed
        writer left. ``options`` as for :meth:`reader`, plus ``repair``."""
        make = functools.partial(cls, optimize_min_points=optimize_min_points)
        return open_collection(make, working_dir, name, write=True, create=create, **options)

    @classmethod
    def ledger_only(cls, working_dir: Path, name: str, **options: Any) -> Collection:
        """Open collection ``name``'s ledger without its store (``status``, the papers already
        indexed): works while an update holds the collection."""
        return open_collection(cls, working_dir, name, ledger_only=True, **options)

    # -- basics -----------------------------------------------------------------------------
    @property
    def has_store(self) -> bool:
        """Whether the collection was opened with its store (not :meth:`ledger_only`)."""
        return self._store is not None

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
            if self._store is not None:
                self._store.close()
        finally:
            self.ledger.close()
            for lock in reversed(self._locks):
                lock.release()

    # -- schema -----------------------------------------------------------------------------
    def check_vector_size(self, dim: int) -> int | None:
        """The store's vector size (None: no vectors yet); DimensionMismatch when it is not
        ``dim``, the embedding model's."""
        current = self.store.vector_size()
        if current is not None and current != dim:
            raise DimensionMismatch(
                f"Collection '{self.name}' holds {current}-d vectors but the embedding model "
                f"gives {dim}-d vectors: use the embedding model the collection was built with "
                f"({option_named('embed_model')} / FASTBMRAG_EMBED_MODEL), or index into a new "
                f"{option_named('collection')}"
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
    def commit_paper(
        self, paper_id: str, content_hash: str | None, points: list[Point], refs: list[EdgeRef]
    ) -> None:
        """Make ``points`` exactly the paper's edges (durably), then mark the paper done.

        ``points[i]`` is the edge described by ``refs[i]``. Their payloads must hold everything
        but ``paper_id``, ``source_key`` and ``target_key``, which are set here from the
        arguments.
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
            if self.backend == "embedded":  # on a full volume a mapped write is a SIGBUS
                n = sum(len(p.points) for p in batch.values())
                check_space(self.directory, WRITE_FREE + n * POINT_BYTES, "this commit")
            first = next((p.points[0] for p in batch.values() if p.points), None)
            if first is not None:
                self.ensure_vector_size(len(first.vector))
            # stays flagged when re-indexed; flagged with its commit where its record says so
            retracted = self.ledger.retracted() & batch.keys()
            retracted |= {pid for pid, p in batch.items() if p.retracted}
            for pid, p in batch.items():
                for point, ref in zip(p.points, p.refs, strict=True):
                    if pid in retracted:
                        point.payload["retracted"] = 1
                    point.payload["paper_id"] = pid
                    point.payload["source_key"] = ref.source_key
                    point.payload["target_key"] = ref.target_key
            # The new edges are written beside the old ones, the ledger switches to them in one
            # transaction, and only then do the old ones go: killed at any point, a paper has
            # its old edges or its new ones, never none (recover() removes what the ledger
            # does not list).
            ids = list(batch)
            self.ledger.journal_begin(ids, "commit")
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
                ],
                keep_journal=True,
                grounding={pid: p.grounding for pid, p in batch.items()},
                study={pid: p.study for pid, p in batch.items() if p.study is not None},
                retracted=[pid for pid, p in batch.items() if p.retracted],
            )
            self._delete_unlisted(ids)
            self.store.flush()
            self.ledger.journal_end(ids)

    def _delete_unlisted(self, paper_ids: Sequence[str]) -> None:
        """Remove the papers' stored edges that the ledger does not list for them."""
        for i in range(0, len(paper_ids), _SET_PAYLOAD_CHUNK):
            chunk = tuple(paper_ids[i : i + _SET_PAYLOAD_CHUNK])
            listed = tuple(sorted(self.ledger.point_ids(chunk)))
            self.store.delete(
                Filter(
                    must=(Match("paper_id", any_of=chunk),),
                    must_not=(HasId(listed),) if listed else (),
                )
            )

    def _delete_points_of(self, paper_ids: Sequence[str]) -> None:
        for i in range(0, len(paper_ids), _SET_PAYLOAD_CHUNK):
            chunk = tuple(paper_ids[i : i + _SET_PAYLOAD_CHUNK])
            if len(chunk) == 1:
                self.store.delete(Filter(must=(Match("paper_id", chunk[0]),)))
            else:
                self.store.delete(Filter(must=(Match("paper_id", any_of=chunk),)))

    def papers_of_pmids(self, pmids: Iterable[str]) -> list[str]:
        """The papers the collection holds for these PubMed ids: a paper whose id is the PMID
        (read from MEDLINE), and one whose ``pmid`` is (a PMC full text, a CSV row)."""
        wanted = [p for p in dict.fromkeys(p.strip() for p in pmids) if p.isdigit()]
        found = [p for p in wanted if p in self.ledger.paper_states(wanted)]
        if wanted and self.has_store:  # a ledger opened alone (a dry run) knows paper ids only
            for hit in self.store.scroll(Filter(must=(Match("pmid", any_of=tuple(wanted)),))):
                found.append(str(hit.payload.get("paper_id")))
        return list(dict.fromkeys(found))

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
            return removed

    def recover(self) -> dict[str, int]:
        """Finish what a crashed writer left: journaled papers.

        A paper journaled for commit may hold edges the ledger does not list (the new ones,
        killed before the ledger took them; the old ones, killed after): those are removed, and
        the paper keeps what the ledger lists, its old edges or its new ones. A journaled
        delete is completed.
        """
        with self._mutex:
            self._require_write()
            journal = self.ledger.journal()
            commits = [pid for pid, op in journal.items() if op == "commit"]
            deletes = [pid for pid, op in journal.items() if op == "delete"]
            self._delete_unlisted(commits)
            self._delete_points_of(deletes)
            if journal:
                # a crash inside a flush of a shard without a write-ahead log can leave a point
                # whose payload was not written: no paper id, so no paper's filter finds it
                self.store.delete(Filter(must=(Match("paper_id", None),)))
                self.store.flush()
            if commits:
                self.ledger.journal_end(commits)
            if deletes:
                self.ledger.remove_papers(deletes)
            return {"reset": len(commits), "deleted": len(deletes)}

    # -- weights ---------------------------------------------------------------------------
    def min_degree(self, threshold: float) -> int:
        """Smallest degree whose weight reaches ``threshold`` (:func:`weights.min_degree`)."""
        return weights.min_degree(threshold, self.ledger.node_count())

    def min_weight_filter(self, threshold: float) -> Filter:
        """Edges whose weight is >= ``threshold``, as conditions on their node keys."""
        k = self.min_degree(threshold)
        return weights.weight_filter(*self.ledger.keys_by_degree(k)) if k > 0 else Filter()

    def upgrade(self) -> int:
        """Give a store made by an earlier version what this one reads, with no model call:
        the payload indexes it lacks, and, on every edge stored without one of the indexed
        fields that a filter reads, the value it stands for there (:data:`BACKFILLED`:
        ``words`` from its names, ``finding`` "finding" ...). Returns how many edges were
        given a value."""
        self._require_write()
        if self.store.vector_size() is None:
            return 0
        self.store.upgrade_indexes()
        given = 0
        for row in BACKFILLED:
            lacking: dict[Any, list[str]] = {}
            for hit in self.store.scroll(Filter(must=(Match(row.name),))):
                lacking.setdefault(row.value_before(hit.payload), []).append(hit.id)
            for value, ids in lacking.items():
                for i in range(0, len(ids), 1024):
                    self.store.set_payload(
                        {row.name: value}, Filter(must=(HasId(tuple(ids[i : i + 1024])),))
                    )
            given += sum(len(ids) for ids in lacking.values())
        if given:
            self.store.flush()
            self._indexed_read = False
        return given

    def indexed_fields(self) -> dict[str, str] | None:
        """The store's payload indexes (None where the backend cannot tell), read once per open."""
        if not self._indexed_read:
            self._indexed = self.store.indexed_fields()
            self._indexed_read = True
        return self._indexed

    def with_degrees(self, payloads: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Copies of ``payloads`` with their ends' current degrees and their weight."""
        keys = {str(p.get(f"{end}_key")) for p in payloads for end in weights.ENDS}
        return weights.with_degrees(payloads, self.ledger.degrees(keys), self.ledger.node_count())

    # -- reads: what queries, graph commands and the web page ask of a collection ----------
    def count(self, flt: Filter | None = None) -> int:
        """Edges matching ``flt`` (all without)."""
        return self.store.count(flt)

    def holds(self, flt: Filter | None) -> bool:
        """Whether an edge matches ``flt`` (the first one found: no count of them all)."""
        return next(iter(self.store.scroll(flt, batch_size=1)), None) is not None

    def scroll(self, flt: Filter | None = None) -> Iterator[Hit]:
        """Edges matching ``flt`` as stored (no degrees: :meth:`edges` adds them)."""
        return self.store.scroll(flt)

    def search(
        self, vector: Any, flt: Filter | None, limit: int, score_threshold: float | None = None
    ) -> list[Hit]:
        """The ``limit`` edges matching ``flt`` closest to ``vector``."""
        return self.store.search(vector, flt, limit=limit, score_threshold=score_threshold)

    def edges(self, flt: Filter | None = None, batch_size: int = 256) -> Iterator[Hit]:
        """Every edge matching ``flt`` (all without), its payload :meth:`with_degrees`."""
        batch: list[Hit] = []
        for hit in self.store.scroll(flt, batch_size=batch_size):
            batch.append(hit)
            if len(batch) == batch_size:
                yield from self._weighed(batch)
                batch = []
        yield from self._weighed(batch)

    def _weighed(self, hits: list[Hit]) -> Iterator[Hit]:
        if hits:
            payloads = self.with_degrees([h.payload for h in hits])
            for hit, payload in zip(hits, payloads, strict=True):
                yield Hit(hit.id, hit.score, payload)

    # -- maintenance ------------------------------------------------------------------------
    def optimize(self) -> bool:
        """Build the vector index if at least ``optimize_min_points`` points lack one. Returns
        whether it ran. Call it after a batch."""
        with self._mutex:
            self._require_write()
            if self.store.unindexed_points() < self.optimize_min_points:
                return False
            self.store.optimize()
            return True

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

    def relabel_candidates(self, days: tuple[int, int] = RELABEL_DAYS) -> list[str]:
        """The done papers whose id is a PMID, indexed between ``days`` days ago, whose design
        or organisms their record did not say yet: NLM adds publication types and check tags
        weeks to months after a citation appears."""
        now = datetime.now(UTC)
        newest, oldest = ((now - timedelta(days=d)).isoformat(timespec="seconds") for d in days)
        fresh = {p.paper_id for p in self.ledger.papers("done") if oldest <= p.updated_at <= newest}
        return sorted(
            pid
            for pid, (_, _, design_from, organisms_from) in self.ledger.labels.all().items()
            if pid in fresh and pid.isdigit() and METADATA not in (design_from, organisms_from)
        )

    def relabel(self, records: dict[str, Paper]) -> list[str]:
        """Give these papers' edges what their records now say of the study (the record's
        labels over the model's), with no model call; the papers whose labels changed."""
        with self._mutex:
            self._require_write()
            studies = self.ledger.labels.all()
            changed: dict[str, tuple[str, str, str, str]] = {}
            for pid, rec in records.items():
                if pid not in studies:
                    continue
                design, organisms, design_from, organisms_from = studies[pid]
                if rec.design_from == METADATA:
                    design, design_from = rec.design, METADATA
                if rec.organisms_from == METADATA:
                    organisms, organisms_from = tuple(rec.organisms), METADATA
                label = (design, ";".join(organisms), design_from, organisms_from)
                if label != (studies[pid][0], ";".join(studies[pid][1]), *studies[pid][2:]):
                    changed[pid] = label
                    self.store.set_payload(
                        {"design": design, "design_from": design_from,
                         "organisms": list(organisms), "organisms_from": organisms_from},
                        Filter(must=(Match("paper_id", pid),)),
                    )  # fmt: skip
            if changed:  # the store first: a crash before the ledger notes it relabels again
                self.store.flush()
                self.ledger.labels.set(changed)
            return sorted(changed)

    def retraction_candidates(self) -> list[str]:
        """The done papers a PubMed search can find retracted: those whose id is a PMID, not
        yet recorded as retracted."""
        known = self.ledger.retracted()
        return [
            p.paper_id
            for p in self.ledger.papers("done")
            if p.paper_id.isdigit() and p.paper_id not in known
        ]
