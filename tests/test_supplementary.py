"""MeSH's supplementary concepts (C ids) in the bundled vocabulary: a compound MeSH knows only as
a supplementary concept is grounded from its own name, filed under its heading descriptors, and
found by a filter on a heading."""

from __future__ import annotations

from typing import Any

import pytest

from fastbmrag import RAG
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title
from fastbmrag.vocab.loading import load_normalizer

BEVONIUM, BENZILATES = "C000002", "D001561"


def drafted(request: dict[str, Any]) -> dict[str, Any] | str:
    if schema_title(request) == "Draft":  # a model that names the compound as the paper does
        return {"e": [[1, "bevonium", "chemical"], [2, "peptic ulcer", "disease"]],
                "r": [[1, "treats", 2, [1]]]}  # fmt: skip
    return responder(request)


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("supp")
    with FakeOllama(responder=drafted) as fake:
        rag = RAG(wd, "c", ollama_host=fake.url)
        paper = {"paper_id": "B1", "title": "Bevonium in peptic ulcer",
                 "abstract": "Bevonium reduced gastric acid secretion in peptic ulcer."}  # fmt: skip
        assert rag.insert_paper([paper], pubtator=False).indexed == 1
        yield rag


def test_a_supplementary_concept_s_own_name_grounds_to_its_c_id() -> None:
    norm = load_normalizer()
    found = norm.normalize("bevonium", "chemical")
    assert (found.ontology_id, found.matched_by) == (BEVONIUM, "supplementary_name")
    assert norm.normalize("bevonium", "disease").ontology_id is None  # its heading is a chemical
    # a descriptor's own term keeps the descriptor, though an SCR also names it
    assert norm.normalize("endometriosis", "disease").ontology_id == "D004715"
    assert norm.ancestors(BEVONIUM)[0] == BENZILATES


def test_an_edge_of_a_c_id_lives_under_its_heading(rag: Any) -> None:
    [edge] = rag.edges().to_dict("records")
    assert (edge["source"], edge["source_id"]) == ("bevonium", BEVONIUM)
    assert BENZILATES in edge["source_ancestors"]
    found = rag.query("What treats peptic ulcer?", entities=[BENZILATES], no_answer=True)
    assert [e["payload"]["source_id"] for e in found["edges"]] == [BEVONIUM]
    card = rag.entity("bevonium")
    assert card is not None and "Benzilates" in str(card)


def test_status_counts_the_c_id_edges_stored_without_their_headings(rag: Any) -> None:
    from fastbmrag.store.base import Filter, Match

    assert rag.status()["supplementary"] == {
        "ids": 1, "with_heading": 1, "without_heading": 0, "edges_without_headings": 0
    }  # fmt: skip
    with rag.writer() as coll:  # as an earlier version stored it: no headings on the end
        coll.store.set_payload({"source_ancestors": []},
                               Filter(must=(Match("source_key", BEVONIUM),)))  # fmt: skip
    assert rag.status()["supplementary"]["edges_without_headings"] == 1


def test_a_short_form_defined_by_a_long_form_of_many_words_takes_the_long_form_s_concept() -> None:
    # nine words before "(SIDDT)": the long form is the supplementary concept's own name, which
    # the short form names; no part of it ("sudden infant death", a descriptor)
    text = ("A lethal phenotype characterized by sudden infant death with dysgenesis of the "
            "testes syndrome (SIDDT) was mapped to one gene.")  # fmt: skip
    found = load_normalizer().normalize("SIDDT", "disease", text)
    assert (found.ontology_id, found.matched_by) == ("C563856", "abbreviation")
