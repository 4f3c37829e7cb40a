"""Answers from the graph itself: contradictions, paths, entity cards, consensus and follow-ups,
on a small collection built through the real pipeline with scripted model answers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.papers import Paper, write_papers_csv
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder, schema_title, task_text

# title -> (abstract, source, source type, relation, target, target type)
PAPERS = {
    "P1": ("IL1B in lesions", "IL1B was higher in endometriosis lesions.",
           "IL1B", "gene", "upregulated_in", "endometriosis", "disease"),
    "P2": ("IL1B in serum", "IL1B was lower in the serum of women with endometriosis.",
           "IL1B", "gene", "downregulated_in", "endometriosis", "disease"),
    "P3": ("Estrogen receptors", "ESR2 regulates PGR in stromal cells.",
           "ESR2", "gene", "regulates", "PGR", "gene"),
    "P4": ("Progesterone signalling", "PGR upregulates HOXA10 in the endometrium.",
           "PGR", "gene", "upregulates", "HOXA10", "gene"),
    "P5": ("Aromatase", "IL1B upregulates CYP19A1 in endometriotic cells.",
           "IL1B", "gene", "upregulates", "CYP19A1", "gene"),
    "P6": ("Estrogen receptor in breast cancer", "ESR1 marks breast neoplasms.",
           "ESR1", "gene", "biomarker_of", "breast neoplasms", "disease"),
}  # fmt: skip


def scripted(request: dict[str, Any]) -> Any:
    if schema_title(request) != "Draft":
        return responder(request)
    text = task_text(request)
    for title, _abs, src, st, rel, tgt, tt in PAPERS.values():
        if f"[1] {title}" in text:
            return {"e": [[1, src, st], [2, tgt, tt]],
                    "r": [[1, rel, 2, [2]]]}  # fmt: skip
    return {"e": [], "r": []}


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("graph")
    csv = wd / "papers.csv"
    papers = [Paper(pid, title=v[0], abstract=v[1], year=2010 + i)
              for i, (pid, v) in enumerate(PAPERS.items())]  # fmt: skip
    write_papers_csv(papers, csv)
    fake = FakeOllama(responder=scripted).start()
    result = CliRunner().invoke(
        cli, ["update", "-c", "g", "--working-dir", str(wd), "--ollama-host", fake.url, "-q",
              str(csv)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    yield wd, fake
    fake.close()


def run(wd: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, [*args, "-c", "g", "--working-dir", str(wd)])
    assert result.exit_code == 0, result.output
    return result


def test_contradictions_list_the_pair_with_both_papers(collection: Any) -> None:
    wd, fake = collection
    fake.reset()
    [pair] = json.loads(run(wd, "contradictions", "--json").stdout)
    assert (pair["source_name"], pair["target_name"], pair["papers"]) == (
        "IL1B",
        "Endometriosis",
        2,
    )
    assert pair["relations"] == {"downregulated_in": ["P2"], "upregulated_in": ["P1"]}
    assert pair["conflict"] is True
    assert json.loads(run(wd, "contradictions", "--entity", "PGR", "--json").stdout) == []
    text = run(wd, "contradictions").stdout
    assert "IL1B -> Endometriosis (2 papers)" in text and "upregulated_in: 1 paper (P1)" in text
    assert fake.requests_to("/api/chat") == []
    # an entity the collection lacks is said to be absent, not to be free of disagreement
    for entity, error in [
        ("BRCA1", "Error: BRCA1 (HGNC:1100) is not in collection 'g': no edge is about it, so no "
                  "pair holds it (`fastbmrag entity BRCA1` says what the vocabularies know of it)"),
        ("", "Error: An empty entity was given: pass a name (IL1B) or an id (HGNC:5992)"),
    ]:  # fmt: skip
        absent = CliRunner().invoke(
            cli, ["contradictions", "--entity", entity, "-c", "g", "--working-dir", str(wd)]
        )
        assert absent.exit_code == 2 and absent.stderr.strip() == error


def test_a_disagreement_resting_on_a_retracted_paper_says_so(
    collection: Any, tmp_path: Path
) -> None:
    wd, _ = collection
    copy = tmp_path / "wd"
    shutil.copytree(wd, copy)
    with Collection.writer(copy, "g") as coll:
        assert coll.mark_retracted(["P1"], "test") == ["P1"]
    [pair] = json.loads(run(copy, "contradictions", "--json").stdout)
    assert pair["retracted"] == {"upregulated_in": ["P1"]}
    assert pair["only_with_retracted"] is True
    text = run(copy, "contradictions").stdout
    assert "(2 papers, only with retracted papers)" in text
    assert "upregulated_in: 1 paper (P1) (1 retracted: 1 paper (P1))" in text
    # a path leaves the retracted paper's edge out
    assert json.loads(run(copy, "path", "IL1B", "Endometriosis", "--json").stdout)[0][0][
        "papers"
    ] == ["P2"]


def test_path_finds_the_chain_with_both_papers_and_their_sentences(collection: Any) -> None:
    wd, fake = collection
    fake.reset()
    paths = json.loads(run(wd, "path", "ESR2", "HOXA10", "--json").stdout)
    first = paths[0]
    assert [(h["source"], h["relationship_type"], h["target"], h["papers"]) for h in first] == [
        ("ESR2", "regulates", "PGR", ["P3"]),
        ("PGR", "upregulates", "HOXA10", ["P4"]),
    ]
    assert first[0]["evidence"] == {
        "text": "ESR2 regulates PGR in stromal cells.",
        "paper_id": "P3",
    }
    assert "1. ESR2 - PGR - HOXA10" in run(wd, "path", "ESR2", "HOXA10").stdout
    assert "No path" in run(wd, "path", "ESR2", "HOXA10", "--max-hops", "1").stdout
    assert fake.requests_to("/api/chat") == []
    # ids beside the names, so that a script can join them to other data
    assert [(h["from_id"], h["source_id"], h["target_id"], h["to_id"]) for h in first] == [
        ("HGNC:3468", "HGNC:3468", "HGNC:8910", "HGNC:8910"),
        ("HGNC:8910", "HGNC:8910", "HGNC:5100", "HGNC:5100"),
    ]
    absent = CliRunner().invoke(cli, ["path", "ESR2", "BRCA1", "-c", "g", "--working-dir", str(wd)])
    assert absent.exit_code == 2
    assert absent.stderr.strip() == (
        "Error: BRCA1 (HGNC:1100) is not in collection 'g': no edge is about it, so no path "
        "reaches it (`fastbmrag entity BRCA1` says what the vocabularies know of it)"
    )
    same = CliRunner().invoke(
        cli, ["path", "ESR2", "HGNC:3468", "-c", "g", "--working-dir", str(wd)]
    )
    assert same.exit_code == 2
    assert same.stderr.strip() == (
        "Error: 'ESR2' and 'HGNC:3468' both name ESR2 (HGNC:3468): a path joins two different "
        "entities"
    )


def test_entity_card_shows_vocabulary_facts_and_the_collection(collection: Any) -> None:
    wd, fake = collection
    card = json.loads(run(wd, "entity", "IL-1beta", "--json").stdout)
    assert card["id"] == "HGNC:5992" and card["name"] == "IL1B"
    assert card["vocabulary"] == {"source": "HGNC", "symbol": "IL1B", "name": "interleukin 1 beta",
                                  "locus_group": "protein-coding gene",
                                  "groups": "Interleukins"}  # fmt: skip
    assert card["relations"] == {"upregulated_in": 1, "downregulated_in": 1, "upregulates": 1}
    assert [p["name"] for p in card["partners"]] == ["Endometriosis", "CYP19A1"]
    assert card["papers"] == 3 and card["papers_by_year"] == {"2010": 1, "2011": 1, "2014": 1}
    disease = json.loads(run(wd, "entity", "endometriosis", "--json").stdout)
    assert disease["vocabulary"]["source"] == "MeSH" and disease["id"] == "D004715"
    assert "Genital Diseases, Female" in disease["vocabulary"]["broader"]
    # a vocabulary entry without edges: its facts, and that the collection has nothing on it
    missing = CliRunner().invoke(cli, ["entity", "BRCA1", "-c", "g", "--working-dir", str(wd)])
    assert missing.exit_code == 0, missing.output
    assert missing.stdout.splitlines()[0] == "BRCA1 (gene, HGNC:1100)"
    assert "  no edge in this collection is about it" in missing.stdout.splitlines()
    # a broader concept: its own facts, and the narrower ones that have edges named
    broad = CliRunner().invoke(
        cli, ["entity", "Neoplasms", "-c", "g", "--working-dir", str(wd), "--json"]
    )
    assert broad.exit_code == 0, broad.output
    card = json.loads(broad.stdout)
    assert (card["id"], card["in_collection"], card["narrower"]) == (
        "D009369",
        False,
        ["Breast Neoplasms"],
    )
    unknown = CliRunner().invoke(cli, ["entity", "xq zzv", "-c", "g", "--working-dir", str(wd)])
    assert unknown.exit_code == 2
    assert "No edge of the collection is about 'xq zzv', and the vocabularies" in unknown.stderr


def test_an_answer_states_the_disagreement_and_proposes_follow_ups(collection: Any) -> None:
    wd, fake = collection
    fake.reset()
    result = CliRunner().invoke(
        cli, ["query", "What is the role of IL1B in endometriosis?", "-c", "g", "--working-dir",
              str(wd), "--ollama-host", fake.url, "--min-score", "-1", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    [pair] = [p for p in out["consensus"] if p["conflict"]]
    assert pair["relations"] == {"downregulated_in": ["P2"], "upregulated_in": ["P1"]}
    answer_call = [r for r in fake.requests_to("/api/chat") if schema_title(r.json) == "Answer"]
    [call] = answer_call
    prompt = call.json["messages"][-1]["content"]
    assert "IL1B -> Endometriosis: downregulated in in 1 item [" in prompt
    assert "(papers disagree)" in prompt
    # the follow-ups come from the graph: the disagreement the answer rests on
    assert "Do papers agree on how IL1B relates to Endometriosis?" in out["follow_ups"]
    assert len(fake.requests_to("/api/chat")) == 2  # parse + answer: the graph costs no call


def ask(wd: Path, fake: FakeOllama, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["query", "x", "-c", "g", "--working-dir", str(wd), "--ollama-host", fake.url,
              "--no-answer", "--min-score", "-1", "--json", *args],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_broader_mesh_concept_finds_its_descendants_unless_exact(collection: Any) -> None:
    wd, fake = collection
    out = ask(wd, fake, "--entity", "Neoplasms")
    assert [(e["source"], e["target_id"]) for e in out["edges"]] == [("ESR1", "D001943")]
    [entity] = out["filters"]["entities"]
    assert entity["id"] == "D009369" and entity["expanded_to"] > 100  # Neoplasms and below
    exact = ask(wd, fake, "--entity", "Neoplasms", "--exact")
    assert (
        exact["edges"] == []
        and "holds no edge about Neoplasms" in exact["no_evidence"]["reason"]
    )


def test_a_gene_group_finds_its_member_genes(collection: Any) -> None:
    wd, fake = collection
    out = ask(wd, fake, "--entity", "HGNC-GROUP:601")  # HGNC's "Interleukins" group
    assert {e["source"] for e in out["edges"]} == {"IL1B"}
    assert {e["paper_id"] for e in out["edges"]} == {"P1", "P2", "P5"}
    assert out["filters"]["entities"][0]["expanded_to"] > 10
    stored = [e["payload"]["source_ancestors"] for e in out["edges"]]
    assert all("HGNC-GROUP:601" in a for a in stored)


def test_a_collection_without_the_ancestors_index_matches_entities_exactly(
    collection: Any, tmp_path: Path
) -> None:
    import shutil

    import qdrant_edge as qe

    from fastbmrag.store.collection import Collection

    wd, fake = collection
    old = tmp_path / "old"
    shutil.copytree(wd / "g", old / "g")
    with Collection.writer(old, "g") as coll:  # what a shard of an earlier version lacks
        shard = coll.store._shard  # type: ignore[attr-defined]
        for name in ("source_ancestors", "target_ancestors"):
            shard.update(qe.UpdateOperation.delete_field_index(name))
        shard.flush()
    out = ask(old, fake, "--entity", "Neoplasms")
    assert out["edges"] == [] and out["no_evidence"] is not None
    assert any("indexed before hierarchical filters" in w for w in out["warnings"])
    assert ask(old, fake, "--entity", "breast neoplasms")["edges"]  # the entity itself still


def test_follow_ups_name_a_narrower_concept_with_evidence(collection: Any) -> None:
    from fastbmrag.explore import follow_ups
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab import load_normalizer

    wd, _ = collection
    with Collection.reader(wd, "g") as coll:
        asked = follow_ups(coll, ["D009369"], set(), ancestors=load_normalizer().ancestors)
        plain = follow_ups(coll, ["D009369"], set())
    assert "What is known about Breast Neoplasms, a narrower concept?" in asked
    assert not any("narrower" in q for q in plain)
