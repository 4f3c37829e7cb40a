"""Questions understood: what a question names is found (the collection's names, the parse call's
entities, the mention finder), grounded, and either used as a filter or said to be absent; an
answer never comes from edges that share neither an entity nor a word with the question.

One small collection (tests/data/query/papers.csv: IL1B, steroid receptors, KRAS in
endometriosis; TNF and IL6 in rheumatoid arthritis; IL1B and MMP9 in osteoarthritis) indexed
through the real pipeline against the fake model server (a real HTTP server), then asked through
the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.query.understand import understand
from fastbmrag.store.base import EdgeRef
from fastbmrag.store.ledger import Ledger
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title
from fastbmrag.vocab.loading import load_normalizer

DATA = Path(__file__).parent / "data" / "query"
IL1B = "HGNC:5992"
ALZHEIMER = "D000544"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=responder) as server:
        yield server


@pytest.fixture(scope="module")
def wd(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    wd = tmp_path_factory.mktemp("understand")
    result = CliRunner().invoke(cli, ["update", "-c", "demo", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "-q", str(DATA / "papers.csv")])  # fmt: skip
    assert result.exit_code == 0, result.output
    return wd


def ask(wd: Path, fake: FakeOllama, question: str, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["query", question, "-c", "demo", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "--min-score", "-1", *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, json.loads(result.stdout) if "--json" in extra else {}


def understood(out: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    return [(u["text"], u["id"], u["used_as"]) for u in out["understood"]]


def test_an_entity_the_collection_lacks_is_named_and_nothing_is_cited(
    wd: Path, fake: FakeOllama
) -> None:
    fake.reset()
    question = "What genes are linked to Alzheimer disease?"
    _, out = ask(wd, fake, question, "--json")
    assert understood(out) == [("Alzheimer disease", ALZHEIMER, "absent")]
    assert out["no_evidence"]["reason"] == (
        "the collection 'demo' holds no edge about Alzheimer Disease (D000544)"
    )
    assert out["answer"] is None and out["references"] == [] and out["edges"] == []
    asked = [schema_title(r.json) for r in fake.requests_to("/api/chat")]
    assert asked == ["QuestionParse"]  # no answer call
    text, _ = ask(wd, fake, question)
    assert text.stdout.startswith(
        "Understood: Alzheimer Disease (D000544, not in this collection)\n\n"
        "No evidence: the collection 'demo' holds no edge about Alzheimer Disease (D000544).\n"
    )
    assert "[1]" not in text.stdout and "References" not in text.stdout


def test_the_finder_alone_finds_alzheimer_disease_too(wd: Path, fake: FakeOllama) -> None:
    _, out = ask(wd, fake, "What genes are linked to Alzheimer's disease?", "--json",
                 "--no-llm-parse")  # fmt: skip
    assert [(u["id"], u["origin"], u["used_as"]) for u in out["understood"]] == [
        (ALZHEIMER, "finder", "absent")
    ]
    assert out["answer"] is None and out["edges"] == []


def test_drugs_is_no_entity_and_type_2_diabetes_is_one(wd: Path, fake: FakeOllama) -> None:
    for extra in ((), ("--no-llm-parse",)):
        _, out = ask(wd, fake, "Which drugs treat type 2 diabetes?", "--json", *extra)
        assert [(u["text"], u["id"]) for u in out["understood"]] == [("type 2 diabetes", "D003924")]
        assert "D004364" not in json.dumps(out)  # Pharmaceutical Preparations


def test_a_procedure_acronym_is_no_gene(wd: Path, fake: FakeOllama) -> None:
    # "IVF" is an alias of SCN5A in HGNC: with no gene word by it, the finder does not read it
    # as one; the parse call types it "other"
    for extra in ((), ("--no-llm-parse",)):
        _, out = ask(wd, fake, "Is IVF associated with preterm birth?", "--json", *extra)
        assert [u["type"] for u in out["understood"]] == ["disease"]  # preterm birth only
        assert "HGNC:10593" not in json.dumps(out["understood"])
    # with a gene word by it, the short form is a gene
    _, out = ask(wd, fake, "Is the IVF gene mutated in arrhythmia?", "--json", "--no-llm-parse")
    assert "HGNC:10593" in [u["id"] for u in out["understood"]]


def test_a_question_nothing_of_which_is_recognised_gets_no_cited_answer(
    wd: Path, fake: FakeOllama
) -> None:
    fake.reset()
    result, out = ask(wd, fake, "What is the role of FOOBAR1 in zombies?", "--json")
    assert out["understood"] == []
    assert out["answer"] is None and out["references"] == [] and out["edges"] == []
    assert out["no_evidence"]["reason"].startswith("no entity of the question was recognised")
    asked = [schema_title(r.json) for r in fake.requests_to("/api/chat")]
    assert "Answer" not in asked and "PartialAnswer" not in asked


def test_edges_that_share_a_word_with_the_question_answer_it(wd: Path, fake: FakeOllama) -> None:
    # with linking off nothing is a filter: "cartilage" is no edge's entity, so nothing answers
    # (the osteoarthritis paper's abstract speaks of cartilage, its edges do not) ...
    _, out = ask(wd, fake, "What happens to cartilage?", "--json", "--no-link")
    assert out["edges"] == [] and out["answer"] is None
    assert out["no_evidence"]["reason"].startswith("no entity of the question was recognised")
    # ... and the osteoarthritis edges answer a question that writes the word
    _, out = ask(wd, fake, "What happens to cartilage in osteoarthritis?", "--json", "--no-link")
    assert out["understood"] == [] and out["answer"]
    assert {e["kept_by"] for e in out["edges"]} == {"word"}
    assert {e["target"] for e in out["edges"]} == {"Osteoarthritis"}


def test_a_present_and_an_absent_entity_answer_from_the_present_one(
    wd: Path, fake: FakeOllama
) -> None:
    _, out = ask(wd, fake, "What is the role of IL1B in Alzheimer disease?", "--json")
    assert understood(out) == [("IL1B", IL1B, "filter"), ("Alzheimer disease", ALZHEIMER, "absent")]
    assert out["answer"] and out["references"]
    assert out["edges"] and all(IL1B in (e["source_id"], e["target_id"]) for e in out["edges"])
    assert {e["kept_by"] for e in out["edges"]} == {"id"}
    assert any(
        "holds no edge about Alzheimer Disease (D000544); searched with IL1B (HGNC:5992)" in w
        for w in out["warnings"]
    )
    text, _ = ask(wd, fake, "What is the role of IL1B in Alzheimer disease?")
    assert text.stdout.startswith(
        "Understood: IL1B (HGNC:5992), Alzheimer Disease (D000544, not in this collection)\n"
    )


def test_entity_flags_replace_the_question_s_entities_which_are_still_shown(
    wd: Path, fake: FakeOllama
) -> None:
    _, out = ask(wd, fake, "What is the role of IL1B in Alzheimer disease?", "--json",
                 "--entity", "MMP9")  # fmt: skip
    assert [(u["id"], u["used_as"]) for u in out["understood"]] == [
        (IL1B, None),
        (ALZHEIMER, None),
    ]
    assert [e["id"] for e in out["filters"]["entities"]] == ["HGNC:7176"]  # MMP9


def test_the_collection_s_own_names_link_a_question(tmp_path: Path) -> None:
    # papers wrote "NSCLC" for non-small-cell lung carcinoma: the finder alone cannot read it
    # (MeSH lists no such short form), the collection's names can
    norm = load_normalizer()
    question = "What is the role of p53 in NSCLC?"
    assert [m.id for m in understand(question, norm, None)] == ["HGNC:11998"]
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ref = EdgeRef("HGNC:11998", "TP53", "gene", "HGNC:11998", "upregulated_in", "D002289",
                  "Carcinoma, Non-Small-Cell Lung", "disease", "D002289", "p53", "NSCLC")  # fmt: skip
    ledger.apply_papers([("P1", None, [("e1", ref)])])
    found = understand(question, norm, ledger)
    assert [(m.text, m.id, m.origin) for m in found] == [
        ("p53", "HGNC:11998", "collection"),  # the papers write it so too
        ("NSCLC", "D002289", "collection"),
    ]
    ledger.close()


def test_programmed_cell_death_is_apoptosis_not_death(wd: Path, fake: FakeOllama) -> None:
    # the parse call names the process; the finder alone reads no "death" on its own
    question = "Do mitochondria play a role in programmed cell death?"
    _, out = ask(wd, fake, question, "--json")
    assert [(u["text"], u["type"], u["id"], u["used_as"]) for u in out["understood"]] == [
        ("programmed cell death", "pathway", "D017209", "absent")
    ]
    assert "D003643" not in json.dumps(out)  # Death
    # the finder alone finds the process too: "programmed" is no everyday word ...
    _, out = ask(wd, fake, question, "--json", "--no-llm-parse")
    assert [(u["id"], u["origin"], u["used_as"]) for u in out["understood"]] == [
        ("D017209", "finder", "absent")
    ]
    # ... nor is "apoptosis", which a question about neoplasms names beside them; processes of
    # ordinary words ("gene expression") are read in their everyday sense
    _, out = ask(wd, fake, "What is the role of apoptosis in gene expression?", "--json",
                 "--no-llm-parse")  # fmt: skip
    assert [(u["text"], u["id"]) for u in out["understood"]] == [("apoptosis", "D017209")]


def test_a_process_a_paper_names_is_grounded_when_indexed() -> None:
    norm = load_normalizer()
    assert norm.normalize("programmed cell death", "pathway").ontology_id == "D017209"
    found = norm.normalize("EMT", "pathway", "cells underwent epithelial-mesenchymal transition "
                           "(EMT) after TGF-beta")  # fmt: skip
    assert (found.ontology_id, found.matched_by) == ("D058750", "abbreviation")
    assert norm.normalize("NF-kB signalling", "pathway").ontology_id is None  # no MeSH term
    assert norm.ancestors("D017209") == ("D000079404", "D016923")  # Cell Death above it
    assert norm.facts("D017209")["categories"] == "biological process"


def test_normalize_find_prints_the_mentions_of_each_text(tmp_path: Path) -> None:
    texts = tmp_path / "titles.txt"
    texts.write_text("Do mitochondria play a role in programmed cell death?\n"
                     "Tumor necrosis factor alpha in rheumatoid arthritis\n", encoding="utf-8")  # fmt: skip
    result = CliRunner().invoke(cli, ["normalize", "--find", "--input", str(texts), "--json"])
    assert result.exit_code == 0, result.output
    death, tnf = (json.loads(line) for line in result.stdout.splitlines())
    # as a query reads it: the process, and "death" alone is no disease here
    assert [(m["text"], m["ontology_id"]) for m in death] == [("programmed cell death", "D017209")]
    assert [(m["text"], m["type"], m["ontology_id"]) for m in tnf] == [
        ("Tumor necrosis factor alpha", "gene", "HGNC:11892"),  # the gene, not the chemical
        ("rheumatoid arthritis", "disease", "D001172"),
    ]
    assert set(tnf[0]) == {"start", "end", "text", "type", "ontology_id", "normalized_name",
                           "matched_by"}  # fmt: skip
    plain = CliRunner().invoke(cli, ["normalize", "--find", "Which drugs treat type 2 diabetes?"])
    assert plain.exit_code == 0
    assert "type 2 diabetes  disease  D003924" in plain.stdout
    assert "D004364" not in plain.stdout
    empty = CliRunner().invoke(cli, ["normalize", "--find"])
    assert empty.exit_code == 2 and "Nothing to search" in empty.output
