"""The library object: the CLI and the Python API run the same code with the same settings;
edges() and graph() for notebooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

DATA = Path(__file__).parent / "data"
QUESTION = "What is the role of IL1B in endometriosis?"


def snapshot(wd: Path) -> dict[str, dict[str, Any]]:
    with Collection.reader(wd, "papers") as coll:
        return {hit.id: hit.payload for hit in coll.store.scroll()}


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("answer", "no_evidence", "references", "filters", "parse")} | {
        "edges": [(e["id"], e["score"], e["weight"]) for e in result["edges"]],
    }


def test_cli_and_api_build_the_same_graph_and_answer_with_an_openai_backend(
    tmp_path: Path,
) -> None:
    papers = str(DATA / "query" / "papers.csv")
    with FakeOllama(responder=responder) as fake:
        backend = ["--llm-backend", "openai", "--openai-base-url", fake.url]
        runner = CliRunner()
        update = runner.invoke(
            cli, ["update", "-c", "papers", "--working-dir", str(tmp_path / "cli"), "-q", *backend,
                  papers],
        )  # fmt: skip
        assert update.exit_code == 0, update.output
        query = runner.invoke(
            cli, ["query", QUESTION, "--working-dir", str(tmp_path / "cli"), "--format", "json",
                  "--min-score", "-1", *backend],
        )  # fmt: skip
        assert query.exit_code == 0, query.output
        v1 = [r for r in fake.requests if r.path.startswith("/v1/")]

        rag = RAG(tmp_path / "api", "papers", llm_backend="openai", openai_base_url=fake.url)
        summary = rag.insert_paper(papers)
        from_api = rag.query(QUESTION, min_score=-1)
    assert v1 and not [r for r in fake.requests if r.path in ("/api/chat", "/api/embed")]
    assert summary.indexed == 5 and summary.failed == 0
    assert snapshot(tmp_path / "api") == snapshot(tmp_path / "cli")
    from_cli = json.loads(query.stdout)
    assert from_api["answer"] and from_api["references"][0]["paper_id"] == "Q1"
    assert comparable(from_api) == comparable(from_cli)


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("api")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(wd, "papers", ollama_host=fake.url)
        assert rag.insert_paper(str(DATA / "query" / "papers.csv")).indexed == 5
    return rag


def test_edges_is_a_dataframe_of_the_filtered_edges(rag: Any) -> None:
    frame = rag.edges(entities=["IL1B"])
    assert len(frame) == 2
    assert set(frame["paper_id"]) == {"Q1", "Q5"}
    assert set(frame["source"]) == {"IL1B"} and set(frame["source_id"]) == {"HGNC:5992"}
    assert {"description", "evidence", "weight", "point_id"} <= set(frame.columns)
    assert (frame["weight"] > 0).all()
    assert len(rag.edges()) == 13
    assert set(rag.edges(since=2018, until=2021)["year"]) == {2018, 2021}


def test_graph_is_a_directed_graph_of_the_entities(rag: Any) -> None:
    g = rag.graph(entities=["D004715"])  # endometriosis
    assert g.nodes["D004715"] == {
        "name": "Endometriosis",
        "type": "disease",
        "ontology_id": "D004715",
    }
    assert g.has_edge("HGNC:5992", "D004715")
    relations = g.edges["HGNC:5992", "D004715"]["relations"]
    assert [(r["relationship_type"], r["paper_id"]) for r in relations] == [
        ("downregulated_in", "Q1")
    ]
    assert all(v == "D004715" for _, v in g.edges)
