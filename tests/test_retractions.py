"""Retracted papers never speak unmarked: the nightly sync finds retractions and flags their
edges without a model call, queries leave them out and say so (or keep them, marked), a
MEDLINE update file's deleted citations lose their edges, retraction notices are no papers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result
from doors_support import cli_run

from fastbmrag.papers import ReadReport, iter_papers
from fastbmrag.store.base import Filter, Match
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_eutils import FakeEutils
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

EUTILS = Path(__file__).parent / "data" / "eutils"
SLICE = EUTILS / "pubmed21n1298_slice.xml"  # 32772885 33155662 33169800 33316284
QUERY = "endometriosis[tiab]"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(SLICE) as server:
        yield server


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama(responder=responder) as server:
        yield server


def sync(eutils: FakeEutils, ollama: FakeOllama, wd: Path, *extra: str) -> Result:
    return cli_run(
        "sync", "-c", "endo", "--query", QUERY, "--email", "curator@example.org",
        "--eutils-url", eutils.url, "--fulltext-url", eutils.fulltext_url,
        "--ollama-host", ollama.url, "--working-dir", str(wd), "--no-cache", "--json",
        "--since", "2000-01-01", *extra,
    )  # fmt: skip


def query(ollama: FakeOllama, wd: Path, *extra: str) -> dict:
    result = cli_run(
        "query", "-c", "endo", "--working-dir", str(wd), "--ollama-host", ollama.url,
        "--no-llm-parse", "--min-score", "-1", "--all", "--json", "--no-link",
        "--since", "1900",  # a flag's filter: every edge, though none shares a word with the question
        "What do these papers report?", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def flagged(wd: Path) -> dict[str, int]:
    """paper_id -> the `retracted` flag of its stored edges (all alike)."""
    with Collection.reader(wd, "endo") as coll:
        return {
            str(h.payload["paper_id"]): int(h.payload.get("retracted", 0))
            for h in coll.store.scroll(Filter())
        }


def synced_with_one_retracted(eutils: FakeEutils, ollama: FakeOllama, wd: Path) -> str:
    """A first sync indexes the papers, PubMed retracts one, a second sync flags it: its id."""
    assert sync(eutils, ollama, wd).exit_code == 0
    gone = sorted(flagged(wd))[0]
    eutils.retract(gone)
    assert sync(eutils, ollama, wd).exit_code == 0
    return gone


def test_a_later_sync_finds_a_paper_retracted_and_answers_leave_it_out(
    eutils: FakeEutils, ollama: FakeOllama, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    first = sync(eutils, ollama, wd)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["newly_retracted"] == 0
    papers = flagged(wd)
    assert len(papers) >= 2 and set(papers.values()) == {0}
    gone = sorted(papers)[0]

    eutils.retract(gone)
    chats = ollama.counts["/api/chat"]
    later = sync(eutils, ollama, wd)
    assert later.exit_code == 0, later.output
    assert json.loads(later.stdout)["newly_retracted"] == 1
    assert ollama.counts["/api/chat"] == chats  # flagged, not re-extracted
    assert flagged(wd) == {p: int(p == gone) for p in papers}
    status = cli_run("status", "-c", "endo", "--working-dir", str(wd))
    assert "1 retracted" in status.output
    again = sync(eutils, ollama, wd)
    assert json.loads(again.stdout)["newly_retracted"] == 0  # known: not counted twice

    shown = query(ollama, wd)
    assert gone not in {e["paper_id"] for e in shown["edges"]}
    assert any(f"1 retracted paper left out ({gone})" in w for w in shown["warnings"])
    kept = query(ollama, wd, "--include-retracted")
    marked = [e for e in kept["edges"] if e["paper_id"] == gone]
    assert marked and all(e["payload"]["retracted"] == 1 for e in marked)
    assert not any("left out" in w for w in kept["warnings"])


def test_an_answer_citing_a_retracted_paper_marks_it(
    eutils: FakeEutils, ollama: FakeOllama, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    gone = synced_with_one_retracted(eutils, ollama, wd)
    result = cli_run(
        "query", "-c", "endo", "--working-dir", str(wd), "--ollama-host", ollama.url,
        "--min-score", "-1", "--no-link", "--include-retracted", "--paper-id", gone,
        "What does this paper report?",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.output.splitlines() if re.match(r"\s+\[\d+\]", x)]
    assert line.endswith("[retracted]")


def _edit_citation(xml: str, pmid: str, publication_type: str) -> str:
    """The MEDLINE text with one more publication type for ``pmid``'s citation."""
    start = xml.index(f'<PMID Version="1">{pmid}</PMID>')
    end = xml.index("</PublicationTypeList>", start)
    added = f"<PublicationType>{publication_type}</PublicationType>"
    return xml[:end] + added + xml[end:]


def test_update_flags_retracted_papers_skips_notices_and_removes_deleted_citations(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    xml = SLICE.read_text(encoding="utf-8")
    xml = _edit_citation(xml, "33155662", "Retracted Publication")
    xml = _edit_citation(xml, "33169800", "Retraction of Publication")  # a notice
    papers = tmp_path / "papers.xml"
    papers.write_text(xml, encoding="utf-8")

    def update(path: Path) -> dict:
        result = cli_run(
            "update", "-c", "endo", "--working-dir", str(wd), "--ollama-host", ollama.url,
            "--no-cache", "--json", str(path),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    summary = update(papers)
    assert summary["indexed"] == 3 and summary["retracted"] == 1
    stored = flagged(wd)
    assert "33169800" not in stored  # the notice is no paper
    assert stored["33155662"] == 1 and stored["32772885"] == 0

    deletions = tmp_path / "update.xml"
    deletions.write_text(
        '<?xml version="1.0"?>\n<PubmedArticleSet><DeleteCitation>'
        '<PMID Version="1">32772885</PMID><PMID Version="1">99999999</PMID>'
        "</DeleteCitation></PubmedArticleSet>\n",
        encoding="utf-8",
    )
    summary = update(deletions)
    assert summary["deleted"] == 1  # the other PMID was never in the collection
    assert "32772885" not in flagged(wd)
    with Collection.ledger_only(wd, "endo") as coll:
        assert coll.ledger.paper_state("32772885") is None


def test_a_jats_retraction_notice_is_no_paper_and_a_retracted_article_is_marked(
    tmp_path: Path,
) -> None:
    article = (EUTILS / "PMC2774577.nxml").read_text(encoding="utf-8")
    notice = tmp_path / "notice.nxml"
    notice.write_text(
        re.sub(r'article-type="[^"]*"', 'article-type="retraction"', article, count=1),
        encoding="utf-8",
    )
    forward = '<related-article related-article-type="retraction-forward" ext-link-type="pmc"/>'
    retracted = tmp_path / "retracted.nxml"
    retracted.write_text(
        article.replace("</article-meta>", forward + "</article-meta>", 1), encoding="utf-8"
    )
    report = ReadReport()
    read = list(iter_papers([str(notice), str(retracted)], report))
    assert [p.retraction for p in read] == ["retracted"]
    assert any("retraction notice" in why for _, why in report.skipped)


def test_a_retracted_paper_of_a_later_input_stays_flagged_when_indexed_again(
    eutils: FakeEutils, ollama: FakeOllama, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    gone = synced_with_one_retracted(eutils, ollama, wd)
    # the same records read from a file again, forced: the ledger remembers the retraction
    with Collection.writer(wd, "endo") as coll:
        assert coll.ledger.retracted() == {gone}
    result = cli_run(
        "update", "-c", "endo", "--working-dir", str(wd), "--ollama-host", ollama.url,
        "--force", "--no-cache", str(SLICE),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert flagged(wd)[gone] == 1
    with Collection.reader(wd, "endo") as coll:
        flt = Filter(must=(Match("retracted", value=1),))
        assert {str(h.payload["paper_id"]) for h in coll.store.scroll(flt)} == {gone}


def test_an_entity_card_leaves_retracted_papers_out_and_names_them(
    eutils: FakeEutils, ollama: FakeOllama, tmp_path: Path
) -> None:
    wd = tmp_path / "wd"
    assert sync(eutils, ollama, wd).exit_code == 0
    with Collection.ledger_only(wd, "endo") as coll:
        rows = [tuple(r) for r in coll.ledger.edge_rows()]
    gone = rows[0][1]
    disease = rows[0][4]  # the disease of the retracted paper's first edge (a MeSH id)
    before = json.loads(
        cli_run("entity", disease, "-c", "endo", "--working-dir", str(wd), "--json").stdout
    )
    eutils.retract(gone)
    assert sync(eutils, ollama, wd).exit_code == 0
    card = cli_run("entity", disease, "-c", "endo", "--working-dir", str(wd), "--json")
    assert card.exit_code == 0, card.output
    after = json.loads(card.stdout)
    assert before["retracted_papers"] == [] and after["retracted_papers"] == [gone]
    assert after["papers"] == before["papers"] - 1
    text = cli_run("entity", disease, "-c", "endo", "--working-dir", str(wd)).output
    assert f"left out, retracted: 1 paper ({gone})" in text
