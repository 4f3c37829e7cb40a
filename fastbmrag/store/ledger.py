"""The SQLite ledger beside each collection: papers, edge refs, entity degrees, and (in
:mod:`fastbmrag.store.history`) runs, study labels, watched entities and sync state.

One file, ``<working-dir>/<collection>/ledger.sqlite``, in WAL mode (``status`` can read it while
an update writes) with ``synchronous=FULL`` (a paper marked done survives a power cut).

Degrees are counted over distinct edges (:mod:`fastbmrag.store.degrees`). Schema changes are the
numbered migrations of :mod:`fastbmrag.store.migrations`, applied in order and recorded in
``PRAGMA user_version``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastbmrag.errors import DiskFull, StoreError
from fastbmrag.store.base import EdgeRef, name_form
from fastbmrag.store.degrees import apply_plan, chunks, degrees_of, plan_replacements
from fastbmrag.store.history import Labels, Runs, Syncs, Watches, now
from fastbmrag.store.migrations import MIGRATIONS
from fastbmrag.store.payload import LEDGER_FIELDS, NAMES_VERSION, PAYLOAD_VERSION
from fastbmrag.store.places import MB, WRITE_FREE, free_space

# what SQLite says when the volume fills during a write (an I/O error where the WAL cannot grow)
FULL = frozenset({"SQLITE_FULL", "SQLITE_IOERR", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_SHMSIZE"})


@dataclass(frozen=True, slots=True)
class PaperState:
    paper_id: str
    status: str  # pending | done | failed
    content_hash: str | None
    n_edges: int
    error: str | None
    updated_at: str


# The insert of a paper's edges: the ledger's own columns, then the declared fields'
_DECLARED = "".join(f", {c.name}" for c in LEDGER_FIELDS)
EDGE_INSERT = (
    f"INSERT INTO edges (point_id, paper_id, source_key, relationship_type, target_key, first_run, "
    f"last_run{_DECLARED}) VALUES (?, ?, ?, ?, ?, ?, ?{', ?' * len(LEDGER_FIELDS)}) "
    "ON CONFLICT (point_id) DO UPDATE SET paper_id = excluded.paper_id, "
    "source_key = excluded.source_key, relationship_type = excluded.relationship_type, "
    "target_key = excluded.target_key, last_run = excluded.last_run"
    + "".join(f", {c.name} = excluded.{c.name}" for c in LEDGER_FIELDS)
)


def _column_default(value: Any) -> str:
    """A column's constraint and default in SQL: NOT NULL with the value, or NULL."""
    if value is None:
        return "DEFAULT NULL"
    shown = str(value) if isinstance(value, int | float) else "'" + str(value).replace("'", "''") + "'"
    return f"NOT NULL DEFAULT {shown}"


class Ledger:
    """Thread-safe access to one ledger file (one connection, serialised by a lock)."""

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self.runs, self.labels = Runs(self), Labels(self)
        self.watches, self.syncs = Watches(self), Syncs(self)
        try:
            self.conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            self._migrate()
            self._declare_columns()
        except sqlite3.DatabaseError as err:
            raise self._refusal(err, "opening") from err

    def _refusal(self, err: sqlite3.Error, doing: str) -> StoreError:
        """The one line for a failed open or write of the ledger: its volume is full, it is
        read-only (an open writes its migrations), else it is damaged. Nothing committed is
        lost in the first two."""
        code = str(getattr(err, "sqlite_errorname", ""))
        where, free = free_space(self.path.parent)
        if code == "SQLITE_FULL" or (
            code.startswith("SQLITE_IOERR") and free is not None and free < WRITE_FREE
        ):
            shown = "too little" if free is None else f"{free / MB:,.0f} MB"
            return DiskFull(
                f"The volume of {where} has {shown} free, too little for {doing} the ledger "
                f"{self.path} ({err}): free some space there (nothing committed is lost)"
            )
        if code.startswith("SQLITE_READONLY") or not os.access(self.path.parent, os.W_OK):
            return StoreError(
                f"The ledger {self.path} is read-only, and {doing} it writes to it ({err}): "
                "make it and its folder writable by this user (nothing in it is lost)"
            )
        return StoreError(
            f"Cannot {'open' if doing == 'opening' else 'write'} the ledger {self.path}: {err}. "
            "Restore it from a backup or delete the collection folder and index again"
        )

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        latest = MIGRATIONS[-1][0]
        if self.schema_version == latest:
            return
        with self.transaction() as conn:
            current = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if current > latest:
                raise StoreError(
                    f"The ledger {self.path} has schema {current}, newer than this fastbmrag "
                    f"understands ({latest}): upgrade fastbmrag"
                )
            for number, statements in MIGRATIONS:
                if number <= current:
                    continue
                for sql in statements:
                    conn.execute(sql)
                conn.execute(f"PRAGMA user_version={number}")

    def _declare_columns(self) -> None:
        """The edges table's columns of the declared edge fields (:data:`LEDGER_FIELDS`): one
        a ledger made by an earlier version lacks is added, its rows given the field's
        default (the value an edge stored before the field stands for)."""
        if all(c.name in self._edge_columns() for c in LEDGER_FIELDS):
            return
        with self.transaction() as conn:
            for c in LEDGER_FIELDS:
                if c.name not in self._edge_columns():  # another process may have added it
                    conn.execute(f"ALTER TABLE edges ADD COLUMN {c.name} {c.ledger} "
                                 f"{_column_default(c.default)}")  # fmt: skip

    def _edge_columns(self) -> set[str]:
        return {str(r[1]) for r in self.conn.execute("PRAGMA table_info(edges)")}

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on any error)."""
        with self._lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.conn
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):  # what failed already rolled back
                        self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
            except sqlite3.OperationalError as err:
                if getattr(err, "sqlite_errorname", "") in FULL:
                    raise self._refusal(err, "writing") from err
                raise

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self.conn.execute(sql, params)
            return cur.fetchall()

    def close(self) -> None:
        with self._lock:
            if (run := self.runs.began) is not None:  # no command ended it (writes outside
                with contextlib.suppress(sqlite3.Error):  # update, sync)
                    self.conn.execute(
                        "UPDATE runs SET ended_at = ? WHERE run_id = ? AND ended_at IS NULL",
                        (now(), run),
                    )
            self.conn.close()

    # -- meta -------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- papers -----------------------------------------------------------------------------
    @staticmethod
    def _paper(row: Sequence[Any]) -> PaperState:
        return PaperState(row[0], row[1], row[2], int(row[3]), row[4], row[5])

    _PAPER_COLS = "paper_id, status, content_hash, n_edges, error, updated_at"

    def paper_state(self, paper_id: str) -> PaperState | None:
        rows = self._query(f"SELECT {self._PAPER_COLS} FROM papers WHERE paper_id = ?", (paper_id,))
        return self._paper(rows[0]) if rows else None

    def paper_states(self, paper_ids: Iterable[str]) -> dict[str, PaperState]:
        ids = list(dict.fromkeys(paper_ids))
        out: dict[str, PaperState] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            for row in self._query(
                f"SELECT {self._PAPER_COLS} FROM papers WHERE paper_id IN ({marks})", chunk
            ):
                out[row[0]] = self._paper(row)
        return out

    def _set_status(
        self, paper_id: str, status: str, content_hash: str | None, error: str | None
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO papers (paper_id, status, content_hash, n_edges, error, updated_at) "
                "VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT (paper_id) DO UPDATE SET "
                "status = excluded.status, content_hash = excluded.content_hash, "
                "error = excluded.error, updated_at = excluded.updated_at",
                (paper_id, status, content_hash, error, now()),
            )

    def mark_pending(self, paper_id: str, content_hash: str | None) -> None:
        self._set_status(paper_id, "pending", content_hash, None)

    def mark_failed(self, paper_id: str, content_hash: str | None, error: str) -> None:
        self._set_status(paper_id, "failed", content_hash, error)

    def papers(self, status: str | None = None, limit: int | None = None) -> list[PaperState]:
        sql = f"SELECT {self._PAPER_COLS} FROM papers"
        params: list[Any] = []
        if status:
            sql += " WHERE status = ?"
            params.append(status)
        sql += " ORDER BY updated_at, paper_id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [self._paper(r) for r in self._query(sql, params)]

    def paper_counts(self) -> dict[str, int]:
        counts = {"done": 0, "pending": 0, "failed": 0}
        for status, n in self._query("SELECT status, COUNT(*) FROM papers GROUP BY status"):
            counts[status] = int(n)
        return counts

    # -- journal (crash recovery) -----------------------------------------------------------
    def outdated_papers(self) -> int:
        """Done papers whose edges were stored before they carried their ends' names
        (:data:`~fastbmrag.store.payload.NAMES_VERSION`): selected by id alone."""
        row = self.conn.execute(
            # by the payload_version index (not the status one: nearly every paper is done)
            "SELECT COUNT(*) FROM papers WHERE payload_version < ? AND +status = 'done' "
            "AND n_edges > 0",
            (NAMES_VERSION,),
        ).fetchone()
        return int(row[0])

    def journal_begin(self, paper_ids: Iterable[str], op: str) -> None:
        """Record that the store is about to change for these papers."""
        stamp = now()
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO journal (paper_id, op, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT (paper_id) DO UPDATE SET op = excluded.op, started_at = excluded.started_at",
                [(pid, op, stamp) for pid in paper_ids],
            )

    def journal_end(self, paper_ids: Iterable[str]) -> None:
        """The store changes of these papers are done."""
        ids = list(dict.fromkeys(paper_ids))
        with self.transaction() as conn:
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM journal WHERE paper_id IN ({marks})", chunk)

    def point_ids(self, paper_ids: Iterable[str]) -> set[str]:
        """The ids of the stored edges the ledger lists for these papers."""
        out: set[str] = set()
        ids = list(dict.fromkeys(paper_ids))
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            out.update(
                str(r[0])
                for r in self._query(
                    f"SELECT point_id FROM edges WHERE paper_id IN ({marks})", chunk
                )
            )
        return out

    def journal(self) -> dict[str, str]:
        return {pid: op for pid, op in self._query("SELECT paper_id, op FROM journal")}

    def degrees(self, keys: Iterable[str]) -> dict[str, int]:
        """Current degree of each key (0 for a node not in the graph)."""
        with self._lock:
            return degrees_of(self.conn, keys)

    def apply_papers(
        self,
        papers: Sequence[tuple[str, str | None, Sequence[tuple[str, EdgeRef]]]],
        *,
        keep_journal: bool = False,
        grounding: dict[str, tuple[str, str] | None] | None = None,
        study: dict[str, tuple[str, str, str, str]] | None = None,
        retracted: Sequence[str] = (),
    ) -> set[str]:
        """In one transaction, for each (paper id, content hash, [(point id, ref), ...]): the
        paper's edge refs become these, degrees follow, and the paper is done (its journal entry
        cleared, unless ``keep_journal``: the store still holds edges to remove). ``grounding``:
        each paper's PubTator3 (state, request), None for a paper grounded on the dictionaries.
        ``retracted``: the papers whose own record says they are retracted, recorded so with
        their commit (a run killed after it loses nothing of it).

        Returns the keys of the nodes whose degree changed.
        """
        batch = {pid: (content_hash, dict(edges)) for pid, content_hash, edges in papers}
        run = self.runs.current()
        with self.transaction() as conn:
            replacements = {
                pid: {r.triple for r in by_id.values()} for pid, (_, by_id) in batch.items()
            }
            plan = plan_replacements(conn, replacements, self.path)
            entities: dict[str, tuple[str, str, str | None]] = {}
            names: set[tuple[str, str]] = set()
            for _, by_id in batch.values():
                for r in by_id.values():
                    entities[r.source_key] = (r.source_name, r.source_type, r.source_id)
                    entities[r.target_key] = (r.target_name, r.target_type, r.target_id)
                    names.update(
                        (name_form(raw), key)
                        for raw, key in ((r.source_raw, r.source_key), (r.target_raw, r.target_key))
                        if raw.strip()
                    )
            conn.executemany(
                "INSERT INTO names (form, key) VALUES (?, ?) ON CONFLICT DO NOTHING", sorted(names)
            )
            conn.executemany(
                "INSERT INTO entities (key, name, type, ontology_id, degree) VALUES (?, ?, ?, ?, 0) "
                "ON CONFLICT (key) DO UPDATE SET name = excluded.name, type = excluded.type, "
                "ontology_id = excluded.ontology_id",
                [(k, *v) for k, v in entities.items()],
            )
            changed = apply_plan(conn, plan)
            stamp = now()
            for pid, (content_hash, by_id) in batch.items():
                # an edge the paper stated before keeps the run that first added it
                first = dict(
                    conn.execute(
                        "SELECT point_id, first_run FROM edges WHERE paper_id = ?", (pid,)
                    ).fetchall()
                )
                done = conn.execute(
                    "SELECT 1 FROM papers WHERE paper_id = ? AND status = 'done'", (pid,)
                ).fetchone()
                conn.execute("DELETE FROM edges WHERE paper_id = ?", (pid,))
                conn.executemany(EDGE_INSERT, [
                    (point_id, pid, *r.triple, first.get(point_id, run), run,
                     *(r.columns.get(c.name, c.default) for c in LEDGER_FIELDS))
                    for point_id, r in by_id.items()
                ])  # fmt: skip
                self._event(conn, run, pid, "reindexed" if done else "indexed", len(by_id))
                conn.execute(
                    "INSERT INTO papers (paper_id, status, content_hash, n_edges, error, updated_at, "
                    "payload_version) VALUES (?, 'done', ?, ?, NULL, ?, ?) "
                    "ON CONFLICT (paper_id) DO UPDATE SET "
                    "status = 'done', content_hash = excluded.content_hash, "
                    "n_edges = excluded.n_edges, error = NULL, updated_at = excluded.updated_at, "
                    "payload_version = excluded.payload_version",
                    (pid, content_hash, len(by_id), stamp, PAYLOAD_VERSION),
                )
                if not keep_journal:
                    conn.execute("DELETE FROM journal WHERE paper_id = ?", (pid,))
            conn.executemany(
                "UPDATE papers SET design = ?, organisms = ?, design_from = ?, organisms_from = ? "
                "WHERE paper_id = ?",
                [(*label, pid) for pid, label in (study or {}).items()],
            )
            for pid, entry in (grounding or {}).items():
                conn.execute("DELETE FROM grounding WHERE paper_id = ?", (pid,))
                if entry is not None:
                    conn.execute(
                        "INSERT INTO grounding (paper_id, state, request, checked_at) "
                        "VALUES (?, ?, ?, ?)",
                        (pid, *entry, stamp),
                    )
            fresh = [pid for pid in retracted if pid in batch and not conn.execute(
                "SELECT 1 FROM retractions WHERE paper_id = ?", (pid,)).fetchone()]  # fmt: skip
            conn.executemany(
                "INSERT INTO retractions (paper_id, source, noted_at) VALUES (?, 'input', ?)",
                [(pid, stamp) for pid in fresh],
            )
            for pid in fresh:
                self._event(conn, run, pid, "retracted", len(batch[pid][1]))
        return changed

    def not_yet_grounded(self) -> list[tuple[str, str]]:
        """(paper id, PubTator3 request) of the done papers NCBI had not annotated yet."""
        return [
            (r[0], r[1])
            for r in self._query(
                "SELECT g.paper_id, g.request FROM grounding g JOIN papers p USING (paper_id) "
                "WHERE g.state = 'not_yet' AND p.status = 'done' ORDER BY g.paper_id"
            )
        ]

    def remove_papers(
        self, paper_ids: Iterable[str], *, keep_as_pending: bool = False
    ) -> tuple[int, set[str]]:
        """In one transaction: drop the papers' edge refs (degrees follow) and either forget the
        papers or keep them as pending. Returns (edges removed, nodes whose degree changed)."""
        ids = list(dict.fromkeys(paper_ids))
        run = None if keep_as_pending else self.runs.current()
        with self.transaction() as conn:
            plan = plan_replacements(conn, {pid: set() for pid in ids}, self.path)
            changed = apply_plan(conn, plan)
            removed = 0
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                if run is not None:  # what each removed paper took out
                    for pid, n in conn.execute(
                        f"SELECT p.paper_id, COUNT(e.point_id) FROM papers p LEFT JOIN edges e "
                        f"USING (paper_id) WHERE p.paper_id IN ({marks}) GROUP BY p.paper_id",
                        chunk,
                    ).fetchall():
                        self._event(conn, run, pid, "removed", n)
                removed += conn.execute(
                    f"DELETE FROM edges WHERE paper_id IN ({marks})", chunk
                ).rowcount
                if keep_as_pending:
                    conn.execute(
                        f"UPDATE papers SET status = 'pending', n_edges = 0, updated_at = ? "
                        f"WHERE paper_id IN ({marks})",
                        (now(), *chunk),
                    )
                else:
                    conn.execute(f"DELETE FROM papers WHERE paper_id IN ({marks})", chunk)
                    conn.execute(f"DELETE FROM retractions WHERE paper_id IN ({marks})", chunk)
                    conn.execute(f"DELETE FROM grounding WHERE paper_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM journal WHERE paper_id IN ({marks})", chunk)
        return removed, changed

    # -- retractions --------------------------------------------------------------------------
    def not_yet_retracted(self, paper_ids: Iterable[str]) -> list[str]:
        """Those of these papers that are done and not recorded as retracted."""
        ids = list(dict.fromkeys(paper_ids))
        new: set[str] = set()
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            new.update(
                r[0]
                for r in self._query(
                    "SELECT p.paper_id FROM papers p LEFT JOIN retractions r "
                    "ON r.paper_id = p.paper_id WHERE p.status = 'done' "
                    f"AND r.paper_id IS NULL AND p.paper_id IN ({marks})",
                    chunk,
                )
            )
        return [pid for pid in ids if pid in new]

    def note_retracted(self, paper_ids: Sequence[str], source: str) -> None:
        run = self.runs.current()
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO retractions (paper_id, source, noted_at) VALUES (?, ?, ?)",
                [(pid, source, now()) for pid in paper_ids],
            )
            for pid in paper_ids:
                (n,) = conn.execute(
                    "SELECT COUNT(*) FROM edges WHERE paper_id = ?", (pid,)
                ).fetchone()
                self._event(conn, run, pid, "retracted", n)

    def retracted(self) -> set[str]:
        """The papers recorded as retracted."""
        return {r[0] for r in self._query("SELECT paper_id FROM retractions")}

    def keys_by_degree(self, k: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The graph's node keys of degree >= ``k``, and those below it."""
        passing: list[str] = []
        failing: list[str] = []
        for key, degree in self._query("SELECT key, degree FROM entities WHERE degree > 0"):
            (passing if degree >= k else failing).append(key)
        return tuple(passing), tuple(failing)

    def node_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM entities WHERE degree > 0")[0][0])

    def supplementary_ids(self) -> list[str]:
        """The MeSH supplementary concepts (C ids) of the graph's nodes."""
        rows = self._query(
            "SELECT DISTINCT ontology_id FROM entities WHERE degree > 0 "
            "AND ontology_id GLOB 'C[0-9]*'"
        )
        return [r[0] for r in rows]

    def edge_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM edges")[0][0])

    def has_edges(self) -> bool:
        """Whether any edge is stored (no count of them all)."""
        return bool(self._query("SELECT 1 FROM edges LIMIT 1"))

    def distinct_edge_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM triples")[0][0])

    def entities(self) -> Iterator[tuple[str, str, str, str | None, int]]:
        """(key, name, type, ontology_id, degree) of every node in the graph."""
        for key, name, type_, ontology_id, degree in self._query(
            "SELECT key, name, type, ontology_id, degree FROM entities WHERE degree > 0 ORDER BY key"
        ):
            yield key, name, type_, ontology_id, int(degree)

    def named(self, forms: Iterable[str]) -> list[tuple[str, str, str, str, str | None]]:
        """(form, key, name, type, ontology id) of the nodes in the graph that papers wrote as one
        of ``forms`` (see :func:`~fastbmrag.store.base.name_form`)."""
        forms = list(dict.fromkeys(forms))
        out: dict[tuple[str, str], tuple[str, str, str, str, str | None]] = {}
        with self._lock:
            for chunk in chunks(forms):
                marks = ",".join("?" * len(chunk))
                for form, key, name, type_, oid in self.conn.execute(
                    "SELECT n.form, e.key, e.name, e.type, e.ontology_id FROM names n "
                    f"JOIN entities e ON e.key = n.key WHERE n.form IN ({marks}) AND e.degree > 0",
                    chunk,
                ):
                    out[(form, key)] = (form, key, name, type_, oid)
        return list(out.values())

    def dated_edge_rows(self) -> Iterator[tuple[str, str, str, str, str, int, str]]:
        """(point id, paper id, source key, relationship type, target key, first run, finding)."""
        with self._lock:
            yield from self.conn.execute(
                "SELECT point_id, paper_id, source_key, relationship_type, target_key, "
                "first_run, finding FROM edges"
            ).fetchall()

    def edge_rows(self) -> Iterator[tuple[str, str, str, str, str, str]]:
        """(point id, paper id, source key, relationship type, target key, finding) of every
        edge (finding: "finding" or "background", text.findings)."""
        rows = self._query(
            "SELECT point_id, paper_id, source_key, relationship_type, target_key, finding "
            "FROM edges ORDER BY paper_id, point_id"
        )
        for row in rows:
            yield tuple(str(v) for v in row)  # type: ignore[misc]

    def recompute_degrees(self) -> dict[str, int]:
        """Degrees computed from the edge refs alone (a check on the incremental counters)."""
        rows = self._query(
            "SELECT node, COUNT(*) FROM ("
            " SELECT DISTINCT source_key AS node, source_key, relationship_type, target_key FROM edges"
            " UNION"
            " SELECT DISTINCT target_key AS node, source_key, relationship_type, target_key FROM edges"
            ") GROUP BY node"
        )
        return {k: int(n) for k, n in rows}

    @staticmethod
    def _event(conn: sqlite3.Connection, run: int, paper_id: str, event: str, edges: int) -> None:
        conn.execute(
            "INSERT INTO paper_events (run_id, paper_id, event, edges) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (run_id, paper_id, event) DO UPDATE SET edges = excluded.edges",
            (run, paper_id, event, edges),
        )
