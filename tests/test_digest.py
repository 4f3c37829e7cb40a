"""What changed overnight: a sync's digest names the new papers, their edges by entity (watched
ones first), the pairs newly contradicted, the retracted papers and the edges they took out, and
"nothing new" after a sync that found nothing; a collection of an earlier version digests too."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from doors_support import cli_run as run
from doors_support import page

from fastbmrag.api import RAG
from fastbmrag.errors import InputError
from fastbmrag.testing.fake_eutils import FakeEutils
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import (
    draft_answer,
    numbered_sentences,
    responder,
    schema_title,
    task_text,
)

QUERY = "endometriosis[tiab]"


def stated(request: dict[str, Any]) -> dict[str, Any] | str:
    """The test suite's model, whose gene-disease relations follow the sentence's verb: "rose"
    up, "fell" down (so that two papers can disagree)."""
    if schema_title(request) != "Draft":
        return responder(request)
    text = task_text(request)
    answer = draft_answer(text)
    sentences = dict(numbered_sentences(text))
    for relation in answer["r"]:
        said = " ".join(sentences.get(n, "") for n in relation[3])
        if relation[1] in ("upregulated_in", "downregulated_in", "biomarker_of", "associated_with"):
            relation[1] = "downregulated_in" if " fell" in said else "upregulated_in"
    return answer


def citation(pmid: str, abstract: str) -> bytes:
    return (
        f"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version=\"1\">{pmid}</PMID>"
        f"<Article><Journal><Title>J Test</Title></Journal><ArticleTitle>Study {pmid}"
        f"</ArticleTitle><Abstract><AbstractText>{abstract}</AbstractText></Abstract></Article>"
        "</MedlineCitation></PubmedArticle></PubmedArticleSet>"
    ).encode()


@pytest.fixture
def servers() -> Iterator[tuple[FakeEutils, FakeOllama]]:
    with FakeEutils() as eutils, FakeOllama(responder=stated) as ollama:
        yield eutils, ollama


def sync(servers: tuple[FakeEutils, FakeOllama], wd: Path, *extra: str) -> Result:
    eutils, ollama = servers
    result = run(
        "sync", "-c", "endo", "--query", QUERY, "--email", "curator@example.org",
        "--eutils-url", eutils.url, "--fulltext-url", eutils.fulltext_url, "--no-pubtator",
        "--ollama-host", ollama.url, "--working-dir", str(wd), "--since", "2000-01-01",
        "--quiet", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result


def digest(wd: Path, *extra: str) -> Result:
    result = run("digest", "-c", "endo", "--working-dir", str(wd), *extra)
    assert result.exit_code == 0, result.output
    return result


def test_a_sync_s_digest_names_exactly_what_it_changed(
    servers: tuple[FakeEutils, FakeOllama], tmp_path: Path
) -> None:
    eutils, _ = servers
    wd = tmp_path / "wd"
    eutils.add_medline(citation("1000001", "IL1B rose in endometriosis."), entrez_date=date.today())
    eutils.add_medline(citation("1000002", "TNF rose in adenomyosis."), entrez_date=date.today())
    sync(servers, wd)
    watched = run("watch", "add", "-c", "endo", "--working-dir", str(wd), "MMP9")
    assert watched.exit_code == 0 and "watching MMP9 (HGNC:7176)" in watched.output
    # three new papers, one stating the opposite of a paper the collection holds; PubMed
    # retracts a paper the collection holds
    for pmid, abstract in (("1000003", "IL1B fell in endometriosis."),
                           ("1000004", "MMP9 rose in adenomyosis."),
                           ("1000005", "KRAS rose in endometriosis.")):  # fmt: skip
        eutils.add_medline(citation(pmid, abstract), entrez_date=date.today())
    eutils.retract("1000002")
    mailed = tmp_path / "digest.md"
    sync(servers, wd, "--digest", str(mailed))
    found = json.loads(digest(wd, "--format", "json").stdout)
    assert sorted(p["paper_id"] for p in found["papers"]) == ["1000003", "1000004", "1000005"]
    assert found["papers"][0]["title"] == "Study 1000003" and found["papers"][0]["edges"] == 1
    assert found["papers"][0]["study"] == "other (model-judged)"  # the design where known
    new_edges = {
        (e["source_name"], e["relationship_type"], e["target_name"], e["paper_id"])
        for entity in found["entities"] for e in entity["edges"]
    }  # fmt: skip
    assert new_edges == {
        ("IL1B", "downregulated_in", "Endometriosis", "1000003"),
        ("MMP9", "upregulated_in", "Adenomyosis", "1000004"),
        ("KRAS", "upregulated_in", "Endometriosis", "1000005"),
    }
    assert found["entities"][0]["name"] == "MMP9" and found["entities"][0]["watched"]
    changes = [c for entity in found["entities"] for c in entity["changes"]]
    assert [(c["kind"], c["source_name"], c["target_name"], c["relations"]) for c in changes] == [
        ("newly contradicted", "IL1B", "Endometriosis",
         {"downregulated_in": ["1000003"], "upregulated_in": ["1000001"]})
    ]  # fmt: skip
    assert [(p["paper_id"], p["edges"]) for p in found["retracted"]] == [("1000002", 1)]
    assert [(e["source_name"], e["relationship_type"]) for e in found["retracted"][0]["edges_out"]
            ] == [("TNF", "upregulated_in")]  # fmt: skip
    assert "KRAS" in found["new_entities"] and "IL1B" not in found["new_entities"]
    # the file the sync wrote says the same, in Markdown
    mail = mailed.read_text(encoding="utf-8")
    assert mail.startswith("# What changed in collection 'endo' since run 2 (sync, ")
    assert "3 new papers, 3 new edges, 1 newly contradicted pair, 1 retracted paper." in mail
    assert mail.index("## MMP9 (HGNC:7176) — watched") < mail.index("## Endometriosis (D004715)")
    assert "- Newly contradicted: IL1B → Endometriosis" in mail
    # a sync that finds nothing: its digest says so
    sync(servers, wd)
    assert digest(wd).stdout.startswith("What changed in collection 'endo' since run 3")
    assert "Nothing new since run 3 (sync, " in digest(wd).stdout
    assert "1000003" in digest(wd, "--since", "2", "--format", "html").stdout


def test_a_collection_of_an_earlier_version_migrates_and_digests_its_old_edges_in_their_run(
    servers: tuple[FakeEutils, FakeOllama], tmp_path: Path
) -> None:
    eutils, _ = servers
    wd = tmp_path / "wd"
    eutils.add_medline(citation("1000001", "IL1B rose in endometriosis."), entrez_date=date.today())
    sync(servers, wd)
    ledger = sqlite3.connect(wd / "endo" / "ledger.sqlite")  # the ledger as version 7 left it
    for sql in ("DROP TABLE paper_events", "DROP TABLE watches", "DROP INDEX edges_first_run",
                "ALTER TABLE edges DROP COLUMN first_run", "ALTER TABLE edges DROP COLUMN last_run",
                "ALTER TABLE edges DROP COLUMN finding",
                *(f"ALTER TABLE papers DROP COLUMN {c}" for c in
                  ("design", "organisms", "design_from", "organisms_from")),
                "PRAGMA user_version=7"):  # fmt: skip
        ledger.execute(sql)
    ledger.commit()
    ledger.close()
    # the old run's edges and papers are dated by it as the ledger migrates
    last = json.loads(digest(wd, "--format", "json").stdout)
    assert [p["paper_id"] for p in last["papers"]] == ["1000001"]
    assert [e["paper_id"] for entity in last["entities"] for e in entity["edges"]] == ["1000001"]
    assert "1 new paper, 1 new edge" in digest(wd, "--since", "1").stdout
    everything = json.loads(digest(wd, "--since", "0", "--format", "json").stdout)
    assert [e["paper_id"] for entity in everything["entities"] for e in entity["edges"]] == [
        "1000001"
    ]
    for since, said in (("yesterday", "Error: --since 'yesterday' is no run"),
                        ("9" * 30, "is no run"), ("2026-13-45", "is no date")):  # fmt: skip
        bad = run("digest", "-c", "endo", "--working-dir", str(wd), "--since", since)
        assert bad.exit_code == 2 and said in bad.output, bad.output
    # the same refusal, the option in each door's words
    with pytest.raises(InputError, match="^since 'yesterday' is no run: give 'last'"):
        RAG(wd, "endo").digest("yesterday")
    said = page(RAG(wd, "endo")).get("/api/digest", params={"since": "yesterday"})
    assert said.status_code == 400
    assert said.json()["error"].startswith("'since' 'yesterday' is no run: give 'last'")
