"""The SQLite ledger: migrations, paper states, degrees over distinct edges, runs, sync state."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from store_support import cid_papers, paper_edges

from fastbmrag.errors import StoreError
from fastbmrag.store.base import EdgeRef
from fastbmrag.store.ledger import Ledger
from fastbmrag.store.migrations import MIGRATIONS


def refs_of(paper_id: str) -> list[tuple[str, EdgeRef]]:
    points, refs = paper_edges(paper_id, cid_papers()[paper_id])
    return [(p.id, r) for p, r in zip(points, refs, strict=True)]


def test_ledger_of_an_earlier_version_marks_its_papers_outdated(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "ledger.sqlite"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0][1]:  # a ledger as version-1 code left it
        conn.execute(statement)
    conn.execute(
        "INSERT INTO papers (paper_id, status, content_hash, n_edges, updated_at) "
        "VALUES ('old', 'done', 'h', 3, 'then'), ('empty', 'done', 'h', 0, 'then')"
    )
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    ledger = Ledger(path)
    assert ledger.schema_version == MIGRATIONS[-1][0]
    assert ledger.outdated_papers() == 1  # a paper with no edges has no payload to redo
    ledger.apply_papers([("old", "h2", refs_of(next(iter(cid_papers()))))])
    assert ledger.outdated_papers() == 0
    ledger.close()


def test_new_ledger_is_migrated_to_the_latest_schema(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    assert ledger.schema_version == MIGRATIONS[-1][0] == 11
    tables = {
        r[0] for r in ledger.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {
        "papers",
        "edges",
        "triples",
        "entities",
        "journal",
        "runs",
        "sync_state",
        "meta",
        "retractions",
        "names",
        "grounding",
        "paper_events",
        "watches",
    } <= tables
    assert ledger.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    ledger.close()
    # reopening does not re-run migrations
    again = Ledger(tmp_path / "ledger.sqlite")
    assert again.schema_version == MIGRATIONS[-1][0]
    again.close()


def test_ledger_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "ledger.sqlite")
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StoreError, match="schema 99, newer than this fastbmrag understands"):
        Ledger(tmp_path / "ledger.sqlite")


def test_not_a_database_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "ledger.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="Cannot open the ledger"):
        Ledger(tmp_path / "ledger.sqlite")


def test_paper_states(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.mark_pending("PMID:2696505", "sha256:1")
    ledger.mark_failed("PMID:7881871", "sha256:2", "model answer was not JSON")
    ledger.apply_papers([("PMID:2696505", "sha256:1", refs_of("PMID:2696505"))])
    done = ledger.paper_state("PMID:2696505")
    assert done is not None and (done.status, done.n_edges, done.error) == ("done", 3, None)
    failed = ledger.paper_state("PMID:7881871")
    assert failed is not None and failed.error == "model answer was not JSON"
    assert ledger.paper_state("PMID:1") is None
    assert set(ledger.paper_states(["PMID:2696505", "PMID:1", "PMID:7881871"])) == {
        "PMID:2696505",
        "PMID:7881871",
    }
    assert ledger.paper_counts() == {"done": 1, "pending": 0, "failed": 1}
    # pending again (re-index) keeps the edge count until the new edges are committed
    ledger.mark_pending("PMID:2696505", "sha256:3")
    again = ledger.paper_state("PMID:2696505")
    assert again is not None and (again.status, again.n_edges) == ("pending", 3)
    ledger.close()


def test_degrees_follow_distinct_edges(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    # PMID:2696505: nitroprusside -> hypotension, nitroprusside -> heart-rate increase,
    # labetalol -> hypotension
    ledger.apply_papers([("PMID:2696505", "h", refs_of("PMID:2696505"))])
    assert ledger.degrees(["D009599", "D007022", "D016534", "D007741"]) == {
        "D009599": 2,
        "D007022": 2,
        "D016534": 1,
        "D007741": 1,
    }
    assert ledger.node_count() == 4
    # A second paper stating nitroprusside -> hypotension changes no degree.
    other = [
        p
        for p, rows in cid_papers().items()
        if p != "PMID:2696505"
        and any((r["chemical_id"], r["disease_id"]) == ("D009599", "D007022") for r in rows)
    ][0]
    point, ref = next(
        (p, r) for p, r in refs_of(other) if r.triple == ("D009599", "induces", "D007022")
    )
    changed = ledger.apply_papers([(other, "h", [(point, ref)])])
    assert changed == set()
    assert ledger.degrees(["D009599", "D007022"]) == {"D009599": 2, "D007022": 2}
    removed, changed = ledger.remove_papers(["PMID:2696505"])
    assert removed == 3
    assert changed == {"D009599", "D016534", "D007741", "D007022"}
    assert ledger.degrees(["D009599", "D007022", "D016534"]) == {
        "D009599": 1,
        "D007022": 1,
        "D016534": 0,
    }
    assert ledger.node_count() == 2
    assert ledger.recompute_degrees() == {"D009599": 1, "D007022": 1}
    assert [e[0] for e in ledger.entities()] == ["D007022", "D009599"]
    assert ledger.paper_state("PMID:2696505") is None
    ledger.close()


def test_self_loop_counts_once(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ref = EdgeRef(
        "HGNC:5992",
        "IL1B",
        "gene",
        "HGNC:5992",
        "upregulates",
        "HGNC:5992",
        "IL1B",
        "gene",
        "HGNC:5992",
    )
    ledger.apply_papers([("PMID:1", None, [("00000000-0000-5000-8000-000000000001", ref)])])
    assert ledger.degrees(["HGNC:5992"]) == {"HGNC:5992": 1}
    assert ledger.recompute_degrees() == {"HGNC:5992": 1}
    ledger.close()


def test_journal_runs_and_sync_state(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.journal_begin(["PMID:1", "PMID:2"], "commit")
    ledger.journal_begin(["PMID:2"], "delete")
    assert ledger.journal() == {"PMID:1": "commit", "PMID:2": "delete"}
    assert ledger.runs.last() is None
    run = ledger.runs.start("fastbmrag sync", {"query": "endometriosis[MeSH]"})
    assert ledger.runs.last().ended_at is None  # type: ignore[union-attr]
    ledger.runs.end(run, {"new": 4, "failed": 0})
    last = ledger.runs.last()
    assert last is not None
    assert (last.command, last.args, last.summary) == (
        "fastbmrag sync",
        {"query": "endometriosis[MeSH]"},
        {"new": 4, "failed": 0},
    )
    ledger.syncs.set("endometriosis[MeSH]", "2024/10/01")
    ledger.syncs.set("endometriosis[MeSH]", "2024/10/02", retmax=500)
    state = ledger.syncs.get("endometriosis[MeSH]")
    assert state is not None and (state.last_date, state.info) == ("2024/10/02", {"retmax": 500})
    ledger.close()
