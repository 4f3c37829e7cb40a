"""What a new user runs into, tried through the command line: server lists in the environment,
servers that hang or are not model servers, and the other failures a nightly job must survive.
Servers are real sockets started by the tests."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from doors_support import cli_run

from fastbmrag.papers import Paper, write_papers_csv
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder as pipeline_responder

DATA = Path(__file__).parent / "data"


run = functools.partial(cli_run, catch_exceptions=False)


def one_line(text: str) -> str:
    [line] = text.strip().splitlines()
    return line


@pytest.fixture
def papers_csv(tmp_path: Path) -> Path:
    path = tmp_path / "papers.csv"
    papers = [
        Paper(
            paper_id=f"P{i}",
            title=f"IL1B and endometriosis {i}",
            abstract="IL1B is upregulated in endometriosis lesions. "
            "TNF promotes inflammation in endometriosis.",
        )
        for i in range(3)
    ]
    write_papers_csv(papers, path)
    return path


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """A socket that accepts connections and never answers (a hung GPU server's process)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(sock.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        sock.close()


@contextlib.contextmanager
def html_server() -> Iterator[str]:
    """A web server that answers every request with an HTML page (a proxy's login page)."""

    class Handler(BaseHTTPRequestHandler):
        def _page(self) -> None:
            body = b"<!doctype html><html><body>Welcome to nginx!</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _page

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --- 1: a comma-separated OLLAMA_HOST ---------------------------------------------------------


def test_a_server_list_in_ollama_host_works_for_every_command(
    papers_csv: Path, tmp_path: Path
) -> None:
    with (
        FakeOllama(responder=pipeline_responder) as one,
        FakeOllama(responder=pipeline_responder) as two,
    ):
        env = {
            **os.environ,
            "OLLAMA_HOST": f"{one.host},{two.host}",
            "FASTBMRAG_HOME": str(tmp_path / "home"),
        }
        cmd = [sys.executable, "-m", "fastbmrag"]
        update = subprocess.run(
            [*cmd, "update", "-c", "m", "-q", "--json", str(papers_csv)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert update.returncode == 0, update.stderr
        assert json.loads(update.stdout)["indexed"] == 3
        assert one.counts["/api/chat"] + two.counts["/api/chat"] == 3
        query = subprocess.run(
            [*cmd, "query", "-c", "m", "IL1B in endometriosis", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["edges"]


# --- 2: a server that hangs -------------------------------------------------------------------


def test_a_hanging_server_is_named_within_the_preflight_timeout(
    papers_csv: Path, tmp_path: Path
) -> None:
    with silent_server() as url:
        started = time.monotonic()
        result = run(
            "update",
            "-c",
            "m",
            "--ollama-host",
            url,
            str(papers_csv),
            env={"FASTBMRAG_PREFLIGHT_TIMEOUT": "1", "FASTBMRAG_HOME": str(tmp_path / "home")},
        )
        took = time.monotonic() - started
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        f"Error: {url} accepted a request to /api/tags and did not answer within 1 s: the "
        "server hangs; restart it or leave it out"
    )
    assert took < 10
    assert not (tmp_path / "home").exists()


def test_a_server_whose_embeddings_hang_is_left_out_of_a_pool(
    papers_csv: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        FakeOllama(responder=pipeline_responder, hang_seconds=60) as hung,
        FakeOllama(responder=pipeline_responder) as good,
    ):
        hung.set_fault_rates(hang=1.0)  # /api/tags answers, every embedding and chat hangs
        started = time.monotonic()
        result = run(
            "update",
            "-c",
            "m",
            "--ollama-host",
            f"{hung.url},{good.url}",
            "--no-normalize",
            "--json",
            str(papers_csv),
            env={"FASTBMRAG_PREFLIGHT_TIMEOUT": "1"},
        )
        took = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["indexed"] == 3
    assert (
        f"{hung.url} accepted an embedding request and did not answer within 1 s: the server "
        "hangs; restart it or leave it out; going on with the other servers"
    ) in [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert hung.counts["/api/chat"] == 0
    assert took < 15


def test_a_single_server_whose_embeddings_hang_stops_the_run_at_once(
    papers_csv: Path, tmp_path: Path
) -> None:
    with FakeOllama(responder=pipeline_responder, hang_seconds=60) as hung:
        hung.set_fault_rates(hang=1.0)
        result = run(
            "update",
            "-c",
            "m",
            "--ollama-host",
            hung.url,
            str(papers_csv),
            env={"FASTBMRAG_PREFLIGHT_TIMEOUT": "1"},
        )
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        f"Error: {hung.url} accepted an embedding request and did not answer within 1 s: "
        "the server hangs; restart it or leave it out"
    )


def test_a_bad_preflight_timeout_is_a_setting_error(papers_csv: Path) -> None:
    result = run("update", "-c", "m", str(papers_csv), env={"FASTBMRAG_PREFLIGHT_TIMEOUT": "soon"})
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: FASTBMRAG_PREFLIGHT_TIMEOUT='soon' is not a number of seconds: set it to, e.g., 15"
    )


# --- 6: a server that is no model server ------------------------------------------------------


def test_a_web_page_at_ollama_host_is_a_setting_error(papers_csv: Path, tmp_path: Path) -> None:
    with html_server() as url:
        result = run("update", "-c", "m", "--ollama-host", url, str(papers_csv))
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        f"Error: {url}/api/tags did not answer as Ollama does: is {url} an Ollama server? "
        "Set --ollama-host or OLLAMA_HOST to one"
    )


# --- 3: a paper without an abstract -----------------------------------------------------------


def test_a_full_text_without_an_abstract_is_drafted_from_its_opening(tmp_path: Path) -> None:
    import re

    source = (DATA / "pmc" / "PMC2768302.nxml").read_text(encoding="utf-8")
    no_abstract = re.sub(r"<abstract[ >].*?</abstract>", "", source, flags=re.S)
    assert "<abstract" not in no_abstract
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "PMC2768302.nxml").write_text(no_abstract, encoding="utf-8")
    with FakeOllama(responder=pipeline_responder) as fake:
        result = run("update", "-c", "m", "--ollama-host", fake.url, "--json", str(tmp_path / "in"))
        draft = fake.requests_to("/api/chat")[0].json["messages"][-1]["content"]
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 1 and summary["edges"] > 0
    assert summary["drafted_from_main_text"] == 1
    assert "1 paper without an abstract drafted from main text" in summary["line"]
    # the draft read the opening passages, numbered like an abstract, and no more than ~3,000
    # characters of them
    assert "[2] " in draft and 1000 < len(draft) < 4000
    from fastbmrag.store.collection import Collection

    with Collection.reader(tmp_path / "home", "m") as coll:
        edges = [hit.payload for hit in coll.store.scroll()]
    assert edges and all(e["evidence"][0]["where"] == "passage" for e in edges)
    first = edges[0]["evidence"][0]
    assert first["text"] in draft or first["section"]  # evidence is a passage sentence


# --- 4: a lost store --------------------------------------------------------------------------


def test_a_lost_store_is_named_by_every_command_and_update_force_rebuilds_it(
    papers_csv: Path, tmp_path: Path
) -> None:
    import shutil

    wd = tmp_path / "wd"
    with FakeOllama(responder=pipeline_responder) as fake:
        host = ("--ollama-host", fake.url)
        first = run("update", "-c", "m", "--working-dir", str(wd), *host, "--json", str(papers_csv))
        assert first.exit_code == 0, first.output
        edges = json.loads(first.stdout)["edges"]
        assert edges > 0
        shutil.rmtree(wd / "m" / "shard")
        expected = (
            f"Error: Collection 'm' lists {edges:,} edges but its store at {wd / 'm' / 'shard'} "
            f"holds 0: the store was deleted or damaged. Index the papers again (an update with "
            f"--force), or start afresh by removing {wd / 'm'}"
        )
        for args in (
            ("status", "-c", "m", "--working-dir", str(wd)),
            ("query", "-c", "m", "--working-dir", str(wd), *host, "IL1B in endometriosis"),
            ("update", "-c", "m", "--working-dir", str(wd), *host, str(papers_csv)),
            ("export", "-c", "m", "--working-dir", str(wd), "--format", "csv", "-o", "-"),
        ):
            result = run(*args)
            assert result.exit_code == 2, (args, result.output)
            assert one_line(result.stderr) == expected, args
        assert not (wd / "m" / "shard").exists()  # nothing was written by the refused update
        again = run(
            "update",
            "-c",
            "m",
            "--working-dir",
            str(wd),
            *host,
            "--force",
            "--json",
            str(papers_csv),
        )
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["indexed"] == 3
        status = run("status", "-c", "m", "--working-dir", str(wd), "--json")
        assert status.exit_code == 0, status.output
        assert json.loads(status.stdout)["edges"] == edges
        query = run(
            "query", "-c", "m", "--working-dir", str(wd), *host, "--no-answer", "IL1B", "--json"
        )
    assert query.exit_code == 0, query.output
    assert json.loads(query.stdout)["edges"]


# --- 5: bytes that are not UTF-8 ----------------------------------------------------------------


def test_bytes_that_are_not_utf8_in_a_question_are_answered(
    papers_csv: Path, tmp_path: Path
) -> None:
    with FakeOllama(responder=pipeline_responder) as fake:
        env = {**os.environ, "FASTBMRAG_HOME": str(tmp_path / "home"), "OLLAMA_HOST": fake.url}
        first = run("update", "-c", "endo", "--ollama-host", fake.url, str(papers_csv),
                    env={"FASTBMRAG_HOME": str(tmp_path / "home")})  # fmt: skip
        assert first.exit_code == 0, first.output
        result = subprocess.run(
            [sys.executable, "-m", "fastbmrag", "query", "-c", "endo", "--json",
             b"STAT3 \xff\xfe in endometriosis"],
            env=env, capture_output=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    out = json.loads(result.stdout)
    assert out["question"] == "STAT3 \ufffd\ufffd in endometriosis"


def test_a_score_that_is_not_a_number_is_a_bad_option(papers_csv: Path, tmp_path: Path) -> None:
    with FakeOllama(responder=pipeline_responder) as fake:
        assert run("update", "-c", "m", "--ollama-host", fake.url, str(papers_csv)).exit_code == 0
        result = run("query", "-c", "m", "--ollama-host", fake.url, "--min-score", "nan", "IL1B")
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: --min-score must be a cosine similarity from -1 to 1, got nan"
    )


# --- 7: serve ---------------------------------------------------------------------------------


def test_serve_checks_the_collection_and_the_port_before_it_says_it_serves(
    tmp_path: Path,
) -> None:
    from fastbmrag.store.collection import Collection

    result = run("serve", "-c", "nope", "--port", "8123")
    assert result.exit_code == 2
    assert one_line(result.stderr).startswith("Error: No collection 'nope' in ")
    Collection.writer(tmp_path / "home", "m", create=True).close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run("serve", "-c", "m", "--port", str(port))
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        f"Error: Cannot serve on 127.0.0.1:{port}: Address already in use: choose another "
        "--port, or stop the program that uses it"
    )


def test_a_query_with_an_embedding_model_of_another_size_names_the_fix(
    papers_csv: Path, tmp_path: Path
) -> None:
    with FakeOllama(
        responder=pipeline_responder,
        models={"phi4", "mxbai-embed-large", "nomic-embed-text"},
        dims={"mxbai-embed-large": 64, "nomic-embed-text": 32},
    ) as fake:
        assert run("update", "-c", "m", "--ollama-host", fake.url, str(papers_csv)).exit_code == 0
        result = run("query", "-c", "m", "--ollama-host", fake.url, "--embed-model",
                     "nomic-embed-text", "IL1B in endometriosis")  # fmt: skip
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: Collection 'm' holds 64-d vectors but the embedding model gives 32-d vectors: "
        "use the embedding model the collection was built with (--embed-model / "
        "FASTBMRAG_EMBED_MODEL), or index into a new --collection"
    )


# --- 10: papers CSV ------------------------------------------------------------------------------

HEADER = "paper_id,title,abstract,main_text,year\n"


def csv_file(tmp_path: Path, body: str, *, encoding: str = "utf-8") -> Path:
    path = tmp_path / "papers.csv"
    path.write_text(HEADER + body, encoding=encoding)
    return path


def test_an_unbalanced_quote_names_the_rows_it_swallowed(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        'P1,One,"IL1B is raised in endometriosis.,,2019\n'
        "P2,Two,TNF is raised in endometriosis.,,2020\n"
        'P3,Three,IL6 is raised in endometriosis.",,2021\n'
        "P4,Four,VEGF is raised in endometriosis.,,2022\n",
    )
    result = run("update", "-c", "m", "--dry-run", str(path))
    assert result.exit_code == 0, result.output
    assert (
        "  skipped papers.csv row 2 (line 2): unbalanced quote: a quoted cell swallowed lines "
        "3-4; nothing was indexed from them: fix the quote"
    ) in result.stderr.splitlines()
    assert "would index 1 (1 new)" in result.stderr


def test_a_structured_abstract_with_commas_on_its_lines_is_no_unbalanced_quote(
    tmp_path: Path,
) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    path = csv_file(
        tmp_path,
        '34086035,One,"Importance: IL1B in endometriosis.\n'
        "Design, Setting, and Participants: a, cohort, of women.\n"
        'Results: IL1B was raised.",,2021\n'
        "34086036,Two,TNF is raised in endometriosis.,,2022\n",
    )
    report = ReadReport()
    papers = list(iter_papers([path], report))
    assert [p.paper_id for p in papers] == ["34086035", "34086036"]
    assert not report.skipped


def test_a_file_cut_inside_a_quoted_cell_is_an_error(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "P1,One,IL1B is raised in endometriosis.,,2019\n"
        "P2,Two,TNF is raised in endometriosis.,\"['first paragraph', 'second par",
    )
    result = run("update", "-c", "m", "--dry-run", str(path))
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: papers.csv: the file ends inside a quoted cell that starts on line 3: the file "
        "was cut short, or a quote there is unbalanced; fix it and run again"
    )


@pytest.mark.parametrize(
    ("year", "kept"),
    [("2019", 2019), ("2019.0", 2019), ("2019.7", None), ("1e99", None), ("-5", None),
     ("99999", None)],
)  # fmt: skip
def test_years_are_whole_numbers_from_1800_to_2100(tmp_path: Path, year: str, kept: Any) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    path = csv_file(tmp_path, f"P1,One,IL1B is raised in endometriosis.,,{year}\n")
    report = ReadReport()
    [paper] = iter_papers([path], report)
    assert paper.year == kept
    if kept is None:
        assert report.repaired == [
            (
                "papers.csv row 2 (paper_id P1)",
                "year not a whole number from 1800 to 2100, left empty",
            )
        ]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_utf16_and_utf8_with_a_byte_order_mark_are_read(tmp_path: Path, encoding: str) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    path = csv_file(tmp_path, "P1,Interleukin-1β,IL1B is raised in endometriosis.,,2019\n",
                    encoding=encoding)  # fmt: skip
    report = ReadReport()
    [paper] = iter_papers([path], report)
    assert (paper.paper_id, paper.title, paper.year) == ("P1", "Interleukin-1β", 2019)
    assert not report.decode_errors


def test_the_reference_projects_csv_keeps_its_titles(tmp_path: Path) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    path = tmp_path / "demo1.csv"
    path.write_text(
        ",paper_id,year,journal,weight,articletitle,abstract,main_text\n"
        "6011,35012617,2022,Journal of ovarian research,4.0,Predictive factors of endometriosis "
        'progression into ovarian cancer.,"CTNNB1 and HIF1A in endometriosis.","[\'Body.\']"\n',
        encoding="utf-8",
    )
    [paper] = iter_papers([path], ReadReport())
    assert paper.title == "Predictive factors of endometriosis progression into ovarian cancer."
    assert (paper.paper_id, paper.year, paper.weight, paper.extra) == ("35012617", 2022, 4.0, {})


def test_the_reference_projects_csv_without_paper_ids_is_indexed_once(tmp_path: Path) -> None:
    """Its columns exactly (pandas' row index, no paper_id): each row's id is its PMID where it
    has one, else a hash of its title and abstract, the same on the next run."""
    from fastbmrag.papers import ReadReport, iter_papers

    path = tmp_path / "demo1.csv"
    path.write_text(
        ",articletitle,abstract,main_text,weight,journal,year,pmid\n"
        "0,IL1B in endometriosis,IL1B is raised in endometriosis.,\"['IL1B activates NF-kB.']\","
        "4.0,J Test,2019,\n"
        "1,TNF in endometriosis,TNF is raised in endometriosis.,,1.0,J Test,2020,35012617\n",
        encoding="utf-8",
    )
    first, second = iter_papers([path], ReadReport())
    assert first.paper_id.startswith("csv:") and len(first.paper_id) == 20
    assert (first.title, first.paragraphs) == ("IL1B in endometriosis", ["IL1B activates NF-kB."])
    assert second.paper_id == "35012617"
    home = {"FASTBMRAG_HOME": str(tmp_path / "home")}
    with FakeOllama(responder=pipeline_responder) as fake:
        update = ("update", "-c", "ref", "--ollama-host", fake.url, str(path))
        indexed = run(*update, env=home)
        again = run(*update, env=home)
    assert indexed.exit_code == 0, indexed.stderr
    assert "2 papers read: 2 indexed, 0 unchanged" in indexed.stderr
    assert "2 papers read: 0 indexed, 2 unchanged" in again.stderr


def test_a_csv_of_abstracts_needs_no_main_text_column(tmp_path: Path) -> None:
    from fastbmrag.papers import ReadReport, iter_papers

    path = tmp_path / "abstracts.csv"
    path.write_text("paper_id,title,abstract\nP1,IL1B,IL1B is raised.\n", encoding="utf-8")
    [paper] = iter_papers([path], ReadReport())
    assert (paper.paper_id, paper.abstract, paper.paragraphs) == ("P1", "IL1B is raised.", [])


# --- 11: status after a run that stopped ------------------------------------------------------


@pytest.mark.parametrize(("signame", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_status_after_ctrl_c_says_the_run_was_interrupted(
    papers_csv: Path, tmp_path: Path, signame: str, code: int
) -> None:
    # Ctrl-C, and the signals systemd, `timeout` or a closed terminal send, alike
    import signal

    home = tmp_path / "home"
    with FakeOllama(responder=pipeline_responder, latency=0.5) as fake:
        env = {**os.environ, "FASTBMRAG_HOME": str(home)}
        child = subprocess.Popen(
            [sys.executable, "-m", "fastbmrag", "update", "-c", "m", "--ollama-host", fake.url,
             "--concurrency", "1", "-q", str(papers_csv)],
            env=env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while fake.counts["/api/chat"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(getattr(signal, signame))
        _, err = child.communicate(timeout=60)
    assert child.returncode == code, err
    assert "Traceback" not in err
    assert "everything already committed is kept; rerun to continue." in err
    if signame != "SIGINT":
        assert f"Interrupted by {signame}:" in err
    status = run("status", "-c", "m", env={"FASTBMRAG_HOME": str(home)})
    [last] = [line for line in status.stdout.splitlines() if line.startswith("Last run")]
    assert "still running" not in last
    assert "stopped early (interrupted)" in status.stdout


# --- 12: a relaxed search is a warning -----------------------------------------------------------


def test_a_relaxed_search_is_in_the_json_warnings(papers_csv: Path) -> None:
    with FakeOllama(responder=pipeline_responder) as fake:
        assert run("update", "-c", "m", "--ollama-host", fake.url, str(papers_csv)).exit_code == 0
        result = run("query", "-c", "m", "--ollama-host", fake.url, "--json", "--min-score", "-1",
                     "How do IL1B and TNF interact?")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # no edge joins the two: the edges of each answer, ranked, and the warning says so
    assert out["warnings"] == ["no edge joins IL1B and TNF: answered from the edges of each"]
    assert {"IL1B", "TNF"} <= {e[end] for e in out["edges"] for end in ("source", "target")}
    assert out["answer"] and not out["answer"].startswith("Note:")


# --- 14: the README's Python example --------------------------------------------------------------


def test_the_readme_python_example_writes_where_the_cli_reads(papers_csv: Path) -> None:
    import re

    from fastbmrag import RAG

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    [line] = [s for s in readme.splitlines() if s.startswith("rag = RAG(")]
    assert "working_dir" not in line  # the CLI's default, ~/.fastbmrag or FASTBMRAG_HOME
    name = re.search(r'collection="([^"]+)"', line).group(1)  # type: ignore[union-attr]
    with FakeOllama(responder=pipeline_responder) as fake:
        assert RAG(collection=name, ollama_host=fake.url).insert_paper(papers_csv).indexed == 3
    status = run("status", "-c", name, "--json")
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["papers"]["done"] == 3


# --- frictions ---------------------------------------------------------------------------------


def test_export_to_a_pipe_closed_early_is_no_error(papers_csv: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeOllama(responder=pipeline_responder) as fake:
        assert run("update", "-c", "m", "--ollama-host", fake.url, str(papers_csv),
                   env={"FASTBMRAG_HOME": str(home)}).exit_code == 0  # fmt: skip
    env = {**os.environ, "FASTBMRAG_HOME": str(home)}
    result = subprocess.run(
        f"{sys.executable} -m fastbmrag export -c m --format csv -o - | head -c 10",
        shell=True, env=env, capture_output=True, text=True, timeout=120,
        executable="/bin/bash",
    )  # fmt: skip
    assert len(result.stdout) == 10
    assert result.stderr == ""


def test_a_server_answering_invalid_json_is_left_for_the_other(
    papers_csv: Path, tmp_path: Path
) -> None:
    with (
        FakeOllama(responder=pipeline_responder) as bad,
        FakeOllama(responder=pipeline_responder) as good,
    ):
        bad.set_fault_rates(malformed=1.0)
        result = run("update", "-c", "m", "--ollama-host", f"{bad.url},{good.url}",
                     "--concurrency", "1", "--json", str(papers_csv))  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 3 and summary["failed"] == 0
    assert summary["servers"][bad.url]["failures"] >= 1
    assert summary["servers"][good.url]["failures"] == 0


# --- 9: options and names before input and servers -------------------------------------------


def test_an_invalid_collection_name_is_reported_before_input_or_servers(
    papers_csv: Path,
) -> None:
    with FakeOllama(responder=pipeline_responder) as fake:
        result = run("update", "-c", "endo/metriosis", "--ollama-host", fake.url, str(papers_csv))
        assert fake.requests == []  # no server was contacted
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: Invalid collection name 'endo/metriosis': use letters, digits, '_', '-' or '.', "
        "starting with a letter or digit (e.g. --collection endometriosis)"
    )
    assert "read" not in result.stderr  # the input was not read either


def test_a_chunk_overlap_past_the_chunk_size_is_a_bad_option(papers_csv: Path) -> None:
    with FakeOllama(responder=pipeline_responder) as fake:
        result = run("update", "-c", "m", "--ollama-host", fake.url, "--chunk-size", "200",
                     "--chunk-overlap", "5000", str(papers_csv))  # fmt: skip
        assert fake.requests == []
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "Error: --chunk-overlap 5000 must be smaller than the chunk size, 200"
    )
