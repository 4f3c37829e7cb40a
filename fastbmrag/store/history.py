"""The ledger's parts besides papers and edges, each a small class the ledger holds and shares
its connection with: the runs and what each did to each paper (:class:`Runs`, ``ledger.runs``),
the papers' study labels (:class:`Labels`, ``ledger.labels``), the watched entities
(:class:`Watches`, ``ledger.watches``) and each PubMed query's sync state (:class:`Syncs`,
``ledger.syncs``)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


class _Part:
    """A part of the ledger: its connection, lock and transactions are the ledger's."""

    def __init__(self, ledger: _Ledger) -> None:
        self._ledger = ledger

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self._ledger._query(sql, params)

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._ledger.transaction()


class _Ledger(Protocol):
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


class Runs(_Part):
    """The runs (a command's one pass: update, sync, delete ...) and what each did to each
    paper."""

    def __init__(self, ledger: _Ledger) -> None:
        super().__init__(ledger)
        self._run: int | None = None  # the run this session's writes belong to

    @property
    def began(self) -> int | None:
        """The run this session's writes belong to, if one was recorded."""
        return self._run

    def begin(self, command: str, args: dict[str, Any] | None = None) -> int | None:
        """Record a run and make it the one this session's writes belong to; None (and no new
        run) when one is current already: the command that began it ends it."""
        if self._run is not None:
            return None
        self._run = self.start(command, args)
        return self._run

    def current(self) -> int:
        """The run this session's writes belong to, recorded at the first write when no command
        began one."""
        if self._run is None:
            self._run = self.start("write")
        return self._run

    def start(self, command: str, args: dict[str, Any] | None = None) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO runs (command, args, pid, started_at) VALUES (?, ?, ?, ?)",
                (command, json.dumps(args or {}, default=str), os.getpid(), now()),
            )
            return int(cur.lastrowid or 0)

    def end(self, run_id: int, summary: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET ended_at = ?, summary = ? WHERE run_id = ?",
                (now(), json.dumps(summary, default=str), run_id),
            )

    def papers_done_since(self, stamp: str) -> int:
        """Papers committed at or after ``stamp`` (a run's start: its progress so far)."""
        rows = self._query(
            "SELECT COUNT(*) FROM papers WHERE status = 'done' AND updated_at >= ?", (stamp,)
        )
        return int(rows[0][0])

    def last(self) -> RunRecord | None:
        runs = self._records("ORDER BY run_id DESC LIMIT 1")
        return runs[0] if runs else None

    def since(self, first: int) -> list[RunRecord]:
        """The runs numbered ``first`` and later, in order."""
        return self._records("WHERE run_id >= ? ORDER BY run_id", (first,))

    def _records(self, where: str, params: Sequence[Any] = ()) -> list[RunRecord]:
        rows = self._query(
            "SELECT run_id, command, args, pid, started_at, ended_at, summary FROM runs " + where,
            params,
        )
        return [
            RunRecord(int(r[0]), r[1], json.loads(r[2] or "{}"), r[3], r[4], r[5],
                      json.loads(r[6]) if r[6] else None)
            for r in rows
        ]  # fmt: skip

    def first_since(self, stamp: str) -> int | None:
        """The first run started at or after ``stamp`` (an ISO date or time), None if none."""
        rows = self._query("SELECT MIN(run_id) FROM runs WHERE started_at >= ?", (stamp,))
        return None if rows[0][0] is None else int(rows[0][0])

    def events(self, first: int) -> list[tuple[int, str, str, int]]:
        """(run, paper id, event, edges) of the runs numbered ``first`` and later."""
        return [
            (int(r[0]), r[1], r[2], int(r[3]))
            for r in self._query(
                "SELECT run_id, paper_id, event, edges FROM paper_events WHERE run_id >= ? "
                "ORDER BY run_id, paper_id",
                (first,),
            )
        ]


class Labels(_Part):
    """Each done paper's study: design, organisms, and where each came from."""

    def all(self) -> dict[str, tuple[str, tuple[str, ...], str, str]]:
        """Done paper -> (design, organisms, design_from, organisms_from)."""
        return {
            r[0]: (r[1], tuple(o for o in r[2].split(";") if o), r[3], r[4])
            for r in self._query(
                "SELECT paper_id, design, organisms, design_from, organisms_from FROM papers "
                "WHERE status = 'done'"
            )
        }

    def counts(self) -> dict[str, dict[str, int]]:
        """Done papers by design and by where the label came from (``metadata``, ``model``,
        ``unknown``), designs strongest first."""
        from fastbmrag.papers.design import rank

        designs: dict[str, int] = {}
        sources: dict[str, int] = {}
        for design, source, n in self._query(
            "SELECT design, design_from, COUNT(*) FROM papers WHERE status = 'done' "
            "GROUP BY design, design_from"
        ):
            designs[design or "unknown"] = designs.get(design or "unknown", 0) + n
            sources[source or "unknown"] = sources.get(source or "unknown", 0) + n
        return {
            "by_design": dict(sorted(designs.items(), key=lambda kv: rank(kv[0]))),
            "by_source": dict(sorted(sources.items())),
        }

    def set(self, labels: dict[str, tuple[str, str, str, str]]) -> None:
        """Relabel papers' studies (a later record's publication types, check tags)."""
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE papers SET design = ?, organisms = ?, design_from = ?, organisms_from = ? "
                "WHERE paper_id = ?",
                [(*label, pid) for pid, label in labels.items()],
            )


class Watches(_Part):
    """The watched entities: their news come first in a digest."""

    def add(self, entities: Sequence[tuple[str, str]]) -> None:
        """Watch these (node key, name)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO watches (key, name, added_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET name = excluded.name",
                [(key, name, now()) for key, name in entities],
            )

    def remove(self, keys: Sequence[str]) -> int:
        with self.transaction() as conn:
            return sum(
                conn.execute("DELETE FROM watches WHERE key = ?", (k,)).rowcount for k in keys
            )

    def all(self) -> dict[str, str]:
        """Node key -> name of the watched entities, in the order they were added."""
        return {r[0]: r[1] for r in self._query("SELECT key, name FROM watches ORDER BY rowid")}


class Syncs(_Part):
    """Each PubMed query's sync state: the last day synced, and what the last sync said."""

    def get(self, query: str) -> SyncState | None:
        rows = self._query(
            "SELECT query, last_date, updated_at, info FROM sync_state WHERE query = ?", (query,)
        )
        if not rows:
            return None
        q, last, updated, info = rows[0]
        return SyncState(q, last, updated, json.loads(info or "{}"))

    def set(self, query: str, last_date: str, **info: Any) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO sync_state (query, last_date, updated_at, info) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (query) DO UPDATE SET last_date = excluded.last_date, "
                "updated_at = excluded.updated_at, info = excluded.info",
                (query, last_date, now(), json.dumps(info, default=str)),
            )
