"""Entity degrees over distinct edges, kept in the ledger's ``triples`` and ``entities`` tables.

A distinct edge is the triple ``(source_key, relationship_type, target_key)`` over the whole
collection, so a relation stated by ten papers counts once. A node's degree is the number of
distinct edges it takes part in, as source or target (a self-loop counts once). ``triples``
keeps, for each distinct edge, how many papers state it; a degree changes only when a triple
appears (0 -> 1 paper) or disappears (1 -> 0), which keeps each update proportional to the
papers being changed. The functions run on the ledger's connection, inside its transaction.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastbmrag.errors import StoreError

Triple = tuple[str, str, str]

CHUNK = 500  # SQLite host-parameter batches


def chunks(items: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


@dataclass(slots=True)
class DegreePlan:
    """The effect of replacing some papers' distinct edges: new triple counts and degree deltas."""

    counts: dict[Triple, int]
    delta: Counter[str]

    @property
    def changed(self) -> set[str]:
        return {k for k, d in self.delta.items() if d}


def plan_replacements(
    conn: sqlite3.Connection, replacements: dict[str, set[Triple]], ledger: Path
) -> DegreePlan:
    """What replacing each paper's distinct edges by ``replacements[paper_id]`` does."""
    old = _old_triples(conn, list(replacements))
    change: Counter[Triple] = Counter()
    for pid, new in replacements.items():
        for tr in old[pid]:
            change[tr] -= 1
        for tr in new:
            change[tr] += 1
    existing = _triple_counts(conn, list(change))
    counts: dict[Triple, int] = {}
    delta: Counter[str] = Counter()
    for tr, d in change.items():
        before = existing.get(tr, 0)
        after = before + d
        if after < 0:
            raise StoreError(
                f"The ledger {ledger} is inconsistent (negative count for {tr}): run "
                "`fastbmrag delete` on the affected papers and index them again"
            )
        counts[tr] = after
        if (before > 0) != (after > 0):
            step = 1 if after > 0 else -1
            for node in {tr[0], tr[2]}:
                delta[node] += step
    return DegreePlan(counts, delta)


def apply_plan(conn: sqlite3.Connection, plan: DegreePlan) -> set[str]:
    """Write a plan's triple counts and degrees; returns the keys whose degree changed."""
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
    conn.executemany("DELETE FROM entities WHERE key = ? AND degree <= 0", [(k,) for k in changed])
    return changed


def degrees_of(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, int]:
    """Current degree of each key (0 for a node not in the graph)."""
    keys = list(dict.fromkeys(keys))
    out = dict.fromkeys(keys, 0)
    for chunk in chunks(keys):
        marks = ",".join("?" * len(chunk))
        for key, degree in conn.execute(
            f"SELECT key, degree FROM entities WHERE key IN ({marks})", chunk
        ):
            out[key] = int(degree)
    return out


def _old_triples(conn: sqlite3.Connection, paper_ids: Sequence[str]) -> dict[str, set[Triple]]:
    out: dict[str, set[Triple]] = {pid: set() for pid in paper_ids}
    for chunk in chunks(list(paper_ids)):
        marks = ",".join("?" * len(chunk))
        for pid, s, r, t in conn.execute(
            "SELECT paper_id, source_key, relationship_type, target_key FROM edges "
            f"WHERE paper_id IN ({marks})",
            chunk,
        ):
            out[pid].add((s, r, t))
    return out


def _triple_counts(conn: sqlite3.Connection, triples: Sequence[Triple]) -> dict[Triple, int]:
    """n_papers of each triple present in the ledger (one query per chunk of triples)."""
    out: dict[Triple, int] = {}
    for chunk in chunks(triples, CHUNK // 3):
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
