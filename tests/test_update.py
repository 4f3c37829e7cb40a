"""`fastbmrag update` end to end: real papers, the real ollama client, a fake Ollama over HTTP,
the embedded Qdrant store and the SQLite ledger."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.llm.common import PROBE_TEXT
from fastbmrag.papers import Paper, ReadReport, iter_papers, write_papers_csv
from fastbmrag.store.collection import Collection
from fastbmrag.store.status import collection_status
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder, responder

DATA = Path(__file__).parent / "data"


def real_papers() -> list[Paper]:
    """4 PMC full texts and 8 MEDLINE abstracts, with a paper weight and an extra column."""
    report = ReadReport()
    full = list(iter_papers(sorted((DATA / "pmc").glob("*.nxml")), report))
    abstracts = list(
        itertools.islice(
            iter_papers([DATA / "medline" / "pubmed21n1298_first50.xml.gz"], report), 8
        )
    )
    papers = full + abstracts
    for i, p in enumerate(papers):
        p.weight = 1.5 + i
        p.extra["cohort"] = f"batch-{i % 2}"
    return papers


@pytest.fixture
def papers_csv(tmp_path: Path) -> Path:
    path = tmp_path / "papers.csv"
    write_papers_csv(real_papers(), path)
    return path


@pytest.fixture
def fake() -> Any:
    with FakeOllama(responder=pipeline_responder) as server:
        yield server


def update(fake: FakeOllama, wd: Path, *args: str) -> Any:
    return CliRunner().invoke(
        cli,
        [
            "update",
            "-c",
            "papers",
            "--working-dir",
            str(wd),
            "--ollama-host",
            fake.url,
            "-q",
            *args,
        ],
        catch_exceptions=False,
    )


def model_work(fake: FakeOllama) -> list[Any]:
    """Requests that did a paper's work: every chat, every embedding but the preflight's probe."""
    return [
        r for r in fake.requests
        if r.path == "/api/chat"
        or (r.path == "/api/embed" and r.json.get("input") != [PROBE_TEXT])
    ]  # fmt: skip


def snapshot(wd: Path) -> dict[str, dict[str, Any]]:
    with Collection.reader(wd, "papers") as coll:
        return {hit.id: hit.payload for hit in coll.store.scroll()}


def chat_requests_by_paper(fake: FakeOllama, papers: list[Paper]) -> Counter[str]:
    """Attribute every chat request to the paper whose title it carries."""
    counts: Counter[str] = Counter()
    for rec in fake.requests_to("/api/chat"):
        text = rec.json["messages"][-1]["content"]
        for p in papers:
            if p.title and p.title[:60] in text:
                counts[p.paper_id] += 1
    return counts


def test_update_indexes_real_papers_with_full_payload(
    fake: FakeOllama, papers_csv: Path, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    result = update(fake, wd, str(papers_csv), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 12 and summary["failed"] == 0
    assert summary["edges"] > 8 and summary["refined_edges"] > 0

    # the LLM budget: at most 2 chat calls and 2 embedding requests per paper
    assert summary["max_chat_calls_per_paper"] <= 2
    assert summary["max_embed_requests_per_paper"] <= 2
    papers = real_papers()
    per_paper = chat_requests_by_paper(fake, papers)
    assert max(per_paper.values()) == 2  # full texts: draft + refine
    assert all(per_paper[p.paper_id] <= 1 for p in papers if not p.paragraphs)
    n_chat = len(fake.requests_to("/api/chat"))
    assert n_chat == summary["llm"]["extract"]["calls"] + summary["llm"]["refine"]["calls"]
    # embeddings: 1 dimension probe, then <= 2 requests per paper
    assert len(fake.requests_to("/api/embed")) <= 1 + 2 * 12

    edges = snapshot(wd)
    assert len(edges) == summary["edges"]
    by_paper = {e["paper_id"] for e in edges.values()}
    assert "PMC2768302" in by_paper
    edge = next(e for e in edges.values() if e["paper_id"] == "PMC2768302")
    assert (
        edge["title"]
        == "Genomic Promoter Analysis Predicts Functional Transcription Factor Binding"
    )
    assert edge["pmcid"] == "PMC2768302"
    assert edge["year"] == 2008
    assert edge["cohort"] in {"batch-0", "batch-1"}  # an extra CSV column reached the payload
    assert isinstance(edge["paper_weight"], float)
    assert "source_degree" not in edge  # degrees live in the ledger, which weighs edges
    refined = [e for e in edges.values() if e["description_source"] == "refined"]
    assert refined and all(e["evidence"][0]["where"] == "passage" for e in refined)
    cited = [e for e in edges.values() if e["description_source"] == "cited"]
    assert cited and all(
        e["description"] == " ".join(x["text"] for x in e["evidence"]) for e in cited
    )

    with Collection.reader(wd, "papers") as coll:
        assert coll.ledger.paper_state("PMC2768302").status == "done"  # type: ignore[union-attr]


def test_second_run_costs_nothing_and_changed_paper_is_replaced(
    fake: FakeOllama, papers_csv: Path, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    assert update(fake, wd, str(papers_csv)).exit_code == 0
    first = snapshot(wd)

    fake.reset()
    again = update(fake, wd, str(papers_csv), "--json")
    assert again.exit_code == 0
    assert json.loads(again.stdout)["unchanged"] == 12
    assert model_work(fake) == []  # the preflight only: nothing to do
    assert snapshot(wd) == first

    # change one paper's abstract: only it is re-indexed, its old edges replaced exactly
    papers = real_papers()
    target = next(p for p in papers if not p.paragraphs)
    old_ids = {i for i, e in first.items() if e["paper_id"] == target.paper_id}
    target.abstract = "In endometriosis, VEGFA and MMP9 were elevated; IL1B rose in serum."
    write_papers_csv(papers, papers_csv)
    fake.reset()
    changed = update(fake, wd, str(papers_csv), "--json")
    assert changed.exit_code == 0
    out = json.loads(changed.stdout)
    assert out["indexed"] == 1 and out["unchanged"] == 11
    after = snapshot(wd)
    new = {i: e for i, e in after.items() if e["paper_id"] == target.paper_id}
    assert {e["source"] for e in new.values()} >= {"VEGFA", "MMP9"}
    assert not (old_ids - set(new)) & set(after)  # the old edges that are not re-stated are gone
    assert len(after) == len(first) - len(old_ids) + len(new)  # no duplicates, no leftovers
    assert {i: e for i, e in after.items() if e["paper_id"] != target.paper_id}.keys() == {
        i for i, e in first.items() if e["paper_id"] != target.paper_id
    }


def test_dry_run_makes_no_call_and_no_write(
    fake: FakeOllama, papers_csv: Path, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    result = update(fake, wd, str(papers_csv), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would index 12 (12 new)" in result.stderr
    assert fake.requests == []
    assert not (wd / "papers").exists()


def test_faults_end_in_done_or_failed_and_rerun_completes(papers_csv: Path, tmp_path: Path) -> None:
    wd = tmp_path / "wd"
    with FakeOllama(
        responder=pipeline_responder, fault_rates={"malformed": 0.1, "http500": 0.05}, seed=3
    ) as fake:
        fake.fail_next("malformed", 2)  # the first paper's draft and its repair both fail
        result = update(fake, wd, str(papers_csv), "--json", "--concurrency", "1")
        summary = json.loads(result.stdout)
        assert summary["failed"] >= 1
        assert result.exit_code == 1
        assert summary["indexed"] + summary["failed"] == 12
        with Collection.reader(wd, "papers") as coll:
            failed = coll.ledger.papers("failed")
            assert len(failed) == summary["failed"]
            assert all(p.error and p.error.startswith(("draft:", "refine:", "embed")) or p.error
                       for p in failed)  # fmt: skip
            states = [coll.ledger.paper_state(p.paper_id) for p in real_papers()]
            assert {s.status for s in states if s} <= {"done", "failed"}

        fake.set_fault_rates(malformed=0, http500=0)
        fake.reset()
        rerun = update(fake, wd, str(papers_csv), "--json")
        assert rerun.exit_code == 0, rerun.output
        out = json.loads(rerun.stdout)
        assert out["indexed"] == summary["failed"]
        assert out["unchanged"] == summary["indexed"]

    # the final store equals a clean run's
    clean = tmp_path / "clean"
    with FakeOllama(responder=pipeline_responder) as fake2:
        assert update(fake2, clean, str(papers_csv)).exit_code == 0
    assert snapshot(wd) == snapshot(clean)


def test_bad_input_fails_before_any_paper_call_and_leaves_nothing(
    fake: FakeOllama, tmp_path: Path
) -> None:
    result = update(fake, tmp_path / "wd", str(DATA / "bad" / "missing_columns.csv"))
    assert result.exit_code == 2
    assert "no abstract or main_text column" in result.stderr
    assert model_work(fake) == []  # the preflight came first, then the input was read
    assert not (tmp_path / "wd").exists()


def test_model_not_pulled_is_reported_before_any_paper(papers_csv: Path, tmp_path: Path) -> None:
    wd = tmp_path / "wd"
    with FakeOllama(responder=pipeline_responder, models={"mxbai-embed-large"}) as fake:
        result = update(fake, wd, str(papers_csv))
    assert result.exit_code == 2
    assert "ollama pull phi4" in result.stderr
    assert not wd.exists()  # a run that cannot start leaves no collection behind


def test_python_api_insert_paper_matches_cli(
    fake: FakeOllama, papers_csv: Path, tmp_path: Path
) -> None:
    import pandas as pd

    from fastbmrag import RAG

    rag = RAG(working_dir=tmp_path / "api", collection_name="papers", ollama_host=fake.url)
    summary = rag.insert_paper(pd.read_csv(papers_csv, dtype=str, keep_default_na=False))
    assert summary.indexed == 12 and summary.failed == 0
    cli_wd = tmp_path / "cli"
    assert update(fake, cli_wd, str(papers_csv)).exit_code == 0
    api_edges = snapshot(tmp_path / "api")
    assert api_edges == snapshot(cli_wd)

    fake.responder = responder  # answers the query's parse and answer calls too
    result = rag.query("Which genes are associated with hepatitis?", top_k=10, min_score=-1)
    assert result["collection"] == "papers"
    assert result["edges"] and len(result["edges"]) <= 10
    indexed = {e["paper_id"] for e in api_edges.values()}
    assert result["references"]
    assert {ref["paper_id"] for ref in result["references"]} <= indexed
    assert result["llm"]["chat_calls"] <= 3


# --- a run SIGKILLed at any point loses nothing -------------------------------------------------


def start_update(fake: FakeOllama, wd: Path, papers_csv: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, FASTBMRAG_HOME=str(wd.parent / "home"))
    return subprocess.Popen(
        [sys.executable, "-m", "fastbmrag", "update", "-c", "papers", "--working-dir", str(wd),
         "--ollama-host", fake.url, "--concurrency", "2", "-q", str(papers_csv)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def kill_after(proc: subprocess.Popen[bytes], fake: FakeOllama, path: str, n: int) -> bool:
    """SIGKILL ``proc`` once the fake has seen ``n`` requests to ``path``; False if it ended first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if len(fake.requests_to(path)) >= n:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    proc.kill()
    raise AssertionError("the update never reached the kill point")


def test_sigkill_at_several_points_then_rerun_equals_clean_run(tmp_path: Path) -> None:
    papers_csv = tmp_path / "papers.csv"
    write_papers_csv(real_papers(), papers_csv)
    wd = tmp_path / "wd"
    killed = 0
    # latency makes each request take a little while, so kills land mid-paper and mid-batch
    with FakeOllama(responder=pipeline_responder, latency=0.03) as fake:
        # kill points: early (first drafts), mid-run on embeddings, late (refine/final embeds)
        for path, n in (("/api/chat", 2), ("/api/embed", 6), ("/api/chat", 5)):
            fake.reset()
            proc = start_update(fake, wd, papers_csv)
            killed += kill_after(proc, fake, path, n)
        assert killed >= 2
        with Collection.reader(wd, "papers") as coll:  # a dead writer's lock is taken over
            states = [coll.ledger.paper_state(p.paper_id) for p in real_papers()]
            assert any(s is None or s.status != "done" for s in states)  # work was left over

        fake.reset()
        rerun = CliRunner().invoke(
            cli,
            ["update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", fake.url, "-q",
             str(papers_csv)],
        )  # fmt: skip
        assert rerun.exit_code == 0, rerun.output

    with FakeOllama(responder=pipeline_responder) as fake2:
        clean = tmp_path / "clean"
        result = CliRunner().invoke(
            cli,
            ["update", "-c", "papers", "--working-dir", str(clean), "--ollama-host", fake2.url,
             "-q", str(papers_csv)],
        )  # fmt: skip
        assert result.exit_code == 0

    after_crashes, uninterrupted = snapshot(wd), snapshot(clean)
    assert after_crashes.keys() == uninterrupted.keys()
    assert after_crashes == uninterrupted
    with Collection.reader(wd, "papers") as coll:
        stats = collection_status(coll)
        assert stats["papers"]["done"] == 12
        assert not stats["papers"].get("pending") and not stats["papers"].get("failed")


def test_server_gone_mid_run_stops_with_exit_2_and_keeps_finished_papers(
    papers_csv: Path, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    calls = 0

    def dies_after_three(request: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal calls
        calls += 1
        if calls == 4:
            # Every later request hangs until the server is gone, so none is answered while
            # the stop (from another thread: a handler cannot stop its own server) takes effect.
            fake.fail_next("hang", 10_000)
            threading.Thread(target=fake.refuse_connections).start()
        return pipeline_responder(request)

    with FakeOllama(responder=dies_after_three) as fake:
        result = CliRunner().invoke(
            cli,
            ["update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", fake.url, "-q",
             "--concurrency", "1", str(papers_csv)],
        )  # fmt: skip
    assert result.exit_code == 2
    assert "Cannot reach Ollama" in result.stderr
    with Collection.reader(wd, "papers") as coll:
        done = [
            p for p in real_papers() if (s := coll.ledger.paper_state(p.paper_id)) and s.status == "done"
        ]
        assert 0 < len(done) < len(real_papers())  # the papers finished before it went are kept
        assert not coll.ledger.papers("failed")  # nothing was marked failed for the server's absence
    status = CliRunner().invoke(cli, ["status", "-c", "papers", "--working-dir", str(wd)])
    [last] = [line for line in status.stdout.splitlines() if line.startswith("Last run")]
    assert "still running" not in last
    assert "stopped early (Cannot reach Ollama at" in status.stdout


def test_a_relation_whose_ends_normalise_to_one_entity_is_dropped_and_counted(
    tmp_path: Path,
) -> None:
    def draft(request: dict[str, Any]) -> dict[str, Any] | None:
        if "IL-1beta" not in str(request.get("messages")):
            return pipeline_responder(request)
        return {
            "e": [
                [1, "IL-1beta", "gene"],
                [2, "IL1B", "gene"],
                [3, "endometriosis", "disease"],
            ],
            "r": [
                [1, "regulates", 2, [1]],  # one gene twice
                [2, "upregulated_in", 3, [1]],
            ],
        }

    path = tmp_path / "papers.csv"
    write_papers_csv(
        [Paper("P1", abstract="IL-1beta (IL1B) is raised in endometriosis.", title="IL-1beta")],
        path,
    )
    with FakeOllama(responder=draft) as fake:
        result = update(fake, tmp_path / "wd", str(path), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["edges"], summary["self_loops"]) == (1, 1)
    assert "1 self-loop after normalisation dropped" in summary["line"]


def test_stage_2_names_each_relation_as_the_paper_writes_it(tmp_path: Path) -> None:
    from fastbmrag.testing.responders import schema_title

    def draft(request: dict[str, Any]) -> dict[str, Any] | None:
        if schema_title(request) != "Draft":
            return pipeline_responder(request)
        return {
            "e": [[1, "TRbeta", "gene"], [2, "BTEB", "gene"]],
            "r": [[1, "regulates", 2, [1]]],
        }

    with FakeOllama(responder=draft) as fake:
        result = update(fake, tmp_path / "wd", str(DATA / "pmc" / "ehp-116-1694.nxml"),
                        "--min-similarity", "-1")  # fmt: skip
        [refine] = [
            r for r in fake.requests_to("/api/chat") if schema_title(r.json) == "Refinement"
        ]
    assert result.exit_code == 0, result.output
    prompt = refine.json["messages"][-1]["content"]
    # the alias as drafted, its symbol beside it; a name that is not normalised stays as it is
    assert "1. TRbeta (THRB) regulates BTEB. Abstract: " in prompt
