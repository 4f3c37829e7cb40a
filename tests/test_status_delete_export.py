"""`fastbmrag status`, `delete` and `export` through click's CliRunner, then the stored state."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from doors_support import cli_parts as invoke
from lxml import etree
from store_support import cid_papers, paper_edges

from fastbmrag.store import Collection, Filter, Match, PaperEdges

PAPERS = ("PMID:2696505", "PMID:7881871", "PMID:12653683")
G = "{http://graphml.graphdrawing.org/xmlns}"


@pytest.fixture
def wd(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    with Collection.writer(work, "cid", create=True) as coll:
        run = coll.ledger.runs.begin("fastbmrag update", {"input": "papers.csv"}) or 0
        items = []
        for pid in PAPERS:
            points, refs = paper_edges(pid, cid_papers()[pid])
            items.append(PaperEdges(pid, f"sha256:{pid}", points, refs))
        coll.commit_papers(items)
        coll.ledger.mark_failed("PMID:11166519", "sha256:x", "Ollama returned HTTP 500 after 3 tries")
        coll.ledger.runs.end(run, {"done": 3, "failed": 1})
    return work


def n_edges(*pids: str) -> int:
    return sum(len(cid_papers()[p]) for p in pids)


def test_status_human(wd: Path) -> None:
    code, out, err = invoke("status", "--collection", "cid", "--working-dir", str(wd))
    assert code == 0, err
    assert "3 done, 1 failed, 0 pending" in out
    distinct = {(r["chemical_id"], r["disease_id"]) for p in PAPERS for r in cid_papers()[p]}
    assert f"Edges       {n_edges(*PAPERS)} ({len(distinct)} distinct)" in out
    assert str(wd / "cid" / "shard") in out
    assert "PMID:11166519  Ollama returned HTTP 500 after 3 tries" in out
    assert "fastbmrag update" in out and "done=3, failed=1" in out


def test_status_json_from_env_home(wd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTBMRAG_HOME", str(wd))
    monkeypatch.setenv("FASTBMRAG_COLLECTION", "cid")
    code, out, err = invoke("status", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["papers"] == {"done": 3, "failed": 1, "pending": 0, "total": 4}
    assert stats["failed"][0]["paper_id"] == "PMID:11166519"
    assert stats["edges"] == n_edges(*PAPERS)
    assert stats["vector_size"] == 16
    assert stats["backend"] == "embedded"


def test_status_works_while_an_update_holds_the_collection(wd: Path) -> None:
    with Collection.writer(wd, "cid", command="fastbmrag update"):
        code, out, err = invoke("status", "-c", "cid", "--working-dir", str(wd))
    assert code == 0, err
    assert "3 done" in out
    [store] = [line for line in out.splitlines() if line.startswith("Store")]
    assert "(not opened: held by pid" in store and "fastbmrag update" in store
    code, out, _err = invoke("status", "-c", "cid", "--working-dir", str(wd))
    assert code == 0 and "not opened" not in out  # opened, and found readable


def test_status_names_a_damaged_store(wd: Path) -> None:
    """A segment's files overwritten: status, which reads the ledger, opens the store too."""
    for state in (wd / "cid" / "shard" / "segments").glob("*/segment.json"):
        state.write_bytes(b"\x00damaged")
    code, out, err = invoke("status", "-c", "cid", "--working-dir", str(wd))
    assert code == 2 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("Error: Cannot open the embedded store ")
    assert line.endswith("delete that folder and its ledger.sqlite beside it, then index again")


def test_status_unknown_collection(wd: Path) -> None:
    code, out, err = invoke("status", "-c", "endometriosis", "--working-dir", str(wd))
    assert code == 2
    assert err.startswith("Error: No collection 'endometriosis' in ")
    assert "collections there: cid" in err
    assert "Traceback" not in err + out


def test_delete_updates_edges_degrees_and_weights(wd: Path) -> None:
    code, out, err = invoke(
        "delete", "-c", "cid", "--working-dir", str(wd), "PMID:2696505", "PMID:999"
    )
    assert code == 0, err
    edges = n_edges("PMID:2696505")
    assert edges > 1
    assert out.strip() == f"Deleted 1 paper ({edges} edges) from collection 'cid'."
    assert "Not in collection 'cid': PMID:999" in err
    with Collection.reader(wd, "cid") as coll:
        assert coll.store.count() == n_edges("PMID:7881871", "PMID:12653683")
        assert coll.store.count(Filter(must=(Match("paper_id", "PMID:2696505"),))) == 0
        assert coll.ledger.paper_state("PMID:2696505") is None
        degrees = coll.ledger.recompute_degrees()
        assert "D009599" not in degrees  # nitroprusside came only from the deleted paper
        for hit in coll.edges():
            assert hit.payload["source_degree"] == degrees[hit.payload["source_key"]]
            assert hit.payload["target_degree"] == degrees[hit.payload["target_key"]]
        assert coll.ledger.runs.last().command == "fastbmrag delete"  # type: ignore[union-attr]


def test_delete_of_unknown_ids_changes_nothing(wd: Path) -> None:
    code, _out, err = invoke("delete", "-c", "cid", "--working-dir", str(wd), "PMID:1", "PMID:2")
    assert code == 2
    assert "None of the paper ids (PMID:1, PMID:2) is in collection 'cid'" in err
    with Collection.reader(wd, "cid") as coll:
        assert coll.store.count() == n_edges(*PAPERS)


def test_delete_names_the_spelling_the_collection_holds_and_refuses_empty_ids(wd: Path) -> None:
    # the paper of another PMID spelling, whose edges carry no such pmid: named, not deleted
    with Collection.writer(wd, "cid") as coll:
        coll.store.set_payload({"pmid": ""}, Filter(must=(Match("paper_id", "PMID:2696505"),)))
        coll.store.flush()
    code, _out, err = invoke("delete", "-c", "cid", "--working-dir", str(wd), "2696505")
    assert code == 2
    assert "None of the paper ids (2696505) is in collection 'cid' (it holds PMID:2696505: " in err
    code, _out, err = invoke("delete", "-c", "cid", "--working-dir", str(wd), " ")
    assert code == 2 and "An empty paper id was given" in err
    with Collection.reader(wd, "cid") as coll:
        assert coll.store.count() == n_edges(*PAPERS)


def test_delete_takes_the_pmid_of_a_paper(wd: Path) -> None:
    code, _out, err = invoke("delete", "-c", "cid", "--working-dir", str(wd), "7881871")
    assert code == 0, err
    with Collection.reader(wd, "cid") as coll:
        assert coll.store.count() == n_edges("PMID:2696505", "PMID:12653683")


def test_delete_while_an_update_runs_is_locked(wd: Path) -> None:
    with Collection.writer(wd, "cid", command="fastbmrag update"):
        code, _out, err = invoke("delete", "-c", "cid", "--working-dir", str(wd), "PMID:2696505")
    assert code == 3
    assert "is being updated by pid" in err and "(fastbmrag update, started" in err


def test_export_graphml(wd: Path, tmp_path: Path) -> None:
    target = tmp_path / "cid.graphml"
    code, _out, err = invoke(
        "export", "-c", "cid", "--working-dir", str(wd), "--format", "graphml", "-o", str(target)
    )
    assert code == 0, err
    assert f"Wrote 8 nodes and {n_edges(*PAPERS)} edges" in err
    root = etree.parse(str(target)).getroot()
    keys = {
        (k.get("for"), k.get("attr.name")): (k.get("id"), k.get("attr.type"))
        for k in root.iter(f"{G}key")
    }
    assert keys[("node", "degree")] == ("n_degree", "long")
    assert keys[("edge", "weight")] == ("e_weight", "double")
    assert keys[("edge", "refined")][1] == "boolean"
    graph = root.find(f"{G}graph")
    assert graph is not None and graph.get("edgedefault") == "directed"

    def data(el: etree._Element) -> dict[str, str]:
        return {d.get("key"): d.text for d in el.findall(f"{G}data")}

    nodes = {n.get("id"): data(n) for n in graph.findall(f"{G}node")}
    assert nodes["D007022"]["n_name"] == "hypotension"
    assert nodes["D007022"]["n_type"] == "disease"
    assert nodes["D009599"]["n_degree"] == "2"
    assert float(nodes["D009599"]["n_weight"]) == pytest.approx(2 / len(nodes))
    edges = graph.findall(f"{G}edge")
    assert len(edges) == n_edges(*PAPERS)
    nitro = [e for e in edges if (e.get("source"), e.get("target")) == ("D009599", "D007022")]
    assert len(nitro) == 1
    attrs = data(nitro[0])
    assert attrs["e_relationship_type"] == "induces"
    assert attrs["e_paper_id"] == "PMID:2696505"
    assert attrs["e_description"] == "nitroprusside induces hypotension"
    # hypotension has degree 2 in these papers (nitroprusside, labetalol)
    assert float(attrs["e_weight"]) == pytest.approx(2 / len(nodes))


def test_export_csv_to_stdout_and_file(wd: Path, tmp_path: Path) -> None:
    code, out, err = invoke(
        "export", "-c", "cid", "--working-dir", str(wd), "--format", "csv", "-o", "-"
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == n_edges(*PAPERS)
    row = next(r for r in rows if (r["source_id"], r["target_id"]) == ("D009599", "D007022"))
    assert row["pmid"] == "2696505"
    assert row["relationship_type"] == "induces"
    assert row["source_degree"] == "2" and row["target_degree"] == "2"
    assert float(row["weight"]) == pytest.approx(2 / 8)
    code, _out, err = invoke(
        "export", "-c", "cid", "--working-dir", str(wd), "-o", str(tmp_path / "e.csv")
    )
    assert code == 0, err
    with (tmp_path / "e.csv").open(newline="") as f:
        assert len(list(csv.DictReader(f))) == n_edges(*PAPERS)


def test_export_needs_a_format_it_can_tell(wd: Path, tmp_path: Path) -> None:
    code, _out, err = invoke(
        "export", "-c", "cid", "--working-dir", str(wd), "-o", str(tmp_path / "g.txt")
    )
    assert code == 2
    assert "add --format graphml or --format csv" in err


def test_export_while_an_update_holds_the_shard(wd: Path, tmp_path: Path) -> None:
    with Collection.writer(wd, "cid", command="fastbmrag update"):
        code, _out, err = invoke(
            "export", "-c", "cid", "--working-dir", str(wd), "-o", str(tmp_path / "g.csv")
        )
    assert code == 3
    assert "is being updated by pid" in err and "--qdrant-url" in err


def test_a_failed_export_leaves_the_file_it_would_have_replaced(wd: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    kept = out_dir / "edges.csv"
    kept.write_text("last night's export\n")
    code, _out, err = invoke("export", "-c", "nope", "--working-dir", str(wd), "-o", str(kept))
    assert code == 2 and "No collection 'nope'" in err
    with Collection.writer(wd, "cid", command="fastbmrag update"):
        code, _out, _err = invoke("export", "-c", "cid", "--working-dir", str(wd), "-o", str(kept))
    assert code == 3
    assert kept.read_text() == "last night's export\n"
    assert [p.name for p in out_dir.iterdir()] == ["edges.csv"]  # no temporary file left


def test_export_without_a_name_uses_the_only_collection_and_says_so(
    wd: Path, tmp_path: Path
) -> None:
    code, _out, err = invoke("export", "--working-dir", str(wd), "-o", str(tmp_path / "e.csv"))
    assert code == 0, err
    assert f"Wrote {n_edges(*PAPERS)} edges of collection 'cid' to" in err


def test_delete_needs_the_collection_named(wd: Path) -> None:
    code, _out, err = invoke("delete", "--working-dir", str(wd), "PMID:2696505")
    assert code == 2 and "Missing option '-c' / '--collection'" in err
    with Collection.reader(wd, "cid") as coll:
        assert coll.store.count() == n_edges(*PAPERS)


@pytest.mark.parametrize("command", ["status", "delete", "export"])
def test_help_has_an_example(command: str) -> None:
    code, out, _err = invoke(command, "--help")
    assert code == 0
    assert "Example:" in out and f"fastbmrag {command} " in out
    assert "--working-dir" in out and "--collection" in out


def test_export_gives_degrees_that_later_papers_changed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with Collection.writer(work, "cid", create=True) as coll:
        for pid in PAPERS:  # one batch each: later papers raise earlier edges' degrees
            points, refs = paper_edges(pid, cid_papers()[pid])
            coll.commit_papers([PaperEdges(pid, f"sha256:{pid}", points, refs)])
        degrees = dict(coll.ledger.degrees([k for k, *_ in coll.ledger.entities()]))
        current = {
            h.id: (degrees[h.payload["source_key"]], degrees[h.payload["target_key"]])
            for h in coll.store.scroll()
        }
        n_nodes = coll.ledger.node_count()
    code, out, err = invoke(
        "export", "-c", "cid", "--working-dir", str(work), "--format", "csv", "-o", "-"
    )
    assert code == 0, err
    rows = {r["point_id"]: r for r in csv.DictReader(io.StringIO(out))}
    assert len(rows) == len(current)
    for point_id, (source_degree, target_degree) in current.items():
        row = rows[point_id]
        assert (row["source_degree"], row["target_degree"]) == (
            str(source_degree),
            str(target_degree),
        )
        assert float(row["weight"]) == pytest.approx(min(source_degree, target_degree) / n_nodes)
