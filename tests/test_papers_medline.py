"""MEDLINE reader over a real slice of the PubMed 2021 baseline file pubmed21n1298."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from fastbmrag.errors import InputError
from fastbmrag.papers import ReadReport, parse_medline

SLICE = Path(__file__).parent / "data" / "medline" / "pubmed21n1298_first50.xml.gz"
BAD = Path(__file__).parent / "data" / "bad"
PMC = Path(__file__).parent / "data" / "pmc"


def test_slice_counts_and_skips() -> None:
    report = ReadReport()
    papers = list(parse_medline(SLICE, report))
    assert len(papers) == 46
    assert report.read == 46
    assert report.skipped[0] == (
        "pubmed21n1298_first50.xml.gz citation 25 (PMID 25205585)",
        "no abstract",
    )
    assert [where for where, _ in report.skipped][1:] == [
        "pubmed21n1298_first50.xml.gz citation 32 (PMID 27460164)",
        "pubmed21n1298_first50.xml.gz citation 36 (PMID 28810020)",
        "pubmed21n1298_first50.xml.gz citation 41 (PMID 29775638)",
    ]
    # the file's DeleteCitation block: recorded, never read as papers
    assert len(report.deleted) == 20
    assert report.deleted[0] == "31688362"
    assert "31688362" not in {p.paper_id for p in papers}
    assert report.summary() == (
        "read 46 papers; skipped 4 (4 no abstract); listed 20 deleted citations"
    )
    assert all(p.paragraphs == [] for p in papers)


def test_structured_abstract_and_metadata() -> None:
    first = next(parse_medline(SLICE))
    assert first.paper_id == "10704411"
    assert first.pmid == "10704411"
    assert first.title == (
        "Dopamine modulates acute responses to cocaine, nicotine and ethanol in Drosophila."
    )
    assert first.year == 2000
    assert first.journal == "Current biology : CB"
    assert first.doi == "10.1016/s0960-9822(00)00336-5"
    assert first.authors.startswith("R J Bainton; L T Tsai; C M Singh")
    lines = first.abstract.split("\n")
    assert [line.split(":", 1)[0] for line in lines] == ["BACKGROUND", "RESULTS", "CONCLUSIONS"]
    assert lines[0].startswith("BACKGROUND: Drugs of abuse have a common property in mammals")


def test_unstructured_abstract_and_pmcid() -> None:
    papers = {p.paper_id: p for p in parse_medline(SLICE)}
    case = papers["8454279"]
    assert case.title.startswith("Myasthenia gravis in a man with a history of chordoma")
    assert case.year == 1993
    assert "\n" not in case.abstract
    assert case.abstract.startswith("A 67-year-old white man with a remote history of a chordoma")
    assert papers["15550987"].pmcid == "PMC529317"


def test_bytes_and_plain_xml_match_gzip(tmp_path: Path) -> None:
    data = gzip.decompress(SLICE.read_bytes())
    plain = tmp_path / "slice.xml"
    plain.write_bytes(data)
    from_gz = list(parse_medline(SLICE))
    assert list(parse_medline(data)) == from_gz
    assert list(parse_medline(plain)) == from_gz


def test_truncated_file_keeps_earlier_papers() -> None:
    papers = []
    with pytest.raises(InputError) as info:
        for paper in parse_medline(BAD / "truncated_medline.xml.gz"):
            papers.append(paper)
    assert len(papers) == 20
    assert papers[0].paper_id == "10704411"
    assert str(info.value).startswith(
        "truncated_medline.xml.gz: damaged or truncated file after 20 citations"
    )


def test_not_medline_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"root element <article> is not <PubmedArticleSet>"):
        list(parse_medline(PMC / "PMC2768302.nxml"))
    with pytest.raises(InputError, match=r"junk\.xml: not well-formed XML after 0 citations"):
        list(parse_medline(BAD / "junk.xml"))
