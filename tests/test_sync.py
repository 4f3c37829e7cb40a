"""`fastbmrag sync` end to end: fake E-utilities + fake Ollama + the real indexer and store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fastbmrag.cli import cli
from fastbmrag.index import UpdateOptions
from fastbmrag.store.collection import Collection
from fastbmrag.testing.answers import last_user_message, schema_instance_responder
from fastbmrag.testing.fake_eutils import FakeEutils
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder

EUTILS = Path(__file__).parent / "data" / "eutils"
SLICE = EUTILS / "pubmed21n1298_slice.xml"  # 32772885 33155662 33169800 33316284
NEJM = EUTILS / "pubmed-29768149.xml"  # 29768149
JATS = EUTILS / "PMC2774577.nxml"  # 19920991 / PMC2774577 (full text)
NEW_JATS = EUTILS / "PMC2775685.nxml"  # 19920989 / PMC2775685, added as a new paper
FIRST = {"32772885", "33155662", "33169800", "33316284", "29768149", "19920991"}
QUERY = "endometriosis[tiab] AND free full text[sb]"
COMMIT_SECONDS = UpdateOptions().commit_seconds


def answer(request: dict[str, Any]) -> dict[str, Any] | str:
    return pipeline_responder(request) or schema_instance_responder(request)


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(SLICE, NEJM, JATS) as server:
        yield server


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama(responder=answer) as server:
        yield server


@pytest.fixture
def wd(tmp_path: Path) -> Path:
    return tmp_path / "wd"


def args(eutils: FakeEutils, ollama: FakeOllama, wd: Path, *extra: str) -> list[str]:
    return [
        "sync",
        "--collection",
        "endo",
        "--query",
        QUERY,
        "--email",
        "curator@example.org",
        "--ncbi-api-key",
        "test-key",
        "--eutils-url",
        eutils.url,
        "--fulltext-url",
        eutils.fulltext_url,
        "--ollama-host",
        ollama.url,
        "--working-dir",
        str(wd),
        "--no-normalize",
        "--no-cache",
        *extra,
    ]


def run(eutils: FakeEutils, ollama: FakeOllama, wd: Path, *extra: str) -> Result:
    return CliRunner().invoke(cli, args(eutils, ollama, wd, *extra))


def states(wd: Path) -> dict[str, str]:
    with Collection.ledger_only(wd, "endo") as coll:
        rows = coll.ledger.papers("done") + coll.ledger.papers("failed")
        return {r.paper_id: r.status for r in rows}


def mark(wd: Path) -> str | None:
    with Collection.ledger_only(wd, "endo") as coll:
        state = coll.ledger.syncs.get(QUERY)
        return (state.last_date or None) if state else None


def test_first_sync_indexes_everything_and_second_fetches_nothing(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "--quiet")
    assert result.exit_code == 0, result.output
    assert states(wd) == dict.fromkeys(FIRST, "done")
    assert mark(wd) == date.today().isoformat()
    # --quiet: one summary line on stderr, nothing else
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"sync {QUERY!r} 2000-01-01..{date.today()}: 6 found")
    assert "6 indexed" in lines[0] and "last-sync mark now" in lines[0]
    assert sorted(eutils.efetched_ids()) == sorted(FIRST)
    search = eutils.requests[0].params
    assert (search["datetype"], search["mindate"]) == ("edat", "2000/01/01")

    eutils.reset_counts()
    chats = ollama.counts["/api/chat"]
    again = run(eutils, ollama, wd, "--quiet")
    assert again.exit_code == 0, again.output
    # the window's search, and the search for retractions among the six PMIDs
    assert eutils.count("esearch") == 2
    assert "retracted publication" in eutils.requests[-1].params["term"]
    assert eutils.count("efetch") == 0
    assert eutils.count("fulltext") == 0
    assert ollama.counts["/api/chat"] == chats  # nothing indexed, the model not even asked
    yesterday = date.today() - timedelta(days=1)
    assert eutils.requests[0].params["mindate"] == yesterday.strftime("%Y/%m/%d")
    assert "nothing new to index" in again.stderr


def test_new_papers_are_fetched_and_known_ones_in_the_overlap_are_not(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    assert run(eutils, ollama, wd, "--since", "2000-01-01", "-q").exit_code == 0
    # a paper enters PubMed today: the next sync fetches it, and only it
    eutils.add_jats(NEW_JATS, entrez_date=date.today())
    eutils.reset_counts()
    result = run(eutils, ollama, wd, "-q")
    assert result.exit_code == 0, result.output
    assert eutils.efetched_ids() == ["19920989"]
    fulltext = [r.path for r in eutils.requests if r.kind == "fulltext"]
    assert fulltext == ["/europepmc/webservices/rest/PMC2775685/fullTextXML"]
    assert states(wd)["19920989"] == "done"
    # the next run's window still holds it (one day of overlap): found, not fetched again
    eutils.reset_counts()
    again = run(eutils, ollama, wd, "-q")
    assert again.exit_code == 0, again.output
    assert "1 found, 1 already indexed, 0 fetched" in again.stderr
    assert eutils.count("efetch") == 0


def test_papers_indexed_by_pmcid_are_not_fetched_again(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    # index the JATS file first, as `update` does (paper_id = PMCID) ...
    up = CliRunner().invoke(
        cli,
        [
            "update",
            "-c",
            "endo",
            str(JATS),
            "--ollama-host",
            ollama.url,
            "--working-dir",
            str(wd),
            "--no-normalize",
            "--no-cache",
            "-q",
        ],
    )
    assert up.exit_code == 0, up.output
    assert states(wd) == {"PMC2774577": "done"}
    # ... then sync: its MEDLINE record is read, but its full text is not fetched or re-indexed
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "-q")
    assert result.exit_code == 0, result.output
    assert "6 found, 1 already indexed, 5 fetched" in result.stderr
    assert "19920991" not in states(wd)
    assert not any(r.path.endswith("PMC2774577/fullTextXML") for r in eutils.requests)


def test_failed_papers_keep_the_mark_and_are_retried(wd: Path, eutils: FakeEutils) -> None:
    broken = {"on": True}

    def flaky(request: dict[str, Any]) -> dict[str, Any] | str:
        if broken["on"] and "Zoledronic acid" in last_user_message(request):
            return "this is not JSON"
        return answer(request)

    with FakeOllama(responder=flaky) as ollama:
        first = run(eutils, ollama, wd, "--since", "2000-01-01")
        assert first.exit_code == 1, first.output
        assert "last-sync mark not set: 1 failed, retried by the next run (from 2000-01-01)" in (
            first.stderr
        )
        assert "failed 33155662" in first.stderr
        assert states(wd)["33155662"] == "failed"
        assert mark(wd) is None

        broken["on"] = False
        eutils.reset_counts()
        # no --since now: the next run searches the failed run's window again
        second = run(eutils, ollama, wd, "-q")
        assert second.exit_code == 0, second.output
        assert eutils.requests[0].params["mindate"] == "2000/01/01"
        assert eutils.efetched_ids() == ["33155662"]  # only the failed one
        assert states(wd)["33155662"] == "done"
        assert mark(wd) == date.today().isoformat()


def test_partial_failure_keeps_an_existing_mark(wd: Path, eutils: FakeEutils) -> None:
    broken = {"on": False}

    def flaky(request: dict[str, Any]) -> dict[str, Any] | str:
        if broken["on"] and "Quantitative Trait Loci" in last_user_message(request):
            return "this is not JSON"
        return answer(request)

    with FakeOllama(responder=flaky) as ollama:
        assert run(eutils, ollama, wd, "--days", "3", "-q").exit_code == 0
        assert mark(wd) == date.today().isoformat()
        with Collection.writer(wd, "endo") as coll:  # pretend the last sync was 5 days ago
            coll.ledger.syncs.set(QUERY, (date.today() - timedelta(days=5)).isoformat())
        eutils.add_jats(NEW_JATS, entrez_date=date.today() - timedelta(days=2))
        broken["on"] = True
        failed = run(eutils, ollama, wd, "-q")
        assert failed.exit_code == 1
        assert mark(wd) == (date.today() - timedelta(days=5)).isoformat()
        broken["on"] = False
        eutils.reset_counts()
        ok = run(eutils, ollama, wd, "-q")
        assert ok.exit_code == 0, ok.output
        assert eutils.efetched_ids() == ["19920989"]
        assert mark(wd) == date.today().isoformat()


def test_concurrent_sync_is_refused_with_exit_3(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    assert run(eutils, ollama, wd, "--since", "2000-01-01", "-q").exit_code == 0
    eutils.reset_counts()
    with Collection.writer(wd, "endo"):  # another update/sync holds the lock
        result = run(eutils, ollama, wd, "-q")
    assert result.exit_code == 3
    assert "Error: Collection 'endo' is being updated by" in result.stderr
    assert "wait for it to finish" in result.stderr
    assert eutils.requests == []  # the lock comes first: nothing fetched


HOLD_LOCK = """
import sys, time
from pathlib import Path
from fastbmrag.store.collection import Collection
with Collection.writer(Path(sys.argv[1]), "endo", create=True):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_lock_of_a_killed_process_is_taken_over(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(wd)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        refused = run(eutils, ollama, wd, "--since", "2000-01-01", "-q")
        assert refused.exit_code == 3
        assert f"pid {holder.pid}" in refused.stderr
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "-q")
    assert result.exit_code == 0, result.output
    assert states(wd) == dict.fromkeys(FIRST, "done")


def test_killed_sync_resumes_without_refetching_indexed_papers(
    eutils: FakeEutils, wd: Path
) -> None:
    # One paper at a time, newest first. The indexer commits finished papers in groups, at
    # the latest 5 s after the previous commit: the first paper (33316284) is made to take
    # that long, so it is committed; then the model server stops answering at the third
    # (33155662) and the run is killed (SIGKILL) right there.
    blocked, release = threading.Event(), threading.Event()

    def stalling(request: dict[str, Any]) -> dict[str, Any] | str:
        text = last_user_message(request)
        if "Mast cell-derived IL-13" in text:
            time.sleep(COMMIT_SECONDS + 0.2)
        if "Zoledronic acid" in text:
            blocked.set()
            release.wait(timeout=60)
        return answer(request)

    with FakeOllama(responder=stalling) as ollama:
        cmd = [sys.executable, "-m", "fastbmrag", *args(eutils, ollama, wd)]
        cmd += ["--since", "2000-01-01", "--concurrency", "1", "-q"]
        env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        child = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        try:
            assert blocked.wait(timeout=90), "the run never reached the third paper"
            time.sleep(0.3)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            release.set()
            if child.poll() is None:
                child.kill()
                child.wait()
            if child.stderr is not None:
                child.stderr.close()
        done = {k for k, v in states(wd).items() if v == "done"}
        assert "33316284" in done  # committed before the kill
        assert "33155662" not in done  # the paper in flight when it was killed
        assert mark(wd) is None

        eutils.reset_counts()
        result = run(eutils, ollama, wd, "-q")  # no --since: resumes the killed run's window
        assert result.exit_code == 0, result.output
        assert eutils.requests[0].params["mindate"] == "2000/01/01"
        assert sorted(eutils.efetched_ids()) == sorted(FIRST - done)
        assert states(wd) == dict.fromkeys(FIRST, "done")
        assert mark(wd) == date.today().isoformat()


def test_log_file_gets_the_summary(eutils: FakeEutils, ollama: FakeOllama, wd: Path) -> None:
    log = wd.parent / "sync.log"
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "-q", "--log-file", str(log))
    assert result.exit_code == 0, result.output
    again = run(eutils, ollama, wd, "-q", "--log-file", str(log))
    assert again.exit_code == 0
    text = log.read_text()
    summaries = [line for line in text.splitlines() if "last-sync mark now" in line]
    assert len(summaries) == 2  # appended, one per run
    assert "INFO fastbmrag.papers.sync: sync" in summaries[0]
    assert "6 found" in summaries[0] and "nothing new to index" in summaries[1]
    assert "Entrez dates 2000-01-01.." in text  # INFO lines of the run itself
    assert len(result.stderr.strip().splitlines()) == 1


def test_json_output(eutils: FakeEutils, ollama: FakeOllama, wd: Path) -> None:
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "--json", "-q")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["found"] == 6 and data["fetched"] == 6 and data["with_full_text"] == 1
    assert data["index"]["indexed"] == 6
    assert data["mark_moved"] is True and data["exit_code"] == 0


def test_dry_run_moves_nothing(eutils: FakeEutils, ollama: FakeOllama, wd: Path) -> None:
    before = run(eutils, ollama, wd, "--since", "2000-01-01", "--dry-run", "-q")
    assert before.exit_code == 2  # no collection yet: says the first sync creates it
    assert "the first `sync` without --dry-run creates it" in before.stderr
    assert eutils.requests == []
    assert run(eutils, ollama, wd, "--days", "1", "-q").exit_code == 0  # creates the collection
    result = run(eutils, ollama, wd, "--since", "2000-01-01", "--dry-run", "-q")
    assert result.exit_code == 0, result.output
    assert "would index 6" in result.stderr
    assert "dry run: last-sync mark unchanged" in result.stderr
    assert states(wd) == {}


def test_cannot_start_without_email(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NCBI_EMAIL", raising=False)
    argv = args(eutils, ollama, wd)
    i = argv.index("--email")
    del argv[i : i + 2]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert "contact email" in result.stderr and "--email" in result.stderr
    assert eutils.requests == []


def test_since_and_days_together_is_an_input_error(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    result = run(eutils, ollama, wd, "--since", "2024-01-01", "--days", "3")
    assert result.exit_code == 2
    assert "Error: Give --since or --days, not both" in result.stderr


def test_pubmed_refusing_the_request_exits_2(
    eutils: FakeEutils, ollama: FakeOllama, wd: Path
) -> None:
    eutils.fail("esearch", 400)
    result = run(eutils, ollama, wd, "-q")
    assert result.exit_code == 2
    assert "Error: PubMed esearch answered HTTP 400" in result.stderr
    assert mark(wd) is None
