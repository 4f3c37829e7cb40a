"""A question never holds the collection while a model server thinks, and a server that hangs
costs a question the preflight bound, not the chat timeout: the parse call is bounded, a pool
goes on to its next server at once, and the nightly update waiting for the store gets it.

Real servers: fake model servers over HTTP whose chat hangs on the question's parse (their
embeddings answer), the query in a process of its own, the update through the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title

PAPERS = Path(__file__).parent / "data" / "query" / "papers.csv"
QUESTION = "What is the role of IL1B in endometriosis?"
BOUND = "2"  # FASTBMRAG_PREFLIGHT_TIMEOUT: the bound of a question's parse call


class HangingChat:
    """Answers as the test responder does, except the calls named, which hang until released."""

    def __init__(self, titles: tuple[str, ...]) -> None:
        self.titles = titles
        self.released = threading.Event()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any] | str:
        if schema_title(request) in self.titles:
            self.released.wait(60)
        return responder(request)


@pytest.fixture
def hanging() -> Iterator[tuple[FakeOllama, HangingChat]]:
    hang = HangingChat(("QuestionParse", "Answer"))
    with FakeOllama(responder=hang) as fake:
        try:
            yield fake, hang
        finally:
            hang.released.set()


def index(home: Path, host: str, papers: Path = PAPERS, *extra: str) -> Any:
    return CliRunner().invoke(
        cli, ["update", "-c", "demo", "--ollama-host", host, "-q", *extra, str(papers)],
        env={"FASTBMRAG_HOME": str(home)},
    )  # fmt: skip


def ask(home: Path, host: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "FASTBMRAG_HOME": str(home), "FASTBMRAG_PUBTATOR": "0",
           "FASTBMRAG_PREFLIGHT_TIMEOUT": BOUND}  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "fastbmrag", "query", QUESTION, "-c", "demo", "--ollama-host",
         host, "--min-score", "-1", "--json", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_question_whose_parse_hangs_ends_in_the_bound_and_the_update_gets_the_store(
    tmp_path: Path, hanging: tuple[FakeOllama, HangingChat]
) -> None:
    fake, _ = hanging
    home = tmp_path / "home"
    assert index(home, fake.url).exit_code == 0
    started = time.monotonic()
    query = ask(home, fake.url)
    while not any(schema_title(r.json) == "QuestionParse" for r in fake.requests_to("/api/chat")):
        assert query.poll() is None, query.communicate()
        assert time.monotonic() - started < 60
        time.sleep(0.05)
    # the question waits on the model: the nightly update, waiting 5 s at most, gets the store
    more = tmp_path / "more.csv"
    more.write_text("paper_id,title,abstract\nN1,KRAS in endometriosis,"
                    "KRAS is upregulated in endometriosis.\n", encoding="utf-8")  # fmt: skip
    update = index(home, fake.url, more, "--wait", "5")
    assert update.exit_code == 0, update.output
    out, err = query.communicate(timeout=60)
    took = time.monotonic() - started
    assert query.returncode == 0, err
    result = json.loads(out)
    assert took < 30  # the bound, not the chat timeout (300 s)
    assert result["parse"]["error"].endswith("no answer within 2 s (after 1 attempts)")
    assert result["answer"] is None and result["edges"]  # the evidence, no answer call
    assert any("did not answer the question's parse in time" in w for w in result["warnings"])
    asked = [schema_title(r.json) for r in fake.requests_to("/api/chat")]
    assert "Answer" not in asked


def test_a_pool_leaves_a_server_that_hangs_for_the_next_one_at_once(
    tmp_path: Path, hanging: tuple[FakeOllama, HangingChat]
) -> None:
    hung, _ = hanging
    home = tmp_path / "home"
    with FakeOllama(responder=responder) as healthy:
        assert index(home, healthy.url).exit_code == 0
        started = time.monotonic()
        query = ask(home, f"{hung.url},{healthy.url}")
        out, err = query.communicate(timeout=60)
        took = time.monotonic() - started
    assert query.returncode == 0, err
    result = json.loads(out)
    assert took < 30
    assert result["answer"] and result["references"]  # the healthy server parsed and answered
    assert result["parse"]["error"] is None
    assert [schema_title(r.json) for r in hung.requests_to("/api/chat")] == ["QuestionParse"]


def test_readers_that_keep_arriving_do_not_keep_a_waiting_update_out(tmp_path: Path) -> None:
    from fastbmrag.api import RAG
    from fastbmrag.errors import StoreBusy
    from fastbmrag.store.collection import Collection

    home = tmp_path / "home"
    with FakeOllama(responder=responder) as fake:
        assert index(home, fake.url).exit_code == 0
    rag = RAG(home, "demo")
    got: dict[str, Any] = {}

    def update_waiting() -> None:  # the nightly update, waiting up to 10 s for the store
        try:
            with Collection.writer(home, "demo", command="update", busy_timeout=10) as coll:
                got["papers"] = coll.ledger.paper_counts()["done"]
        except StoreBusy as err:
            got["error"] = str(err)

    with rag.reader(command="query") as first:  # a page request in flight
        writer = threading.Thread(target=update_waiting)
        writer.start()
        time.sleep(0.5)  # the update now waits for the store
        # a new request does not join the open reader
        with pytest.raises(StoreBusy, match="being updated by"), rag.reader(command="query"):
            pass
        assert first.count() > 0  # the request in flight reads on
    writer.join(timeout=15)
    assert got == {"papers": 5}  # the update had the store once the request was done
