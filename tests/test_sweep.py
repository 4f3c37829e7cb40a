"""What a user does that used to break something: control characters in papers, formulas in
exported cells, escape sequences in a terminal, odd values through the Python API, reserved
collection names, NaN options, overlong names. Each through the CLI or the API, asserting the
exit code, the one-line message and the state on disk."""

from __future__ import annotations

import csv
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doors_support import cli_run as run
from doors_support import page
from lxml import etree

from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title

ABSTRACT = (
    "Endometriosis is a chronic inflammatory disease. We measured IL1B in peritoneal fluid from "
    "62 women with endometriosis\x0c and 40 controls, and IL1B levels rose with disease stage."
)
TITLE = '=HYPERLINK("http://x.test","IL1B\x01 in endometriosis") \x1b]0;owned\x07'


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=responder) as server:
        yield server


@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    """A collection of one paper whose title and abstract hold control characters and a
    spreadsheet formula, as PDF-extracted text and hostile titles do."""
    wd = tmp_path_factory.mktemp("dirty")
    papers = wd / "papers.csv"
    with open(papers, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "article_title", "abstract", "year", "pmid"])
        w.writerow(["P1", TITLE, ABSTRACT, "2020", "90000001"])
    result = run("update", "-c", "demo", "--working-dir", str(wd), "--ollama-host", fake.url,
                 str(papers))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "repaired 1 (4 control characters removed)" in result.output
    return wd


# --- 6, 20, 22: control characters, formulas, escape sequences -------------------------------


def test_control_characters_are_removed_when_a_paper_is_read_and_graphml_exports(
    dirty: Path,
) -> None:
    out = dirty / "graph.graphml"
    result = run("export", "-c", "demo", "--working-dir", str(dirty), "-o", str(out))
    assert result.exit_code == 0, result.output
    titles = {
        d.text
        for d in etree.parse(str(out)).iter("{http://graphml.graphdrawing.org/xmlns}data")
        if d.get("key") == "e_title"
    }
    assert titles == {'=HYPERLINK("http://x.test","IL1B in endometriosis") ]0;owned'}


def test_csv_export_neutralises_formula_cells_unless_raw(dirty: Path) -> None:
    out = dirty / "edges.csv"
    assert run("export", "-c", "demo", "--working-dir", str(dirty), "-o", str(out)).exit_code == 0
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert rows and all(r["title"].startswith("'=HYPERLINK(") for r in rows)
    raw = dirty / "raw.csv"
    result = run("export", "-c", "demo", "--working-dir", str(dirty), "-o", str(raw), "--raw")
    assert result.exit_code == 0, result.output
    raw_rows = csv.DictReader(raw.read_text(encoding="utf-8").splitlines())
    assert all(r["title"].startswith("=HYPERLINK(") for r in raw_rows)


def test_no_escape_sequence_reaches_the_terminal(dirty: Path, fake: FakeOllama) -> None:
    result = run("query", "What is the role of IL1B in endometriosis?", "-c", "demo",
                 "--working-dir", str(dirty), "--ollama-host", fake.url, "--min-score", "-1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "IL1B" in result.stdout and "References" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_a_file_name_prints_with_its_escape_sequences_written_out(tmp_path: Path) -> None:
    (tmp_path / "a\x1b]0;title\x07b.nxml").write_text("not XML", encoding="utf-8")
    (tmp_path / "c\x1b[31mred.nxml").write_text("not XML", encoding="utf-8")
    result = run("convert", str(tmp_path), "-o", str(tmp_path / "out.csv"))
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "a\\x1b]0;title\\x07b.nxml: unreadable file" in result.stderr
    assert "c\\x1b[31mred.nxml: unreadable file" in result.stderr
    named = run("export", "-c", "x", "--working-dir", str(tmp_path), "-o", "q\x1b]0;t\x07")
    assert named.exit_code == 2 and "q\\x1b]0;t\\x07" in named.stderr, named.output


# --- 7, 16: the Python API validates like the CLI -------------------------------------------


def test_the_python_api_takes_one_id_as_a_string_and_refuses_what_it_cannot_read(
    dirty: Path, tmp_path: Path
) -> None:
    from fastbmrag.api import RAG
    from fastbmrag.errors import InputError

    rag = RAG(dirty, "demo")
    with pytest.raises(InputError, match="None of the paper ids \\(P1x\\)"):
        rag.delete("P1x")  # one id: not "P", "1", "x"
    with pytest.raises(InputError, match="No such file or directory: /nonexistent.csv"):
        rag.insert_paper("/nonexistent.csv")
    with pytest.raises(InputError, match="Papers must be a papers-CSV path"):
        rag.insert_paper([1, 2])
    with pytest.raises(InputError, match="The question must be text, got NoneType"):
        rag.query(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="since must be a year from 1800 to 2100.*'2015'"):
        rag.edges(since="2015")
    with pytest.raises(InputError, match="Unknown option 'sincee'"):
        rag.edges(sincee=2015)
    empty = rag.edges(pmids=["123"])
    assert empty.empty and {"point_id", "paper_id", "source", "target", "weight"} <= set(
        empty.columns
    )
    with pytest.raises(InputError, match="Invalid collection name '../x'"):
        RAG(tmp_path, "../x")
    with pytest.raises(InputError, match="concurrency must be a whole number from 1 to 1,024"):
        RAG(tmp_path, "x", concurrency=-1)


def test_a_list_of_dicts_is_papers_too(tmp_path: Path, fake: FakeOllama) -> None:
    from fastbmrag.api import RAG

    rag = RAG(tmp_path, "dicts", ollama_host=fake.url)
    summary = rag.insert_paper([{"paper_id": "D1", "article_title": "IL1B in endometriosis",
                                 "abstract": ABSTRACT}])  # fmt: skip
    assert summary.indexed == 1
    assert set(rag.edges()["paper_id"]) == {"D1"}


# --- 8: reserved collection names -----------------------------------------------------------


@pytest.mark.parametrize("name", ["vocab", "logs", "Vocab"])
def test_the_working_dir_s_own_folders_are_no_collection_names(tmp_path: Path, name: str) -> None:
    result = run("update", "-c", name, "--working-dir", str(tmp_path), "--dry-run",
                 str(Path(__file__).parent / "data" / "query" / "papers.csv"))  # fmt: skip
    assert result.exit_code == 2
    assert f"The collection name '{name}' is taken by the working dir's own" in result.output
    assert not (tmp_path / name).exists()


def test_a_file_of_the_working_dir_is_no_collection(tmp_path: Path, fake: FakeOllama) -> None:
    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,abstract\nP1,IL1B in endometriosis.\n", encoding="utf-8")
    result = run("update", "-c", "papers.csv", "--working-dir", str(tmp_path), "--ollama-host",
                 fake.url, str(papers))  # fmt: skip
    assert result.exit_code == 2  # one line, and the file is left as it was
    assert "papers.csv: Not a directory" in result.output and len(result.output.splitlines()) == 1
    assert papers.read_text(encoding="utf-8").startswith("paper_id,abstract")


# --- 14, 18: NaN and nonsense refused --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--min-score", "nan"],
            "--min-score must be a cosine similarity from -1 to 1, got nan",
        ),
        (["--min-weight", "nan"], "--min-weight must be a number from 0 to 1, got nan"),
        (["--pmid", "abc"], "--pmid: 'abc' is no PubMed id (digits only: 24111943)"),
        (["--since", "-5"], "--since must be a year from 1800 to 2100 (e.g. 2015), got -5"),
    ],
)
def test_nonsense_query_options_are_bad_options(
    dirty: Path, fake: FakeOllama, args: list[str], message: str
) -> None:
    result = run("query", "IL1B", "-c", "demo", "--working-dir", str(dirty), "--ollama-host",
                 fake.url, *args)  # fmt: skip
    assert result.exit_code == 2
    assert message in result.output


def test_nan_min_similarity_is_refused_before_anything_runs(tmp_path: Path) -> None:
    result = run("update", "-c", "demo", "--working-dir", str(tmp_path), "--min-similarity",
                 "nan", str(Path(__file__).parent / "data" / "query" / "papers.csv"))  # fmt: skip
    assert result.exit_code == 2
    assert "--min-similarity must be a cosine similarity from -1 to 1, got nan" in result.output
    assert not (tmp_path / "demo").exists()


def test_a_csv_pmid_that_is_no_pubmed_id_is_left_empty_and_said(tmp_path: Path) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,abstract,pmid\nP1,IL1B.,notapmid\nP2,IL6.,PMID:123\n",
                      encoding="utf-8")  # fmt: skip
    report = ReadReport()
    read = {p.paper_id: p.pmid for p in iter_papers([papers], report)}
    assert read == {"P1": "", "P2": "PMID:123"}
    assert report.repaired == [
        ("papers.csv row 2 (paper_id P1)", "pmid not a PubMed id (digits), left empty")
    ]


# --- 19: names past the model's length -------------------------------------------------------


def test_a_name_past_the_model_s_length_is_refused_at_once() -> None:
    result = run("normalize", "a" * 1000)
    assert result.exit_code == 2
    assert (
        "A name of 1,000 characters" in result.output and "at most 120 characters" in result.output
    )


# --- 21, 27: the web server's Host check, JSON bodies, strict types --------------------------


def test_the_page_answers_only_its_own_host_json_bodies_and_strict_types(dirty: Path) -> None:
    from starlette.testclient import TestClient

    from fastbmrag.api import RAG
    from fastbmrag.web import MAX_BODY, create_app

    app = create_app(RAG(dirty, "demo"), allowed_hosts=["127.0.0.1", "localhost"])
    local = TestClient(app, base_url="http://127.0.0.1:8000")
    assert local.get("/api/status").status_code == 200
    rebound = TestClient(app, base_url="http://evil.example:8000")  # DNS rebinding
    assert rebound.get("/api/status").status_code == 400
    # a cross-site "simple" POST (text/plain) starts no work
    r = local.post("/api/query", content=json.dumps({"question": "IL1B?"}),
                   headers={"Content-Type": "text/plain"})  # fmt: skip
    assert r.status_code == 400 and "Content-Type: application/json" in r.json()["error"]
    big = json.dumps({"question": "IL1B?", "journals": ["x" * 900] * 100})
    assert len(big) > MAX_BODY
    r = local.post("/api/query", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "over 64 KB" in r.json()["error"]
    for body, error in [
        ({"question": "IL1B?", "all": "yes"}, "'all' must be true or false, got 'yes'"),
        ({"question": "IL1B?", "top_k": 1e9}, "'top_k' must be a whole number"),
        ({"question": "IL1B?", "top_k": 0}, "'top_k' must be a whole number from 1 to 100,000"),
        ({"question": "IL1B?", "since": 1500}, "'since' must be a year from 1800 to 2100"),
    ]:
        r = local.post("/api/query", json=body)
        assert r.status_code == 400 and error in r.json()["error"], r.json()
        assert "--" not in r.json()["error"]  # the API's field names, not the CLI's flags


# --- 1-4: model servers that fail, drop or hang stop the run ----------------------------------


def _papers(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "papers.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "article_title", "abstract"])
        for i in range(n):
            w.writerow([f"P{i}", f"IL1B in endometriosis {i}", f"IL1B rose in endometriosis {i}."])
    return path


def test_a_server_that_drops_every_chat_stops_the_run_and_keeps_what_was_done(
    tmp_path: Path,
) -> None:
    papers = _papers(tmp_path, 30)
    wd = tmp_path / "wd"
    with FakeOllama(responder=responder) as server:
        server.set_fault_rates(drop=1.0)  # tags and embeddings answer, every chat is cut off
        started = time.monotonic()
        result = run("update", "-c", "demo", "--working-dir", str(wd), "--ollama-host",
                     server.url, "--concurrency", "1", "--json", str(papers))  # fmt: skip
        took = time.monotonic() - started
        chats = server.counts["/api/chat"]
    assert result.exit_code == 2, result.output
    assert (
        f"Error: The model server at {server.url} failed 3 requests in a row (connection error"
    ) in result.stderr
    stopped = json.loads(result.stdout)  # --json: the summary of the run that stopped
    assert stopped["exit_code"] == 2 and stopped["indexed"] == 0 and stopped["read"] >= 3
    assert stopped["stopped"].startswith("The model server") and stopped["input"]["read"] == 30
    assert chats == 3 * 4  # three papers' calls, each sent once and retried three times
    assert took < 30
    status = run("status", "-c", "demo", "--working-dir", str(wd), "--json")
    assert json.loads(status.stdout)["papers"]["done"] == 0  # nothing half-written


def test_a_pool_drops_a_failing_server_once_and_goes_on_with_the_other(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    papers = _papers(tmp_path, 12)
    with FakeOllama(responder=responder) as bad, FakeOllama(responder=responder) as good:
        bad.set_fault_rates(drop=1.0)
        result = run("update", "-c", "demo", "--working-dir", str(tmp_path / "wd"),
                     "--ollama-host", f"{bad.url},{good.url}", "--json", str(papers))  # fmt: skip
        bad_chats = bad.counts["/api/chat"]
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["indexed"] == 12
    dropped = [r.getMessage() for r in caplog.records if "going on without it" in r.getMessage()]
    assert len(dropped) == 1 and bad.url in dropped[0]
    assert bad_chats <= 4 * 4  # its requests in flight when it failed the third time, no more


def test_a_question_against_a_hung_server_is_named_within_the_preflight_bound(
    dirty: Path,
) -> None:
    with FakeOllama(responder=responder, hang_seconds=60) as hung:
        hung.set_fault_rates(hang=1.0)  # tags answer; every chat and embedding hangs
        started = time.monotonic()
        # a question not asked before: nothing of it is in the response cache
        result = run("query", "Does IL1B rise with the stage of endometriosis?", "-c", "demo",
                     "--working-dir", str(dirty), "--ollama-host", hung.url,
                     env={"FASTBMRAG_PREFLIGHT_TIMEOUT": "1"})  # fmt: skip
        took = time.monotonic() - started
    assert result.exit_code == 2
    assert f"on {hung.url} failed: no answer within 1 s" in result.output
    assert len(result.output.strip().splitlines()) == 1 and took < 10


# --- 11: a name the model typed wrongly --------------------------------------------------------


def test_a_name_the_model_typed_wrongly_takes_the_type_the_vocabularies_give(
    tmp_path: Path, fake: FakeOllama
) -> None:
    papers = tmp_path / "papers.csv"
    papers.write_text(
        "paper_id,article_title,abstract\n"
        'C1,IL6 in COVID-19,"COVID-19 raised IL6 in 40 patients with a lung infection."\n',
        encoding="utf-8",
    )
    wd = str(tmp_path / "wd")
    result = run("update", "-c", "demo", "--working-dir", wd, "--ollama-host", fake.url,
                 str(papers))  # fmt: skip
    assert result.exit_code == 0, result.output
    # the fake model types the symbol-like "COVID-19" as a gene; the vocabularies know only a
    # disease of that name
    edges = run("export", "-c", "demo", "--working-dir", wd, "-o", str(tmp_path / "e.csv"))
    assert edges.exit_code == 0
    rows = list(csv.DictReader((tmp_path / "e.csv").read_text(encoding="utf-8").splitlines()))
    covid = [r for r in rows if r["source_raw"] == "COVID-19"]
    assert covid and all(
        (r["source_id"], r["source_type"], r["source_type_from"])
        == ("D000086382", "disease", "vocabulary")
        for r in covid
    )
    assert {r["target_type_from"] for r in rows} == {"model"}
    card = run("entity", "COVID-19", "-c", "demo", "--working-dir", wd, "--json")
    assert card.exit_code == 0 and json.loads(card.stdout)["id"] == "D000086382"
    # a node with no id is found by the key the commands print
    other = run("entity", "disease:lung infection", "-c", "demo", "--working-dir", wd, "--json")
    assert other.exit_code == 0, other.output


def test_a_short_form_the_paper_defines_takes_the_type_of_its_long_form(tmp_path: Path) -> None:
    def typed_other(request: dict[str, Any]) -> dict[str, Any] | str:
        if schema_title(request) == "Draft":  # a model that types the short form "other"
            return {"e": [[1, "RVF", "other"], [2, "abortion", "disease"]],
                    "r": [[1, "causes", 2, [2]]]}  # fmt: skip
        return responder(request)

    papers = tmp_path / "papers.csv"
    papers.write_text(
        "paper_id,article_title,abstract\n"
        'R1,Sheep serology,"Rift Valley fever (RVF) is a viral zoonosis. RVF caused abortion in '
        'sheep."\n',
        encoding="utf-8",
    )
    wd = str(tmp_path / "wd")
    with FakeOllama(responder=typed_other) as fake:
        result = run("update", "-c", "demo", "--working-dir", wd, "--ollama-host", fake.url,
                     str(papers))  # fmt: skip
        assert result.exit_code == 0, result.output
        # no vocabulary knows "RVF" as a term; the paper defines it as a disease's name
        out = tmp_path / "e.csv"
        assert run("export", "-c", "demo", "--working-dir", wd, "-o", str(out)).exit_code == 0
        rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
        assert [(r["source_raw"], r["source_id"], r["source_type"], r["source_type_from"])
                for r in rows] == [("RVF", "D012295", "disease", "vocabulary")]  # fmt: skip
        # so a question that names the disease finds it, rather than "no evidence"
        asked = run("query", "Rift Valley fever", "-c", "demo", "--working-dir", wd,
                    "--ollama-host", fake.url, "--no-answer")  # fmt: skip
    assert asked.exit_code == 0 and "No evidence" not in asked.output, asked.output
    assert "RVF" in asked.output


# --- 15, 24: --strict, the skip report, the JSON input section ----------------------------


def test_strict_counts_unusable_input_not_citations_without_an_abstract(
    tmp_path: Path, fake: FakeOllama
) -> None:
    papers = tmp_path / "papers.xml"  # 25 citations without an abstract, as MEDLINE has them
    papers.write_text(
        "<PubmedArticleSet>"
        + "".join(_citation(str(1000 + i), 1, "").replace("<Abstract><AbstractText>"
                  "</AbstractText></Abstract>", "") for i in range(25))
        + _citation("2000", 1, "IL1B rose in endometriosis.")
        + "</PubmedArticleSet>",
        encoding="utf-8",
    )  # fmt: skip
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"\x00\x01 not xml at all")
    log = tmp_path / "run.log"
    args = ["update", "-c", "demo", "--working-dir", str(tmp_path / "wd"), "--ollama-host",
            fake.url, "--log-file", str(log)]  # fmt: skip
    result = run(*args, "--strict", str(papers))
    assert result.exit_code == 0, result.output  # 25 citations without text are no defect
    logged = log.read_text(encoding="utf-8")
    assert logged.count("1 paper read, 25 skipped:") == 1  # the summary once
    assert logged.count("skipped papers.xml citation 1 (PMID 1000): no abstract") == 1  # a skip
    result = run(*args, "--strict", "--json", str(papers), str(broken))
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["exit_code"] == 1  # the process's
    assert out["input"]["unusable"] == 1 and out["input"]["unreadable_files"] == [str(broken)]
    assert out["input"]["skipped"] == {"no abstract": 25, "unreadable file": 1}
    # the unreadable file is listed first, the routine skips after, the rest counted
    lines = [line for line in result.stderr.splitlines() if line.startswith("  ")]
    assert lines[0].startswith(f"  skipped {broken}: unreadable file")
    assert lines[20] == "  ... and 6 more skipped"


# --- 12, 13: MEDLINE versions and deleted citations --------------------------------------------


def _citation(pmid: str, version: int, abstract: str) -> str:
    return (
        f'<PubmedArticle><MedlineCitation><PMID Version="{version}">{pmid}</PMID><Article>'
        f"<Journal><Title>J</Title></Journal><ArticleTitle>IL1B study {pmid}</ArticleTitle>"
        f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract></Article>"
        "</MedlineCitation></PubmedArticle>"
    )


def test_the_latest_medline_version_is_indexed_and_deletions_match_pmids(
    tmp_path: Path, fake: FakeOllama
) -> None:
    medline = tmp_path / "update.xml"
    medline.write_text(
        "<PubmedArticleSet>"
        + _citation("30271887", 1, "IL1B rose in endometriosis (first version).")
        + _citation("30271887", 2, "IL1B fell in endometriosis (corrected version).")
        + _citation("30271888", 1, "IL6 rose in endometriosis.")
        + "</PubmedArticleSet>",
        encoding="utf-8",
    )
    wd = str(tmp_path / "wd")
    common = ["-c", "demo", "--working-dir", wd, "--ollama-host", fake.url]
    csv_papers = tmp_path / "papers.csv"  # a PMC paper as a CSV row, with its PMID
    csv_papers.write_text("paper_id,article_title,abstract,pmid\nPMC3339584,TNF in arthritis,"
                          "TNF rose in arthritis.,22558542\n", encoding="utf-8")  # fmt: skip
    result = run("update", *common, "--json", str(medline), str(csv_papers))
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["indexed"] == 3
    assert out["input"]["skipped"] == {"another version of a PMID the input holds": 1}
    # the skip line names the version left out, not the one indexed
    assert "citation 1 (PMID 30271887 version 1): another version" in result.stderr
    assert "version 2)" not in result.stderr
    # convert keeps the same version
    converted = tmp_path / "converted.csv"
    done = run("convert", str(medline), "-o", str(converted))
    assert done.exit_code == 0, done.output
    assert "citation 1 (PMID 30271887 version 1)" in done.stderr
    kept = {
        r["paper_id"]: r["abstract"]
        for r in csv.DictReader(converted.read_text(encoding="utf-8").splitlines())
    }
    assert kept["30271887"] == "IL1B fell in endometriosis (corrected version)."
    edges = tmp_path / "e.csv"
    assert run("export", "-c", "demo", "--working-dir", wd, "-o", str(edges)).exit_code == 0
    rows = list(csv.DictReader(edges.read_text(encoding="utf-8").splitlines()))
    described = {r["description"] for r in rows if r["paper_id"] == "30271887"}
    assert described and all("(corrected version)" in d for d in described)
    # PubMed deletes 22558542: the PMC paper whose pmid it is goes, and a dry run counts only
    # what the collection holds
    deletions = tmp_path / "deletions.xml"
    deletions.write_text("<PubmedArticleSet><DeleteCitation><PMID>22558542</PMID>"
                         "<PMID>99999999</PMID></DeleteCitation></PubmedArticleSet>",
                         encoding="utf-8")  # fmt: skip
    dry = run("update", *common, "--dry-run", "--json", str(deletions))
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["would_index"] == {"delete": 1}
    result = run("update", *common, "--json", str(deletions))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["deleted"] == 1
    status = json.loads(run("status", "-c", "demo", "--working-dir", wd, "--json").stdout)
    assert status["papers"]["done"] == 2
    # `delete` takes a PMID for the paper whose pmid it is too
    assert run("delete", "-c", "demo", "--working-dir", wd, "30271888").exit_code == 0


# --- 25, 28, 29, 30: wording, accounting, dry runs beside an update, small things -------------


def test_a_dry_run_reads_beside_a_running_update_and_an_empty_collection_asks_no_model(
    tmp_path: Path, fake: FakeOllama
) -> None:
    from fastbmrag.store.collection import Collection

    papers = str(Path(__file__).parent / "data" / "query" / "papers.csv")
    wd = tmp_path / "wd"
    assert run("update", "-c", "demo", "--working-dir", str(wd), "--ollama-host", fake.url,
               papers).exit_code == 0  # fmt: skip
    with Collection.writer(wd, "demo", command="fastbmrag update"):  # an update holds it
        dry = run("update", "-c", "demo", "--working-dir", str(wd), "--dry-run", papers)
    assert dry.exit_code == 0, dry.output
    assert "would index nothing" in dry.output or "5 unchanged" in dry.output
    Collection.writer(wd, "empty", create=True).close()
    fake.reset()
    result = run("query", "What is the role of IL1B in endometriosis?", "-c", "empty",
                 "--working-dir", str(wd), "--ollama-host", fake.url)  # fmt: skip
    assert result.exit_code == 0
    assert "No evidence: the collection 'empty' holds no edges." in result.stdout
    assert fake.counts["/api/chat"] == 0 and fake.counts["/api/embed"] == 0


def test_a_fully_cached_run_reports_no_model_call(tmp_path: Path, fake: FakeOllama) -> None:
    papers = str(Path(__file__).parent / "data" / "query" / "papers.csv")
    args = ["update", "-c", "demo", "--ollama-host", fake.url, "--json", papers]
    assert run(*args, "--working-dir", str(tmp_path / "a")).exit_code == 0
    cached = json.loads(run(*args, "--working-dir", str(tmp_path / "a"), "--force").stdout)
    assert cached["llm"]["embed"]["calls"] == 0  # the preflight's probe is no call of the run
    assert "LLM calls: none; tokens/paper: 0 prompt" in cached["line"]


def test_convert_to_standard_output_is_refused_with_the_fix(tmp_path: Path) -> None:
    papers = str(Path(__file__).parent / "data" / "query" / "papers.csv")
    result = run("convert", papers, "-o", "-")
    assert result.exit_code == 2
    assert "give a path (-o papers.csv)" in result.output
    assert not Path("-").exists()


# --- 9: the page's requests share the store -----------------------------------------------------


def test_a_hundred_page_queries_twenty_at_a_time_get_no_503(dirty: Path, fake: FakeOllama) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from test_web import served_app

    from fastbmrag.api import RAG

    with served_app(RAG(dirty, "demo", ollama_host=fake.url)) as base:

        def ask(i: int) -> int:
            body = {"question": f"What is the role of IL1B in endometriosis ({i})?",
                    "min_score": -1}  # fmt: skip
            return httpx.post(base + "api/query", json=body, timeout=60).status_code

        with ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(ask, range(100)))
    assert codes == [200] * 100
    # the last request done, the store is closed: an update can take it
    from fastbmrag.store.collection import Collection

    with Collection.writer(dirty, "demo", command="fastbmrag update"):
        pass


# --- 10: a nightly update waits for a short reader; status names who holds the store -----------


def test_an_update_waits_for_a_short_reader_and_status_names_the_holder(
    tmp_path: Path, fake: FakeOllama
) -> None:
    import threading

    from fastbmrag.store.collection import Collection

    papers = str(Path(__file__).parent / "data" / "query" / "papers.csv")
    wd = tmp_path / "wd"
    common = ["-c", "demo", "--working-dir", str(wd)]
    assert run("update", *common, "--ollama-host", fake.url, papers).exit_code == 0
    held = threading.Event()
    release = threading.Event()

    def page_query() -> None:
        with Collection.reader(wd, "demo", command="fastbmrag serve"):
            held.set()
            release.wait(10)

    reader = threading.Thread(target=page_query)
    reader.start()
    held.wait(10)
    status = run("status", *common)
    assert "(not opened: held by pid" in status.stdout and "fastbmrag serve" in status.stdout
    threading.Timer(1.0, release.set).start()
    started = time.monotonic()
    result = run("update", *common, "--ollama-host", fake.url, "--force", "--wait", "20", papers)
    reader.join()
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 0.9  # it waited for the reader, then ran


# --- 26: a binary file named .csv, a device as input --------------------------------------------


def test_a_binary_csv_and_a_device_are_named_unreadable_in_plain_words(tmp_path: Path) -> None:
    png = tmp_path / "figure.csv"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    result = run("update", "-c", "x", "--working-dir", str(tmp_path / "wd"), "--dry-run", str(png))
    assert result.exit_code == 2
    assert "figure.csv: unreadable file: a binary file, not CSV text" in result.output
    assert "PNG" not in result.output and "\ufffd" not in result.output
    result = run("update", "-c", "x", "--working-dir", str(tmp_path / "wd"), "--dry-run",
                 "/dev/null")  # fmt: skip
    assert result.exit_code == 2
    assert "/dev/null: unreadable file: not a regular file (a device or a pipe)" in result.output


# --- 5: a full disk is an error, not a SIGBUS ------------------------------------------------------


def test_a_full_volume_is_one_line_and_loses_nothing(
    small_volume: Path, tmp_path: Path, fake: FakeOllama
) -> None:
    import shutil
    import subprocess
    import sys

    papers = str(Path(__file__).parent / "data" / "query" / "papers.csv")
    env = {"FASTBMRAG_HOME": str(small_volume / "home"), "PATH": "/usr/bin:/bin"}

    def cli_run(*args: str) -> subprocess.CompletedProcess[str]:  # a process of its own: no
        return subprocess.run([sys.executable, "-m", "fastbmrag", *args], env=env,  # SIGBUS
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    def fill(leaving: int) -> None:
        free = shutil.disk_usage(small_volume).free
        (small_volume / "filler").write_bytes(b"\0" * (free - leaving))

    # a new collection on a volume with 30 MB free: refused before anything is written
    fill(30 << 20)
    result = cli_run("update", "-c", "demo", "--ollama-host", fake.url, papers)
    assert result.returncode == 2, result.stderr
    assert "MB free and opening collection 'demo' for writing needs about 64 MB" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (small_volume / "home" / "demo").exists()
    # a collection made elsewhere, moved onto the volume, which then fills up: status reads its
    # ledger and says why the store was not opened; a query is one line, exit 2
    built = tmp_path / "built"
    assert run("update", "-c", "demo", "--working-dir", str(built), "--ollama-host", fake.url,
               papers).exit_code == 0  # fmt: skip
    (small_volume / "filler").unlink()
    shutil.copytree(built / "demo", small_volume / "home" / "demo",  # its files' holes kept
                    copy_function=lambda src, dst: subprocess.run(
                        ["cp", "--sparse=always", src, dst], check=True))  # fmt: skip
    fill(4 << 20)
    status = cli_run("status", "-c", "demo")
    assert status.returncode == 0, status.stderr
    assert "5 done" in status.stdout, status.stdout
    assert "(not opened: its volume of" in status.stdout, status.stdout
    query = cli_run("query", "IL1B?", "-c", "demo", "--ollama-host", fake.url)
    assert query.returncode == 2 and len(query.stderr.strip().splitlines()) == 1
    # 16 MB and the holes of the files an open reads in full (a tmpfs allocates them on a read)
    assert re.search(r"MB free and opening collection 'demo' for reading needs about \d+ MB",
                     query.stderr), query.stderr  # fmt: skip
    for args in (["export", "-c", "demo", "-o", str(tmp_path / "e.csv")],
                 ["entity", "IL1B", "-c", "demo"], ["path", "IL1B", "IL6", "-c", "demo"]):  # fmt: skip
        read = cli_run(*args)
        assert read.returncode == 2 and len(read.stderr.strip().splitlines()) == 1, read.stderr
        assert "for reading needs about" in read.stderr, read.stderr
    assert shutil.disk_usage(small_volume).free >= (3 << 20)  # the store did not grow


# --- 30: a name that resolves nowhere, an email that is none ------------------------------------


def test_an_unresolvable_host_is_said_at_once_and_a_bad_email_named(tmp_path: Path) -> None:
    out = str(tmp_path / "x.csv")
    started = time.monotonic()
    result = run("fetch", "--query", "x[tiab]", "--days", "3", "--email", "a@example.org",
                 "--eutils-url", "http://fastbmrag-test.invalid", "-o", out)  # fmt: skip
    assert result.exit_code == 2
    assert "Cannot resolve fastbmrag-test.invalid" in result.output
    assert "not the service" in result.output and time.monotonic() - started < 10
    result = run("fetch", "--query", "x[tiab]", "--days", "3", "--email", "notanemail", "-o", out)
    assert result.exit_code == 2
    assert "'notanemail' is not an email address" in result.output


def test_the_page_says_which_update_holds_the_store_since_when_and_how_far(
    dirty: Path,
) -> None:

    from fastbmrag.api import RAG
    from fastbmrag.store.collection import Collection

    client = page(RAG(dirty, "demo"))
    with Collection.writer(dirty, "demo", command="fastbmrag update") as coll:
        run_id = coll.ledger.runs.start("update", {})
        r = client.post("/api/query", json={"question": "IL1B?"})
        coll.ledger.runs.end(run_id, {})
    assert r.status_code == 503 and r.json()["retry"] is True
    error = r.json()["error"]
    assert error.startswith("`fastbmrag update` is updating collection 'demo' since 20")
    assert re.search(r"\(\d+ papers? committed so far\); the page asks again when it is done$",
                     error)  # fmt: skip
    assert "Qdrant" not in error
