"""What a new user gets wrong, round 4: a malformed OLLAMA_HOST, a nearly full volume, loose
Python arguments. Each refusal is one line naming the problem and the fix, exit 2, nothing
lost."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doors_support import cli_run

from fastbmrag import RAG
from fastbmrag.errors import InputError
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

DATA = Path(__file__).parent / "data"
PAPERS = DATA / "query" / "papers.csv"


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("misuse")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(wd, "papers", ollama_host=fake.url)
        assert rag.insert_paper(str(PAPERS)).indexed == 5
    return rag


# --- a malformed OLLAMA_HOST -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["localhost:abc", "http://127.0.0.1:99999", "http://[::1"])
def test_a_malformed_ollama_host_is_one_line_naming_it(value: str, tmp_path: Path) -> None:
    # a process of its own: the ollama package reads the variable when it is first imported
    env = {**os.environ, "OLLAMA_HOST": value, "FASTBMRAG_HOME": str(tmp_path)}

    def fastbmrag(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fastbmrag", *command], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,abstract\nP1,IL6 rose.\n", encoding="utf-8")
    done = fastbmrag("update", "-c", "x", str(papers))  # needs the model server: its one line
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "OLLAMA_HOST" in line and "not an http(s) URL" in line and "Traceback" not in line
    assert fastbmrag("normalize", "IL6").returncode == 0  # needs none: runs whatever it says


def test_a_malformed_fulltext_url_is_refused_as_a_setting(tmp_path: Path) -> None:
    result = cli_run("fetch", "--query", "x[tiab]", "--days", "3", "--email", "a@example.org",
                     "--fulltext-url", "http://[::1", "-o", tmp_path / "x.csv")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--fulltext-url / FASTBMRAG_FULLTEXT_URL is 'http://[::1'" in result.output


# --- loose Python arguments --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("refine", "no"), ("pubtator", "off"), ("force", "yes"), ("dry_run", 1)],
)
def test_a_true_or_false_option_takes_only_true_or_false(
    option: str, value: Any, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match=f"^{option} must be True or False, got {value!r}$"):
        RAG(tmp_path, "x").insert_paper(str(PAPERS), **{option: value})
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name", ["empty.csv", "binary.csv"])
def test_an_unusable_file_is_refused_in_python_as_at_the_command_line(
    name: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(b"" if name == "empty.csv" else bytes(range(256)) * 4)
    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path, "x", ollama_host=fake.url)
        with pytest.raises(InputError, match="^No papers to index in .*unreadable file"):
            rag.insert_paper(str(path))
        result = cli_run("update", "-c", "x", "--working-dir", tmp_path, "--ollama-host",
                         fake.url, path)  # fmt: skip
    assert result.exit_code == 2


def test_one_name_is_one_entity_and_an_unknown_one_is_refused(rag: Any) -> None:
    assert rag.watch("IL1B") == [("HGNC:5992", "IL1B")]
    assert list(rag.watched()) == ["HGNC:5992"]
    assert rag.unwatch("IL1B") == 1
    for unknown in ("zzzqqq", "HGNC:99999999", "D000000"):
        with pytest.raises(InputError, match=f"^'{unknown}' is no entity of collection 'papers'"):
            rag.watch([unknown])
    assert rag.watched() == {}


def test_arguments_of_the_wrong_kind_are_input_errors(rag: Any) -> None:
    with pytest.raises(InputError, match="^organisms must be text or a list of texts, got 5$"):
        rag.contradictions(organisms=5)
    with pytest.raises(InputError, match="^name must be an entity's name or id as text"):
        rag.narrower(None)
    with pytest.raises(InputError, match="^names must be text or a list of texts"):
        rag.watch(6)


# --- a nearly full volume ---------------------------------------------------------------------


def test_reads_on_a_nearly_full_volume_are_refused_not_killed(
    small_volume: Path, tmp_path: Path
) -> None:
    """A tmpfs allocates a page for a read of a hole: the store's files, made at their full
    size, would fill the volume as an open reads them, and the reader would die of SIGBUS."""
    env = {**os.environ, "FASTBMRAG_HOME": str(small_volume / "home"), "FASTBMRAG_PUBTATOR": "0"}
    with FakeOllama(responder=responder) as fake:
        env["OLLAMA_HOST"] = fake.url

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "fastbmrag", *args], env=env,
                                  capture_output=True, text=True, timeout=120)  # fmt: skip

        assert run("update", "-c", "demo", "-q", str(PAPERS)).returncode == 0
        free = shutil.disk_usage(small_volume).free
        (small_volume / "filler").write_bytes(b"\0" * (free - (40 << 20)))
        used = shutil.disk_usage(small_volume).used
        for args in (["query", "IL1B?", "-c", "demo", "--no-answer"], ["entity", "IL1B", "-c",
                     "demo"], ["export", "-c", "demo", "-o", str(tmp_path / "e.csv")],
                     ["digest", "-c", "demo"]):  # fmt: skip
            done = run(*args)
            assert done.returncode == 2, (args, done.returncode, done.stderr)
            [line] = done.stderr.strip().splitlines()
            assert "has 40 MB free and opening collection 'demo' for reading needs about" in line
        status = run("status", "-c", "demo")
        assert status.returncode == 0, status.stderr
        assert "(not opened: its volume of" in status.stdout
        assert "MB free and opening collection 'demo' for reading needs about" in status.stdout
        assert run("watch", "add", "IL1B", "-c", "demo").returncode == 0  # the ledger alone
        assert shutil.disk_usage(small_volume).used <= used + (1 << 20)  # the store did not grow
        (small_volume / "filler2").write_bytes(b"\0" * shutil.disk_usage(small_volume).free)
        done = run("watch", "add", "IL6", "-c", "demo")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "has 0 MB free, too little for opening the ledger" in line
    assert "nothing committed is lost" in line and "delete" not in line


# --- a papers CSV's study labels ---------------------------------------------------------------


def test_study_labels_are_read_in_any_case_and_spelling_and_an_unknown_one_said(
    tmp_path: Path,
) -> None:
    import csv

    from fastbmrag.papers import ReadReport, iter_papers

    path = tmp_path / "papers.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["paper_id", "abstract", "design", "publication_types", "organisms"])
        out.writerows([
            ("P1", "IL6 rose.", "randomized controlled trial", "", "Homo sapiens"),
            ("P2", "IL6 rose.", "Randomised controlled trial", "", "humans"),
            ("P3", "IL6 rose.", "banana", "", "martians"),
            ("P4", "IL6 rose.", "", "Journal Article; Meta-Analysis", ""),
        ])  # fmt: skip
    report = ReadReport()
    papers = {p.paper_id: p for p in iter_papers([path], report)}
    assert [(papers[i].design, papers[i].organisms) for i in ("P1", "P2", "P3", "P4")] == [
        ("rct", ["human"]), ("rct", ["human"]), ("", []), ("meta-analysis", [])
    ]  # fmt: skip
    said = dict(report.repaired)
    assert [w for w, _ in report.repaired] == [w for w in said if "P3" in w] * 2
    summary = report.summary()
    assert "1 design not a known study design, left out" in summary
    assert "1 organism not a known organism, left out" in summary
    # the values and their papers, named
    assert "design 'banana' (papers.csv row 4 (paper_id P3)) is no known study design" in summary
    assert "organism 'martians' (papers.csv row 4 (paper_id P3)) is no known organism" in summary


# --- the digest of a hostile title -------------------------------------------------------------


def test_a_title_with_breaks_and_markup_stays_one_line_of_the_digest() -> None:
    from fastbmrag import render_digest

    title = "IL6 & TNF\n~~~\nin <b>endometriosis</b>"
    found = {"collection": "c", "since": "last", "runs": [], "papers": [
        {"paper_id": "P1", "title": title, "edges": 1}], "reindexed": [], "removed": [],
        "retracted": [], "entities": [], "new_entities": []}  # fmt: skip
    markdown = render_digest(found, "markdown")
    [line] = [x for x in markdown.splitlines() if "P1" in x]
    assert line == "- IL6 \\& TNF \\~\\~\\~ in \\<b\\>endometriosis\\</b\\> \\[P1\\]: 1 edge"
    page = render_digest(found, "html")
    assert "<li>IL6 &amp; TNF ~~~ in &lt;b&gt;endometriosis&lt;/b&gt; [P1]: 1 edge</li>" in page
    assert "<pre>" not in page and "<b>" not in page


def test_a_digest_says_a_run_stopped_and_why(rag: Any) -> None:
    from fastbmrag import render_digest

    with rag.writer() as coll:
        run_id = coll.ledger.runs.start("sync", {"query": "x"})
        coll.ledger.runs.end(run_id, {"stopped": "PubMed cannot be reached"})
    said = render_digest(rag.digest(), "text")
    assert f"Run {run_id} (sync) stopped early: PubMed cannot be reached" in said
    assert f"Nothing new since run {run_id} (sync, " in said


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "gene"),
    [("tumour necrosis factor", "HGNC:11892"), ("oestrogen receptor 1", "HGNC:3467"),
     ("haem oxygenase 1", "HGNC:5013"), ("tumour protein p53", "HGNC:11998")],
)  # fmt: skip
def test_a_gene_name_in_british_spelling_grounds_as_in_american(name: str, gene: str) -> None:
    from fastbmrag.vocab.loading import load_normalizer

    found = load_normalizer().normalize(name, "gene")
    assert found.ontology_id == gene


def test_a_question_s_relation_word_is_no_entity_and_tumour_in_a_gene_name_no_neoplasm() -> None:
    from fastbmrag.query.understand import understand
    from fastbmrag.vocab.loading import load_normalizer

    norm = load_normalizer()
    ids = [m.id for m in understand("Which biomarkers predict endometriosis?", norm, None)]
    assert ids == ["D004715"]  # not Biomarkers (D015415): the relation biomarker_of
    ids = [m.id for m in understand("Is tumour necrosis factor raised in asthma?", norm, None)]
    assert ids == ["HGNC:11892", "D001249"]


# --- options a command line reads -------------------------------------------------------------


def test_since_is_a_run_or_a_day_that_has_been_and_numbers_are_ascii(rag: Any) -> None:
    wd = str(rag.working_dir)
    last = rag.digest()["runs"][-1]["run_id"]
    for since, said in ((str(last + 1), f"is no run of collection 'papers' yet: the last is "
                         f"{last}"), ("2099-01-01", "is after today"), ("٣", "is no run")):  # fmt: skip
        done = cli_run("digest", "--working-dir", wd, "--since", since)  # the only collection
        assert done.exit_code == 2 and said in done.output, done.output
    done = cli_run("path", "IL1B", "endometriosis", "--working-dir", wd, "--max-hops", "３")
    assert done.exit_code == 2
    assert "'３' is not a number written in ASCII digits" in done.output
    assert cli_run("watch", "list", "--working-dir", wd).exit_code == 0


# --- a retraction a record states -------------------------------------------------------------


def test_a_retraction_its_record_states_is_recorded_with_the_paper_s_commit(
    tmp_path: Path,
) -> None:
    """A run killed right after the commit (no end-of-run step) keeps it: queries leave the
    paper out, status counts it."""
    from store_support import cid_papers, paper_edges

    from fastbmrag.store import Collection, Filter, Match
    from fastbmrag.store.collection import PaperEdges

    pid, rows = next(iter(cid_papers().items()))
    points, refs = paper_edges(pid, rows)
    with Collection.writer(tmp_path, "c", create=True) as coll:
        coll.ledger.runs.begin("sync", {})
        coll.commit_papers([PaperEdges(pid, "h", points, refs, retracted=True)])
    with Collection.reader(tmp_path, "c") as coll:
        assert coll.ledger.retracted() == {pid}
        assert coll.count(Filter(must=(Match("retracted", value=1),))) == len(points)
        assert [(p, e) for _, p, e, _ in coll.ledger.runs.events(1)] == [
            (pid, "indexed"), (pid, "retracted")
        ]  # fmt: skip


def test_settings_and_fetch_s_window_are_refused_in_python_as_at_the_command_line(
    tmp_path: Path,
) -> None:
    from fastbmrag.papers.eutils import FetchSettings

    for name, value, said in (("num_ctx", 10, "from 256 to 1,048,576"),
                              ("embed_batch", 100_000, "from 1 to 4,096"),
                              ("concurrency", 5000, "from 1 to 1,024")):  # fmt: skip
        with pytest.raises(InputError, match=f"^{name} must be a whole number {said}, got "):
            RAG(tmp_path, "x", **{name: value})
        flag = "--" + name.replace("_", "-")
        done = cli_run("update", "-c", "x", "--working-dir", tmp_path, flag, str(value), PAPERS)
        assert done.exit_code == 2 and flag in done.output
    settings = FetchSettings.resolve(email="a@example.org")
    for name, value in (("max_papers", -1), ("days", -3), ("max_papers", "10")):
        with pytest.raises(InputError, match=f"^{name} must be a whole number of"):
            RAG(tmp_path).fetch("x[tiab]", tmp_path / "out.csv", settings=settings, **{name: value})
    assert not (tmp_path / "out.csv").exists()
