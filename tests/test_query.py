"""Query: parse -> filters, retrieval, --all, fallback, cited answers, JSON layout, CLI.

One small collection (tests/data/query/papers.csv, 5 abstracts, 13 edges) is indexed once per
module through the real pipeline, against a fake Ollama (a real HTTP server).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.errors import InputError
from fastbmrag.index import UpdateOptions, index_papers
from fastbmrag.llm import make_llm
from fastbmrag.papers import ReadReport, iter_papers
from fastbmrag.prompts import RELATIONSHIP_TYPES
from fastbmrag.query import (
    QueryOptions,
    QueryResult,
    query,
    render,
)
from fastbmrag.store.base import Filter, Match, Range
from fastbmrag.store.collection import Collection
from fastbmrag.store.places import choose_collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title
from fastbmrag.text.citations import keep as check_citations
from fastbmrag.vocab.loading import load_normalizer

DATA = Path(__file__).parent / "data" / "query"
NAME = "endo"
ENDO = "D004715"  # MeSH: Endometriosis
IL1B = "HGNC:5992"

QUESTIONS = {
    "regulated": "Which genes are up- or down-regulated in endometriosis?",
    "pathways": "What pathways contribute to endometriosis?",
    "mutations": "What mutations contribute to endometriosis?",
    "il1b": "What is the role of IL1B in endometriosis?",
    "mechanism": "What is the causal mechanism of endometriosis?",
}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=responder) as server:
        yield server


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    wd = tmp_path_factory.mktemp("query")
    papers = list(iter_papers([DATA / "papers.csv"], ReadReport()))
    with Collection.writer(wd, NAME, create=True) as coll:
        summary = index_papers(
            papers,
            coll,
            make_llm("ollama", host=fake.url),
            load_normalizer(),
            UpdateOptions(),
            progress=False,
        )
    assert summary.indexed == 5 and summary.edges == 13
    return wd


def _llm(fake: FakeOllama) -> Any:
    return make_llm("ollama", host=fake.url)


def ask(workdir: Path, fake: FakeOllama, question: str, **options: Any) -> tuple[QueryResult, int]:
    """Run a query; returns the result and the chat requests the fake received."""
    before = fake.counts["/api/chat"]
    with Collection.reader(workdir, NAME) as coll:
        result = query(
            question, coll, _llm(fake), load_normalizer(), options=QueryOptions(**options)
        )
    return result, fake.counts["/api/chat"] - before


def triples(result: QueryResult) -> set[tuple[str, str, str, str]]:
    return {
        (
            e.payload["paper_id"],
            e.payload["source"],
            e.payload["relationship_type"],
            e.payload["target"],
        )
        for e in result.edges
    }


# --- parse -> filters for the five questions of the fastbmRAG paper --------------------------


def test_regulated_genes_question_maps_to_regulation_filters(
    workdir: Path, fake: FakeOllama
) -> None:
    result, chats = ask(workdir, fake, QUESTIONS["regulated"], min_score=-1)
    f = result.filters
    assert [(e["id"], e["origin"]) for e in f["entities"]] == [(ENDO, "question")]
    assert f["relationship_types"] == [
        "upregulated_in",
        "downregulated_in",
        "upregulates",
        "downregulates",
    ]
    assert f["relationship_types_from"] == "parse"
    assert f["entity_types"] == ["gene"] and f["entity_types_from"] == "parse"
    assert f["fallback"] is None
    # ESR2, PGR, KRAS up; IL1B, PIK3CA down -- endometriosis papers only, no arthritis edges
    assert triples(result) == {
        ("Q1", "IL1B", "downregulated_in", "Endometriosis"),
        ("Q2", "ESR2", "upregulated_in", "Endometriosis"),
        ("Q2", "PGR", "upregulated_in", "Endometriosis"),
        ("Q3", "KRAS", "upregulated_in", "Endometriosis"),
        ("Q3", "PIK3CA", "downregulated_in", "Endometriosis"),
    }
    assert f["matched"] is None  # the question ranked the search: no hard filter to count
    assert chats == 2 and result.llm["chat_calls"] == 2  # parse + answer


def test_pathway_question_falls_back_and_says_so(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, QUESTIONS["pathways"], min_score=-1)
    f = result.filters
    assert f["entity_types"] == ["pathway"]
    assert f["relationship_types"] == ["part_of", "causes", "risk_factor_for", "associated_with"]
    # no pathway edge exists: the parsed types are dropped, endometriosis is kept
    assert f["matched"] == 0 or f["fallback"] is not None
    assert "without the relationship/answer types" in f["fallback"]
    assert f["used"]["entities"][0]["id"] == ENDO and f["used"]["entity_types"] == []
    assert {t[0] for t in triples(result)} == {"Q1", "Q2", "Q3"}
    # the relaxation is a warning, said first in text (after what the question names), before
    # the answer it qualifies
    assert result.answer is not None and not result.answer.startswith("Note:")
    assert result.warnings == [f["fallback"]]
    assert render(result, "text").startswith(
        "Understood: Endometriosis (D004715)\n\nNote: no edge matched the filters (D004715, "
        "types pathway, relations "
    )


def test_mutation_question_asks_for_variants(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, QUESTIONS["mutations"], min_score=-1)
    f = result.filters
    assert f["entity_types"] == ["variant"]
    assert f["relationship_types"] == ["modifies", "causes", "risk_factor_for", "associated_with"]
    assert [e["id"] for e in f["entities"]] == [ENDO]
    assert f["fallback"] is not None


def test_il1b_role_question_joins_both_entities(workdir: Path, fake: FakeOllama) -> None:
    result, chats = ask(workdir, fake, QUESTIONS["il1b"], min_score=-1)
    f = result.filters
    assert [(e["id"], e["type"]) for e in f["entities"]] == [(IL1B, "gene"), (ENDO, "disease")]
    assert f["match"] == "all"
    assert f["relationship_types"] == [] and f["entity_types"] == []
    # the edge that joins IL1B and endometriosis comes first, then the edges of each (IL1B ->
    # osteoarthritis, Q5, among them): ranked, not hidden
    first, *rest = result.edges
    assert (first.payload["paper_id"], first.statement) == ("Q1", "IL1B downregulated in Endometriosis")
    assert ("Q5", "IL1B", "downregulated_in", "Osteoarthritis") in triples(result)
    assert all({IL1B, ENDO} & {e.payload["source_id"], e.payload["target_id"]} for e in rest)
    assert {e.kept_by for e in result.edges} == {"id"}
    assert result.answer is not None and "[1]" in result.answer
    assert result.references[0]["pmid"] == "90000001"
    assert chats == 2


def test_mechanism_question_maps_to_causal_relations(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, QUESTIONS["mechanism"], min_score=-1)
    f = result.filters
    assert f["relationship_types"] == [
        "causes",
        "risk_factor_for",
        "upregulates",
        "downregulates",
        "regulates",
    ]
    assert f["entity_types"] == []
    assert [e["id"] for e in f["entities"]] == [ENDO]


def test_filters_become_store_conditions(workdir: Path) -> None:
    from fastbmrag.query import Entity, FilterSpec, QueryOptions

    spec = FilterSpec(
        entities=[
            Entity("IL1B", "IL1B", IL1B, "gene", "question"),
            # as if Endometriosis had narrower descriptors: its filter covers them too
            Entity("endometriosis", "Endometriosis", ENDO, "disease", "question", expanded_to=3),
        ],
        relationship_types=("upregulated_in",),
        entity_types=("gene",),
        options=QueryOptions(since=2015, until=2020, journals=("Human Reproduction",)),
    )
    either = lambda key, vals: Filter(  # noqa: E731
        should=(Match(f"source_{key}", any_of=vals), Match(f"target_{key}", any_of=vals))
    )

    def about(ids: tuple[str, ...]) -> Filter:  # the entity, or a concept or gene below it
        return Filter(should=(*either("key", ids).should, *either("ancestors", ids).should))

    assert spec.to_filter() == Filter(
        must=(
            either("key", (IL1B,)),  # a leaf: itself only, at no extra cost
            about((ENDO,)),
            # the payload filters in the order of their fields (fastbmrag.fields)
            Match("journal", any_of=("Human Reproduction",)),
            Range("year", gte=2015, lte=2020),
            either("type", ("gene",)),
            Match("relationship_type", any_of=("upregulated_in",)),
        )
    )
    spec.match = "any"
    assert spec.to_filter().must[0] == Filter(
        should=(*either("key", (IL1B, ENDO)).should, *either("ancestors", (ENDO,)).should)
    )
    spec.exact = True  # --exact: the entities themselves
    assert spec.to_filter().must[0] == either("key", (IL1B, ENDO))


# --- flags override the parse ---------------------------------------------------------------


def test_flags_override_parse_and_filter_inside_the_store(workdir: Path, fake: FakeOllama) -> None:
    result, chats = ask(
        workdir,
        fake,
        QUESTIONS["regulated"],
        entities=("IL-1beta",),  # an alias: normalised to IL1B
        relationship_types=("downregulated_in",),
        entity_types=("gene",),
        min_score=-1,
    )
    assert [(e["id"], e["origin"]) for e in result.filters["entities"]] == [(IL1B, "flag")]
    assert result.filters["relationship_types_from"] == "flag"
    assert result.parse["llm"] is False  # both parse outputs given as flags: no parse call
    assert triples(result) == {
        ("Q1", "IL1B", "downregulated_in", "Endometriosis"),
        ("Q5", "IL1B", "downregulated_in", "Osteoarthritis"),
    }
    assert chats == 1  # the answer only

    result, _ = ask(
        workdir, fake, "IL1B", no_answer=True, entities=(IL1B,), since=2016, min_score=-1
    )
    assert triples(result) == {("Q5", "IL1B", "downregulated_in", "Osteoarthritis")}
    result, _ = ask(
        workdir,
        fake,
        "What was reported?",
        no_answer=True,
        journals=("Human Reproduction",),
        min_score=-1,
    )
    assert {t[0] for t in triples(result)} == {"Q1"}
    result, _ = ask(
        workdir, fake, "What was reported?", no_answer=True, paper_ids=("Q2",), min_score=-1
    )
    assert {t[1] for t in triples(result)} == {"ESR2", "PGR", "HOXA10", "ESR1"}


def test_bad_option_values_are_one_line_errors() -> None:
    with pytest.raises(InputError, match="Unknown relationship type 'upregulated'"):
        QueryOptions(relationship_types=("upregulated",))
    with pytest.raises(InputError, match="since 2020 is after the until year 2010"):
        QueryOptions(since=2020, until=2010)
    # an empty value filters on nothing real: "no evidence" would be a wrong answer
    with pytest.raises(InputError, match="^paper_ids holds an empty value"):
        QueryOptions(paper_ids=("P1", " "))
    with pytest.raises(InputError, match="^journals holds an empty value"):
        QueryOptions(journals=("",))


# --- retrieval ---------------------------------------------------------------------------------


def test_no_answer_makes_zero_chat_calls(workdir: Path, fake: FakeOllama) -> None:
    result, chats = ask(workdir, fake, QUESTIONS["il1b"], no_answer=True)
    assert chats == 0 and result.llm["chat_calls"] == 0 and result.llm["embed_requests"] == 1
    assert result.answer is None and result.references == []
    assert result.parse["llm"] is False
    assert result.edges[0].payload["source_id"] == IL1B


def test_all_returns_every_matching_edge(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(
        workdir, fake, QUESTIONS["regulated"], no_answer=True, all=True, min_score=None, top_k=1
    )
    assert result.retrieval["all"] is True
    assert result.filters["matched"] == 9  # every endometriosis edge (no parse with --no-answer)
    assert len(result.edges) == 9
    assert {t[0] for t in triples(result)} == {"Q1", "Q2", "Q3"}
    scores = [e.score for e in result.edges]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    # edges of one paper with the same text tie: they come in the order of their ids, however
    # the store happens to keep them
    pairs = zip(result.edges, result.edges[1:], strict=False)
    ties = [(a.id, b.id) for a, b in pairs if a.score == b.score]
    assert ties and all(a < b for a, b in ties)

    top, _ = ask(workdir, fake, QUESTIONS["regulated"], no_answer=True, top_k=3, min_score=None)
    assert len(top.edges) == 3


def test_an_entity_without_edges_gets_no_evidence_never_other_edges(
    workdir: Path, fake: FakeOllama
) -> None:
    result, chats = ask(workdir, fake, "What does BRCA1 do?", entities=("BRCA1",), min_score=-1)
    assert result.edges == [] and result.filters["matched"] == 0 and result.answer is None
    assert chats == 1  # the parse only: no answer call
    assert result.no_evidence is not None
    assert result.no_evidence["reason"] == (
        "the collection 'endo' holds no edge about BRCA1 (HGNC:1100)"
    )
    assert result.no_evidence["searched"] == ["BRCA1 (HGNC:1100)"]
    assert result.references == [] and result.uncited_sentences == []

    # a name close to one in the collection is suggested
    near, _ = ask(workdir, fake, "x", no_answer=True, entities=("ESR3",), min_score=-1)
    assert near.no_evidence is not None
    assert {c["name"] for c in near.no_evidence["closest"][:2]} == {"ESR1", "ESR2"}
    assert {c["name"]: c["degree"] for c in near.no_evidence["closest"]}["ESR1"] == 1
    for fmt in ("text", "markdown"):
        assert "ESR1 (HGNC:3467, 1 edge)" in render(near, fmt)  # counted in the singular


def test_edges_below_the_score_floor_are_no_evidence(workdir: Path, fake: FakeOllama) -> None:
    # a question naming nothing of the collection, none of whose words weighs in it: unrelated,
    # whatever the floor (what a question names or its words relate an edge, not similarity)
    result, chats = ask(workdir, fake, "zebrafish fin regeneration", min_score=-1)
    assert result.edges == [] and result.answer is None and chats == 1
    assert result.no_evidence is not None
    assert result.no_evidence["reason"].startswith("no entity of the question was recognised")
    # where flags alone select the evidence, the floor holds
    result, chats = ask(workdir, fake, "zebrafish fin regeneration", min_score=0.99,
                        relationship_types=RELATIONSHIP_TYPES)  # fmt: skip
    assert result.edges == [] and result.answer is None and chats == 1
    assert result.no_evidence is not None
    assert result.no_evidence["reason"].startswith("13 edges passed the filters (")
    # the option it names, in each door's words: the field in JSON, the flag on the command line
    assert "(min_score 0.99; -1 keeps every edge)" in result.to_dict()["no_evidence"]["reason"]
    flag = {"min_score": "--min-score"}.get
    assert "(--min-score 0.99; -1 keeps every edge)" in render(result, "text", flag)  # type: ignore[arg-type]
    assert "\x1f" not in render(result, "json", flag)  # type: ignore[arg-type]


def test_uncited_sentences_are_marked_and_an_uncited_answer_is_withheld(
    workdir: Path,
) -> None:
    def answer_with(text: str) -> Any:
        def respond(request: dict[str, Any]) -> Any:
            if schema_title(request) == "Answer":
                return {"answer": text}
            return responder(request)

        return respond

    with FakeOllama(responder=answer_with(
        "IL1B is lower in endometriosis [1]. It is also a well-known cytokine."
    )) as fake:  # fmt: skip
        result, _ = ask(workdir, fake, QUESTIONS["il1b"], min_score=-1)
    assert result.answer == (
        "IL1B is lower in endometriosis [1]. It is also a well-known cytokine. [uncited]"
    )
    assert result.uncited_sentences == ["It is also a well-known cytokine."]
    assert result.no_evidence is None and result.references[0]["paper_id"] == "Q1"

    with FakeOllama(responder=answer_with("IL1B matters [99]. Trust me.")) as fake:
        result, _ = ask(workdir, fake, QUESTIONS["il1b"], min_score=-1)
    assert result.answer is None and result.references == []
    assert result.no_evidence is not None
    assert result.no_evidence["reason"].startswith(
        f"the answer cited none of the {len(result.edges)} evidence items"
    )


# --- answers and citations -----------------------------------------------------------------


def test_citations_map_to_the_right_papers(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, QUESTIONS["regulated"], min_score=-1)
    by_n = {e.n: e.payload["paper_id"] for e in result.edges}
    assert result.answer is not None
    cited = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", result.answer)}
    assert cited == set(by_n)
    for ref in result.references:
        assert {by_n[n] for n in ref["citations"]} == {ref["paper_id"]}
    refs = {r["paper_id"]: r for r in result.references}
    assert refs["Q2"]["pmid"] == "90000002" and refs["Q2"]["pmcid"] == "PMC9000002"
    assert refs["Q2"]["journal"] == "Fertility and Sterility" and refs["Q2"]["year"] == 2018
    assert refs["Q3"]["title"] == "Somatic mutations in deep infiltrating endometriosis"
    assert all(e.cited for e in result.edges)


def test_check_citations_removes_out_of_range() -> None:
    text, valid, removed = check_citations("A rises [2, 9]. B falls [1-3] and C [0].", 3)
    assert text == "A rises [2]. B falls [1][2][3] and C."
    assert valid == [2, 1, 3] and removed == [9, 0]


def test_out_of_range_citation_from_the_model_is_removed(workdir: Path) -> None:
    def bad_citer(request: dict[str, Any]) -> dict[str, Any] | str:
        if request.get("format", {}).get("title") == "Answer":
            return {"answer": "IL1B is lower in endometriosis [1], see also [99]."}
        return responder(request)

    with FakeOllama(responder=bad_citer) as server:
        result, _ = ask(workdir, server, QUESTIONS["il1b"], min_score=-1)
    assert result.answer == "IL1B is lower in endometriosis [1], see also."
    assert result.retrieval["removed_citations"] == [99]
    assert [r["paper_id"] for r in result.references] == ["Q1"]


def test_many_edges_are_map_reduced_within_budget(workdir: Path, fake: FakeOllama) -> None:
    # 13 edges in groups of 5: 3 partial answers + 1 merge + 1 parse; a flag's filter (every
    # paper is from 2010 on) lets edges in that share no word with the question
    result, chats = ask(
        workdir, fake, "genes and arthritis", answer_batch=5, min_score=-1, link=False, since=2010
    )
    assert len(result.edges) == 13
    assert chats == 5
    assert result.answer is not None
    assert {r["paper_id"] for r in result.references} == {"Q1", "Q2", "Q3", "Q4", "Q5"}


# --- JSON layout (README, "Query") -----------------------------------------------------------


def test_json_layout(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, QUESTIONS["il1b"], min_score=-1)
    d = json.loads(json.dumps(result.to_dict()))
    assert list(d) == [
        "question",
        "collection",
        "answer",
        "no_evidence",
        "understood",
        "uncited_sentences",
        "consensus",
        "follow_ups",
        "references",
        "edges",
        "filters",
        "parse",
        "retrieval",
        "timings",
        "llm",
        "warnings",
    ]
    assert d["collection"] == NAME
    assert set(d["references"][0]) == {
        "paper_id",
        "pmid",
        "pmcid",
        "doi",
        "title",
        "journal",
        "year",
        "citations",
        "retracted",
        "design",
        "organisms",
        "study",
    }
    edge = d["edges"][0]
    assert set(edge) == {
        "n",
        "id",
        "score",
        "weight",
        "cited",
        "kept_by",
        "source",
        "source_id",
        "relationship_type",
        "target",
        "target_id",
        "paper_id",
        "payload",
    }
    assert edge["source_id"] == IL1B and edge["target_id"] == ENDO
    assert edge["kept_by"] == "id"  # the edge holds the linked ids
    assert 0.0 < edge["weight"] <= 1.0
    assert [(u["text"], u["id"], u["used_as"]) for u in d["understood"]] == [
        ("IL1B", IL1B, "filter"),
        ("endometriosis", ENDO, "filter"),
    ]
    assert set(d["filters"]) >= {"entities", "relationship_types", "matched", "fallback", "used"}
    assert set(d["timings"]) >= {
        "link_s",
        "parse_s",
        "embed_s",
        "filter_s",
        "search_s",
        "answer_s",
        "total_s",
    }
    assert d["llm"]["chat_calls"] == 2 and d["llm"]["embed_requests"] == 1


# --- CLI ---------------------------------------------------------------------------------------


def test_cli_json_and_text(workdir: Path, fake: FakeOllama) -> None:
    runner = CliRunner()
    args = ["query", QUESTIONS["il1b"], "--working-dir", str(workdir), "--ollama-host", fake.url]
    res = runner.invoke(cli, [*args, "--format", "json", "--min-score", "-1", "--no-cache"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["collection"] == NAME  # the only collection, chosen without --collection
    assert d["references"][0]["pmid"] == "90000001"

    res = runner.invoke(cli, [*args, "--min-score", "-1", "--no-cache"])
    assert res.exit_code == 0, res.output
    assert "References:" in res.output and "PMID 90000001" in res.output

    res = runner.invoke(cli, [*args, "--no-answer", "--format", "markdown", "--min-score", "-1"])
    assert res.exit_code == 0, res.output
    assert "| 1 |" in res.output and "IL1B downregulated in Endometriosis" in res.output


def test_cli_collection_choice_errors(tmp_path: Path, workdir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["query", "q", "--working-dir", str(tmp_path / "empty")])
    assert res.exit_code == 2
    assert "No collection in" in res.output
    res = runner.invoke(cli, ["query", "q", "--working-dir", str(workdir), "-c", "nope"])
    assert res.exit_code == 2 and "No collection 'nope'" in res.output
    res = runner.invoke(cli, ["query", "q", "--working-dir", str(workdir), "-r", "upregulated"])
    assert res.exit_code == 2 and "Unknown relationship type 'upregulated'" in res.output


def test_several_collections_need_a_name(tmp_path: Path) -> None:
    for name in ("a", "b"):
        Collection.writer(tmp_path, name, create=True).close()
    with pytest.raises(InputError, match=r"Several collections .*\(a, b\)"):
        choose_collection(tmp_path, None)
    assert choose_collection(tmp_path, "b") == "b"


def test_min_weight_and_weights_exact_as_degrees_change(tmp_path: Path, fake: FakeOllama) -> None:
    """Degrees that later papers change: --min-weight selects exactly the edges whose weight
    reaches it, and results show current degrees."""
    papers = list(iter_papers([DATA / "papers.csv"], ReadReport()))
    with Collection.writer(tmp_path, NAME, create=True) as coll:
        for paper in papers:  # one batch per paper: degrees change after edges are stored
            index_papers(
                [paper], coll, _llm(fake), load_normalizer(), UpdateOptions(), progress=False
            )
    with Collection.reader(tmp_path, NAME) as coll:
        n_nodes = coll.ledger.node_count()
        degrees = {key: degree for key, *_, degree in coll.ledger.entities()}

        def current(payload: dict[str, Any]) -> tuple[int, int]:
            return degrees[payload["source_key"]], degrees[payload["target_key"]]

        # every edge: a flag's filter that every paper passes lets in edges that share no word
        # with the question
        every = query("cytokines", coll, _llm(fake), load_normalizer(),
                      options=QueryOptions(no_answer=True, no_llm_parse=True, all=True, min_score=-1, link=False, since=2010))  # fmt: skip
        assert len(every.edges) == 13
        for e in every.edges:
            assert (e.payload["source_degree"], e.payload["target_degree"]) == current(e.payload)
            assert e.weight == min(current(e.payload)) / n_nodes
        tested = 0
        for k in range(1, max(degrees.values()) + 1):
            expected = {e.id for e in every.edges if min(current(e.payload)) >= k}
            if not expected:  # no evidence: nothing to compare
                continue
            result = query("cytokines", coll, _llm(fake), load_normalizer(),
                           options=QueryOptions(no_answer=True, no_llm_parse=True, all=True,
                                                min_score=-1, min_weight=k / n_nodes,
                                                link=False))  # fmt: skip
            assert {e.id for e in result.edges} == expected, k
            tested += len(expected) < len(every.edges)
        assert tested  # a threshold that excluded some edges


def test_pmid_filter(workdir: Path, fake: FakeOllama) -> None:
    result, _ = ask(workdir, fake, "What was reported?", no_answer=True, pmids=("90000002",),
                    min_score=-1)  # fmt: skip
    assert {t[0] for t in triples(result)} == {"Q2"}
    assert result.filters["pmids"] == ["90000002"]
    cli_result = CliRunner().invoke(
        cli, ["query", "What was reported?", "--working-dir", str(workdir), "--ollama-host",
              fake.url, "--no-answer", "--pmid", "90000005", "--min-score", "-1", "--json"],
    )  # fmt: skip
    assert cli_result.exit_code == 0, cli_result.output
    assert {e["paper_id"] for e in json.loads(cli_result.stdout)["edges"]} == {"Q5"}
