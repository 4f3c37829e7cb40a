"""The benchmark scripts, run against the fake model server, and the generated command reference."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from argparse import Namespace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from doors_support import page

from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder, schema_title, task_text

ROOT = Path(__file__).resolve().parents[1]
BIORED = ROOT / "tests" / "data" / "biored"


def script(name: str) -> ModuleType:
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))  # as when run: `python scripts/NAME.py`
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_bench_extract_scores_pairs_against_the_gold_relations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def answer(request: dict[str, Any]) -> Any:
        if schema_title(request) != "Draft":
            return pipeline_responder(request)
        if "Hepatocyte nuclear factor-6" not in task_text(request):
            return {"e": [], "r": []}
        return {
            "e": [
                [1, "HNF-6", "gene"],
                [2, "type II diabetes", "disease"],
                [3, "MODY3", "gene"],
            ],
            "r": [
                [1, "associated_with", 2, [2]],  # a gold pair, in the abstract's opening
                [3, "associated_with", 2, [3]],  # not a gold pair
            ],
        }

    bench = script("bench_extract")
    with FakeOllama(responder=answer) as fake:
        code = bench.main(
            ["--model", "phi4", "--host", fake.url, "--json",
             "--biored", str(BIORED / "train_first3.PubTator"),
             "--gene-info", str(BIORED / "gene_info_first3.tsv")]
        )  # fmt: skip
        chats = len(fake.requests_to("/api/chat"))
    assert code == 0 and chats == 3
    out = json.loads(capsys.readouterr().out)
    assert out["papers"] == 3 and out["gold_relations_left_out"] == 13  # variant relations
    assert out["overall"] == {"precision": 0.5, "recall": round(1 / 7, 4), "f1": 0.2222,
                              "tp": 1, "predicted": 2, "gold": 7}  # fmt: skip
    assert out["recall_by_gold_type"] == {"Association": 0.2, "Positive_Correlation": 0.0,
                                          "Bind": 0.0}  # fmt: skip
    assert out["precision_by_predicted_type"] == {"associated_with": 0.5}
    assert out["chat_calls_per_paper"] == 1.0 and out["completion_tokens_per_paper"] > 0
    # BioRED marks the gold pair background; the abstract's opening, before "We", says so
    background = out["background"]
    assert (background["overall"]["relations"], background["overall"]["precision"],
            background["overall"]["recall"]) == (1, 1.0, 1.0)  # fmt: skip
    # decided by the findings model where it is installed (the test extra installs it)
    assert (background["classifier"]["relations"], background["model"]["relations"]) == (1, 0)


def test_bench_extract_says_where_the_data_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = script("bench_extract").main(["--model", "m", "--biored", str(tmp_path / "none")])
    assert code == 2
    assert "not found: give its place with --biored" in capsys.readouterr().err


def test_bench_tokens_meets_the_per_relation_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    bench = script("bench_tokens")
    out = bench.measure(bench.papers()[:8], None)
    assert out["relations"] > 0 and out["refined_relations"] > 0
    assert out["tokenizer"] == "cl100k_base"  # real tokens, not characters / 4
    per_paper = out["stage1_tokens_per_paper"]
    assert per_paper["new"] <= 0.6 * per_paper["objects"] < per_paper["old"]  # arrays: 40 % less
    assert out["stage1_tokens_per_relation"]["new"] <= 30
    assert out["stage2_overhead_tokens_per_relation"]["new"] <= 8
    assert 0 < out["stage1_study_code_tokens_per_paper"] <= 8  # the study's code: a few tokens
    worst = out["schema_worst_case"]
    assert (
        worst["stage1_with_one_new_entity"] <= 30 and worst["stage2_overhead_two_citations"] <= 12
    )


def test_bench_query_broad_filters_find_edges_through_the_ancestors(tmp_path: Path) -> None:
    bench = script("bench_query")
    bench.build(tmp_path, 300, 16)
    with FakeOllama(dims=16) as fake:
        # every query must retrieve edges (asserted inside): broad concepts only through the
        # ends' ancestors, as no edge is about them itself
        times = asyncio.run(bench.in_process(tmp_path, fake.url, 4, 16, broad=True))
        # one cold CLI call on the collection (it exits if the call fails or finds no edge)
        seconds = bench.cli_call(
            tmp_path, fake.url, bench.QUESTIONS[0], Namespace(drop_caches=False)
        )
    assert len(times) == 4 and seconds > 0


def test_bench_query_times_other_layouts_of_a_copy_in_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = script("bench_query")
    wd = tmp_path / "c"
    bench.build(wd, 300, 16)
    laid = [bench.relayout(wd, layout) for layout in ("merge:1:1024", "int8")]
    assert [d.name for d in laid] == ["c-merge-1-1024", "c-int8"]
    assert bench.relayout(wd, "int8") == laid[1]  # made once
    args = Namespace(repeat=3, dim=16, broad=False, pieces=True)
    with FakeOllama(dims=16) as fake:
        for d in [wd, *laid]:  # each answers the benchmark's questions (asserted inside)
            bench.in_process_series(d, fake.url, args, where=f" ({d.name})")
    out = capsys.readouterr().out
    assert out.count("in-process --no-answer top-50 (") == 3
    assert out.count("the store's one request p50") == 3 and "ms CPU" in out
    with pytest.raises(SystemExit):
        bench.relaid_shard(str(wd / "bench" / "shard"), "merge:2")


def test_bench_memory_measures_update_and_query_in_child_processes() -> None:
    results = script("bench_memory").main(
        ["--update", "20", "40", "--nightly", "10", "--query-edges", "2000", "--recall", "3"]
    )
    small, large = results["update"]
    assert (small["papers"], small["indexed"], large["indexed"]) == (20, 20, 40)
    nightly = results["nightly"]  # new papers into the 40-paper collection, none unchanged
    assert (nightly["into_papers"], nightly["indexed"]) == (40, 10) and nightly["peak_rss_mb"] > 50
    assert (results["nightly_query"]["into_edges"], results["nightly_query"]["indexed"]) == (
        2000,
        10,
    )
    assert 50 < small["peak_rss_mb"] < 2000 and large["edges"] > small["edges"]
    assert results["update_growth"] == round(large["peak_rss_mb"] / small["peak_rss_mb"], 2)
    query = results["query"]
    assert query["edges"] == 2000 and query["retrieved"] == 50
    assert 0.5 <= query["recall_at_50"] <= 1.0


def test_the_command_reference_is_the_clis_own_help() -> None:
    gen = script("gen_reference")
    current = gen.REFERENCE.read_text(encoding="utf-8")
    # regenerate with `python scripts/gen_reference.py` after changing an option or a help text
    assert gen.rendered(current) == current
    assert "### fastbmrag update" in current and "--concurrency INTEGER" in current


def test_bench_web_builds_a_collection_the_page_can_read(tmp_path: Path) -> None:

    from fastbmrag import RAG

    bench = script("bench_web")
    bench.build(tmp_path, 160)
    client = page(RAG(tmp_path, "bench"))
    top = client.get("/api/overview").json()
    assert top["edges"] == 160 and top["papers"] == 20 and top["top"]["gene"]
    gene = top["top"]["gene"][0]["name"]
    assert bench.timed(client, f"/api/entity?name={gene}", 1)["max_s"] > 0


def test_bench_pubtator_grounds_served_annotations_and_replays_saved_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fastbmrag.testing.fake_pubtator import biocjson, read_pubtator

    bench = script("bench_pubtator")
    gold = BIORED / "train_first3.PubTator"
    assert bench.main(["--biored", str(gold), "--json"]) == 0
    served = json.loads(capsys.readouterr().out)
    assert served["documents"] == 3 and served["requests"] == 1  # the re-run asked nothing
    on, off = served["gold names"]["pubtator on"], served["gold names"]["dictionaries only"]
    assert on["names"] == off["names"] > 20
    assert on["by source"]["pubtator"]["names"] > 0.9 * on["names"]
    assert on["right"] > off["right"]
    # each figure per entity type and per source of the id, adding up to the whole
    assert sum(r["names"] for r in on["by type"].values()) == on["names"]
    assert set(on["by type"]) == {"gene", "disease", "chemical"}
    assert on["by source"]["pubtator"]["right"] > 0.9
    # NCBI's replies, saved by --capture, are scored offline by --replay
    replies = tmp_path / "replies.json"
    docs = read_pubtator(gold)[:2]  # one paper not annotated yet
    replies.write_text(json.dumps([{"PubTator3": [biocjson(d) for d in docs]}]))
    assert bench.main(["--replay", str(replies), str(gold), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["requests"] == 0 and "saved in" in replayed["annotations from"]
    by = replayed["gold names"]["pubtator on"]["by source"]
    assert by["pubtator"]["names"] < on["by source"]["pubtator"]["names"]
    assert by["dictionary"]["names"] > 0


def test_bench_retrieval_asks_real_questions_of_their_abstracts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = script("bench_retrieval")
    sample = ROOT / "tests" / "data" / "pubmedqa" / "pqal_first15.json"
    assert bench.main(["--pqa", str(sample), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    every = out["all"]
    assert (every["questions"], every["indexed"], every["held_back"]) == (15, 12, 3)
    assert every["understood"]["hit@50"] >= every["plain"]["hit@50"] > 0
    assert 0 < every["understood"]["MRR"] <= every["understood"]["hit@50"]
    assert every["no evidence (indexed)"] <= 1 / 12 and every["unrelated (held back)"] == 0
    # the stand-in reader names noun phrases as written, typed by their own words
    assert bench.noun_phrases("Serum IL6 was raised in chronic tinnitus.") == [
        "Serum IL6", "raised", "chronic tinnitus"
    ]  # fmt: skip
    assert bench.phrase_type(["breast", "cancer"]) == "disease"
    assert bench.phrase_type(["usual", "care"]) == "other"


def test_bench_retype_grounds_names_typed_other(capsys: pytest.CaptureFixture[str]) -> None:
    bench = script("bench_retype")
    assert bench.main(["--biored", str(BIORED / "train_first3.PubTator"), "--gene-info",
                       str(BIORED / "gene_info_first3.tsv"), "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    rows = {k: v for half in out.values() for k, v in half.items()}
    other = [v for k, v in rows.items() if k.endswith("typed other") and "not" not in k]
    right, wrong = sum(r["right"] for r in other), sum(r["wrong"] for r in other)
    assert right > 10 and right >= 5 * wrong


def test_bench_digest_finds_the_new_papers_and_the_pairs_they_contradict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = script("bench_digest")
    monkeypatch.setattr(sys, "argv", ["bench_digest.py", "--papers", "60", "--new", "20",
                                      "--repeat", "1", "--dir", str(tmp_path)])  # fmt: skip
    bench.main()
    said = capsys.readouterr().out
    # 20 new papers of 5 edges; the 2 that restate an older paper's pairs the other way round
    assert "20 new papers, 100 new edges, 10 newly contradicted pairs" in said


def test_bench_design_counts_the_labels_records_give() -> None:
    bench = script("bench_design")
    out = bench.count(ROOT / "tests" / "data" / "medline" / "pubmed20n0014_first60.xml.gz")
    assert out["papers"] and 0 < out["design from metadata"] < 1
    assert out["by design"]["case-report"] >= 1 and out["by organism"]["human"] >= 1


def test_bench_novelty_scores_the_text_s_roles_against_the_novelty_marks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    title = "IL6 and TNF in endometriosis"
    abstract = ("Previous studies have shown that IL6 is raised in endometriosis. "
                "We found TNF raised in endometriosis. TNF binds IL6.")  # fmt: skip
    offset = len(title) + 1

    def span(name: str, nth: int, kind: str, ident: str) -> str:
        start = offset + [i for i in range(len(abstract)) if abstract.startswith(name, i)][nth]
        return f"1\t{start}\t{start + len(name)}\t{name}\t{kind}\t{ident}"

    lines = [f"1|t|{title}", f"1|a|{abstract}",
             span("IL6", 0, "GeneOrGeneProduct", "3569"),
             span("endometriosis", 0, "DiseaseOrPhenotypicFeature", "D004715"),
             span("TNF", 0, "GeneOrGeneProduct", "7124"),
             span("endometriosis", 1, "DiseaseOrPhenotypicFeature", "D004715"),
             span("TNF", 1, "GeneOrGeneProduct", "7124"), span("IL6", 1, "GeneOrGeneProduct", "3569"),
             "1\tPositive_Correlation\t3569\tD004715\tNo",
             "1\tPositive_Correlation\t7124\tD004715\tNovel",
             "1\tBind\t7124\t3569\tNo", ""]  # fmt: skip
    path = tmp_path / "small.PubTator"
    path.write_text("\n".join(lines))
    assert script("bench_novelty").main([str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    # PMID 1 is odd: the held-out half. The rules: the restated relation is background; the
    # found one and the one no role decides, findings
    assert out["rules"] == {"relations": 3, "background": {"precision": 1.0, "recall": 0.5},
                            "accuracy": 0.667}  # fmt: skip
    assert out["all_findings"] == {"relations": 3, "background": {"precision": 0.0, "recall": 0.0},
                                   "accuracy": 0.333}  # fmt: skip
    assert out["classifier"]["relations"] == 3


def test_command_outputs_writes_every_command_s_masked_output(tmp_path: Path) -> None:
    out = tmp_path / "outputs.txt"
    assert script("command_outputs").main([str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "=== status -> exit 0\nCollection  t\n" in text
    assert "=== query x --ollama-host URL --top-k 0 -> exit 2\nError: --top-k must be " in text
    assert '"pid": N' in text and "WD/t/ledger.sqlite" in text  # what differs run to run
    assert text.count("\n=== ") == 21 and "-> exit 70" not in text
