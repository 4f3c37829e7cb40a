"""How strong each finding is: study design and organisms on every paper and edge, from the
record (checked against the real MEDLINE XML record by record) or the model, as filters at every
door, in references, cards and status."""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import etree

from fastbmrag.api import RAG
from fastbmrag.cli import cli
from fastbmrag.papers import ReadReport, iter_papers
from fastbmrag.papers.design import PUBLICATION_TYPES, design_of_types
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

MEDLINE = Path(__file__).parent / "data" / "medline"
SLICES = ("pubmed20n0014_first60.xml.gz", "pubmed21n1298_first50.xml.gz")


def records(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """PMID -> (publication types, MeSH descriptors), read from the XML on its own."""
    root = etree.fromstring(gzip.decompress(path.read_bytes()),
                            parser=etree.XMLParser(resolve_entities=False, huge_tree=True))  # fmt: skip
    return {
        a.findtext("MedlineCitation/PMID"): (
            [t.text or "" for t in a.iterfind(".//PublicationTypeList/PublicationType")],
            [d.text or "" for d in a.iterfind(".//MeshHeadingList/MeshHeading/DescriptorName")],
        )
        for a in root.iter("PubmedArticle")
    }


@pytest.mark.parametrize("name", SLICES)
def test_every_record_s_publication_types_and_check_tags_label_it_from_metadata(
    name: str, tmp_path: Path
) -> None:
    xml = records(MEDLINE / name)
    papers = {p.paper_id: p for p in iter_papers([MEDLINE / name], ReadReport())}
    assert papers
    labelled = 0
    for pmid, paper in papers.items():
        types, headings = xml[pmid]
        design = design_of_types(types)
        if any(t in PUBLICATION_TYPES for t in types):
            assert (paper.design, paper.design_from) == (design, "metadata"), pmid
            labelled += 1
        else:
            assert (paper.design, paper.design_from) == ("", ""), pmid
        if "Humans" in headings:
            assert "human" in paper.organisms and paper.organisms_from == "metadata", pmid
        if "Animals" in headings:
            assert {"mouse", "rat", "animal"} & set(paper.organisms), pmid
        if not {"Humans", "Animals"} & set(headings):
            assert not {"human", "animal"} & set(paper.organisms), pmid
    assert labelled  # each slice holds records with a design-bearing publication type
    # converted and indexed (the fake model reads every abstract): the record's labels stay
    converted = tmp_path / "papers.csv"
    assert CliRunner().invoke(cli, ["convert", str(MEDLINE / name), "-o", str(converted)]
                              ).exit_code == 0  # fmt: skip
    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path / "wd", "m", ollama_host=fake.url)
        assert rag.insert_paper(str(converted), pubtator=False).failed == 0
    edges = rag.edges()
    assert len(edges)
    for row in edges.to_dict("records"):
        paper = papers[row["paper_id"]]
        if paper.design_from == "metadata":
            assert (row["design"], row["design_from"]) == (paper.design, "metadata")
        else:
            assert row["design_from"] in ("model", "")
        if paper.organisms_from == "metadata":
            assert list(row["organisms"]) == paper.organisms


PAPERS = [  # a small collection of three designs: a record's label, two the model's
    ("A1", "IL1B rose in endometriosis in a randomized trial of women.",
     "Randomized Controlled Trial", "Humans"),
    ("A2", "IL6 rose in endometriosis in mice.", "", ""),
    ("A3", "TNF rose in endometriosis in a cohort of women.", "", ""),
]  # fmt: skip


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, FakeOllama]]:
    wd = tmp_path_factory.mktemp("design")
    papers = wd / "papers.csv"
    with papers.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["paper_id", "abstract", "publication_types", "organisms"])
        out.writerows(PAPERS)
    with FakeOllama(responder=responder) as fake:
        done = CliRunner().invoke(cli, ["update", "-c", "d", "--working-dir", str(wd),
                                        "--ollama-host", fake.url, "--no-pubtator", str(papers)])  # fmt: skip
        assert done.exit_code == 0, done.output
        yield wd, fake


def run(wd: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, [*args, "-c", "d", "--working-dir", str(wd)])
    assert result.exit_code == 0, result.output
    return result


def test_filters_by_design_and_organism_at_the_command_line_and_in_the_api(
    mixed: tuple[Path, FakeOllama],
) -> None:
    wd, fake = mixed
    ask = ["query", "endometriosis", "--ollama-host", fake.url, "--min-score", "-1",
           "--no-answer", "--json"]  # fmt: skip
    found = json.loads(run(wd, *ask, "--design", "RCT,observational").stdout)
    assert sorted(e["payload"]["paper_id"] for e in found["edges"]) == ["A1", "A3"]
    found = json.loads(run(wd, *ask, "--organism", "mice").stdout)
    assert [e["payload"]["paper_id"] for e in found["edges"]] == ["A2"]
    assert found["edges"][0]["payload"]["design_from"] == "model"
    ranked = json.loads(run(wd, *ask, "--rank", "design").stdout)
    assert [e["payload"]["design"] for e in ranked["edges"]] == ["rct", "observational",
                                                                 "preclinical"]  # fmt: skip
    rag = RAG(wd, "d", ollama_host=fake.url)
    result = rag.query("endometriosis", designs=["rct"], min_score=-1.0, no_answer=True)
    assert [e["payload"]["paper_id"] for e in result["edges"]] == ["A1"]
    card = rag.entity("endometriosis")
    assert card is not None and card["papers_by_design"] == {"rct": 1, "observational": 1,
                                                             "preclinical": 1}  # fmt: skip
    only = rag.entity("endometriosis", designs=["rct"])
    assert only is not None and only["papers"] == 1
    assert rag.contradictions(designs=["rct"]) == []
    with pytest.raises(Exception, match="Unknown design 'bogus'"):
        rag.entity("endometriosis", designs=["bogus"])
    shown = run(wd, "entity", "Endometriosis").stdout
    assert "by design: 1 RCT, 1 observational, 1 in vitro/animal" in shown
    status = run(wd, "status").stdout
    assert "Designs     1 RCT, 1 observational, 1 in vitro/animal (labels: 1 from metadata, " \
        "2 from model)" in status


def test_an_answer_s_references_are_marked_with_their_design(
    mixed: tuple[Path, FakeOllama],
) -> None:
    wd, fake = mixed
    said = run(wd, "query", "What is the role of IL1B in endometriosis?", "--ollama-host",
               fake.url, "--min-score", "-1").stdout  # fmt: skip
    assert "A1 [RCT, humans]" in said
    assert "[observational, humans (model-judged)]" in said  # a model's label, marked
    markdown = run(wd, "query", "What is the role of IL1B in endometriosis?", "--ollama-host",
                   fake.url, "--min-score", "-1", "--format", "markdown").stdout  # fmt: skip
    assert "| RCT, humans |" in markdown
    answered = json.loads(run(wd, "query", "What is the role of IL1B in endometriosis?",
                              "--ollama-host", fake.url, "--min-score", "-1", "--json").stdout)  # fmt: skip
    counts: dict[str, int] = {}
    for pair in answered["consensus"]:  # each pair's papers counted by design
        for design, n in pair["papers_by_design"].items():
            counts[design] = counts.get(design, 0) + n
    assert counts == {"rct": 1, "observational": 1, "preclinical": 1}
    # the answer prompt gives each item's design and asks which findings rest on stronger ones
    prompt = next(r for r in reversed(fake.requests) if "Evidence:" in json.dumps(r.json))
    text = json.dumps(prompt.json)
    assert "Design: RCT, humans" in text and "stronger designs" in text


def test_a_record_that_gains_publication_types_relabels_its_edges_with_no_chat_call(
    tmp_path: Path,
) -> None:
    import sqlite3
    from datetime import UTC, date, datetime, timedelta

    from fastbmrag.testing.fake_eutils import FakeEutils

    record = (
        b'<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version="1">1000001</PMID>'
        b"<Article><Journal><Title>J</Title></Journal><ArticleTitle>IL1B and endometriosis"
        b"</ArticleTitle><Abstract><AbstractText>IL1B rose in endometriosis in a cohort of "
        b"women.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
        b"</PubmedArticleSet>"
    )
    wd = tmp_path / "wd"
    with FakeEutils() as eutils, FakeOllama(responder=responder) as fake:
        eutils.add_medline(record, entrez_date=date.today())

        def sync() -> dict[str, Any]:
            done = CliRunner().invoke(cli, [
                "sync", "-c", "s", "--query", "endometriosis", "--email", "a@b.org",
                "--eutils-url", eutils.url, "--fulltext-url", eutils.fulltext_url,
                "--ollama-host", fake.url, "--working-dir", str(wd), "--since", "2000-01-01",
                "--no-pubtator", "--json"])  # fmt: skip
            assert done.exit_code == 0, done.output
            return dict(json.loads(done.stdout))

        assert sync()["relabelled"] == 0
        rag = RAG(wd, "s")
        before = rag.edges().to_dict("records")
        assert [(r["design"], r["design_from"]) for r in before] == [("observational", "model")]
        chats = fake.counts["/api/chat"]
        eutils.add_publication_type("1000001", "Randomized Controlled Trial")
        assert sync()["relabelled"] == 0  # indexed today: NLM has not indexed it yet
        with sqlite3.connect(wd / "s" / "ledger.sqlite") as ledger:  # a month later
            ledger.execute("UPDATE papers SET updated_at = ?",
                           ((datetime.now(UTC) - timedelta(days=30)).isoformat(),))  # fmt: skip
        later = sync()
        assert later["relabelled"] == 1 and "1 paper relabelled from their records" in later["line"]
        assert fake.counts["/api/chat"] == chats  # no model call
        after = rag.edges().to_dict("records")
        assert [(r["design"], r["design_from"], list(r["organisms"]), r["organisms_from"])
                for r in after] == [("rct", "metadata", ["human"], "model")]  # fmt: skip
        assert sync()["relabelled"] == 0  # said once
