"""`fastbmrag fetch` against the fake E-utilities server: the papers CSV it writes, exit codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fastbmrag.cli import cli
from fastbmrag.papers import ReadReport, read_papers_csv
from fastbmrag.testing.fake_eutils import FakeEutils

EUTILS = Path(__file__).parent / "data" / "eutils"


@pytest.fixture
def fake() -> Iterator[FakeEutils]:
    with FakeEutils(
        EUTILS / "pubmed21n1298_slice.xml",
        EUTILS / "pubmed-29768149.xml",
        EUTILS / "PMC2774577.nxml",
    ) as server:
        yield server


def invoke(fake: FakeEutils, out: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    base = {
        "FASTBMRAG_EUTILS_URL": fake.url,
        "FASTBMRAG_FULLTEXT_URL": fake.fulltext_url,
        "NCBI_EMAIL": "curator@example.org",
        "NCBI_API_KEY": "test-key",
    }
    base.update(env or {})
    return CliRunner().invoke(
        cli, ["fetch", "--query", "endometriosis[tiab]", "-o", str(out), *extra], env=base
    )


def test_fetch_writes_the_papers_csv(fake: FakeEutils, tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    result = invoke(fake, out)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"Wrote 6 papers to {out}: 6 found, 0 already indexed, 6 fetched (1 with full text)"
    )
    papers = {p.paper_id: p for p in read_papers_csv(out, ReadReport())}
    assert set(papers) == {"32772885", "33155662", "33169800", "33316284", "29768149", "19920991"}
    full = papers["19920991"]
    assert (full.pmid, full.pmcid) == ("19920991", "PMC2774577")
    assert full.paragraphs[0].startswith("[1. Introduction] Life scientists seek")
    assert len(full.paragraphs) > 10
    no_text = papers["33155662"]
    assert no_text.pmcid == "PMC7716714"
    assert no_text.title == "Zoledronic acid impairs oral cancer stem cells by reducing CCL3."
    assert no_text.paragraphs == []
    assert (
        papers["29768149"].title
        == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    )
    assert papers["29768149"].year == 2018


def test_fetch_since_and_max(fake: FakeEutils, tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    result = invoke(fake, out, "--since", "2020-11-07", "--max", "1")
    assert result.exit_code == 0, result.output
    assert [p.paper_id for p in read_papers_csv(out, ReadReport())] == ["33316284"]
    search = fake.requests[0].params
    assert (search["mindate"], search["datetype"], search["retmax"]) == ("2020/11/07", "edat", "1")


def test_fetch_options_override_the_environment(fake: FakeEutils, tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    result = invoke(
        fake,
        out,
        "--email",
        "other@example.org",
        "--no-full-text",
        "--eutils-url",
        fake.url,
        env={"FASTBMRAG_EUTILS_URL": "http://127.0.0.1:9/nowhere"},
    )
    assert result.exit_code == 0, result.output
    assert fake.requests[0].params["email"] == "other@example.org"
    assert fake.count("fulltext") == 0
    assert all(not p.paragraphs for p in read_papers_csv(out, ReadReport()))


def test_fetch_skips_papers_done_in_a_collection(fake: FakeEutils, tmp_path: Path) -> None:
    from fastbmrag.store.collection import Collection

    wd = tmp_path / "wd"
    with Collection.writer(wd, "endo", create=True) as coll:
        coll.commit_paper("33316284", None, [], [])  # done (a paper without relations)
        coll.ledger.mark_failed("33169800", None, "model error")  # failed papers are fetched again
    out = tmp_path / "p.csv"
    result = invoke(fake, out, "--collection", "endo", "--working-dir", str(wd))
    assert result.exit_code == 0, result.output
    assert "6 found, 1 already indexed, 5 fetched" in result.stderr
    assert "33316284" not in fake.efetched_ids()
    assert "33169800" in fake.efetched_ids()


def test_fetch_full_text_failures_exit_1(fake: FakeEutils, tmp_path: Path) -> None:
    fake.fail("fulltext", 400, times=1)  # not retryable: that paper is left out
    out = tmp_path / "p.csv"
    result = invoke(fake, out)
    assert result.exit_code == 1
    assert "Wrote 5 papers" in result.stderr
    assert "1 failed" in result.stderr
    assert "left out" in result.stderr and "HTTP 400" in result.stderr


@pytest.mark.parametrize(
    ("extra", "env", "message"),
    [
        (["--since", "2024/01/01"], {}, "'2024/01/01' does not match the format '%Y-%m-%d'"),
        (["--since", "2024-01-01", "--days", "3"], {}, "Error: Give --since or --days, not both"),
        ([], {"NCBI_EMAIL": ""}, "Error: NCBI asks every E-utilities user for a contact email"),
        ([], {"FASTBMRAG_EUTILS_URL": "eutils.example"}, "is not an http(s) URL"),
    ],
)
def test_fetch_bad_options_exit_2(
    fake: FakeEutils, tmp_path: Path, extra: list[str], env: dict[str, str], message: str
) -> None:
    result = invoke(fake, tmp_path / "p.csv", *extra, env=env)
    assert result.exit_code == 2
    assert message in result.stderr
    assert fake.requests == []
    assert not (tmp_path / "p.csv").exists()


def test_fetch_pubmed_error_exit_2_and_no_partial_file(fake: FakeEutils, tmp_path: Path) -> None:
    fake.fail("efetch", 400)
    out = tmp_path / "p.csv"
    result = invoke(fake, out)
    assert result.exit_code == 2
    assert "Error: PubMed efetch answered HTTP 400" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
