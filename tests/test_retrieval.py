"""A question finds what the collection holds: its entities select edges by id, by a concept
below them, and by their names in the edges' names (grounded or not); edges about every entity
rank first, then those about some, then a broader concept of an absent one, then edges that share
a word; "absent" is said only when no edge holds the entity by any of these.

A small collection indexed through the real pipeline against the fake model server, whose draft
names each paper's entities as a model would (some typed ``other``), then asked through the CLI.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.index.edges import name_ends
from fastbmrag.query.understand import understand
from fastbmrag.store.base import EdgeRef
from fastbmrag.store.ledger import Ledger
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import naming
from fastbmrag.vocab.loading import load_normalizer

# what the model names in these papers, as written, with the type it gives
NAMED = {
    "IL6": "gene",
    "chronic tinnitus": "other",  # no vocabulary grounds it as written
    "BDNF": "gene",
    "depressive disorder": "disease",
    "TNF": "gene",
    "psoriasis": "disease",
    "Lymphedema": "other",  # a disease the model typed other
}
PAPERS = [
    ("R1", "Cytokines in chronic tinnitus", "Serum IL6 was raised in chronic tinnitus."),
    ("R2", "Neurotrophins in depression", "BDNF was lower in depressive disorder."),
    ("R3", "TNF in psoriasis", "TNF was raised in psoriasis lesions."),
    ("R4", "Lymphatic disease", "IL6 rose in Lymphedema after surgery."),
]
TINNITUS, DEPRESSIVE, MAJOR_DEPRESSIVE = "D014012", "D003866", "D003865"


drafted = naming(NAMED, "upregulated_in")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=drafted) as server:
        yield server


@pytest.fixture(scope="module")
def wd(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    wd = tmp_path_factory.mktemp("retrieval")
    papers = wd / "papers.csv"
    with papers.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "title", "abstract", "year"])
        w.writerows([(pid, title, abstract, 2020) for pid, title, abstract in PAPERS])
    result = CliRunner().invoke(cli, ["update", "-c", "r", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "-q", str(papers)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return wd


def ask(wd: Path, fake: FakeOllama, question: str, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["query", question, "-c", "r", "--working-dir", str(wd),
                                      "--ollama-host", fake.url, "--json", "--no-llm-parse",
                                      *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def ends(edge: dict[str, Any]) -> tuple[str, str]:
    return edge["payload"]["source_raw"], edge["payload"]["target_raw"]


def test_a_concept_the_papers_hold_only_as_an_ungrounded_name_is_found_by_its_name(
    wd: Path, fake: FakeOllama
) -> None:
    out = ask(wd, fake, "Which cytokines are raised in tinnitus?")
    # Tinnitus has no node of its own here: the paper's "chronic tinnitus" has no id
    assert [(u["id"], u["used_as"]) for u in out["understood"]] == [(TINNITUS, "filter")]
    assert out["no_evidence"] is None
    [edge] = [e for e in out["edges"] if e["paper_id"] == "R1"]
    assert ends(edge) == ("IL6", "chronic tinnitus") and edge["kept_by"] == "name"
    assert out["edges"][0] == edge  # the edge about the question's entity ranks first


def test_a_narrower_concept_is_answered_from_the_broader_one_and_says_so(
    wd: Path, fake: FakeOllama
) -> None:
    out = ask(wd, fake, "Is BDNF lower in major depressive disorder?")
    by_id = {u["id"]: u for u in out["understood"]}
    assert by_id[MAJOR_DEPRESSIVE]["used_as"] == "broader"
    assert by_id[MAJOR_DEPRESSIVE]["broader"] == {
        "id": DEPRESSIVE, "name": "Depressive Disorder", "edges": 1
    }  # fmt: skip
    assert by_id["HGNC:1033"]["used_as"] == "filter"  # BDNF
    assert ("the collection 'r' holds no edge about Depressive Disorder, Major (D003865); 1 edge "
            "about Depressive Disorder (D003866), the broader concept, answer after the others"
            ) in out["warnings"]  # fmt: skip
    [first, *_] = out["edges"]
    assert ends(first) == ("BDNF", "depressive disorder") and first["kept_by"] == "id"
    text = CliRunner().invoke(cli, ["query", "Is BDNF lower in major depressive disorder?", "-c",
                                    "r", "--working-dir", str(wd), "--ollama-host", fake.url,
                                    "--no-llm-parse", "--no-answer"])  # fmt: skip
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(
        "Understood: BDNF (HGNC:1033), Depressive Disorder, Major (D003865, not in this "
        "collection: answered from Depressive Disorder)\n"
    )
    # the broader concept alone still answers, from its edges
    out = ask(wd, fake, "What is known about major depressive disorder?")
    assert [e["kept_by"] for e in out["edges"]][:1] == ["broader"]
    assert out["no_evidence"] is None


def test_two_entities_no_edge_joins_rank_the_edges_of_each(wd: Path, fake: FakeOllama) -> None:
    out = ask(wd, fake, "Does TNF drive tinnitus?")
    assert {u["used_as"] for u in out["understood"]} == {"filter"}
    assert "no edge joins TNF and Tinnitus: answered from the edges of each" in out["warnings"]
    assert {e["paper_id"] for e in out["edges"][:2]} == {"R1", "R3"}
    assert {e["kept_by"] for e in out["edges"][:2]} == {"id", "name"}


def test_absent_only_when_no_edge_holds_the_entity_by_id_below_or_name(
    wd: Path, fake: FakeOllama
) -> None:
    out = ask(wd, fake, "Is IL6 raised in Alzheimer disease?")
    by_id = {u["id"]: u["used_as"] for u in out["understood"]}
    assert by_id == {"HGNC:6018": "filter", "D000544": "absent"}
    assert out["edges"] and all("IL6" in ends(e) for e in out["edges"][:2])
    out = ask(wd, fake, "What causes Alzheimer disease?")
    assert out["edges"] == [] and out["no_evidence"]["reason"] == (
        "the collection 'r' holds no edge about Alzheimer Disease (D000544)"
    )


def test_a_name_typed_other_that_the_vocabularies_know_is_grounded(wd: Path) -> None:
    from fastbmrag import RAG

    edges = RAG(wd, "r").edges()
    [row] = edges[edges["paper_id"] == "R4"].to_dict("records")
    assert (row["target_id"], row["target_type"], row["target_type_from"]) == (
        "D008209", "disease", "vocabulary"
    )  # fmt: skip
    norm = load_normalizer()
    [mice] = name_ends(norm, "mice", "other", "Mice were fed.")
    assert mice.norm.ontology_id is None  # a lowercase word is no gene symbol (MICE)
    [plain] = name_ends(norm, "chronic tinnitus", "other", "")
    assert plain.norm.ontology_id is None


def test_an_acronym_a_paper_typed_gene_is_no_gene_without_support() -> None:
    norm = load_normalizer()
    [ivf] = name_ends(norm, "IVF", "gene", "Outcomes of IVF in older women were poor.")
    assert ivf.norm.ontology_id is None  # "IVF" is an HGNC alias of SCN5A
    [gene] = name_ends(norm, "IVF", "gene", "The IVF gene was mutated in arrhythmia.")
    assert gene.norm.ontology_id == "HGNC:10593"


def test_a_collection_name_that_is_a_bare_acronym_links_no_gene(tmp_path: Path) -> None:
    # a collection where a paper's "IVF" became SCN5A: the question's "IVF" is no gene there
    norm = load_normalizer()
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ref = EdgeRef("HGNC:10593", "SCN5A", "gene", "HGNC:10593", "associated_with", "D047928",
                  "Premature Birth", "disease", "D047928", "IVF", "preterm birth")  # fmt: skip
    ledger.apply_papers([("P1", None, [("e1", ref)])])
    found = understand("What is the outcome in IVF?", norm, ledger)
    assert "HGNC:10593" not in [m.id for m in found]
    cued = understand("Is the IVF gene altered?", norm, ledger)
    assert "HGNC:10593" in [m.id for m in cued]
    ledger.close()
