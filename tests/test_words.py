"""A question's words are weighed by the collection: BM25 over the edges' names' stems, with the
collection's own IDF, decides which words relate an edge to a question that names no entity.
A word few edges hold relates them, whatever its frequency in English ("stroke"); a word
every edge holds relates nothing ("endometriosis" in an endometriosis collection).

A small collection indexed through the real pipeline against the fake model server, asked
through the CLI with linking off, so that only the words relate an edge.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import naming

# what the model names, as written, with the type it gives
NAMED = {
    "adopted policies": "other",
    "minor stroke": "other",
    "endometriosis": "disease",
    "IL6": "gene",
    "TNF": "gene",
    "BDNF": "gene",
    "VEGFA": "gene",
    "MMP9": "gene",
    "ESR1": "gene",
}
PAPERS = [
    ("S1", "Policies in hospitals", "Adopted policies lowered minor stroke."),
    *[(f"E{i}", f"{gene} in endometriosis", f"{gene} was raised in endometriosis.")
      for i, gene in enumerate(("IL6", "TNF", "BDNF", "VEGFA", "MMP9", "ESR1"), 1)],
]  # fmt: skip


drafted = naming(NAMED, "associated_with")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=drafted) as server:
        yield server


def build(wd: Path, fake: FakeOllama) -> Path:
    papers = wd / "papers.csv"
    with papers.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "title", "abstract", "year"])
        w.writerows([(pid, title, abstract, 2020) for pid, title, abstract in PAPERS])
    result = CliRunner().invoke(cli, ["update", "-c", "w", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "-q", str(papers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return papers


@pytest.fixture(scope="module")
def wd(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    wd = tmp_path_factory.mktemp("words")
    build(wd, fake)
    return wd


def ask(wd: Path, fake: FakeOllama, question: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["query", question, "-c", "w", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "--json", "--no-answer",
                                      "--no-link"])  # fmt: skip
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_a_word_few_edges_hold_relates_them_however_common_in_english(
    wd: Path, fake: FakeOllama
) -> None:
    out = ask(wd, fake, "Do older patients receive adequate stroke care?")
    assert out["no_evidence"] is None
    assert [(e["paper_id"], e["kept_by"]) for e in out["edges"]] == [("S1", "word")]


def test_a_word_every_edge_but_one_holds_relates_nothing(wd: Path, fake: FakeOllama) -> None:
    out = ask(wd, fake, "What is known of endometriosis?")
    assert out["edges"] == [] and out["no_evidence"] is not None
    # the rare word beside it still relates its edges, and only those
    out = ask(wd, fake, "Is minor stroke more common with endometriosis?")
    assert [e["paper_id"] for e in out["edges"]] == ["S1"]


def test_a_collection_stored_before_says_what_it_lacks_and_an_update_adds_it(
    tmp_path: Path, fake: FakeOllama
) -> None:
    import qdrant_edge as qe

    papers = build(tmp_path, fake)
    shard = qe.EdgeShard.load(str(tmp_path / "w" / "shard"))  # as the version before stored it
    shard.update(qe.UpdateOperation.delete_payload_by_filter(qe.Filter(), ["words"]))
    shard.update(qe.UpdateOperation.delete_field_index("words"))
    shard.flush()
    shard.close()

    out = ask(tmp_path, fake, "Do older patients receive adequate stroke care?")
    assert out["edges"] == []
    assert any("before a question's words were weighed by the collection" in w
               for w in out["warnings"])  # fmt: skip

    fake.reset()
    result = CliRunner().invoke(cli, ["update", "-c", "w", "--working-dir", str(tmp_path),
                                      "--ollama-host", fake.url, "-q", str(papers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert fake.requests_to("/api/chat") == []  # no paper indexed again: no model call
    out = ask(tmp_path, fake, "Do older patients receive adequate stroke care?")
    assert [(e["paper_id"], e["kept_by"]) for e in out["edges"]] == [("S1", "word")]
    assert not any("weighed" in w for w in out["warnings"])
