"""What a user sees when things go wrong: no evidence instead of unrelated citations, one-line
errors with documented exit codes, nothing left behind by a run that could not start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doors_support import cli_run as run

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title

DATA = Path(__file__).parent / "data"


@pytest.fixture
def unrelated(tmp_path: Path) -> tuple[Path, FakeOllama]:
    """Six real full texts on unrelated topics (dyes, fish, fever, bioinformatics), indexed."""
    fake = FakeOllama(responder=responder).start()
    wd = tmp_path / "wd"
    result = run("update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", fake.url,
                 "-q", str(DATA / "pmc"), str(DATA / "eutils" / "PMC2774577.nxml"))  # fmt: skip
    assert result.exit_code == 0, result.output
    yield wd, fake
    fake.close()


def test_a_question_about_absent_entities_gets_no_evidence_and_no_answer_call(
    unrelated: tuple[Path, FakeOllama],
) -> None:
    wd, fake = unrelated
    fake.reset()
    result = run("query", "What is the role of IL1B in endometriosis?", "--working-dir", str(wd),
                 "--ollama-host", fake.url, "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["answer"] is None and out["references"] == [] and out["edges"] == []
    assert out["no_evidence"]["reason"] == (
        "the collection 'papers' holds no edge about IL1B (HGNC:5992) or "
        "Endometriosis (D004715)"
    )
    assert out["no_evidence"]["searched"] == ["IL1B (HGNC:5992)", "Endometriosis (D004715)"]
    asked = [schema_title(r.json) for r in fake.requests_to("/api/chat")]
    assert "Answer" not in asked and "PartialAnswer" not in asked

    text = run("query", "What is the role of IL1B in endometriosis?", "--working-dir", str(wd),
               "--ollama-host", fake.url)  # fmt: skip
    assert text.exit_code == 0
    assert text.stdout.startswith(
        "Understood: IL1B (HGNC:5992, not in this collection), Endometriosis (D004715, not in "
        "this collection)\n\nNo evidence: the collection 'papers' holds no edge about IL1B "
        "(HGNC:5992) or Endometriosis (D004715).\n"
    )
    assert "[1]" not in text.stdout and "References" not in text.stdout


# --- order of work: lock, model server, input; nothing left by a run that cannot start --------


def update(wd: Path, host: str, *args: str) -> Any:
    return run("update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", host, *args)


def test_model_server_down_leaves_no_collection_behind(tmp_path: Path) -> None:
    wd = tmp_path / "wd"
    with FakeOllama(responder=responder) as fake:
        assert update(wd, fake.url, "-q", str(DATA / "query" / "papers.csv")).exit_code == 0
        down = fake.url
    result = update(wd, down, str(DATA / "pmc"), "-c", "second")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: Cannot reach Ollama at {down}: run `ollama serve` or set OLLAMA_HOST"
    ]
    assert sorted(p.name for p in wd.iterdir()) == ["llm_cache.sqlite", "papers"]
    # the README's `fastbmrag query "..."` without -c still finds the one collection
    with FakeOllama(responder=responder) as fake:
        q = run("query", "IL1B", "--working-dir", str(wd), "--ollama-host", fake.url, "--no-answer")
    assert q.exit_code == 0, q.output


def test_the_lock_is_checked_before_the_input_is_read(tmp_path: Path) -> None:
    from fastbmrag.store.collection import Collection

    wd = tmp_path / "wd"
    with FakeOllama(responder=responder) as fake:
        assert update(wd, fake.url, "-q", str(DATA / "query" / "papers.csv")).exit_code == 0
        fake.reset()
        with Collection.writer(wd, "papers"):
            # an input that would fail at once if it were read: the lock answers first
            result = update(wd, fake.url, str(DATA / "bad" / "missing_columns.csv"))
        assert result.exit_code == 3
        assert result.stderr.startswith("Error: Collection 'papers' is being updated by pid ")
        assert fake.requests == []  # not even a preflight


def test_num_predict_reaches_the_draft_and_refine_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOllama(responder=responder) as fake:
        result = update(tmp_path / "a", fake.url, "-q", "--num-predict", "333", str(DATA / "pmc"))
        assert result.exit_code == 0, result.output
        caps = {r.json["options"]["num_predict"] for r in fake.requests_to("/api/chat")}
        kinds = {schema_title(r.json) for r in fake.requests_to("/api/chat")}
        assert caps == {333} and kinds == {"Draft", "Refinement"}

        fake.reset()
        monkeypatch.setenv("FASTBMRAG_NUM_PREDICT", "444")
        assert update(tmp_path / "b", fake.url, "-q", str(DATA / "pmc")).exit_code == 0
        assert {r.json["options"]["num_predict"] for r in fake.requests_to("/api/chat")} == {444}


def test_strict_turns_skipped_rows_into_exit_1(tmp_path: Path) -> None:
    bad = str(DATA / "bad" / "duplicate_ids.csv")  # a repeated paper_id and a row without text
    with FakeOllama(responder=responder) as fake:
        assert update(tmp_path / "a", fake.url, "-q", bad).exit_code == 0
        strict = update(tmp_path / "b", fake.url, "-q", "--strict", bad)
    assert strict.exit_code == 1
    assert "2 papers read, 2 skipped (2 unusable; strict: exit 1)" in strict.stderr


# --- paths: one line, exit 2, for every command -------------------------------------------


@pytest.mark.parametrize("under", ["file", "proc"])
def test_an_unusable_path_is_one_line_and_exit_2(tmp_path: Path, under: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    bad = blocker / "sub" if under == "file" else Path("/proc/fastbmrag-test")
    papers = str(DATA / "query" / "papers.csv")
    with FakeOllama(responder=responder) as fake:
        good = tmp_path / "wd"
        assert update(good, fake.url, "-q", papers).exit_code == 0
        results = {
            "update": update(bad, fake.url, papers),
            "convert": run("convert", str(DATA / "pmc"), "-o", str(bad / "out.csv")),
            "export": run("export", "-c", "papers", "--working-dir", str(good), "-o",
                          str(bad / "edges.csv")),
            "log-file": update(good, fake.url, "--log-file", str(bad / "run.log"), papers),
            "fetch": run("fetch", "--query", "x", "--email", "a@b.org", "-o", str(bad / "p.csv"),
                         "--eutils-url", "http://127.0.0.1:9"),
        }  # fmt: skip
    for command, result in results.items():
        assert result.exit_code == 2, (command, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.output, (command, result.output)
        assert lines[0].startswith("Error: Cannot ") and str(bad) in lines[0], (command, lines)
    assert not (blocker.parent / "sub").exists()


def test_an_unexpected_error_is_one_line_exit_70_and_a_logged_traceback(tmp_path: Path) -> None:
    import click

    @click.command("explode")
    def explode() -> None:
        raise RuntimeError("boom")

    cli.add_command(explode)
    try:
        result = run("explode")
    finally:
        del cli.commands["explode"]
    assert result.exit_code == 70
    log = tmp_path / "home" / "logs" / "crash.log"
    assert result.stderr.strip() == (
        f"Error: internal error (RuntimeError: boom); the traceback is in {log}: please report it"
    )
    assert 'raise RuntimeError("boom")' in log.read_text()


# --- status finishes what a killed delete left ----------------------------------------------


def test_status_shows_and_finishes_an_interrupted_delete(tmp_path: Path) -> None:
    from fastbmrag.store.collection import Collection

    wd = tmp_path / "wd"
    with FakeOllama(responder=responder) as fake:
        assert update(wd, fake.url, "-q", str(DATA / "query" / "papers.csv")).exit_code == 0
    with Collection.writer(wd, "papers") as coll:
        before = coll.store.count()
        coll.ledger.journal_begin(["Q1"], "delete")  # what a delete killed at this point leaves

    status = run("status", "-c", "papers", "--working-dir", str(wd))
    assert status.exit_code == 0, status.output
    assert "Cut short by an interruption: a delete of 1 paper; finished now" in status.stdout
    with Collection.reader(wd, "papers") as coll:
        assert coll.ledger.paper_state("Q1") is None and coll.store.count() < before
        assert coll.ledger.journal() == {}
    again = run("status", "-c", "papers", "--working-dir", str(wd), "--json")
    assert json.loads(again.stdout)["interrupted"] is None

    with Collection.writer(wd, "papers") as coll:
        coll.ledger.journal_begin(["Q2"], "delete")
    with Collection.reader(wd, "papers"):  # a query holds the embedded store: only reported
        busy = run("status", "-c", "papers", "--working-dir", str(wd), "--json")
    info = json.loads(busy.stdout)["interrupted"]
    assert info["delete"] == 1 and info["finished"] is False
    assert info["by"].startswith("the next update, sync or delete")


# --- wording ----------------------------------------------------------------------------------


def test_messages_read_as_written_for_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastbmrag.llm.validation import validate
    from fastbmrag.prompts import Draft
    from fastbmrag.store.places import command_line

    _, reason = validate('{"e": [', Draft)
    assert reason.startswith("invalid JSON: ") and "Invalid JSON" not in reason

    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"paper_id,abstract,main_text\nP1,abc\rdef,x\n")  # a bare CR in a field
    result = run("update", "-c", "x", "--dry-run", str(cr))
    assert result.exit_code == 2
    assert "new-line character seen in unquoted field" in result.stderr
    assert "universal-newline" not in result.stderr

    argv = ["/usr/bin/fastbmrag", "update", "-c", "endometriosis", "papers.csv"]
    monkeypatch.setattr("sys.argv", argv)
    assert command_line() == "fastbmrag update -c endometriosis papers.csv"
