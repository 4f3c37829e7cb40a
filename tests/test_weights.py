"""Weights as the fastbmRAG paper defines them, kept exact through updates and deletes.

node weight = degree / number of nodes; edge weight = min(source weight, target weight);
degrees over distinct (source_key, relationship_type, target_key) edges of the collection. The
ledger holds the degrees: a commit writes the paper's own points and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient
from store_support import cid_papers, expected_degrees, paper_edges

from fastbmrag.store.base import Filter, Point, Store
from fastbmrag.store.collection import Collection, PaperEdges
from fastbmrag.store.edge import EdgeStore
from fastbmrag.store.server import ServerStore

Opener = Callable[..., Collection]


@pytest.fixture(params=["embedded", "server"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    client = QdrantClient(location=":memory:") if request.param == "server" else None

    def open_(name: str, **kw: Any) -> Collection:
        if client is None:
            return Collection.writer(tmp_path, name, create=True, **kw)
        return Collection.writer(tmp_path, name, create=True, store=ServerStore(client, name), **kw)

    yield open_
    if client is not None:
        client.close()


def commit(
    coll: Collection, paper_id: str, rows: list[dict[str, str]], relation: str = "induces"
) -> None:
    points, refs = paper_edges(paper_id, rows, relation)
    coll.commit_paper(paper_id, f"sha256:{paper_id}:{len(rows)}", points, refs)


def batch_item(paper_id: str, rows: list[dict[str, str]], relation: str = "induces") -> PaperEdges:
    points, refs = paper_edges(paper_id, rows, relation)
    return PaperEdges(paper_id, f"sha256:{paper_id}:{len(rows)}", points, refs)


def snapshot(coll: Collection) -> dict[str, tuple[int, int, float]]:
    """point id -> (source degree, target degree, weight) as the collection shows them."""
    return {
        h.id: (h.payload["source_degree"], h.payload["target_degree"], h.payload["weight"])
        for h in coll.edges(batch_size=7)  # batches that do not divide the edges
    }


def filtered_ids(coll: Collection, threshold: float) -> set[str]:
    return {h.id for h in coll.store.scroll(coll.min_weight_filter(threshold))}


def test_incremental_updates_and_delete_equal_indexing_from_scratch(opener: Opener) -> None:
    papers = cid_papers()
    ids = list(papers)
    assert len(ids) == 30
    # Paper 12 is re-indexed with one relation dropped and stated as "causes" instead.
    changed_id = ids[12]
    changed_rows = papers[changed_id][:-1] if len(papers[changed_id]) > 1 else papers[changed_id]

    inc = opener("incremental")
    with inc:
        for start in range(0, 20, 5):  # batches, as the indexer commits them
            inc.commit_papers([batch_item(pid, papers[pid]) for pid in ids[start : start + 5]])
        inc.commit_papers([batch_item(pid, papers[pid]) for pid in ids[10:20]])  # no change
        for pid in ids[20:]:  # one paper at a time
            commit(inc, pid, papers[pid])
        commit(inc, changed_id, changed_rows, "causes")
        deleted = inc.delete_papers([*ids[:5], ids[25], "PMID:not-there"])
        assert deleted == sum(len(papers[p]) for p in [*ids[:5], ids[25]])

    final = [p for p in ids[5:] if p != ids[25]]
    scratch = opener("scratch")
    with scratch:
        scratch.commit_papers(
            [
                batch_item(pid, changed_rows, "causes")
                if pid == changed_id
                else batch_item(pid, papers[pid])
                for pid in final
            ]
        )

    inc = opener("incremental")
    scratch = opener("scratch")
    with inc, scratch:
        # the independent computation of what the weights must be
        triples = {
            pid: [
                (r["chemical_id"], "causes" if pid == changed_id else "induces", r["disease_id"])
                for r in (changed_rows if pid == changed_id else papers[pid])
            ]
            for pid in final
        }
        degrees = expected_degrees(triples)
        n_nodes = len(degrees)
        assert inc.ledger.node_count() == scratch.ledger.node_count() == n_nodes
        assert inc.ledger.recompute_degrees() == degrees
        assert dict(inc.ledger.degrees(degrees)) == degrees

        stored = snapshot(inc)
        assert stored == snapshot(scratch)
        assert len(stored) == sum(len(t) for t in triples.values())
        assert inc.store.paper_ids() == set(final)
        for hit in inc.edges():
            s, t = hit.payload["source_key"], hit.payload["target_key"]
            assert (hit.payload["source_degree"], hit.payload["target_degree"]) == (
                degrees[s],
                degrees[t],
            )
            assert hit.payload["weight"] == min(degrees[s], degrees[t]) / n_nodes

        weights = {
            hit.id: min(degrees[hit.payload["source_key"]], degrees[hit.payload["target_key"]])
            / n_nodes
            for hit in scratch.store.scroll()
        }
        distinct = sorted(set(weights.values()))
        assert len(distinct) >= 2  # the thresholds below really split the edges
        forms = set()
        for threshold in [0.0, *distinct, (distinct[0] + distinct[1]) / 2, 0.99]:
            expected = {pid for pid, w in weights.items() if w >= threshold}
            assert filtered_ids(inc, threshold) == expected
            assert filtered_ids(scratch, threshold) == expected
            flt = inc.min_weight_filter(threshold)
            forms.add("keys passing" if flt.must else "keys failing" if flt.must_not else "none")
        assert forms == {"keys passing", "none"}  # most nodes here have degree 1
        # known values: 28 nodes; catalepsy (MeSH D002375) is induced by 6 distinct chemicals
        assert n_nodes == 28
        assert degrees["D002375"] == 6


def test_a_relation_stated_by_many_papers_counts_once(opener: Opener) -> None:
    papers = cid_papers()
    # PMID:2696505 states nitroprusside (D009599) induces hypotension (D007022); so do others.
    sharing = [
        p
        for p, rows in papers.items()
        if any(r["chemical_id"] == "D009599" and r["disease_id"] == "D007022" for r in rows)
    ]
    assert len(sharing) >= 3 and "PMID:2696505" in sharing
    with opener("shared") as coll:
        for pid in sharing:
            commit(
                coll,
                pid,
                [
                    r
                    for r in papers[pid]
                    if r["chemical_id"] == "D009599" and r["disease_id"] == "D007022"
                ],
            )
        assert coll.ledger.node_count() == 2
        assert coll.ledger.degrees(["D009599", "D007022"]) == {"D009599": 1, "D007022": 1}
        assert coll.store.count() == len(sharing)  # one edge per paper, one distinct edge
        assert coll.ledger.distinct_edge_count() == 1
        # deleting all but one paper keeps the distinct edge and its degrees
        coll.delete_papers(sharing[1:])
        assert coll.ledger.degrees(["D009599", "D007022"]) == {"D009599": 1, "D007022": 1}
        coll.delete_papers(sharing[:1])
        assert coll.ledger.node_count() == 0 and coll.store.count() == 0


class CountingStore(EdgeStore):
    """An embedded store that counts the points each write touches."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.upserted = 0
        self.payloads_set = 0

    def upsert(self, points: Sequence[Point]) -> None:
        self.upserted += len(points)
        super().upsert(points)

    def set_payload(self, payload: dict[str, Any], flt: Filter) -> None:
        self.payloads_set += self.count(flt)
        super().set_payload(payload, flt)


def test_a_commit_writes_only_the_papers_own_points(tmp_path: Path) -> None:
    """Degrees change other edges' weights, not their points: a point the store has indexed
    stays where it is, whatever later papers do to its nodes' degrees."""
    papers = cid_papers()
    ids = list(papers)
    store = CountingStore(tmp_path / "cid" / "shard")
    with Collection.writer(tmp_path, "cid", create=True, store=store) as coll:
        coll.commit_papers([batch_item(pid, papers[pid]) for pid in ids[:-1]])
        before = {h.id: h.payload["weight"] for h in coll.edges()}
        store.upserted = store.payloads_set = 0
        # One new paper: nitroprusside (D009599) now also "treats" hypertension (D006973).
        row = dict(papers["PMID:2696505"][0], disease_id="D006973", disease_name="hypertension")
        commit(coll, "PMID:0000001", [row], "treats")
        assert (store.upserted, store.payloads_set) == (1, 0)
        after = {h.id: h.payload["weight"] for h in coll.edges()}
        assert any(after[i] != w for i, w in before.items())  # weights of other edges moved


def test_min_weight_threshold_matches_float_weights(tmp_path: Path) -> None:
    papers = cid_papers()
    with Collection.writer(tmp_path, "cid", create=True) as coll:
        coll.commit_papers([batch_item(pid, papers[pid]) for pid in list(papers)[:10]])
        n = coll.ledger.node_count()
        for d in range(0, 6):
            w = d / n
            assert coll.min_degree(w) == d  # exactly d/n passes, float rounding included
            assert coll.min_degree(w + 1e-12) == d + 1
        assert coll.min_weight_filter(0.0) == Filter()
        store: Store = coll.store
        assert store.count(coll.min_weight_filter(1.0)) == 0


def test_min_weight_names_the_nodes_below_it_when_they_are_fewer(tmp_path: Path) -> None:
    """Three chemicals each inducing the same three diseases (every node of degree 3) and one
    chemical inducing one of them: a threshold of degree 2 keeps every edge but the lone
    chemical's, a condition on the one node below it."""
    rows = [
        {"chemical_id": f"C{c}", "chemical_name": f"chem {c}", "disease_id": f"D{d}",
         "disease_name": f"disease {d}", "pmid": "1", "title": "grid"}
        for c in range(3) for d in range(3)
    ]  # fmt: skip
    lone = {"chemical_id": "C9", "chemical_name": "chem 9", "disease_id": "D0",
            "disease_name": "disease 0", "pmid": "2", "title": "lone"}  # fmt: skip
    with Collection.writer(tmp_path, "grid", create=True) as coll:
        coll.commit_papers([batch_item("PMID:1", rows), batch_item("PMID:2", [lone])])
        n = coll.ledger.node_count()
        assert n == 7
        flt = coll.min_weight_filter(2 / n)
        assert not flt.must and len(flt.must_not) == 2  # source and target not the lone node
        kept = {h.payload["source_key"] for h in coll.store.scroll(flt)}
        assert kept == {"C0", "C1", "C2"} and coll.store.count(flt) == 9
