"""scripts/nightly.sh as cron runs it: silent on success, the error and the exit code otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from fastbmrag.store.collection import Collection
from fastbmrag.testing.answers import schema_instance_responder
from fastbmrag.testing.fake_eutils import FakeEutils
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder

ROOT = Path(__file__).parent.parent
NIGHTLY = ROOT / "scripts" / "nightly.sh"
EUTILS = Path(__file__).parent / "data" / "eutils"
QUERY = "endometriosis[tiab]"


@pytest.fixture
def servers() -> Iterator[tuple[FakeEutils, FakeOllama]]:
    with (
        FakeEutils(EUTILS / "pubmed21n1298_slice.xml", EUTILS / "PMC2774577.nxml") as eutils,
        FakeOllama(
            responder=lambda r: pipeline_responder(r) or schema_instance_responder(r)
        ) as llm,
    ):
        yield eutils, llm


def nightly(
    tmp_path: Path, eutils: FakeEutils, llm: FakeOllama, *extra: str, digest: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "FASTBMRAG_HOME": str(tmp_path / "home"),
        "NCBI_EMAIL": "curator@example.org",
        "NCBI_API_KEY": "test-key",
        "FASTBMRAG_EUTILS_URL": eutils.url,
        "FASTBMRAG_FULLTEXT_URL": eutils.fulltext_url,
        "OLLAMA_HOST": llm.url,
        "PYTHONWARNINGS": "ignore",
        **({"FASTBMRAG_DIGEST": digest} if digest else {}),
    }
    if (Path(sys.prefix) / "bin" / "activate").is_file():
        env["FASTBMRAG_VENV"] = sys.prefix
    return subprocess.run(
        ["bash", str(NIGHTLY), "endo", QUERY, "--no-normalize", "--no-cache", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )


def test_nightly_is_silent_on_success_and_logs(
    tmp_path: Path, servers: tuple[FakeEutils, FakeOllama]
) -> None:
    eutils, llm = servers
    news = tmp_path / "news.md"
    done = nightly(tmp_path, eutils, llm, "--since", "2000-01-01", digest=str(news))
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")
    said = news.read_text(encoding="utf-8")  # what the sync changed, for the mail
    assert said.startswith("# What changed in collection 'endo' since run 1 (sync, ")
    assert "5 new papers" in said and "## New papers" in said
    log = (tmp_path / "home" / "logs" / "sync-endo.log").read_text()
    assert "5 found, 0 already indexed, 5 fetched (1 with full text)" in log
    assert f"last-sync mark now {date.today()}" in log
    with Collection.ledger_only(tmp_path / "home", "endo") as coll:
        assert coll.ledger.paper_state("19920991").status == "done"  # type: ignore[union-attr]


def test_nightly_reports_failure_with_the_exit_code(
    tmp_path: Path, servers: tuple[FakeEutils, FakeOllama]
) -> None:
    eutils, llm = servers
    eutils.fail("esearch", 400)
    failed = nightly(tmp_path, eutils, llm)
    assert failed.returncode == 2
    assert failed.stdout == ""
    assert "Error: PubMed esearch answered HTTP 400" in failed.stderr
    log = (tmp_path / "home" / "logs" / "sync-endo.log").read_text()
    assert "nightly.sh: sync of endo exited 2: Error: PubMed esearch answered HTTP 400" in log


def test_nightly_usage(tmp_path: Path) -> None:
    result = subprocess.run(["bash", str(NIGHTLY), "endo"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "usage:" in result.stderr
