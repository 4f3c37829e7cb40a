"""The SQLite ledger beside each collection: papers, edge refs, entity degrees, runs, sync state.

One file, ``<working-dir>/<collection>/ledger.sqlite``, in WAL mode (``status`` can read it while
an update writes) with ``synchronous=FULL`` (a paper marked done survives a power cut).

Degrees are counted over *distinct* edges: a distinct edge is the triple
``(source_key, relationship_type, target_key)`` over the whole collection, so a relation
stated by ten papers counts once. A node's degree is the number of distinct edges it takes part
in, as source or target (a self-loop counts once). The ``triples`` table keeps, for each distinct
edge, how many papers state it; a degree changes only when a triple appears (0 -> 1 paper) or
disappears (1 -> 0), which keeps each update proportional to the paper being changed.

Schema changes are numbered migrations in :data:`MIGRATIONS`, applied in order and recorded in
``PRAGMA user_version``. Never edit a released migration: append a new one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastbmrag.errors import StoreError
from fastbmrag.store.base import EdgeRef
from fastbmrag.store.payload import PAYLOAD_VERSION

Triple = tuple[str, str, str]

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """CREATE TABLE papers (
                paper_id TEXT PRIMARY KEY,
                status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
                content_hash TEXT,
                n_edges INTEGER NOT NULL DEFAULT 0,
                error TEXT,
                updated_at TEXT NOT NULL
            )""",
            "CREATE INDEX papers_status ON papers (status)",
            """CREATE TABLE edges (
                point_id TEXT PRIMARY KEY,
                paper_id TEXT NOT NULL,
                source_key TEXT NOT NULL,
                relationship_type TEXT NOT NULL,
                target_key TEXT NOT NULL
            )""",
            "CREATE INDEX edges_paper ON edges (paper_id)",
            """CREATE TABLE triples (
                source_key TEXT NOT NULL,
                relationship_type TEXT NOT NULL,
                target_key TEXT NOT NULL,
                n_papers INTEGER NOT NULL,
                PRIMARY KEY (source_key, relationship_type, target_key)
            ) WITHOUT ROWID""",
            """CREATE TABLE entities (
                key TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                ontology_id TEXT,
                degree INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE TABLE dirty_nodes (key TEXT PRIMARY KEY)",
            """CREATE TABLE journal (
                paper_id TEXT PRIMARY KEY,
                op TEXT NOT NULL CHECK (op IN ('commit', 'delete')),
                started_at TEXT NOT NULL
            )""",
            """CREATE TABLE runs (
                run_id INTEGER PRIMARY KEY AUTOINCREMENT,
                command TEXT NOT NULL,
                args TEXT NOT NULL DEFAULT '{}',
                pid INTEGER,
                started_at TEXT NOT NULL,
                ended_at TEXT,
                summary TEXT
            )""",
            """CREATE TABLE sync_state (
                query TEXT PRIMARY KEY,
                last_date TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                info TEXT NOT NULL DEFAULT '{}'
            )""",
        ],
    ),
    (
        2,
        [
            # the EdgePayload version each done paper's edges were stored with
            "ALTER TABLE papers ADD COLUMN payload_version INTEGER NOT NULL DEFAULT 1",
            # one name for the nodes whose degrees wait for a weight refresh: stale nodes
            "ALTER TABLE dirty_nodes RENAME TO stale_nodes",
        ],
    ),
    (
        3,
        [
            # papers known to be retracted, and who said so ("input": the paper's own record;
            # "pubmed": a sync's search); a retracted paper is kept, its edges flagged
            """CREATE TABLE retractions (
                paper_id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                noted_at TEXT NOT NULL
            )""",
        ],
    ),
    (
        4,
        [
            # degrees live here only: the store's points no longer carry them, so no node
            # waits for its edges' degree payload to be rewritten
            "DROP TABLE stale_nodes",
        ],
    ),
]

_CHUNK = 500  # SQLite host-parameter batches


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _chunks(items: Sequence[Any], n: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


@dataclass(frozen=True, slots=True)
class PaperState:
    paper_id: str
    status: str  # pending | done | failed
    content_hash: str | None
    n_edges: int
    error: str | None
    updated_at: str


@dataclass(frozen=True, slots=True)
class SyncState:
    query: str
    last_date: str
    updated_at: str
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: int
    command: str
    args: dict[str, Any]
    pid: int | None
    started_at: str
    ended_at: str | None
    summary: dict[str, Any] | None


@dataclass(slots=True)
class DegreePlan:
    """The effect of replacing some papers' distinct edges: new triple counts and degree deltas."""

    counts: dict[Triple, int]
    delta: Counter[str]

    @property
    def changed(self) -> set[str]:
        return {k for k, d in self.delta.items() if d}


class Ledger:
    """Thread-safe access to one ledger file (one connection, serialised by a lock)."""

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            self._migrate()
        except sqlite3.DatabaseError as err:
            raise StoreError(
                f"Cannot open the ledger {self.path}: {err}. Restore it from a backup or delete "
                "the collection folder and index again"
            ) from err

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

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on any error)."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self.conn.execute(sql, params)
            return cur.fetchall()

    def close(self) -> None:
        with self._lock:
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
        for chunk in _chunks(ids):
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
        """Done papers whose edges were stored with an earlier payload version."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM papers WHERE status = 'done' AND n_edges > 0 "
            "AND payload_version < ?",
            (PAYLOAD_VERSION,),
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

    def journal(self) -> dict[str, str]:
        return {pid: op for pid, op in self._query("SELECT paper_id, op FROM journal")}

    # -- degrees ----------------------------------------------------------------------------
    def _old_triples(
        self, conn: sqlite3.Connection, paper_ids: Sequence[str]
    ) -> dict[str, set[Triple]]:
        out: dict[str, set[Triple]] = {pid: set() for pid in paper_ids}
        for chunk in _chunks(list(paper_ids)):
            marks = ",".join("?" * len(chunk))
            for pid, s, r, t in conn.execute(
                "SELECT paper_id, source_key, relationship_type, target_key FROM edges "
                f"WHERE paper_id IN ({marks})",
                chunk,
            ):
                out[pid].add((s, r, t))
        return out

    @staticmethod
    def _triple_counts(conn: sqlite3.Connection, triples: Sequence[Triple]) -> dict[Triple, int]:
        """n_papers of each triple present in the ledger (one query per chunk of triples)."""
        out: dict[Triple, int] = {}
        for chunk in _chunks(triples, _CHUNK // 3):
            values = ",".join(["(?, ?, ?)"] * len(chunk))
            for s, r, t, n in conn.execute(
                "SELECT t.source_key, t.relationship_type, t.target_key, t.n_papers "
                f"FROM (VALUES {values}) AS v CROSS JOIN triples AS t "
                "ON t.source_key = v.column1 AND t.relationship_type = v.column2 "
                "AND t.target_key = v.column3",  # CROSS JOIN: look each one up by primary key
                [x for tr in chunk for x in tr],
            ):
                out[(s, r, t)] = int(n)
        return out

    def _plan(self, conn: sqlite3.Connection, replacements: dict[str, set[Triple]]) -> DegreePlan:
        old = self._old_triples(conn, list(replacements))
        change: Counter[Triple] = Counter()
        for pid, new in replacements.items():
            for tr in old[pid]:
                change[tr] -= 1
            for tr in new:
                change[tr] += 1
        existing = self._triple_counts(conn, list(change))
        counts: dict[Triple, int] = {}
        delta: Counter[str] = Counter()
        for tr, d in change.items():
            before = existing.get(tr, 0)
            after = before + d
            if after < 0:
                raise StoreError(
                    f"The ledger {self.path} is inconsistent (negative count for {tr}): run "
                    "`fastbmrag delete` on the affected papers and index them again"
                )
            counts[tr] = after
            if (before > 0) != (after > 0):
                step = 1 if after > 0 else -1
                for node in {tr[0], tr[2]}:
                    delta[node] += step
        return DegreePlan(counts, delta)

    def _degrees(self, conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, int]:
        keys = list(dict.fromkeys(keys))
        out = dict.fromkeys(keys, 0)
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for key, degree in conn.execute(
                f"SELECT key, degree FROM entities WHERE key IN ({marks})", chunk
            ):
                out[key] = int(degree)
        return out

    def degrees(self, keys: Iterable[str]) -> dict[str, int]:
        """Current degree of each key (0 for a node not in the graph)."""
        with self._lock:
            return self._degrees(self.conn, keys)

    def _apply_plan(self, conn: sqlite3.Connection, plan: DegreePlan) -> set[str]:
        conn.executemany(
            "INSERT INTO triples (source_key, relationship_type, target_key, n_papers) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (source_key, relationship_type, target_key) "
            "DO UPDATE SET n_papers = excluded.n_papers",
            [(*tr, n) for tr, n in plan.counts.items() if n > 0],
        )
        conn.executemany(
            "DELETE FROM triples WHERE source_key = ? AND relationship_type = ? AND target_key = ?",
            [tr for tr, n in plan.counts.items() if n <= 0],
        )
        changed = plan.changed
        conn.executemany(
            "UPDATE entities SET degree = degree + ? WHERE key = ?",
            [(plan.delta[k], k) for k in changed],
        )
        conn.executemany(
            "DELETE FROM entities WHERE key = ? AND degree <= 0", [(k,) for k in changed]
        )
        return changed

    def apply_papers(
        self, papers: Sequence[tuple[str, str | None, Sequence[tuple[str, EdgeRef]]]]
    ) -> set[str]:
        """In one transaction, for each (paper id, content hash, [(point id, ref), ...]): the
        paper's edge refs become these, degrees follow, and the paper is done (its journal entry cleared).

        Returns the keys of the nodes whose degree changed.
        """
        batch = {pid: (content_hash, dict(edges)) for pid, content_hash, edges in papers}
        with self.transaction() as conn:
            plan = self._plan(
                conn, {pid: {r.triple for r in by_id.values()} for pid, (_, by_id) in batch.items()}
            )
            entities: dict[str, tuple[str, str, str | None]] = {}
            for _, by_id in batch.values():
                for r in by_id.values():
                    entities[r.source_key] = (r.source_name, r.source_type, r.source_id)
                    entities[r.target_key] = (r.target_name, r.target_type, r.target_id)
            conn.executemany(
                "INSERT INTO entities (key, name, type, ontology_id, degree) VALUES (?, ?, ?, ?, 0) "
                "ON CONFLICT (key) DO UPDATE SET name = excluded.name, type = excluded.type, "
                "ontology_id = excluded.ontology_id",
                [(k, *v) for k, v in entities.items()],
            )
            changed = self._apply_plan(conn, plan)
            stamp = now()
            for pid, (content_hash, by_id) in batch.items():
                conn.execute("DELETE FROM edges WHERE paper_id = ?", (pid,))
                conn.executemany(
                    "INSERT INTO edges (point_id, paper_id, source_key, relationship_type, "
                    "target_key) VALUES (?, ?, ?, ?, ?) ON CONFLICT (point_id) DO UPDATE SET "
                    "paper_id = excluded.paper_id, source_key = excluded.source_key, "
                    "relationship_type = excluded.relationship_type, "
                    "target_key = excluded.target_key",
                    [(point_id, pid, *r.triple) for point_id, r in by_id.items()],
                )
                conn.execute(
                    "INSERT INTO papers (paper_id, status, content_hash, n_edges, error, updated_at, "
                    "payload_version) VALUES (?, 'done', ?, ?, NULL, ?, ?) "
                    "ON CONFLICT (paper_id) DO UPDATE SET "
                    "status = 'done', content_hash = excluded.content_hash, "
                    "n_edges = excluded.n_edges, error = NULL, updated_at = excluded.updated_at, "
                    "payload_version = excluded.payload_version",
                    (pid, content_hash, len(by_id), stamp, PAYLOAD_VERSION),
                )
                conn.execute("DELETE FROM journal WHERE paper_id = ?", (pid,))
        return changed

    def remove_papers(
        self, paper_ids: Iterable[str], *, keep_as_pending: bool = False
    ) -> tuple[int, set[str]]:
        """In one transaction: drop the papers' edge refs (degrees follow) and either forget the
        papers or keep them as pending. Returns (edges removed, nodes whose degree changed)."""
        ids = list(dict.fromkeys(paper_ids))
        with self.transaction() as conn:
            plan = self._plan(conn, {pid: set() for pid in ids})
            changed = self._apply_plan(conn, plan)
            removed = 0
            for chunk in _chunks(ids):
                marks = ",".join("?" * len(chunk))
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
                conn.execute(f"DELETE FROM journal WHERE paper_id IN ({marks})", chunk)
        return removed, changed

    # -- retractions --------------------------------------------------------------------------
    def not_yet_retracted(self, paper_ids: Iterable[str]) -> list[str]:
        """Those of these papers that are done and not recorded as retracted."""
        ids = list(dict.fromkeys(paper_ids))
        new: set[str] = set()
        for chunk in _chunks(ids):
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
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO retractions (paper_id, source, noted_at) VALUES (?, ?, ?)",
                [(pid, source, now()) for pid in paper_ids],
            )

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

    def edge_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM edges")[0][0])

    def distinct_edge_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM triples")[0][0])

    def paper_edge_count(self, paper_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(paper_ids))
        total = 0
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            total += int(
                self._query(f"SELECT COUNT(*) FROM edges WHERE paper_id IN ({marks})", chunk)[0][0]
            )
        return total

    def entities(self) -> Iterator[tuple[str, str, str, str | None, int]]:
        """(key, name, type, ontology_id, degree) of every node in the graph."""
        for key, name, type_, ontology_id, degree in self._query(
            "SELECT key, name, type, ontology_id, degree FROM entities WHERE degree > 0 ORDER BY key"
        ):
            yield key, name, type_, ontology_id, int(degree)

    def edge_rows(self) -> Iterator[tuple[str, str, str, str, str]]:
        """(point id, paper id, source key, relationship type, target key) of every edge."""
        rows = self._query(
            "SELECT point_id, paper_id, source_key, relationship_type, target_key FROM edges "
            "ORDER BY paper_id, point_id"
        )
        for row in rows:
            yield str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4])

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

    # -- runs -------------------------------------------------------------------------------
    def record_run_start(self, command: str, args: dict[str, Any] | None = None) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO runs (command, args, pid, started_at) VALUES (?, ?, ?, ?)",
                (command, json.dumps(args or {}, default=str), os.getpid(), now()),
            )
            return int(cur.lastrowid or 0)

    def record_run_end(self, run_id: int, summary: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET ended_at = ?, summary = ? WHERE run_id = ?",
                (now(), json.dumps(summary, default=str), run_id),
            )

    def last_run(self) -> RunRecord | None:
        rows = self._query(
            "SELECT run_id, command, args, pid, started_at, ended_at, summary FROM runs "
            "ORDER BY run_id DESC LIMIT 1"
        )
        if not rows:
            return None
        r = rows[0]
        return RunRecord(
            int(r[0]), r[1], json.loads(r[2] or "{}"), r[3], r[4], r[5],
            json.loads(r[6]) if r[6] else None,
        )  # fmt: skip

    # -- sync state -------------------------------------------------------------------------
    def get_sync_state(self, query: str) -> SyncState | None:
        rows = self._query(
            "SELECT query, last_date, updated_at, info FROM sync_state WHERE query = ?", (query,)
        )
        if not rows:
            return None
        q, last, updated, info = rows[0]
        return SyncState(q, last, updated, json.loads(info or "{}"))

    def set_sync_state(self, query: str, last_date: str, **info: Any) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO sync_state (query, last_date, updated_at, info) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (query) DO UPDATE SET last_date = excluded.last_date, "
                "updated_at = excluded.updated_at, info = excluded.info",
                (query, last_date, now(), json.dumps(info, default=str)),
            )
