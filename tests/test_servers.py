"""Several model servers at once: least busy, failover when one goes, preflight per server."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_update import papers_csv, real_papers, snapshot  # noqa: F401 (a fixture)

from fastbmrag.cli import cli
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder


def update(wd: Path, hosts: str, csv: Path, *args: str, quiet: bool = True) -> Any:
    return CliRunner().invoke(
        cli,
        ["update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", hosts,
         *(["-q"] if quiet else []), "--json", *args, str(csv)],
    )  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_stopped_mid_run_leaves_the_work_to_the_other(
    papers_csv: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    calls = 0

    def dies_after_five(request: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal calls
        calls += 1
        if calls == 6:  # from now on this server hangs until it is gone, then refuses
            first.fail_next("hang", 10_000)
            threading.Thread(target=first.refuse_connections).start()
        return pipeline_responder(request)

    with (
        FakeOllama(responder=dies_after_five) as first,
        FakeOllama(responder=pipeline_responder) as second,
    ):
        result = update(tmp_path / "two", f"{first.url},{second.url}", papers_csv)
        answered_by_second = len(second.requests_to("/api/chat"))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 12 and summary["failed"] == 0
    servers = summary["servers"]
    assert set(servers) == {first.url, second.url}
    assert servers[first.url]["failures"] >= 1
    assert servers[second.url]["requests"] > 0 and servers[second.url]["failures"] == 0
    assert answered_by_second > 0
    assert "servers: " in summary["line"]

    with FakeOllama(responder=pipeline_responder) as clean:
        assert update(tmp_path / "clean", clean.url, papers_csv).exit_code == 0
    assert snapshot(tmp_path / "two") == snapshot(tmp_path / "clean")
    with Collection.reader(tmp_path / "two", "papers") as coll:
        assert all(coll.ledger.paper_state(p.paper_id).status == "done" for p in real_papers())  # type: ignore[union-attr]


def test_requests_spread_over_the_servers(papers_csv: Path, tmp_path: Path) -> None:  # noqa: F811
    with (
        FakeOllama(responder=pipeline_responder) as a,
        FakeOllama(responder=pipeline_responder) as b,
    ):
        result = update(tmp_path / "wd", f"{a.url},{b.url}", papers_csv, "--no-cache")
        chats = len(a.requests_to("/api/chat")), len(b.requests_to("/api/chat"))
    assert result.exit_code == 0, result.output
    llm = json.loads(result.stdout)["llm"]
    assert min(chats) > 0  # both servers worked
    assert sum(chats) == llm["extract"]["calls"] + llm["refine"]["calls"]


def test_one_server_down_at_the_start_is_named_and_the_run_goes_on(
    papers_csv: Path,  # noqa: F811
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with FakeOllama(responder=pipeline_responder) as up:
        result = update(tmp_path / "wd", f"{down},{up.url}", papers_csv, quiet=False)
    assert result.exit_code == 0, result.output
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert (
        f"Cannot reach Ollama at {down}: run `ollama serve` or set OLLAMA_HOST; going on with the other servers"
        in warned
    )
    assert json.loads(result.stdout)["indexed"] == 12


def test_every_server_down_is_exit_2_naming_each(papers_csv: Path, tmp_path: Path) -> None:  # noqa: F811
    one, two = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    result = update(tmp_path / "wd", f"{one},{two}", papers_csv)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: No model server can be used: ")
    assert f"Cannot reach Ollama at {one}" in line and f"Cannot reach Ollama at {two}" in line
    assert not (tmp_path / "wd").exists()
