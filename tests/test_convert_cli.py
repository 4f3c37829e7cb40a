"""`fastbmrag convert` through click's CliRunner: exit codes, messages, and the file written."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.papers import read_jats, read_papers_csv

DATA = Path(__file__).parent / "data"
PMC = DATA / "pmc"
SLICE = DATA / "medline" / "pubmed21n1298_first50.xml.gz"
BAD = DATA / "bad"


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["convert", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_convert_pmc_and_medline(tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    code, stdout, stderr = _run(PMC, SLICE, "-o", out)
    assert code == 0
    assert stdout == ""
    assert stderr.splitlines()[-1] == (
        f"read 50 papers; skipped 4 (4 no abstract); listed 20 deleted citations; wrote 50 to {out}"
    )
    assert f"skipped {SLICE.name} citation 25 (PMID 25205585): no abstract" in stderr.splitlines()
    papers = list(read_papers_csv(out))
    assert len(papers) == 50
    by_id = {p.paper_id: p for p in papers}
    assert by_id["PMC2768302"] == read_jats(PMC / "PMC2768302.nxml")  # full text survives
    assert len(by_id["PMC2768302"].paragraphs) == 34
    assert by_id["10704411"].year == 2000
    assert by_id["10704411"].paragraphs == []
    with out.open(encoding="utf-8", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert row["paper_id"] == "PMC2768302"
    assert row["main_text"].startswith("['[1. Background] One of the important challenges")


def test_quiet_keeps_only_the_summary(tmp_path: Path) -> None:
    code, _, stderr = _run(SLICE, "--quiet", "-o", tmp_path / "p.csv")
    assert code == 0
    assert stderr.splitlines() == [
        "read 46 papers; skipped 4 (4 no abstract); listed 20 deleted citations; "
        f"wrote 46 to {tmp_path / 'p.csv'}"
    ]


def test_tsv_output_and_csv_inputs_merge(tmp_path: Path) -> None:
    out = tmp_path / "merged.tsv"
    code, _, stderr = _run(DATA / "papers", "-o", out)
    assert code == 0
    assert "duplicate paper_id" in stderr  # 10704411 is in both papers.csv and papers.tsv
    papers = list(read_papers_csv(out))
    assert [p.paper_id for p in papers] == ["PMC2768302", "10704411", "8454279", "15320745"]
    assert papers[0].extra == {"mesh_major": "Transcription Factors"}
    assert out.read_text(encoding="utf-8").split("\n", 1)[0].split("\t")[-2:] == [
        "mesh_major",
        "cohort",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.nxml", "not well-formed XML (Premature end of data in tag p line 24"),
        ("empty.nxml", "unreadable file: the file is empty"),
        ("junk.xml", "not well-formed XML (Start tag expected, '<' not found"),
        ("not_papers.xml", "root element <catalog> is neither <PubmedArticleSet>"),
        ("missing_columns.csv", "no abstract or main_text column (columns found: 'paper_id'"),
        ("empty.csv", "the file is empty; a papers CSV starts with a header row"),
    ],
)
def test_a_bad_file_alone_converts_nothing(tmp_path: Path, name: str, message: str) -> None:
    out = tmp_path / "papers.csv"
    out.write_text("an earlier output\n", encoding="utf-8")
    code, _, stderr = _run(BAD / name, "-o", out)
    assert code == 2
    lines = stderr.splitlines()
    assert lines[0].startswith(f"skipped {BAD / name}: ")
    assert message in lines[0]
    assert lines[-1] == (
        "Error: nothing converted: read 0 papers; skipped 1 (1 unreadable file); give .csv, "
        ".tsv, .nxml, .nxml.gz, .xml, .xml.gz files whose papers have an abstract or main text"
    )
    assert out.read_text(encoding="utf-8") == "an earlier output\n"  # left untouched


def test_broken_files_are_skipped_not_fatal(tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    code, _, stderr = _run(
        BAD / "truncated.nxml", BAD / "junk.xml", PMC / "ehp-116-1694.nxml", "-o", out
    )
    assert code == 0
    assert stderr.splitlines()[-1] == (
        f"read 1 paper; skipped 2 (2 unreadable file); wrote 1 to {out}"
    )
    assert [p.paper_id for p in read_papers_csv(out)] == ["PMC2599765"]


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        (
            "duplicate_ids.csv",
            "read 2 papers; skipped 2 (1 duplicate paper_id, 1 empty abstract and main text)",
        ),
        (
            "latin1.csv",
            "read 2 papers; replaced undecodable bytes on 1 line (save the file as UTF-8)",
        ),
        (
            "malformed_list.csv",
            "read 2 papers; repaired 1 (1 main_text not a valid list literal, read as plain text)",
        ),
        (
            "truncated_medline.xml.gz",
            "read 20 papers; skipped 1 (1 unreadable file)",
        ),
    ],
)
def test_damaged_inputs_keep_their_good_papers(tmp_path: Path, name: str, summary: str) -> None:
    out = tmp_path / "papers.csv"
    code, _, stderr = _run(BAD / name, "-o", out)
    assert code == 0
    assert stderr.splitlines()[-1].startswith(summary + "; wrote ")
    assert len(list(read_papers_csv(out))) == int(summary.split()[1])


def test_enormous_row(tmp_path: Path) -> None:
    src = tmp_path / "enormous.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["paper_id", "abstract", "main_text"])
        writer.writerow(["huge", "An abstract.", repr(["IL1B " * 200] * 5_000)])  # ~5 MB cell
        writer.writerow(["small", "Another abstract.", ""])
    out = tmp_path / "papers.csv"
    code, _, stderr = _run(src, "-o", out)
    assert code == 0
    assert stderr.splitlines()[-1] == f"read 2 papers; wrote 2 to {out}"
    huge = next(read_papers_csv(out))
    assert len(huge.paragraphs) == 5_000


def test_nothing_matches(tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    code, _, stderr = _run(tmp_path / "nope", str(tmp_path / "*.nxml"), "-o", out)
    assert code == 2
    assert stderr.splitlines()[-1].startswith(
        "Error: nothing converted: read 0 papers; skipped 2 (2 input not found)"
    )
    assert not out.exists()


def test_usage_errors_and_help(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", str(PMC)])
    assert result.exit_code == 2
    assert "Missing option '-o' / '--output'" in result.stderr
    result = CliRunner().invoke(cli, ["convert", "--help"])
    assert result.exit_code == 0
    assert "fastbmrag convert pmc_articles/ 'medline/*.xml.gz' -o papers.csv" in result.output


def test_the_output_as_the_only_input_says_so_and_keeps_it(tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    assert _run(PMC, "-o", out)[0] == 0
    before = out.read_bytes()
    code, _, stderr = _run(out, "-o", out)
    assert code == 2
    assert stderr.strip() == (
        f"Error: Nothing to convert: the only input, {out}, is the output (-o); write to "
        "another file"
    )
    assert out.read_bytes() == before
