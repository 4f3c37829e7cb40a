"""The findings model: each relation's probability of being background from the text's cues and
the paper's other relations, on every edge with its source; its threshold an option at the
command line and the Python API; the training script reproducible; the shipped model the one
its card describes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title
from fastbmrag.text.novelty import CARD_FILE, FEATURES, MODEL_FILE, Pair, features, load_model
from fastbmrag.text.sentences import abstract_sentences

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
ABSTRACT = ("Previous studies have shown that IL6 is raised in endometriosis. We measured TNF in "
            "62 women and found that TNF was significantly higher in endometriosis (p < 0.01).")  # fmt: skip


def drafted(request: dict[str, Any]) -> dict[str, Any] | str:
    if schema_title(request) == "Draft":
        return {"e": [[1, "IL6", "gene"], [2, "endometriosis", "disease"], [3, "TNF", "gene"]],
                "r": [[1, "upregulated_in", 2, [2]], [3, "upregulated_in", 2, [3]]]}  # fmt: skip
    return responder(request)


def indexed(tmp_path: Path, *flags: str) -> list[dict[str, Any]]:
    papers = tmp_path / "p.csv"
    papers.write_text(f'paper_id,article_title,abstract\nP1,IL6 and TNF,"{ABSTRACT}"\n')
    wd = tmp_path / "wd"
    with FakeOllama(responder=drafted) as fake:
        result = CliRunner().invoke(cli, ["update", "-c", "n", "--working-dir", str(wd),
                                          "--ollama-host", fake.url, *flags, str(papers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return sorted(RAG(wd, "n").edges().to_dict("records"), key=lambda e: e["source"])


def test_the_shipped_model_is_the_one_its_card_describes() -> None:
    card = json.loads(CARD_FILE.read_text(encoding="utf-8"))
    assert tuple(card["features"]) == FEATURES
    assert hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest() == card["sha256"]
    assert 0 < card["threshold"] < 1 and MODEL_FILE.stat().st_size < 2_000_000
    assert load_model() is not None


def test_every_edge_carries_the_model_s_call_and_probability(tmp_path: Path) -> None:
    edges = indexed(tmp_path)
    assert {e["finding_from"] for e in edges} == {"classifier"}
    by = {e["source"]: e for e in edges}
    # the relation stated as prior knowledge is likelier background than the measured one
    assert by["IL6"]["background_p"] > by["TNF"]["background_p"]
    cut = json.loads(CARD_FILE.read_text(encoding="utf-8"))["threshold"]
    for e in edges:
        assert e["finding"] == ("background" if e["background_p"] >= cut else "finding")


@pytest.mark.parametrize(("threshold", "role"), [("0", "background"), ("1", "finding")])
def test_the_threshold_is_an_option(tmp_path: Path, threshold: str, role: str) -> None:
    edges = indexed(tmp_path, "--background-threshold", threshold)
    assert {e["finding"] for e in edges} == {role}


def test_the_threshold_is_refused_out_of_range_at_both_doors(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["update", "-c", "n", "--dry-run", "--background-threshold",
                                      "1.5", str(tmp_path / "p.csv")])  # fmt: skip
    assert result.exit_code == 2
    assert "--background-threshold must be a probability from 0 to 1, got 1.5" in result.output
    from fastbmrag.errors import InputError

    with pytest.raises(InputError, match="background_threshold must be a probability from 0 to 1"):
        RAG(tmp_path / "wd", "n").insert_paper([{"paper_id": "x", "abstract": "IL6 rose."}],
                                               background_threshold=-0.1)  # fmt: skip


def test_without_the_model_the_rules_decide(tmp_path: Path) -> None:
    edges = indexed(tmp_path, "--no-findings-model")
    assert {e["finding_from"] for e in edges} == {"text"}
    assert all(e["background_p"] is None for e in edges)


def test_features_are_one_named_row_per_relation() -> None:
    sentences = abstract_sentences("IL6 and TNF", ABSTRACT)
    pairs = [Pair(("IL6",), ("endometriosis",), "gene", "disease", (1,)),
             Pair(("TNF",), ("endometriosis",), "gene", "disease", (2,))]  # fmt: skip
    rows = features(sentences, pairs)
    assert len(rows) == 2 and all(len(r) == len(FEATURES) for r in rows)
    named = [dict(zip(FEATURES, r, strict=True)) for r in rows]
    assert named[0]["cited_cue_reported"] == 1 and named[1]["cited_cue_reported"] == 0
    assert named[1]["cited_statistic"] == 1 and named[1]["cited_cue_own"] == 1


def _script(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_training_script_gives_the_same_model_from_the_same_data(tmp_path: Path) -> None:
    # a corpus made here, in BioRED's PubTator form: even PMIDs, relations marked Novel or No
    lines = []
    for n in range(40):
        pmid = str(1000 + 2 * n)
        title = f"TNF and IL{n % 7 + 1} in endometriosis"
        abstract = (f"Previous studies have shown that IL{n % 7 + 1} is raised in endometriosis. "
                    f"We found that TNF was higher in {n + 10} women with endometriosis.")  # fmt: skip
        text = f"{title} {abstract}"
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        for name, ident, kind in ((f"IL{n % 7 + 1}", f"{n % 7 + 1}", "GeneOrGeneProduct"),
                                  ("TNF", "7124", "GeneOrGeneProduct"),
                                  ("endometriosis", "D004715", "DiseaseOrPhenotypicFeature")):  # fmt: skip
            start = text.find(name)
            while start != -1:
                lines.append(f"{pmid}\t{start}\t{start + len(name)}\t{name}\t{kind}\t{ident}")
                start = text.find(name, start + 1)
        lines.append(f"{pmid}\tAssociation\t{n % 7 + 1}\tD004715\tNo")
        lines.append(f"{pmid}\tPositive_Correlation\t7124\tD004715\tNovel")
        lines.append("")
    corpus = tmp_path / "Train.PubTator"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    train = _script("train_findings")
    made = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        assert train.main([str(corpus), "--out", str(out)]) == 0
        made.append(((out / "model.txt").read_bytes(), (out / "model.json").read_bytes()))
    assert made[0] == made[1]
    card = json.loads(made[0][1])
    assert card["trained_on"].startswith("BioRED Train, even PMIDs (40 papers, 80 relations")


# --- where users look: --findings-only at every door, the digest's sides, the page's list ------

KNOWN = "Previous studies have shown that IL6 protects against endometriosis."
FOUND = "We found that IL6 was a risk factor for endometriosis in 62 women (p < 0.01)."


def two_papers(request: dict[str, Any]) -> dict[str, Any] | str:
    from fastbmrag.testing.answers import last_user_message

    if schema_title(request) == "Draft":
        rel = "protects_against" if "Previous studies" in last_user_message(request) else (
            "risk_factor_for")
        return {"e": [[1, "IL6", "gene"], [2, "endometriosis", "disease"]],
                "r": [[1, rel, 2, [2]]]}  # fmt: skip
    return responder(request)


@pytest.fixture(scope="module")
def restated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, FakeOllama]]:
    """A collection where one paper restates IL6 protects against endometriosis (background),
    indexed first, and a later paper finds it a risk factor: a pair newly contradicted, one
    side cited as known. Told by the rules, so that the roles are the text's."""
    wd = tmp_path_factory.mktemp("restated")
    with FakeOllama(responder=two_papers) as fake:
        for pid, text in (("f1", KNOWN), ("f2", FOUND)):
            papers = wd / f"{pid}.csv"
            papers.write_text(f'paper_id,article_title,abstract\n{pid},IL6,"{text}"\n')
            result = CliRunner().invoke(cli, ["update", "-c", "r", "--working-dir", str(wd),
                                              "--ollama-host", fake.url, "--no-findings-model",
                                              str(papers)])  # fmt: skip
            assert result.exit_code == 0, result.output
        yield wd, fake


def test_findings_only_at_every_door_of_the_graph_commands(
    restated: tuple[Path, FakeOllama],
) -> None:
    from doors_support import page

    wd, _ = restated
    rag = RAG(wd, "r")
    assert len(rag.contradictions()) == 1
    assert rag.contradictions(findings_only=True) == []
    card = rag.entity("IL6", findings_only=True)
    assert card is not None and "protects_against" not in json.dumps(card)
    assert "protects_against" in json.dumps(rag.entity("IL6"))
    assert [h["relationship_type"] for p in rag.path("IL6", "endometriosis", findings_only=True)
            for h in p] == ["risk_factor_for"]  # fmt: skip
    digest = rag.digest("0", findings_only=True)
    assert not any(e["cited"] for e in digest["entities"])
    args = ["-c", "r", "--working-dir", str(wd), "--findings-only"]
    for command in (["contradictions", "--json"], ["entity", "IL6", "--json"],
                    ["path", "IL6", "endometriosis", "--json"], ["digest", "--since", "0"]):  # fmt: skip
        result = CliRunner().invoke(cli, [*command, *args])
        assert result.exit_code == 0, (command, result.output)
        assert "protects_against" not in result.output, command
    client = page(rag)
    for url in ("/api/contradictions?findings_only=true", "/api/entity?name=IL6&findings_only=true",
                "/api/path?start=IL6&end=endometriosis&findings_only=true",
                "/api/digest?since=0&findings_only=true"):  # fmt: skip
        r = client.get(url)
        assert r.status_code == 200 and "protects_against" not in r.text, url
    r = client.get("/api/entity?name=IL6&findings_only=maybe")
    assert r.status_code == 400 and "'findings_only' must be true or false" in r.json()["error"]
    from fastbmrag.errors import InputError

    with pytest.raises(InputError, match="findings_only must be True or False"):
        rag.contradictions(findings_only="yes")  # type: ignore[arg-type]


def test_a_newly_contradicted_side_cited_only_as_known_says_so(
    restated: tuple[Path, FakeOllama],
) -> None:
    from fastbmrag import render_digest

    wd, _ = restated
    text = render_digest(RAG(wd, "r").digest("0"), "text")
    assert "protects_against: f1 (cited as known)" in text
    assert "protects_against:;" not in text and not text.rstrip().endswith(":")


def test_the_page_s_evidence_list_marks_what_a_paper_restates(
    restated: tuple[Path, FakeOllama],
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
    from test_web import _page

    wd, fake = restated
    with _page(RAG(wd, "r", ollama_host=fake.url)) as (browser, url):
        browser.get(url + "?q=IL6+in+endometriosis&min_score=-1&no_answer=true")
        WebDriverWait(browser, 30).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, "#answer ol li")))
        items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#answer ol li")]
    marked = [i for i in items if "[background: cited as known]" in i]
    assert len(items) == 2 and len(marked) == 1 and "protects against" in marked[0]


def test_an_older_collection_is_re_marked_by_the_model_with_no_chat_call(tmp_path: Path) -> None:
    papers = tmp_path / "p.csv"
    papers.write_text(f'paper_id,article_title,abstract\nP1,IL6 and TNF,"{ABSTRACT}"\n')
    wd = tmp_path / "wd"
    with FakeOllama(responder=drafted) as fake:
        def update(*flags: str) -> None:
            result = CliRunner().invoke(cli, ["update", "-c", "n", "--working-dir", str(wd),
                                              "--ollama-host", fake.url, *flags, str(papers)])  # fmt: skip
            assert result.exit_code == 0, result.output

        update("--no-findings-model")  # as an earlier version marked it: the text's cues
        assert {e["finding_from"] for e in RAG(wd, "n").edges().to_dict("records")} == {"text"}
        chats = fake.counts["/api/chat"]
        update("--force")  # the papers read again; the model's answers come from the cache
        assert fake.counts["/api/chat"] == chats
    edges = RAG(wd, "n").edges().to_dict("records")
    assert {e["finding_from"] for e in edges} == {"classifier"}
    assert all(e["background_p"] is not None for e in edges)


def test_a_card_whose_edges_the_filters_leave_out_says_so(
    restated: tuple[Path, FakeOllama],
) -> None:
    wd, _ = restated
    # no paper of the collection is an RCT: the filter leaves no edge about IL6
    result = CliRunner().invoke(cli, ["entity", "IL6", "-c", "r", "--working-dir", str(wd),
                                      "--design", "rct"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "no edge about it passes the filters given" in result.output
    assert "relations (papers" not in result.output
