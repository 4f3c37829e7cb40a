"""Settings and options at every door: a malformed URL in any setting, a number out of its range
or not a number at all, is one line naming the setting and exit 2 (HTTP 400 on the page), never
an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from doors_support import page

from fastbmrag.api import RAG
from fastbmrag.cli import cli

PAPERS = Path(__file__).parent / "data" / "query" / "papers.csv"
BAD_URL = "http://[::1"


def one_line_error(result: object, *words: str) -> None:
    """Exit 2 and one line of error (after click's usage lines, for an option's value)."""
    code, output = result.exit_code, result.output  # type: ignore[attr-defined]
    assert code == 2, output
    lines = output.strip().splitlines()
    assert "Traceback" not in output and lines[-1].startswith("Error:"), output
    assert len(lines) == 1 or lines[0].startswith("Usage:"), output
    for w in words:
        assert w in lines[-1], lines[-1]


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["update", "-c", "x", str(PAPERS)], {"OLLAMA_HOST": BAD_URL}, "OLLAMA_HOST"),
        (["update", "-c", "x", "--ollama-host", BAD_URL, str(PAPERS)], {}, "--ollama-host"),
        (["update", "-c", "x", "--llm-backend", "openai", "--openai-base-url", "http://h:port",
          str(PAPERS)], {}, "--openai-base-url"),  # fmt: skip
        (["update", "-c", "x", str(PAPERS)],
         {"FASTBMRAG_PUBTATOR": "1", "FASTBMRAG_PUBTATOR_URL": BAD_URL},
         "FASTBMRAG_PUBTATOR_URL"),  # fmt: skip
        (["fetch", "--query", "IL1B", "-o", "out.xml", "--email", "a@b.org", "--eutils-url",
          BAD_URL], {},
         "--eutils-url"),  # fmt: skip
        (["query", "IL1B?", "--qdrant-url", BAD_URL], {}, "--qdrant-url"),
    ],
)
def test_a_malformed_url_in_any_setting_is_one_line(
    tmp_path: Path, args: list[str], env: dict[str, str], named: str
) -> None:
    result = CliRunner().invoke(cli, args, env=env)
    one_line_error(result, named, "is not an http(s) URL")


def test_numbers_beyond_their_range_or_not_numbers_are_refused(tmp_path: Path) -> None:
    huge = CliRunner().invoke(cli, ["query", "IL1B?", "--top-k", "99999999999999999999"])
    one_line_error(huge, "--top-k")
    nan = CliRunner().invoke(cli, ["update", "-c", "x", "--wait", "nan", str(PAPERS)])
    one_line_error(nan, "--wait must be seconds from 0 to 3,600, got nan")


def test_the_page_refuses_a_top_k_beyond_its_range(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    client = page(RAG(tmp_path, "c"))
    for value in (10**23, 1e23, 0):
        r = client.post("/api/query", json={"question": "IL1B?", "top_k": value})
        assert r.status_code == 400, r.text
        assert "top_k" in r.json()["error"] or "--top-k" in r.json()["error"]


def test_a_collection_name_a_working_dir_file_takes_is_refused() -> None:
    for name in ("llm_cache.sqlite-wal", "pubtator_cache.sqlite", "x.SQLITE-shm", "logs"):
        result = CliRunner().invoke(cli, ["update", "-c", name, str(PAPERS)])
        one_line_error(result, repr(name))


def test_one_path_given_as_a_string_is_one_path(tmp_path: Path) -> None:
    from fastbmrag import PaperFiles

    files = PaperFiles(str(PAPERS))
    assert files.inputs == (str(PAPERS),)
    assert files.read().read == 5  # the five papers of the file, not one per character
    assert PaperFiles(PAPERS).inputs == (PAPERS,)


def test_markdown_escapes_the_markup_of_paper_fields() -> None:
    from fastbmrag.query.result import EdgeResult, QueryResult, render_markdown

    edge = EdgeResult(1, "e1", 0.5, 0.5, {"source": "IL1B", "relationship_type": "causes",
                      "target": "<img src=x onerror=alert(1)>", "paper_id": "P<b>1</b>",
                      "year": 2020})  # fmt: skip
    ref = {"citations": [1], "paper_id": "P1", "title": "<script>alert(1)</script> IL1B",
           "journal": "J & <i>K</i>", "year": 2020}  # fmt: skip
    result = QueryResult("IL1B <b>?</b>", "c", "IL1B <script>x</script> [1].", [ref], [edge],
                         {}, {}, {}, {}, {})  # fmt: skip
    out = render_markdown(result)
    assert "<" not in out.replace("&lt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; IL1B" in out and "J &amp; &lt;i&gt;K" in out


def test_the_python_api_checks_what_the_command_line_checks(tmp_path: Path) -> None:
    from fastbmrag.errors import InputError

    rag = RAG(tmp_path, "c")
    for options, named in (
        ({"concurrency": 0}, "concurrency must be a whole number from 1 to 1,024"),
        ({"top_k": 100}, "top_k must be a whole number from 1 to 20"),
        ({"chunk_chars": 10}, "chunk_chars must be a whole number from 200 to 20,000"),
        ({"num_predict": 1}, "num_predict must be a whole number from 16"),
        ({"commit_seconds": -5}, "commit_seconds must be seconds, 0 or more"),
        ({"wait": -1}, "wait must be seconds from 0 to 3,600"),
    ):
        with pytest.raises(InputError, match=named):
            rag.insert_paper([{"paper_id": "P1", "abstract": "IL1B rises."}], **options)
    with pytest.raises(InputError, match="no_answer must be True or False, got 'false'"):
        rag.query("IL1B?", no_answer="false")
    for call, named in (
        (lambda: rag.entity(None), "name must be"),  # type: ignore[arg-type]
        (lambda: rag.entity(5), "name must be"),  # type: ignore[arg-type]
        (lambda: rag.path(None, "IL6"), "start must be"),  # type: ignore[arg-type]
        (lambda: rag.contradictions(5), "entity must be"),  # type: ignore[arg-type]
        (lambda: rag.find_entities(None), "text must be"),  # type: ignore[arg-type]
        (lambda: rag.delete(12), "paper_ids must be"),  # type: ignore[arg-type]
        (lambda: rag.delete(None), "paper_ids must be"),  # type: ignore[arg-type]
    ):
        with pytest.raises(InputError, match=named):
            call()


def test_a_stray_nul_anywhere_in_a_csv_is_removed_and_counted(tmp_path: Path) -> None:
    from fastbmrag import ReadReport, iter_papers

    near_the_top = tmp_path / "papers.csv"
    near_the_top.write_bytes(b"paper_id,abstract\nP1,IL1B rises\x00 in endometriosis.\n"
                             b"P2,TNF falls.\n")  # fmt: skip
    report = ReadReport()
    papers = list(iter_papers([near_the_top], report))
    assert [p.abstract for p in papers] == ["IL1B rises in endometriosis.", "TNF falls."]
    assert "1 control characters removed" in report.summary()
    image = tmp_path / "figure.csv"  # NULs among bytes that are no UTF-8: still no CSV
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    report = ReadReport()
    assert list(iter_papers([image], report)) == []
    assert "a binary file, not CSV text" in report.skipped[0][1]


def test_a_csv_column_named_as_a_computed_field_never_replaces_it(tmp_path: Path) -> None:
    import csv

    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,abstract,point_id,source_degree,source\n"
                      "P1,IL1B increased IL6 in endometriosis.,mine,99,my source\n",
                      encoding="utf-8")  # fmt: skip
    wd = str(tmp_path / "wd")
    with FakeOllama(responder=responder) as fake:
        done = CliRunner().invoke(cli, ["update", "-c", "c", "--working-dir", wd,
                                        "--ollama-host", fake.url, str(papers)])  # fmt: skip
    assert done.exit_code == 0, done.output
    out = tmp_path / "edges.csv"
    assert CliRunner().invoke(cli, ["export", "-c", "c", "--working-dir", wd,
                                    "-o", str(out)]).exit_code == 0  # fmt: skip
    header, *rows = list(csv.reader(out.read_text(encoding="utf-8").splitlines()))
    assert rows and header.count("point_id") == 1 and header.count("source_degree") == 1
    row = dict(zip(header, rows[0], strict=True))
    assert row["point_id"] != "mine" and row["source_degree"] != "99"
    assert row["source"] != "my source"
    assert (row["input_point_id"], row["input_source_degree"], row["input_source"]) == (
        "mine", "99", "my source")  # fmt: skip
    edges = RAG(wd, "c").edges()
    assert "mine" not in set(edges["point_id"]) and set(edges["input_point_id"]) == {"mine"}


def test_insert_paper_reports_skipped_rows_and_exits_as_the_command_line(tmp_path: Path) -> None:
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    papers = tmp_path / "papers.csv"  # four rows: one paper, a row with no id, no text, a repeat
    papers.write_text("paper_id,abstract\nP1,IL1B increased IL6 in endometriosis.\n"
                      ",TNF rose.\nP2,\nP1,IL1B again.\n", encoding="utf-8")  # fmt: skip
    wd = str(tmp_path / "wd")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(wd, "c", ollama_host=fake.url)
        summary = rag.insert_paper(str(papers))
        assert summary.read == 1 and summary.exit_code == 0
        assert summary.input["unusable"] == 3 and sum(summary.input["skipped"].values()) == 3
        assert "1 paper read, 3 skipped (3 unusable): 1 indexed" in summary.line()
        assert summary.to_dict()["input"]["skipped"]["duplicate paper_id"] == 1
        strict = rag.insert_paper(str(papers), strict=True)
        assert strict.exit_code == 1 and "(3 unusable; strict: exit 1)" in strict.line()
        cli_run = CliRunner().invoke(cli, ["update", "-c", "c", "--working-dir", wd, "--strict",
                                           "--json", "--ollama-host", fake.url, str(papers)])  # fmt: skip
    assert cli_run.exit_code == 1, cli_run.output
    import json

    out = json.loads(cli_run.stdout)
    assert out["exit_code"] == 1 and out["input"]["unusable"] == 3


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_output_is_named_and_exit_2_and_a_device_stays_a_device(tmp_path: Path) -> None:
    import stat
    import subprocess
    import sys

    def still_a_device() -> bool:
        return stat.S_ISCHR(Path("/dev/full").stat().st_mode)

    papers = str(PAPERS)
    converted = CliRunner().invoke(cli, ["convert", papers, "-o", "/dev/full"])
    assert still_a_device()  # never renamed over: written, and the write failed
    one_line_error(converted, "Cannot create or write /dev/full: No space left on device")
    with open("/dev/full", "w") as full:  # standard output on a device that takes nothing
        for args in (["normalize", "IL6"], ["--help"]):
            done = subprocess.run([sys.executable, "-m", "fastbmrag", *args], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
            assert done.returncode == 2, done.stderr
            assert done.stderr == "Error: Cannot write standard output: No space left on device\n"
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    with FakeOllama(responder=responder) as fake:  # a log file that takes nothing
        logged = CliRunner().invoke(cli, ["update", "-c", "x", "--working-dir", str(tmp_path),
                                          "--ollama-host", fake.url, "--log-file", "/dev/full",
                                          papers])  # fmt: skip
    assert logged.exit_code == 2 and "Traceback" not in logged.output, logged.output
    last = logged.output.strip().splitlines()[-1]
    assert last.startswith("Error: Cannot create or write /dev/full: No space left on device")
    kept = tmp_path / "kept.csv"  # a regular file is still replaced whole, or not at all
    assert CliRunner().invoke(cli, ["convert", papers, "-o", str(kept)]).exit_code == 0
    assert kept.read_text(encoding="utf-8").startswith("paper_id,")


def test_an_option_s_error_is_said_in_the_words_of_the_door_that_took_it(tmp_path: Path) -> None:
    from fastbmrag.errors import InputError

    at_cli = CliRunner().invoke(cli, ["update", "-c", "x", "--min-similarity", "nan",
                                      str(PAPERS)])  # fmt: skip
    one_line_error(at_cli, "--min-similarity must be a cosine similarity from -1 to 1, got nan")
    with pytest.raises(InputError, match="^min_similarity must be a cosine similarity") as raised:
        RAG(tmp_path, "c").insert_paper(str(PAPERS), min_similarity=float("nan"))
    assert raised.value.field == "min_similarity"
    served = page(RAG(tmp_path, "c"), "127.0.0.1")
    said = served.post("/api/query", json={"question": "IL1B?", "min_score": 2})
    assert said.status_code == 400
    assert said.json()["error"].startswith("'min_score' must be a cosine similarity")
    at_update = CliRunner().invoke(cli, ["update", "-c", "x", "--chunk-size", "200",
                                         "--chunk-overlap", "300", str(PAPERS)])  # fmt: skip
    one_line_error(at_update, "--chunk-overlap 300 must be smaller than the chunk size, 200")


def test_a_library_message_names_an_option_as_the_door_that_said_it(tmp_path: Path) -> None:
    from fastbmrag.errors import CollectionNotFound

    (tmp_path / "other").mkdir()
    at_cli = CliRunner().invoke(cli, ["query", "IL1B?", "--working-dir", str(tmp_path), "-c",
                                      "nope", "--no-answer"])  # fmt: skip
    one_line_error(at_cli, "check --collection and --working-dir, or index papers into it")
    with pytest.raises(CollectionNotFound) as raised:
        RAG(tmp_path, "nope").query("IL1B?", no_answer=True)
    assert str(raised.value).endswith("check collection and working_dir, or index papers into it")
    assert raised.value.args[0].isprintable() and raised.value.options == (
        "collection", "working_dir")
