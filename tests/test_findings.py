"""A paper's own findings told from what it restates: the roles the text gives sentences, the
model's mark where the text says nothing, and how consensus, cards, the digest, the answer and
``--findings-only`` count them, on a small collection built through the real pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.index.extract import resolve_draft
from fastbmrag.papers import Paper, write_papers_csv
from fastbmrag.prompts import Draft
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title, task_text
from fastbmrag.text.findings import (
    BACKGROUND,
    FINDING,
    UNDECIDED,
    named_as_known,
    relation_role,
    sentence_roles,
)
from fastbmrag.text.sentences import abstract_sentences, passage_sentences


def roles(title: str, abstract: str) -> list[str]:
    return sentence_roles(abstract_sentences(title, abstract))


def test_reported_knowledge_is_background_the_papers_own_work_a_finding() -> None:
    assert roles(
        "IL-6 in endometriosis",
        "Previous studies have shown that IL-6 promotes endometriosis. Here we found that TNF is "
        "raised in lesions. TNF was raised in 30 of 40 women.",
    ) == [UNDECIDED, BACKGROUND, FINDING, UNDECIDED]
    # a state of knowledge, earlier evidence as the subject
    assert roles("", "IL-6 is well known to drive inflammation.")[0] == BACKGROUND
    assert roles("", "Accumulating evidence suggests a role of IL-6.")[0] == BACKGROUND
    # the study's experimental model: what was done
    assert roles("", "Colitis was induced with DSS in a mouse model of colitis.")[0] == BACKGROUND
    assert roles("", "Colitis was induced with DSS in mice.")[0] == UNDECIDED


def test_an_abstract_opens_with_what_was_known_only_where_it_then_speaks_of_its_own_work() -> None:
    opening = "IL-6 drives inflammation. Its role in endometriosis is unclear."
    assert roles("", opening + " We measured IL-6 in 40 women.") == [BACKGROUND, BACKGROUND, FINDING]
    # at most two opening sentences; none where the paper never speaks of its own work
    three = "IL-6 drives inflammation. It is made by macrophages. Lesions hold macrophages."
    assert roles("", three + " We found IL-6 raised.") == [BACKGROUND, BACKGROUND, UNDECIDED, FINDING]
    assert roles("", opening + " IL-6 was raised in 30 of 40 women.") == [UNDECIDED] * 3


def test_a_structured_abstract_s_labels_give_the_roles_on_lines_and_inline() -> None:
    on_lines = ("BACKGROUND: IL-6 drives inflammation.\nMETHODS: Mice were given tocilizumab, "
                "an IL-6 receptor antibody.\nRESULTS: IL-6 rose in lesions.")  # fmt: skip
    inline = "BACKGROUND: IL-6 drives inflammation. RESULTS: IL-6 rose in lesions. It fell after."
    assert roles("", on_lines) == [BACKGROUND, BACKGROUND, FINDING]  # what was done: no result
    assert roles("", inline) == [BACKGROUND, FINDING, FINDING]
    assert sentence_roles(passage_sentences(1, "[Introduction] IL-6 drives inflammation.")) == [
        BACKGROUND
    ]


def test_a_relation_named_inside_a_noun_phrase_is_stated_as_known() -> None:
    said = "The GLUT inhibitor cytochalasin B prevented the uptake of glucose in cardiomyocytes."
    assert named_as_known(said, "cytochalasin B", "GLUT")
    assert named_as_known(said, "GLUT", "cytochalasin B")  # either order of the ends
    assert not named_as_known(said, "cytochalasin B", "glucose")  # what it did: the finding
    assert not named_as_known("GLUT was inhibited by cytochalasin B.", "GLUT", "cytochalasin B")
    # a process named by its cause, in a compound; a verb that reports it is no noun phrase
    caused = "Methamphetamine-induced neurotoxicity was not mediated by CX3CR1."
    assert named_as_known(caused, "neurotoxicity", "Methamphetamine")
    assert not named_as_known(caused, "neurotoxicity", "CX3CR1")
    assert not named_as_known("Methamphetamine induced neurotoxicity.", "Methamphetamine",
                              "neurotoxicity")  # fmt: skip
    sentences = abstract_sentences("T", said)
    draft = Draft.model_validate({
        "e": [[1, "cytochalasin B", "chemical"], [2, "GLUT", "gene"], [3, "glucose", "chemical"]],
        "r": [[1, "downregulates", 2, [2]], [1, "downregulates", 3, [2]]],
    })  # fmt: skip
    relations, _ = resolve_draft(draft, sentences, findings_model=False)
    assert [(r.finding, r.finding_from) for r in relations] == [
        (BACKGROUND, "text"), (FINDING, "model"),
    ]  # fmt: skip


def test_a_relation_is_background_only_where_every_sentence_stating_it_is() -> None:
    assert relation_role([BACKGROUND, BACKGROUND]) == (BACKGROUND, "text")
    assert relation_role([BACKGROUND, FINDING], marked=True) == (FINDING, "text")
    # a sentence without a role leaves it to the model's mark, else it is taken as a finding
    assert relation_role([BACKGROUND, UNDECIDED], marked=True) == (BACKGROUND, "model")
    assert relation_role([UNDECIDED], marked=False) == (FINDING, "model")
    assert relation_role([UNDECIDED]) == (FINDING, "")


def test_the_model_marks_a_restating_sentence_by_citing_its_negative_number() -> None:
    sentences = abstract_sentences("T", "IL6 is raised in endometriosis. Serum was analysed.")
    draft = Draft.model_validate({
        "e": [[1, "IL6", "gene"], [2, "endometriosis", "disease"], [3, "TNF", "gene"]],
        "r": [[1, "upregulated_in", 2, [-2]], [3, "upregulated_in", 2, [2, 3]],
              [3, "associated_with", 1, [-2, 3]]],
    })  # fmt: skip
    relations, dropped = resolve_draft(draft, sentences, findings_model=False)
    assert dropped == 0
    assert [(r.finding, r.finding_from) for r in relations] == [
        (BACKGROUND, "model"), (FINDING, "model"), (FINDING, ""),
    ]  # fmt: skip
    assert relations[0].cited == (sentences[1],)  # the sentence is quoted all the same


# title -> abstract and the draft a careful model gives it
PAPERS = {
    "F1": ("IL6 and TNF in endometriosis",
           "Previous studies have shown that IL6 is upregulated in endometriosis. Here we measured "
           "TNF in 40 women and found it upregulated in endometriosis.",
           [[1, "IL6", "gene"], [2, "endometriosis", "disease"], [3, "TNF", "gene"]],
           [[1, "upregulated_in", 2, [2]], [3, "upregulated_in", 2, [3]]]),
    "F2": ("IL6 in peritoneal fluid",
           "We found IL6 upregulated in the peritoneal fluid of women with endometriosis.",
           [[1, "IL6", "gene"], [2, "endometriosis", "disease"]],
           [[1, "upregulated_in", 2, [2]]]),
    "F3": ("Serum markers",
           "IL6 is upregulated in endometriosis. Serum of 30 women was analysed.",
           [[1, "IL6", "gene"], [2, "endometriosis", "disease"]],
           [[1, "upregulated_in", 2, [-2]]]),
}  # fmt: skip


def scripted(request: dict[str, Any]) -> Any:
    if schema_title(request) != "Draft":
        return responder(request)
    text = task_text(request)
    for title, _abstract, entities, relations in PAPERS.values():
        if f"[1] {title}" in text:
            return {"e": entities, "r": relations}
    return {"e": [], "r": []}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("findings")
    csv = wd / "papers.csv"
    write_papers_csv([Paper(pid, title=t, abstract=a, year=2020)
                      for pid, (t, a, _, _) in PAPERS.items()], csv)  # fmt: skip
    with FakeOllama(responder=scripted) as fake:
        result = CliRunner().invoke(cli, ["update", "-c", "f", "--no-findings-model", "--working-dir", str(wd),
                                          "--ollama-host", fake.url, "-q", str(csv)])  # fmt: skip
        assert result.exit_code == 0, result.output
        yield RAG(wd, "f", ollama_host=fake.url), fake


def il6_edges(rag: RAG, **filters: Any) -> dict[str, tuple[str, str]]:
    frame = rag.edges(entities=["IL6"], **filters)
    return {row.paper_id: (row.finding, row.finding_from) for row in frame.itertuples()}


def test_every_edge_carries_its_role_and_where_it_came_from(indexed: Any) -> None:
    rag, _ = indexed
    assert il6_edges(rag) == {
        "F1": (BACKGROUND, "text"), "F2": (FINDING, "text"), "F3": (BACKGROUND, "model"),
    }  # fmt: skip
    out = Path(rag.working_dir) / "edges.csv"
    with out.open("w") as f:
        rag.export("csv", f)
    header = out.read_text().splitlines()[0].split(",")
    assert {"finding", "finding_from"} <= set(header)


def test_findings_only_leaves_out_what_papers_restate(indexed: Any) -> None:
    rag, _ = indexed
    assert il6_edges(rag, findings_only=True) == {"F2": (FINDING, "text")}
    result = rag.query("Is IL6 upregulated in endometriosis?", findings_only=True, no_answer=True)
    assert result.edges and all(e.payload["finding"] == FINDING for e in result.edges)
    assert result.filters["findings_only"] is True


def test_consensus_and_the_card_count_papers_by_findings_citations_apart(indexed: Any) -> None:
    rag, fake = indexed
    fake.reset()
    result = rag.query("Is IL6 upregulated in endometriosis?", entities=["IL6"])
    [pair] = [p for p in result.consensus if p["source"] == "IL6"]
    assert pair["relations"] == {"upregulated_in": ["F2"]}
    assert sorted(pair["cited"]["upregulated_in"]) == ["F1", "F3"]
    # the answer is told which items only restate, and that the papers agree in one finding
    [call] = [r for r in fake.requests_to("/api/chat") if schema_title(r.json) == "Answer"]
    prompt = call.json["messages"][-1]["content"]
    restated = [line for line in prompt.splitlines() if "BACKGROUND" in line]
    assert len(restated) == 2 and all("IL6 upregulated in" in line for line in restated)
    assert "upregulated in in 1 item [" in prompt and "cited as known in 2 items" in prompt
    card = rag.entity("IL6")
    assert card is not None
    assert (card["relations"], card["cited"]) == ({"upregulated_in": 1}, {"upregulated_in": 2})
    shown = CliRunner().invoke(cli, ["entity", "IL6", "-c", "f", "--working-dir",
                                     str(rag.working_dir)])  # fmt: skip
    assert "upregulated_in 1 +2" in shown.output


def test_the_digest_s_new_findings_leave_out_what_papers_restate(indexed: Any) -> None:
    rag, _ = indexed
    digest = rag.digest()
    listed = [(e["paper_id"], e["source_name"]) for n in digest["entities"] for e in n["edges"]]
    cited = [(e["paper_id"], e["source_name"]) for n in digest["entities"] for e in n["cited"]]
    assert sorted(listed) == [("F1", "TNF"), ("F2", "IL6")]
    assert sorted(cited) == [("F1", "IL6"), ("F3", "IL6")]
    text = CliRunner().invoke(cli, ["digest", "-c", "f", "--working-dir", str(rag.working_dir)])
    assert "3 new papers, 2 new edges, 2 edges a paper restates as known (listed apart)" in (
        text.output
    )
    assert "Restated as known: IL6 upregulated_in Endometriosis [F1]" in text.output


# stated again in the main text: stage 2's evidence, with its sections and citations, decides too
FULL_TEXT = {
    "M1": ("IL6 in lesions",
           "Previous studies have shown that IL6 is upregulated in endometriosis.",
           ["[Results] IL6 was upregulated in endometriosis lesions of 40 women."]),
    "M2": ("IL6 and endometriosis", "",
           ["[1. Introduction] IL6 is upregulated in endometriosis [12]. Lesions were studied."]),
}  # fmt: skip


def full_text_draft(request: dict[str, Any]) -> Any:
    if schema_title(request) != "Draft":
        return responder(request)
    return {"e": [[1, "IL6", "gene"], [2, "endometriosis", "disease"]],
            "r": [[1, "upregulated_in", 2, [2]]]}  # fmt: skip


def test_the_main_text_stating_a_relation_decides_its_role_too(tmp_path: Path) -> None:
    csv = tmp_path / "papers.csv"
    write_papers_csv([Paper(pid, title=t, abstract=a, paragraphs=p, year=2020)
                      for pid, (t, a, p) in FULL_TEXT.items()], csv)  # fmt: skip
    with FakeOllama(responder=full_text_draft) as fake:
        result = CliRunner().invoke(cli, ["update", "-c", "m", "--no-findings-model", "--working-dir", str(tmp_path),
                                          "--ollama-host", fake.url, "-q", str(csv)])  # fmt: skip
        assert result.exit_code == 0, result.output
        rag = RAG(tmp_path, "m", ollama_host=fake.url)
        # the abstract restates it, the results report it again: the paper found it too; a
        # numbered Introduction citing another paper restates it
        assert il6_edges(rag) == {"M1": (FINDING, "text"), "M2": (BACKGROUND, "text")}
        evidence = {row.paper_id: row.evidence for row in rag.edges().itertuples()}
        assert "lesions of 40 women" in str(evidence["M1"])
