"""What a new user did that broke something, round 5: ordinary titles through ``normalize
--find``, C ids written as names, a supplementary concept the model typed ``other``, deeply
nested JSON, bidi controls, malformed OLLAMA_HOST values, unknown CSV labels. Each through the
door a user takes, asserting the exit code, the one-line message and the state."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from doors_support import cli_run as run

from fastbmrag import RAG
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title
from fastbmrag.vocab.loading import load_normalizer

BEVONIUM, BENZILATES = "C000002", "D001561"


# --- 1: normalize --find on ordinary titles ----------------------------------------------------


def test_find_reads_an_ordinary_title_without_a_collection() -> None:
    title = "Absence of PKC-alpha attenuates lithium-induced nephrogenic diabetes insipidus."
    result = run("normalize", "--find", "--json", title)
    assert result.exit_code == 0, result.output
    found = {(m["text"], m["ontology_id"]) for m in json.loads(result.stdout)}
    assert ("lithium", "D008094") in found
    assert ("nephrogenic diabetes insipidus", "D018500") in found


# --- 2: ids looked up as ids, codes never completed to a disease --------------------------------


def test_an_id_is_looked_up_and_a_letter_with_digits_is_no_disease() -> None:
    result = run("normalize", "--json", BEVONIUM, "C511295", "D001561", "C1", "C12", "C04")
    assert result.exit_code == 0, result.output
    got = {r["name"]: (r["ontology_id"], r["matched_by"]) for r in map(json.loads, result.stdout.splitlines())}
    assert got[BEVONIUM] == (BEVONIUM, "id")
    assert got["C511295"] == ("C511295", "id")
    assert got["D001561"] == ("D001561", "id")
    for code in ("C12", "C04"):
        assert got[code][0] is None, code
    assert got["C1"][0] != "D006445"  # never Hemoglobin C Disease
    norm = load_normalizer()
    assert norm.normalize("C3", "disease").ontology_id is None  # a code the model typed disease
    assert norm.normalize("C3", "gene").ontology_id == "HGNC:1318"  # complement C3's symbol
    assert norm.normalize("C999999", "auto").ontology_id is None  # an id not bundled


# --- 4: a supplementary concept's own name typed other ------------------------------------------


def _typed_other(request: dict[str, Any]) -> dict[str, Any] | str:
    if schema_title(request) == "Draft":
        return {"e": [[1, "Bevonium", "other"], [2, "asthma", "disease"]],
                "r": [[1, "treats", 2, [1]]]}  # fmt: skip
    return responder(request)


@pytest.fixture(scope="module")
def bevonium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    wd = tmp_path_factory.mktemp("other")
    with FakeOllama(responder=_typed_other) as fake:
        rag = RAG(wd, "c", ollama_host=fake.url)
        paper = {"paper_id": "B1", "title": "Bevonium in asthma",
                 "abstract": "We found that bevonium treats asthma."}  # fmt: skip
        assert rag.insert_paper([paper], pubtator=False).indexed == 1
        yield rag


def test_a_supplementary_concept_typed_other_takes_its_c_id(bevonium: Any) -> None:
    [edge] = bevonium.edges().to_dict("records")
    assert (edge["source_id"], edge["source_type"], edge["source_type_from"]) == (
        BEVONIUM, "chemical", "vocabulary"
    )  # fmt: skip
    for flag in (BEVONIUM, BENZILATES):
        found = bevonium.query("What treats asthma?", entities=[flag], no_answer=True)
        assert [e["payload"]["source_id"] for e in found["edges"]] == [BEVONIUM], flag
    echoed = bevonium.query("What treats asthma?", entities=[BEVONIUM], no_answer=True)
    assert [e["name"] for e in echoed["filters"]["entities"]] == ["bevonium"]


# --- 3: deeply nested JSON; a page door's unknown parameters -----------------------------------


def test_a_deeply_nested_body_is_refused_and_unknown_parameters_are_named(bevonium: Any) -> None:
    from doors_support import page

    client = page(bevonium)
    deep = '{"question": "x", "journals": ' + "[" * 5000 + "]" * 5000 + "}"
    r = client.post("/api/query", content=deep, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "nests too deeply" in r.json()["error"]
    for url, unknown in [
        ("/api/contradictions?bogus=1", "bogus"),
        ("/api/status?bogus=1", "bogus"),
        ("/api/digest?watch=5&since=last", "watch"),
    ]:
        r = client.get(url)
        assert r.status_code == 400 and "Unknown parameter(s)" in r.json()["error"], url
        assert unknown in r.json()["error"]
    # the study filters the command line takes, the page takes: checked alike
    assert client.get("/api/contradictions?organisms=mouse&designs=rct").json() == []
    r = client.get("/api/contradictions?organisms=martian")
    assert r.status_code == 400 and r.json()["error"].startswith("Unknown organism 'martian'")
    assert client.get("/api/entities?text=bev&limit=5").status_code == 200


# --- 5: a notation whose case carries its meaning ------------------------------------------------


def test_ph_in_a_question_is_no_gene_unless_cued_or_held() -> None:
    norm = load_normalizer()
    question = "Does increasing blood pH stimulate protein synthesis in dialysis patients?"
    assert [m.ontology_id for m in norm.find_mentions(question)] == []
    # the same form next to a gene word, or held by the collection asked, is the gene
    cued = norm.find_mentions("Is eNOS expression raised in preeclampsia?")
    assert "HGNC:7876" in [m.ontology_id for m in cued]
    held = norm.find_mentions(question, known={"HGNC:8582"})
    assert [m.ontology_id for m in held] == ["HGNC:8582"]


# --- 6, 7, 9: settings of servers a command does not use; a server that does not answer -------


@pytest.mark.parametrize("host", [" ", ",", ", ,", "http://"])
def test_a_malformed_ollama_host_stops_only_what_needs_a_model(bevonium: Any, host: str) -> None:
    wd = str(bevonium.working_dir)
    env = {"OLLAMA_HOST": host}
    for args in (["status"], ["entity", "bevonium"], ["contradictions"], ["digest"]):
        result = run(*args, "-c", "c", "--working-dir", wd, env=env)
        assert result.exit_code == 0, (args, result.output)
    assert run("normalize", "IL6", env=env).exit_code == 0
    dry = run("update", "-c", "c", "--working-dir", wd, "--dry-run", str(_csv(bevonium)), env=env)
    if host.strip():  # a list of no server, or no URL: the setting's one line
        assert dry.exit_code == 2 and "OLLAMA_HOST" in dry.output, dry.output
        assert "concurrency" not in dry.output
    else:  # blank is unset: the default host
        assert dry.exit_code == 0, dry.output


def _csv(rag: Any) -> Any:
    path = rag.working_dir / "more.csv"
    path.write_text("paper_id,article_title,abstract\nB2,Asthma,Asthma was treated.\n")
    return path


def test_a_qdrant_server_that_does_not_answer_is_one_line(bevonium: Any) -> None:
    result = run("status", "-c", "c", "--working-dir", str(bevonium.working_dir),
                 env={"QDRANT_URL": "http://127.0.0.1:1"})  # fmt: skip
    assert result.exit_code != 0
    assert "Warning" not in result.output and "site-packages" not in result.output
    assert result.output.startswith("Error: Qdrant at http://127.0.0.1:1")


# --- 8: bidi controls ------------------------------------------------------------------------------


def test_bidi_controls_are_removed_from_papers_and_from_what_the_page_shows(
    tmp_path: Any, bevonium: Any
) -> None:
    from doors_support import page

    from fastbmrag.papers.model import without_controls

    assert without_controls("PubMed \u202edeMbuP\u202c and \u2067x\u2069") == "PubMed deMbuP and x"
    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path / "wd", "b", ollama_host=fake.url)
        paper = {"paper_id": "R1", "title": "IL1B in \u202eendometriosis",
                 "abstract": "IL1B rose in endometriosis \u2066lesions\u2069."}  # fmt: skip
        assert rag.insert_paper([paper], pubtator=False).indexed == 1
        stored = rag.edges().to_dict("records")
        assert stored and not any("\u202e" in str(v) or "\u2066" in str(v)
                                  for e in stored for v in e.values())  # fmt: skip
    # a collection built before holds one: the page's answers leave it out
    with bevonium.writer() as coll:
        from fastbmrag.store.base import Filter, Match

        coll.store.set_payload({"title": "Bevonium \u202ein asthma"},
                               Filter(must=(Match("source_key", BEVONIUM),)))  # fmt: skip
    r = page(bevonium).post("/api/query", json={"question": "What treats asthma?",
                                                "no_answer": True})  # fmt: skip
    assert r.status_code == 200 and "Bevonium in asthma" in r.text and "\u202e" not in r.text


# --- 11: a process named without a type --------------------------------------------------------------


def test_an_untyped_process_name_is_read_as_a_process_last() -> None:
    result = run("normalize", "--json", "apoptosis", "IL6")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["type"], r["ontology_id"]) for r in rows] == [
        ("pathway", "D017209"), ("gene", "HGNC:6018")
    ]  # fmt: skip


# --- 13: a word that names a relation relates no edge ---------------------------------------------


def test_a_relation_word_of_the_question_relates_no_edge() -> None:
    from fastbmrag.query.related import question_words
    from fastbmrag.text.stems import edge_words

    # the words a question meets an edge's names by: not "biomarker", which asks for the relation
    asked = question_words("Is IL6 a biomarker of NSCLC?", load_normalizer())
    assert asked == ["il6", "nsclc"]
    assert not set(asked) & set(edge_words(["Biomarkers", "Urologic Neoplasms"]).split())
    assert set(asked) & set(edge_words(["IL6", "lung cancer"]).split())


# --- 14: a Ctrl-C whose cancellation a library swallows still stops the run --------------------


def test_a_ctrl_c_whose_cancellation_is_swallowed_still_stops_the_run(tmp_path: Any) -> None:
    import asyncio
    import os
    import signal
    import threading

    from fastbmrag.llm import OllamaClient

    class Shielding(OllamaClient):
        """A client whose chat finishes whatever cancels it, as a library shielding a close
        may: the cancellation a Ctrl-C sends is lost."""

        async def chat(self, *args: Any, **kwargs: Any) -> Any:
            inner = asyncio.ensure_future(super().chat(*args, **kwargs))
            while True:
                try:
                    return await asyncio.shield(inner)
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    assert task is not None
                    task.uncancel()

    papers = [{"paper_id": f"P{i}", "title": f"IL1B {i}",
               "abstract": "IL1B is upregulated in endometriosis lesions."} for i in range(6)]  # fmt: skip
    with FakeOllama(responder=responder, latency=0.3) as fake:
        rag = RAG(tmp_path / "wd", "c", ollama_host=fake.url,
                  llm_factory=lambda: Shielding(fake.url, concurrency=1))  # fmt: skip

        def press() -> None:
            while fake.counts["/api/chat"] < 1:
                threading.Event().wait(0.02)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=press, daemon=True).start()
        with pytest.raises(KeyboardInterrupt) as stopped:
            rag.insert_paper(papers, pubtator=False, concurrency=1)
    summary = stopped.value.summary  # type: ignore[attr-defined]
    assert summary.stopped == "interrupted" and summary.indexed < len(papers)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# --- 15: a relabelling sync on a nearly full volume; a retraction through a SIGKILL of sync ----

RECORD = (
    b'<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version="1">1000001</PMID>'
    b"<Article><Journal><Title>J</Title></Journal><ArticleTitle>IL1B and endometriosis"
    b"</ArticleTitle><Abstract><AbstractText>IL1B rose in endometriosis in a cohort of "
    b"women.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
    b"</PubmedArticleSet>"
)


def _sync_args(eutils: Any, ollama: FakeOllama, wd: Any) -> list[str]:
    return ["sync", "-c", "s", "--query", "endometriosis", "--email", "a@b.org",
            "--eutils-url", eutils.url, "--fulltext-url", eutils.fulltext_url,
            "--ollama-host", ollama.url, "--working-dir", str(wd), "--since", "2000-01-01",
            "--no-pubtator", "--json"]  # fmt: skip


def _a_month_ago(wd: Any) -> None:
    import sqlite3
    from datetime import UTC, datetime, timedelta

    with sqlite3.connect(wd / "s" / "ledger.sqlite") as ledger:
        ledger.execute("UPDATE papers SET updated_at = ?",
                       ((datetime.now(UTC) - timedelta(days=30)).isoformat(),))  # fmt: skip


def test_a_relabelling_sync_on_a_nearly_full_volume_is_one_line_and_loses_nothing(
    volume_of_400_mb: Any,
) -> None:
    import shutil
    import subprocess
    import sys
    from datetime import date

    from fastbmrag.testing.fake_eutils import FakeEutils

    small_volume = volume_of_400_mb
    wd = small_volume / "wd"
    with FakeEutils() as eutils, FakeOllama(responder=responder) as fake:
        eutils.add_medline(RECORD, entrez_date=date.today())
        first = run(*_sync_args(eutils, fake, wd))
        assert first.exit_code == 0, first.output
        eutils.add_publication_type("1000001", "Randomized Controlled Trial")
        _a_month_ago(wd)
        free = shutil.disk_usage(small_volume).free
        (small_volume / "filler").write_bytes(b"\0" * (free - (40 << 20)))
        full = subprocess.run([sys.executable, "-m", "fastbmrag", *_sync_args(eutils, fake, wd)],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert full.returncode == 2, (full.returncode, full.stderr)  # no SIGBUS (-7)
        [line] = full.stderr.strip().splitlines()
        assert "MB free" in line and "Traceback" not in line
        (small_volume / "filler").unlink()
        later = run(*_sync_args(eutils, fake, wd))
    assert later.exit_code == 0, later.output
    assert json.loads(later.stdout)["relabelled"] == 1
    [edge] = RAG(wd, "s").edges().to_dict("records")
    assert (edge["design"], edge["design_from"]) == ("rct", "metadata")


def test_a_retraction_a_record_states_survives_a_sigkill_of_sync(tmp_path: Any) -> None:
    import os
    import signal
    import subprocess
    import sys
    import threading
    from datetime import date

    from fastbmrag.testing.answers import last_user_message
    from fastbmrag.testing.fake_eutils import FakeEutils

    wd = tmp_path / "wd"
    second = RECORD.replace(b"1000001", b"1000002").replace(b"IL1B", b"TNF")
    blocked, release = threading.Event(), threading.Event()

    def stalling(request: dict[str, Any]) -> dict[str, Any] | str:
        if "TNF" in last_user_message(request):
            blocked.set()
            release.wait(timeout=60)
        return responder(request)

    with FakeEutils() as eutils, FakeOllama(responder=stalling) as fake:
        eutils.add_medline(RECORD, entrez_date=date.today())
        assert run(*_sync_args(eutils, fake, wd)).exit_code == 0
        eutils.retract("1000001")  # PubMed retracts it; a new paper comes in the same night
        eutils.add_medline(second, entrez_date=date.today())
        child = subprocess.Popen([sys.executable, "-m", "fastbmrag", *_sync_args(eutils, fake, wd)],
                                 env={**os.environ, "PYTHONWARNINGS": "ignore"},
                                 stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)  # fmt: skip
        try:
            assert blocked.wait(timeout=90), "the sync never reached the new paper"
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            release.set()
            if child.poll() is None:
                child.kill()
                child.wait()
        again = run(*_sync_args(eutils, fake, wd))
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["newly_retracted"] == 1
    flags = {e["paper_id"]: e["retracted"] for e in RAG(wd, "s").edges().to_dict("records")}
    assert flags == {"1000001": 1, "1000002": 0}


# --- an older collection: every export has every declared column ------------------------------


def test_an_edge_stored_before_a_field_existed_exports_with_its_value(tmp_path: Any) -> None:
    import csv

    from fastbmrag.store.base import Filter, Point

    with FakeOllama(responder=_typed_other) as fake:
        bevonium = RAG(tmp_path / "wd", "c", ollama_host=fake.url)
        paper = {"paper_id": "B1", "abstract": "We found that bevonium treats asthma."}
        assert bevonium.insert_paper([paper], pubtator=False).indexed == 1
    with bevonium.writer() as coll:  # as the version before stored it: no findings fields
        [hit] = list(coll.scroll(Filter()))
        old = {k: v for k, v in hit.payload.items()
               if k not in ("finding", "finding_from", "background_p")}  # fmt: skip
        size = coll.store.vector_size()
        coll.store.upsert([Point(hit.id, [1.0] + [0.0] * (size - 1), old)])
        coll.store.flush()
    out = tmp_path / "e.csv"
    result = run("export", "-c", "c", "--working-dir", str(bevonium.working_dir), "-o", str(out))
    assert result.exit_code == 0, result.output
    [row] = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert (row["finding"], row["finding_from"], row["background_p"]) == ("finding", "", "")
    [edge] = bevonium.edges().to_dict("records")
    assert edge["finding"] == "finding"
