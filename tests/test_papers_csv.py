"""The papers CSV contract: reading, bad input, and the writer's round trip."""

from __future__ import annotations

import csv
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from fastbmrag.errors import InputError
from fastbmrag.papers import (
    Paper,
    ReadReport,
    papers_from_frame,
    parse_medline,
    read_jats,
    read_papers_csv,
    write_papers_csv,
)
from fastbmrag.papers.csv_reader import MAX_CELL_CHARS, split_main_text

DATA = Path(__file__).parent / "data"
PAPERS = DATA / "papers"
BAD = DATA / "bad"


def _write(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_papers_csv_fields_and_extras() -> None:
    report = ReadReport()
    papers = list(read_papers_csv(PAPERS / "papers.csv", report))
    assert [p.paper_id for p in papers] == ["PMC2768302", "10704411", "8454279"]
    assert report.summary() == "read 3 papers"

    full = papers[0]
    jats = read_jats(DATA / "pmc" / "PMC2768302.nxml")
    assert full.paragraphs == jats.paragraphs[:3]  # list literal, one element per paragraph
    assert (
        full.title == "Genomic Promoter Analysis Predicts Functional Transcription Factor Binding"
    )
    assert (full.year, full.weight, full.pmid, full.pmcid) == (2008, 1.5, "19865592", "PMC2768302")
    assert full.doi == "10.1155/2008/369830"
    assert full.journal == "Advances in Bioinformatics"
    assert full.extra == {"mesh_major": "Transcription Factors"}  # empty 'cohort' dropped

    abstract_only = papers[1]
    assert abstract_only.paragraphs == []
    assert abstract_only.year == 2000
    assert abstract_only.weight == 9.6
    assert abstract_only.abstract.startswith("BACKGROUND: Drugs of abuse have a common property")
    assert abstract_only.extra == {"mesh_major": "Dopamine; Drosophila", "cohort": "flies"}

    plain = papers[2]  # newline-separated main_text, year written by pandas as 1993.0
    assert plain.paragraphs == [
        "The patient presented with myasthenia gravis.",
        "Serum reacted with chordoma tissue.",
    ]
    assert plain.year == 1993
    assert plain.weight is None
    assert plain.extra == {}


def test_tsv_aliases_and_case_insensitive_columns() -> None:
    papers = list(read_papers_csv(PAPERS / "papers.tsv"))
    assert [p.paper_id for p in papers] == ["15320745", "10704411"]
    assert papers[0].title == "Retracted: Effects of Vitamin K2 on Osteoporosis"
    assert papers[0].authors == "Jun Iwamoto; Tsuyoshi Takeda; Yoshihiro Sato"
    assert papers[0].year == 2004
    assert papers[1].abstract.split("\n")[1].startswith("RESULTS: We present evidence")


def test_missing_columns_raise_at_call_naming_them() -> None:
    with pytest.raises(InputError) as info:
        read_papers_csv(BAD / "missing_columns.csv")  # raises before any iteration
    assert str(info.value) == (
        "missing_columns.csv: no abstract or main_text column "
        "(columns found: 'paper_id', 'title', 'summary'): a papers CSV needs at least one of them"
    )


def test_empty_file_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^empty\.csv: the file is empty; a papers CSV starts"):
        read_papers_csv(BAD / "empty.csv")
    with pytest.raises(InputError, match=r"nope\.csv: cannot open"):
        read_papers_csv(tmp_path / "nope.csv")


def test_duplicates_and_empty_rows_are_skipped_and_reported() -> None:
    report = ReadReport()
    papers = list(read_papers_csv(BAD / "duplicate_ids.csv", report))
    assert [p.paper_id for p in papers] == ["10704411", "8454279"]
    assert papers[0].abstract.startswith("BACKGROUND: Drugs of abuse")  # the first one is kept
    assert report.skipped == [
        ("duplicate_ids.csv row 4 (paper_id 10704411)", "duplicate paper_id"),
        ("duplicate_ids.csv row 5 (paper_id empty-1)", "empty abstract and main text"),
    ]
    assert report.duplicates == ["10704411"]
    assert report.summary() == (
        "read 2 papers; skipped 2 (1 duplicate paper_id, 1 empty abstract and main text)"
    )


def test_malformed_list_literal_is_read_as_text() -> None:
    report = ReadReport()
    papers = list(read_papers_csv(BAD / "malformed_list.csv", report))
    assert papers[0].paragraphs == [
        "['Dopamine modulates cocaine responses.', 'Flies were tested in a startle assay."
    ]
    assert papers[1].paragraphs == ["fine", "list"]
    assert report.repaired == [
        (
            "malformed_list.csv row 2 (paper_id 10704411)",
            "main_text not a valid list literal, read as plain text",
        )
    ]
    assert "repaired 1 (1 main_text not a valid list literal" in report.summary()


def test_latin1_byte_is_replaced_and_reported() -> None:
    report = ReadReport()
    papers = list(read_papers_csv(BAD / "latin1.csv", report))
    assert [p.paper_id for p in papers] == ["10704411", "8454279"]
    assert papers[0].abstract == "Schr\ufffddinger's fly: dopamine and cocaine responses"
    assert report.decode_errors == ["latin1.csv line 2"]
    assert report.summary() == (
        "read 2 papers; replaced undecodable bytes on 1 line (save the file as UTF-8)"
    )


def test_enormous_rows(tmp_path: Path) -> None:
    big = ["x" * 999 + str(i % 10) for i in range(2_000)]  # 2 MB cell, 16x csv's default limit
    giant = "y" * (MAX_CELL_CHARS + 1)
    path = _write(
        tmp_path / "enormous.csv",
        ["paper_id", "abstract", "main_text"],
        [["big", "An abstract.", repr(big)], ["giant", giant, ""], ["after", "Still read.", ""]],
    )
    del giant
    report = ReadReport()
    papers = list(read_papers_csv(path, report))
    assert [p.paper_id for p in papers] == ["big", "after"]
    assert papers[0].paragraphs == big
    assert report.skipped == [
        (
            "enormous.csv row 3 (paper_id giant)",
            "cell too large: a cell of 10,000,001 characters exceeds the 10,000,000 limit "
            "(check for an unbalanced quote)",
        )
    ]


def test_pandas_artifacts_and_repairs(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "pandas.csv",
        ["", "paper_id", "abstract", "main_text", "pmid", "year", "weight", "Unnamed: 0", "mesh"],
        [
            ["0", "p1", "Abstract one.", "", "10704411.0", "2000.0", "nan", "7", "NaN"],
            ["1", "p2", "Abstract two.", "", "", "in press", "high", "8", "Dopamine"],
            ["2", "p3", "Abstract three."],
        ],
    )
    report = ReadReport()
    papers = list(read_papers_csv(path, report))
    assert [(p.paper_id, p.pmid, p.year, p.weight, p.extra) for p in papers] == [
        ("p1", "10704411", 2000, None, {}),
        ("p2", "", None, None, {"mesh": "Dopamine"}),
        ("p3", "", None, None, {}),
    ]
    assert report.repaired == [
        ("pandas.csv row 3 (paper_id p2)", "year not a whole number from 1800 to 2100, left empty"),
        ("pandas.csv row 3 (paper_id p2)", "weight not a number, left empty"),
        ("pandas.csv row 4 (paper_id p3)", "row length differs from the header"),
    ]


def test_missing_paper_id_is_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path / "noid.csv", ["paper_id", "abstract", "main_text"], [["", "Text.", ""]])
    report = ReadReport()
    assert list(read_papers_csv(path, report)) == []
    assert report.skipped == [("noid.csv row 2", "empty paper_id")]


@pytest.mark.parametrize(
    ("cell", "paragraphs", "malformed"),
    [
        ("", [], False),
        ("[]", [], False),
        ("['a', \"b's\", '  ']", ["a", "b's"], False),
        ("[\n  'a',\n  'b'\n]", ["a", "b"], False),
        ("['a', ['nested']]", ["['a', ['nested']]"], True),
        ("['a', __import__('os')]", ["['a', __import__('os')]"], True),
        ("['unterminated', 'list", ["['unterminated', 'list"], True),
        (
            "[Results] IL1B rose [1]\n[Methods] ELISA",
            ["[Results] IL1B rose [1]", "[Methods] ELISA"],
            False,
        ),
        ("First line\nsecond line", ["First line", "second line"], False),
        (
            "Wrapped\nline one.\n\nPara two\nwrapped.",
            ["Wrapped line one.", "Para two wrapped."],
            False,
        ),
        ("['" * 100_000, ["['" * 100_000], True),
    ],
)
def test_split_main_text(cell: str, paragraphs: list[str], malformed: bool) -> None:
    assert split_main_text(cell) == (paragraphs, malformed)


def test_reader_streams(tmp_path: Path) -> None:
    """2,000 rows of ~10 KB: memory held while reading stays far below the file's 20 MB."""
    path = tmp_path / "many.csv"
    para = "Interleukin 1 beta is elevated in peritoneal fluid. " * 100
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["paper_id", "abstract", "main_text", "journal"])
        for i in range(2_000):
            writer.writerow([f"p{i}", para, repr([para]), "Fertil Steril"])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        count = 0
        for paper in read_papers_csv(path):
            count += 1
            assert paper.journal == "Fertil Steril"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 2_000
    assert size > 20_000_000
    assert peak < 3_000_000, f"peak {peak:,} bytes while reading a {size:,}-byte file"


def _tricky() -> list[Paper]:
    medline = list(parse_medline(DATA / "medline" / "pubmed21n1298_first50.xml.gz"))[:5]
    jats = read_jats(DATA / "pmc" / "ehp-116-1694.nxml")
    jats.weight = 6.123456789012345
    jats.extra = {"cohort": "fathead minnow", "mesh": "Thyroid Gland"}
    odd = Paper(
        paper_id='odd,id "quoted"',
        abstract='Line one\nline two, with "quotes" and a tab\there; ünïcödé ✓',
        paragraphs=["[Results] It's a 'quoted' [bracket] \\ backslash", "a\r\nwindows line"],
        title="[Not a list]",
        year=1999,
        weight=0.0,
        extra={"cohort": "[1, 2]", "note": "nan-free"},
    )
    return [*medline, jats, odd]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    papers = _tricky()
    out = tmp_path / f"papers{suffix}"
    assert write_papers_csv(iter(papers), out) == len(papers)
    assert list(read_papers_csv(out)) == papers
    with out.open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh, delimiter="\t" if suffix == ".tsv" else ","))
    assert header == [
        "paper_id", "article_title", "abstract", "main_text", "year", "authors", "journal",
        "weight", "pmid", "pmcid", "doi", "design", "organisms", "cohort", "mesh", "note",
    ]  # fmt: skip


def test_round_trip_with_a_late_extra_column(tmp_path: Path) -> None:
    papers = [Paper(paper_id=f"p{i}", abstract=f"Abstract {i}.") for i in range(1_200)]
    papers[1_100].extra = {"late": "column"}
    out = tmp_path / "late.csv"
    assert write_papers_csv(papers, out) == 1_200
    back = list(read_papers_csv(out))
    assert back == papers
    assert back[1_100].extra == {"late": "column"}
    assert not list(tmp_path.glob("*.part*"))


def test_writer_refuses_an_extra_named_like_a_column(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"Paper\.extra key 'Title' .* names a papers CSV column"):
        write_papers_csv(
            [Paper(paper_id="p", abstract="a", extra={"Title": "x"})], tmp_path / "o.csv"
        )
    assert list(tmp_path.iterdir()) == []


def test_papers_from_a_dataframe() -> None:
    frame = pd.read_csv(PAPERS / "papers.csv")  # pandas turns years into floats, empties into NaN
    frame.loc[0, "main_text"] = None
    frame["main_text"] = frame["main_text"].astype(object)
    frame.at[0, "main_text"] = ["[Results] HNF1 and HNF4 bind.", "Second paragraph."]
    report = ReadReport()
    papers = list(papers_from_frame(frame, report))
    assert [p.paper_id for p in papers] == ["PMC2768302", "10704411", "8454279"]
    assert papers[0].paragraphs == ["[Results] HNF1 and HNF4 bind.", "Second paragraph."]
    assert papers[0].pmid == "19865592"
    assert papers[1].paragraphs == []
    assert (papers[1].year, papers[1].weight) == (2000, 9.6)
    assert papers[1].extra == {"mesh_major": "Dopamine; Drosophila", "cohort": "flies"}
    assert papers[2].extra == {}
    assert report.summary() == "read 3 papers"
    with pytest.raises(InputError, match=r"no abstract or main_text column"):
        list(papers_from_frame(frame.drop(columns=["abstract", "main_text"])))
