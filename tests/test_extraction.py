"""The model points, the program quotes: stored evidence and descriptions are cut from the paper,
invalid relations are salvaged, and the per-paper LLM budget holds at the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from test_update import real_papers

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.papers import Paper, write_papers_csv
from fastbmrag.prompts import refine_messages
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import pipeline_responder, responder, schema_title, task_text


def run_update(fake: FakeOllama, wd: Path, csv: Path, *args: str) -> Any:
    result = CliRunner().invoke(
        cli,
        ["update", "-c", "papers", "--working-dir", str(wd), "--ollama-host", fake.url,
         "-q", "--json", str(csv), *args],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def stored(wd: Path) -> list[dict[str, Any]]:
    with Collection.reader(wd, "papers") as coll:
        return [hit.payload for hit in coll.store.scroll()]


def source_text(paper: Paper, ev: dict[str, Any]) -> str:
    if ev["where"] == "title":
        return paper.title
    if ev["where"] == "abstract":
        return paper.abstract
    assert ev["where"] == "passage"
    return paper.paragraphs[ev["passage"] - 1]


def test_every_stored_text_is_cut_from_the_paper(tmp_path: Path) -> None:
    papers = {p.paper_id: p for p in real_papers()}
    csv = tmp_path / "papers.csv"
    write_papers_csv(papers.values(), csv)
    with FakeOllama(responder=pipeline_responder) as fake:
        summary = run_update(fake, tmp_path / "wd", csv, "--concurrency", "1")
        ordered = sorted(
            fake.requests_to("/api/chat") + fake.requests_to("/api/embed"), key=lambda r: r.started
        )
    assert summary["failed"] == 0 and summary["dropped_relations"] == 0
    edges = stored(tmp_path / "wd")
    assert {e["description_source"] for e in edges} == {"cited", "refined"}
    sections = {ev["section"] for e in edges for ev in e["evidence"] if ev["where"] == "passage"}
    assert sections - {""}  # passages carry the section title the JATS reader gave them
    for edge in edges:
        paper = papers[edge["paper_id"]]
        assert edge["evidence"]
        for ev in edge["evidence"]:
            assert source_text(paper, ev)[ev["start"] : ev["end"]] == ev["text"]
        if edge["description_source"] == "cited":
            assert all(ev["where"] in ("title", "abstract") for ev in edge["evidence"])
            assert edge["description"] == " ".join(ev["text"] for ev in edge["evidence"])
        else:
            assert all(ev["where"] == "passage" for ev in edge["evidence"])
            assert "[" not in edge["description"]  # the inline citation markers are stripped

    # The budget per paper, at the server: with one paper in flight, a paper's requests run
    # from its draft call to the next paper's draft call (the preflight's size probes precede).
    per_paper: list[dict[str, int]] = []
    for rec in ordered:
        if rec.path == "/api/chat" and schema_title(rec.json) == "Draft":
            per_paper.append({"chat": 0, "embed": 0})
        if per_paper:
            per_paper[-1]["chat" if rec.path == "/api/chat" else "embed"] += 1
    assert len(per_paper) == 12
    assert max(p["chat"] for p in per_paper) == 2 and max(p["embed"] for p in per_paper) == 2


def test_invalid_relations_are_dropped_and_counted_and_the_paper_kept(tmp_path: Path) -> None:
    abstract = (
        "Endometriosis is a chronic inflammatory disease. IL1B was higher in peritoneal fluid. "
        "VEGFA rose in ectopic lesions. ESR2 was increased in stromal cells."
    )
    paper = Paper("P1", abstract=abstract, title="Cytokines in endometriosis")
    csv = tmp_path / "papers.csv"
    write_papers_csv([paper], csv)

    def answer(request: dict[str, Any]) -> Any:
        if schema_title(request) != "Draft":
            return pipeline_responder(request)
        assert "[3] IL1B was higher" in task_text(request)
        return {
            "e": [
                [1, "IL1B", "gene"],
                [2, "endometriosis", "disease"],
                [3, "vascular endothelial growth factor A " * 8, "gene"],
                [4, "ESR2", "gene"],
            ],
            "r": [
                [1, "upregulated_in", 2, [3]],
                [3, "upregulated_in", 2, [4]],  # over-long name
                [4, "upregulated_in", 2, [12]],  # no sentence 12
            ],
        }

    with FakeOllama(responder=answer) as fake:
        summary = run_update(fake, tmp_path / "wd", csv)
    assert summary["indexed"] == 1 and summary["failed"] == 0
    assert summary["dropped_relations"] == 2
    assert "2 drafted relations dropped" in summary["line"]
    [edge] = stored(tmp_path / "wd")
    assert (edge["source"], edge["relationship_type"], edge["target_id"]) == (
        "IL1B",
        "upregulated_in",
        "D004715",
    )
    assert edge["description"] == "IL1B was higher in peritoneal fluid."
    assert edge["evidence"] == [
        {"text": "IL1B was higher in peritoneal fluid.", "where": "abstract", "passage": None,
         "section": "", "start": 49, "end": 85}
    ]  # fmt: skip


def test_a_collection_from_the_previous_version_still_answers_and_says_to_reindex(
    tmp_path: Path,
) -> None:
    from fastbmrag.store.base import Filter, Match
    from fastbmrag.testing.responders import responder

    csv = tmp_path / "papers.csv"
    write_papers_csv(real_papers()[:4], csv)
    wd = tmp_path / "wd"
    with FakeOllama(responder=responder) as fake:
        run_update(fake, wd, csv)
        # what version-1 code stored: evidence as one quote string, no description_source
        with Collection.writer(wd, "papers") as coll:
            coll.store.set_payload(
                {"evidence": "a short quote", "draft_description": "x", "refined": False},
                Filter(must=(Match("paper_id", any_of=tuple(coll.store.paper_ids())),)),
            )
            coll.store.flush()
            coll.ledger.conn.execute("UPDATE papers SET payload_version = 1")
            coll.ledger.conn.commit()
        runner = CliRunner()
        status = runner.invoke(cli, ["status", "-c", "papers", "--working-dir", str(wd)])
        assert status.exit_code == 0, status.output
        assert "3 papers were indexed by an earlier version" in status.stdout
        assert "fastbmrag update --force" in status.stdout
        query = runner.invoke(
            cli,
            ["query", "What was reported?", "-c", "papers", "--working-dir",
             str(wd), "--ollama-host", fake.url, "--min-score", "-1", "--format", "json",
             "--since", "1900"],  # a flag's filter: edges that share no word with the question
        )  # fmt: skip
        assert query.exit_code == 0, query.output
        result = json.loads(query.stdout)
        assert result["answer"] and result["edges"]
        answer_call = fake.requests_to("/api/chat")[-1].json["messages"][-1]["content"]
        assert 'Quote: "a short quote"' in answer_call
        export = runner.invoke(
            cli, ["export", "-c", "papers", "--working-dir", str(wd), "-o", str(tmp_path / "e.csv")]
        )
        assert export.exit_code == 0, export.output


def test_a_coordination_becomes_one_edge_per_gene(tmp_path: Path) -> None:
    abstract = "SMAD2/3 signalling was increased in endometriosis lesions."
    csv = tmp_path / "papers.csv"
    write_papers_csv([Paper("P1", abstract=abstract, title="SMADs in endometriosis")], csv)

    def answer(request: dict[str, Any]) -> Any:
        if schema_title(request) != "Draft":
            return pipeline_responder(request)
        return {
            "e": [
                [1, "SMAD2/3", "gene"],
                [2, "endometriosis", "disease"],
            ],
            "r": [[1, "upregulated_in", 2, [2]]],
        }

    with FakeOllama(responder=answer) as fake:
        summary = run_update(fake, tmp_path / "wd", csv)
    assert summary["edges"] == 2
    edges = sorted(stored(tmp_path / "wd"), key=lambda e: e["source"])
    assert [(e["source"], e["source_id"], e["source_raw"]) for e in edges] == [
        ("SMAD2", "HGNC:6768", "SMAD2/3"),
        ("SMAD3", "HGNC:6769", "SMAD2/3"),
    ]
    assert {e["target_id"] for e in edges} == {"D004715"}


def test_a_coordination_of_diseases_becomes_one_edge_per_disease(tmp_path: Path) -> None:
    abstract = "BRCA1 mutations raise the risk of breast and ovarian cancer."
    csv = tmp_path / "papers.csv"
    write_papers_csv([Paper("P1", abstract=abstract, title="BRCA1 and cancer risk")], csv)

    def answer(request: dict[str, Any]) -> Any:
        if schema_title(request) != "Draft":
            return pipeline_responder(request)
        return {
            "e": [
                [1, "BRCA1", "gene"],
                [2, "breast and ovarian cancer", "disease"],
            ],
            "r": [[1, "risk_factor_for", 2, [2]]],
        }

    with FakeOllama(responder=answer) as fake:
        summary = run_update(fake, tmp_path / "wd", csv)
    assert summary["edges"] == 2
    edges = sorted(stored(tmp_path / "wd"), key=lambda e: e["target"])
    assert [(e["target"], e["target_id"], e["target_raw"]) for e in edges] == [
        ("Breast Neoplasms", "D001943", "breast and ovarian cancer"),
        ("Ovarian Neoplasms", "D010051", "breast and ovarian cancer"),
    ]


def test_a_papers_own_numbered_reference_is_never_read_as_a_sentence_number(
    tmp_path: Path,
) -> None:
    # the model repeats the main text as it reads it: a reference "[12]" it repeats must not
    # cite the prompt's sentence 12
    body = ["IL6 was upregulated in endometriosis lesions [12]."] + [
        f"IL6 was measured in endometriosis sample {k}." for k in range(13)
    ]
    paper = Paper("R1", title="IL6 in endometriosis", abstract="IL6 is upregulated in "
                  "endometriosis.", paragraphs=["[Results] " + " ".join(body)])  # fmt: skip
    csv = tmp_path / "papers.csv"
    write_papers_csv([paper], csv)
    with FakeOllama(responder=responder) as fake:
        run_update(fake, tmp_path / "wd", csv)
        [refine] = [r for r in fake.requests_to("/api/chat") if schema_title(r.json) == "Refinement"]
        prompt = task_text(refine.json)
        assert "lesions." in prompt and "[12]." not in prompt
        assert "[13] IL6 was measured in endometriosis sample 11." in prompt
        [edge] = [e for e in stored(tmp_path / "wd") if e["description_source"] == "refined"]
        assert [ev["text"] for ev in edge["evidence"]] == [body[0]]  # quoted as the paper has it
        # nor, in the answer's prompt, as an evidence item's number
        rag = RAG(tmp_path / "wd", "papers", ollama_host=fake.url)
        assert rag.query("Is IL6 upregulated in endometriosis?").edges
        [answer] = [r for r in fake.requests_to("/api/chat") if schema_title(r.json) == "Answer"]
        assert "lesions." in task_text(answer.json) and "[12]" not in task_text(answer.json)


def test_a_relation_quoted_in_the_refine_prompt_carries_no_reference_either() -> None:
    # a paper with no abstract is drafted from its opening passages, references and all
    [_, user] = refine_messages(
        "T", [("P1", [(1, "IL6 rose [4].")])],
        [(1, 'IL6 upregulated in endometriosis. Abstract: "IL6 is raised [12]."', ["P1"])],
    )
    assert "[12]" not in user["content"] and "[4]" not in user["content"]
    assert 'Abstract: "IL6 is raised."' in user["content"]
