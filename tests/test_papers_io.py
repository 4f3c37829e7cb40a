"""iter_papers: inputs expanded, dispatched by type, broken files reported and skipped."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from fastbmrag.papers import Paper, ReadReport, expand_inputs, iter_papers

DATA = Path(__file__).parent / "data"
PMC = DATA / "pmc"
SLICE = DATA / "medline" / "pubmed21n1298_first50.xml.gz"
BAD = DATA / "bad"


def test_directory_file_and_glob(tmp_path: Path) -> None:
    report = ReadReport()
    papers = list(iter_papers([PMC, str(DATA / "medline" / "pubmed21n*.xml.gz")], report))
    ids = [p.paper_id for p in papers]
    # a directory is read in name order, then the glob's MEDLINE file
    assert ids[:4] == ["PMC2768302", "PMC3339580", "PMC2599765", "PMC3585041"]
    assert ids[4] == "10704411"
    assert len(ids) == 50
    assert report.files == 5
    assert report.summary() == (
        "read 50 papers; skipped 4 (4 no abstract); listed 20 deleted citations"
    )


def test_same_file_twice_is_read_once() -> None:
    report = ReadReport()
    papers = list(iter_papers([PMC / "PMC2768302.nxml", str(PMC / "PMC2768302.nxml")], report))
    assert [p.paper_id for p in papers] == ["PMC2768302"]
    assert report.skipped == []


def test_duplicates_across_files_are_reported() -> None:
    report = ReadReport()
    papers = list(iter_papers([SLICE, DATA / "papers" / "papers.csv"], report))
    ids = [p.paper_id for p in papers]
    assert ids.count("10704411") == 1
    assert ids[-1] == "PMC2768302"  # the CSV's one new paper, after the MEDLINE ones
    assert len(ids) == 47
    assert ("papers.csv row 3 (paper_id 10704411)", "duplicate paper_id") in report.skipped
    assert ("papers.csv row 4 (paper_id 8454279)", "duplicate paper_id") in report.skipped
    assert report.duplicates == ["10704411", "8454279"]


def test_xml_dispatch_by_root_element(tmp_path: Path) -> None:
    shutil.copy(PMC / "PMC2768302.nxml", tmp_path / "fulltext.xml")
    (tmp_path / "fulltext2.xml.gz").write_bytes(
        gzip.compress((PMC / "ehp-116-1694.nxml").read_bytes())
    )
    (tmp_path / "citations.xml").write_bytes(gzip.decompress(SLICE.read_bytes()))
    (tmp_path / "notes.txt").write_text("not an input", encoding="utf-8")
    report = ReadReport()
    papers = list(iter_papers([tmp_path], report))
    assert [p.paper_id for p in papers][:2] == ["10704411", "8454279"]  # citations.xml first
    assert {p.paper_id for p in papers} >= {"PMC2768302", "PMC2599765"}
    assert len(papers) == 48
    assert report.files == 3


def test_bad_corpus_never_stops_the_run() -> None:
    report = ReadReport()
    papers = list(iter_papers([BAD], report))
    # duplicate_ids.csv is read first; its two papers recur in the other CSVs and among the
    # 20 citations read from the truncated MEDLINE file before its damage
    assert [p.paper_id for p in papers][:2] == ["10704411", "8454279"]
    assert len(papers) == 20
    assert report.duplicates == ["10704411"] + ["10704411", "8454279"] * 3
    unreadable = {Path(where).name: why for where, why in report.skipped if "/" in where}
    assert unreadable == {
        "empty.csv": (
            "unreadable file: the file is empty; a papers CSV starts with a header row "
            "naming paper_id, abstract and main_text (at least one of the last two)"
        ),
        "empty.nxml": "unreadable file: the file is empty",
        "junk.xml": (
            "unreadable file: not well-formed XML (Start tag expected, '<' not found, "
            "line 1, column 1)"
        ),
        "missing_columns.csv": (
            "unreadable file: no abstract or main_text column (columns found: "
            "'paper_id', 'title', 'summary'): a papers CSV needs at least one of them"
        ),
        "not_papers.xml": (
            "unreadable file: root element <catalog> is neither <PubmedArticleSet> (MEDLINE) "
            "nor <article> (JATS)"
        ),
        "truncated.nxml": (
            "unreadable file: not well-formed XML (Premature end of data in tag p line 24, "
            "line 29, column 49)"
        ),
        "truncated_medline.xml.gz": (
            "unreadable file: damaged or truncated file after 20 citations (Compressed file "
            "ended before the end-of-stream marker was reached)"
        ),
    }
    assert report.decode_errors == ["latin1.csv line 2"]


def test_inputs_that_match_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4")
    report = ReadReport()
    files = expand_inputs(
        [
            tmp_path / "missing.nxml",
            tmp_path / "empty_dir",
            str(tmp_path / "*.nxml"),
            tmp_path / "paper.pdf",
        ],
        report,
    )
    assert files == [tmp_path / "paper.pdf"]
    assert [why for _, why in report.skipped] == [
        "input not found: no such file or directory",
        "input not found: no .csv, .tsv, .nxml, .nxml.gz, .xml, .xml.gz files in this directory",
        "input not found: the pattern matches no .csv, .tsv, .nxml, .nxml.gz, .xml, .xml.gz files",
    ]
    assert list(iter_papers([tmp_path / "paper.pdf"], report)) == []
    assert report.skipped[-1] == (
        str(tmp_path / "paper.pdf"),
        "unreadable file: unsupported file type (expected .csv, .tsv, .nxml, .nxml.gz, .xml, "
        ".xml.gz)",
    )


def test_report_admits_only_papers_with_id_and_text() -> None:
    report = ReadReport()
    assert not report.admit(Paper(paper_id="", abstract="Text."), "bytes article 2")
    assert not report.admit(Paper(paper_id="PMC1", abstract=" ", paragraphs=[" "]), "a.nxml")
    assert report.admit(Paper(paper_id="PMC1", paragraphs=["[Results] IL1B rose."]), "a.nxml")
    assert not report.admit(Paper(paper_id="PMC1", abstract="Again."), "b.nxml")
    assert report.read == 1
    assert report.skipped == [
        ("bytes article 2", "empty paper_id"),
        ("a.nxml (paper_id PMC1)", "empty abstract and main text"),
        ("b.nxml (paper_id PMC1)", "duplicate paper_id"),
    ]
    assert report.summary() == (
        "read 1 paper; skipped 3 (1 empty paper_id, 1 empty abstract and main text, "
        "1 duplicate paper_id)"
    )
