"""What a user sees when things go wrong: no evidence instead of unrelated citations, one-line
errors with documented exit codes, nothing left behind by a run that could not start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import _schema_title, responder

DATA = Path(__file__).parent / "data"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


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
        "the collection 'papers' holds no evidence about IL1B (HGNC:5992) or "
        "Endometriosis (D004715)"
    )
    assert out["no_evidence"]["searched"] == ["IL1B (HGNC:5992)", "Endometriosis (D004715)"]
    asked = [_schema_title(r.json) for r in fake.requests_to("/api/chat")]
    assert "Answer" not in asked and "PartialAnswer" not in asked

    text = run("query", "What is the role of IL1B in endometriosis?", "--working-dir", str(wd),
               "--ollama-host", fake.url)  # fmt: skip
    assert text.exit_code == 0
    assert text.stdout.startswith(
        "No evidence: the collection 'papers' holds no evidence about IL1B (HGNC:5992) or "
        "Endometriosis (D004715).\n"
    )
    assert "[1]" not in text.stdout and "References" not in text.stdout
