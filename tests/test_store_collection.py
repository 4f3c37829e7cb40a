"""Collection: opening, locking, busy shard, crash consistency, dimension checks, optimise policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_support import cid_papers, paper_edges, vec

from fastbmrag.errors import (
    EXIT_LOCKED,
    CollectionNotFound,
    DimensionMismatch,
    InputError,
    LockedError,
    StoreBusy,
)
from fastbmrag.store import Collection, Filter, Match, list_collections
from fastbmrag.store.base import Point
from fastbmrag.store.status import collection_status

TESTS = Path(__file__).parent


def commit(coll: Collection, paper_id: str) -> None:
    points, refs = paper_edges(paper_id, cid_papers()[paper_id])
    coll.commit_paper(paper_id, f"sha256:{paper_id}", points, refs)


def run_child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.path.insert(0, {str(TESTS)!r})\n" + textwrap.dedent(script)
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


def test_missing_collection_lists_the_existing_ones(tmp_path: Path) -> None:
    with pytest.raises(CollectionNotFound, match="collections there: none yet"):
        Collection.reader(tmp_path, "endometriosis")
    Collection.writer(tmp_path, "adenomyosis", create=True).close()
    Collection.writer(tmp_path, "endometriosis-2024", create=True).close()
    with pytest.raises(CollectionNotFound) as err:
        Collection.reader(tmp_path, "endometriosis")
    assert "adenomyosis, endometriosis-2024" in str(err.value)
    assert list_collections(tmp_path) == ["adenomyosis", "endometriosis-2024"]
    with pytest.raises(InputError, match="Invalid collection name"):
        Collection.writer(tmp_path, "../etc", create=True)


def test_commit_stores_exactly_and_marks_done(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True) as coll:
        coll.ledger.mark_pending("PMID:2696505", "sha256:a")
        assert coll.ledger.paper_state("PMID:2696505").status == "pending"  # type: ignore[union-attr]
        commit(coll, "PMID:2696505")
        state = coll.ledger.paper_state("PMID:2696505")
        assert state is not None
        assert (state.status, state.n_edges, state.content_hash) == (
            "done",
            3,
            "sha256:PMID:2696505",
        )
        # re-index with fewer edges: the dropped edge is gone, nothing duplicated
        points, refs = paper_edges("PMID:2696505", cid_papers()["PMID:2696505"][:2])
        coll.commit_paper("PMID:2696505", "sha256:b", points, refs)
        hits = list(coll.store.scroll(Filter(must=(Match("paper_id", "PMID:2696505"),))))
        assert sorted(h.payload["target_id"] for h in hits) == ["D007022", "D016534"]
        assert coll.ledger.paper_state("PMID:2696505").n_edges == 2  # type: ignore[union-attr]
        coll.ledger.mark_failed("PMID:7881871", "sha256:c", "LLM answer never matched the schema")
        assert [p.paper_id for p in coll.ledger.papers("failed")] == ["PMID:7881871"]
        # the payload carries the node keys set by the collection, the degrees stay in the ledger
        hit = coll.store.search(vec("nitroprusside induces hypotension"), limit=1)[0]
        assert hit.payload["source_key"] == "D009599" and "source_degree" not in hit.payload
        shown = coll.with_degrees([hit.payload])[0]
        assert shown["source_degree"] == 2  # induces hypotension + heart-rate increase
        assert shown["target_degree"] == 1


def test_dimension_mismatch_names_both_sizes_and_the_fix(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True) as coll:
        commit(coll, "PMID:2696505")  # 16-d
        with pytest.raises(DimensionMismatch) as err:
            coll.ensure_vector_size(1024)
        message = str(err.value)
        assert "16-d" in message and "1024-d" in message and "(embed_model / " in message
        with pytest.raises(DimensionMismatch):
            coll.commit_paper(
                "PMID:1",
                None,
                [Point("6f0a3c1e-0000-5000-8000-000000000001", [0.1] * 8, {})],
                paper_edges("PMID:1", cid_papers()["PMID:2696505"][:1])[1],
            )
    with Collection.reader(tmp_path, "cid") as coll:
        assert collection_status(coll)["vector_size"] == 16


def test_second_writer_is_locked_out(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True, command="fastbmrag update"):
        with pytest.raises(LockedError) as err:
            Collection.writer(tmp_path, "cid")
        assert err.value.exit_code == EXIT_LOCKED == 3
        assert f"is being updated by pid {os.getpid()} (fastbmrag update, started " in str(
            err.value
        )
        assert "wait for it to finish" in str(err.value)
    # released on close
    Collection.writer(tmp_path, "cid").close()


def test_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    Collection.writer(tmp_path, "cid", create=True).close()
    result = run_child(
        """
        import os, signal
        from pathlib import Path
        from fastbmrag.store import Collection
        coll = Collection.writer(Path(sys.argv[1]), "cid", command="fastbmrag update")
        print(os.getpid(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(tmp_path),
    )
    assert result.returncode == -9, result.stderr
    dead_pid = int(result.stdout.strip())
    assert json.loads((tmp_path / "cid" / "lock").read_text())["pid"] == dead_pid
    with Collection.writer(tmp_path, "cid"):
        assert json.loads((tmp_path / "cid" / "lock").read_text())["pid"] == os.getpid()


def test_reader_gets_store_busy_while_a_writer_holds_the_shard(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True, command="fastbmrag update") as w:
        commit(w, "PMID:2696505")
        with pytest.raises(StoreBusy) as err:
            Collection.reader(tmp_path, "cid", command="fastbmrag query")
        assert err.value.exit_code == 3
        message = str(err.value)
        assert f"pid {os.getpid()} (fastbmrag update" in message and "use qdrant_url / " in message
        # status reads the ledger only, so it works during the update
        with Collection.ledger_only(tmp_path, "cid") as status:
            assert collection_status(status)["papers"]["done"] == 1
        # the writer's shard is intact
        assert w.store.count() == 3
    with Collection.reader(tmp_path, "cid") as reader:
        assert reader.store.count() == 3


def test_reader_waits_for_another_reader_then_gives_up(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True) as w:
        commit(w, "PMID:2696505")
    with (
        Collection.reader(tmp_path, "cid", command="fastbmrag query"),
        pytest.raises(StoreBusy, match=r"is open by pid \d+ \(fastbmrag query"),
    ):
        Collection.reader(tmp_path, "cid", busy_timeout=0.3)
    # a writer on a busy shard gets the same answer, without corrupting anything
    with Collection.reader(tmp_path, "cid", command="fastbmrag export"), pytest.raises(StoreBusy):
        Collection.writer(tmp_path, "cid", busy_timeout=0.2)
    with Collection.writer(tmp_path, "cid") as w:
        assert w.store.count() == 3


CRASH_CHILD = """
import os, signal
from pathlib import Path
from store_support import cid_papers, paper_edges
from fastbmrag.store import Collection
from fastbmrag.store.edge import EdgeStore

class Killed(EdgeStore):
    # A real store that dies (SIGKILL) right after its edges are durable, before the ledger
    # commit ("flush"), or after they were written but before they were made durable ("upsert").
    armed = None

    def upsert(self, points):
        super().upsert(points)
        if self.armed == "upsert":
            os.kill(os.getpid(), signal.SIGKILL)

    def flush(self):
        super().flush()
        if self.armed == "flush":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.armed == "second-flush":  # the ledger took the new edges, the old ones remain
            self.armed = "flush"

wd, scenario = Path(sys.argv[1]), sys.argv[2]
papers = cid_papers()
store = Killed(wd / "cid" / "shard")
coll = Collection.writer(wd, "cid", create=True, store=store)
for pid in ("PMID:2696505", "PMID:7881871"):
    points, refs = paper_edges(pid, papers[pid])
    coll.commit_paper(pid, "h1", points, refs)
if scenario == "before-refresh":
    os.kill(os.getpid(), signal.SIGKILL)  # ledger committed, weights not yet refreshed
store.armed = {"reindex-unflushed": "upsert", "reindex-after-ledger": "second-flush"}.get(
    scenario, "flush")
if scenario == "new-paper":
    pid, rows = "PMID:12653683", papers["PMID:12653683"]
else:  # re-index: the paper had 3 edges, now 2
    pid, rows = "PMID:2696505", papers["PMID:2696505"][:2]
coll.ledger.mark_pending(pid, "h2")
points, refs = paper_edges(pid, rows)
coll.commit_paper(pid, "h2", points, refs)
print("not killed")
"""


@pytest.mark.parametrize(
    "scenario",
    ["new-paper", "reindex", "reindex-unflushed", "reindex-after-ledger", "before-refresh"],
)
def test_crash_between_store_write_and_ledger_commit(tmp_path: Path, scenario: str) -> None:
    result = run_child(CRASH_CHILD, str(tmp_path), scenario)
    assert result.returncode == -9, result.stdout + result.stderr

    with Collection.writer(tmp_path, "cid") as coll:  # recovers on open
        states = {p.paper_id: p for p in coll.ledger.papers()}
        present = coll.store.paper_ids()
        if scenario == "new-paper":
            assert states["PMID:12653683"].status == "pending"
            assert "PMID:12653683" not in present
            assert states["PMID:2696505"].status == "done"
        elif scenario == "reindex-after-ledger":
            # killed after the ledger took the new edges: the old ones left over are removed,
            # the paper is done with its new 2
            assert states["PMID:2696505"].status == "done"
            assert states["PMID:2696505"].n_edges == 2
        elif scenario.startswith("reindex"):
            # killed before the ledger took the new edges: the paper keeps its old ones (3,
            # not the new 2) and stays pending, to be indexed again
            assert states["PMID:2696505"].status == "pending"
            assert states["PMID:2696505"].n_edges == 3
            assert "PMID:2696505" in present
        else:
            assert states["PMID:2696505"].status == "done"
        # every paper the ledger lists edges for has exactly those; nothing else is stored
        listed = {p for p, s in states.items() if s.n_edges}
        assert present == listed
        for pid in listed:
            n = coll.store.count(Filter(must=(Match("paper_id", pid),)))
            assert n == states[pid].n_edges
        # the ledger's degrees count exactly the edges present
        degrees = coll.ledger.recompute_degrees()
        for hit in coll.edges():
            assert hit.payload["source_degree"] == degrees[hit.payload["source_key"]]
            assert hit.payload["target_degree"] == degrees[hit.payload["target_key"]]
        # a rerun fixes it
        commit(coll, "PMID:12653683")
        commit(coll, "PMID:2696505")
        assert coll.store.count() == sum(
            len(cid_papers()[p]) for p in ("PMID:2696505", "PMID:7881871", "PMID:12653683")
        )


def test_optimize_runs_only_past_the_threshold(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True, optimize_min_points=4) as coll:
        commit(coll, "PMID:2696505")
        assert coll.store.unindexed_points() == 3
        assert coll.optimize() is False  # 3 < 4: a small update stays cheap
        commit(coll, "PMID:7881871")
        assert coll.store.unindexed_points() == 5
        assert coll.optimize() is True
        hit = coll.store.search(vec("nitroprusside induces hypotension"), limit=1)[0]
        assert hit.payload["target_id"] == "D007022"


def test_stats_runs_and_sync_state(tmp_path: Path) -> None:
    with Collection.writer(tmp_path, "cid", create=True) as coll:
        run = coll.ledger.runs.begin("fastbmrag update", {"input": "papers.csv"})
        commit(coll, "PMID:2696505")
        commit(coll, "PMID:7881871")
        coll.ledger.mark_failed("PMID:12653683", "h", "Ollama returned HTTP 500 three times")
        coll.ledger.mark_pending("PMID:11166519", "h")
        coll.ledger.runs.end(run or 0, {"done": 2, "failed": 1})
        coll.ledger.syncs.set("endometriosis[MeSH]", "2024/10/01", new_papers=12)
        stats = collection_status(coll)
    assert stats["papers"] == {"done": 2, "failed": 1, "pending": 1, "total": 4}
    assert stats["failed"] == [
        {
            "paper_id": "PMID:12653683",
            "error": "Ollama returned HTTP 500 three times",
            "updated_at": stats["failed"][0]["updated_at"],
        }
    ]
    n_edges = len(cid_papers()["PMID:2696505"]) + len(cid_papers()["PMID:7881871"])
    assert stats["edges"] == stats["distinct_edges"] == n_edges
    assert stats["backend"] == "embedded"
    assert stats["location"] == str(tmp_path / "cid" / "shard")
    assert stats["last_run"]["command"] == "fastbmrag update"
    assert stats["last_run"]["summary"] == {"done": 2, "failed": 1}
    assert stats["size_on_disk"] > 0
    with Collection.ledger_only(tmp_path, "cid") as coll:
        state = coll.ledger.syncs.get("endometriosis[MeSH]")
        assert state is not None
        assert (state.last_date, state.info) == ("2024/10/01", {"new_papers": 12})
        assert coll.ledger.syncs.get("adenomyosis[MeSH]") is None


def test_server_backend_through_a_url(tmp_path: Path) -> None:
    # ":memory:" gives qdrant-client's in-process mode through the same connect path as a URL
    with Collection.writer(tmp_path, "cid", qdrant_url=":memory:", create=True) as coll:
        assert coll.backend == "server"
        assert coll.location == ":memory:/collections/cid"
        commit(coll, "PMID:2696505")
        hit = coll.store.search(vec("nitroprusside induces hypotension"), limit=1)[0]
        assert (hit.payload["source_id"], hit.payload["target_id"]) == ("D009599", "D007022")
        assert coll.with_degrees([hit.payload])[0]["source_degree"] == 2
        assert not (tmp_path / "cid" / "shard").exists()  # no embedded shard for a server
    with Collection.ledger_only(tmp_path, "cid", qdrant_url="http://qdrant.example:6333") as c:
        stats = collection_status(c)
    assert stats["location"] == "http://qdrant.example:6333/collections/cid"
    assert stats["backend"] == "server" and stats["papers"]["done"] == 1
