"""One test-suite for both stores: Qdrant Edge (embedded) and qdrant-client (`:memory:` stands in
for a server). Edges are real chemical-induced-disease relations of BC5CDR (PubMed ids, MeSH ids)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient
from store_support import DIM, cid_rows, vec

from fastbmrag.errors import DimensionMismatch
from fastbmrag.store.base import (
    Boost,
    Filter,
    Match,
    Point,
    Range,
    Ranking,
    Store,
    edge_point_id,
    node_key,
)
from fastbmrag.store.edge import (
    CONFIG_FILE,
    MAX_SEGMENT_KB,
    EdgeStore,
    readahead,
    readahead_files,
)
from fastbmrag.store.payload import BM25_FIELDS, INTEGER_FIELDS, KEYWORD_FIELDS, TEXT_FIELDS
from fastbmrag.store.server import ServerStore
from fastbmrag.text.stems import edge_words, stems


def point(row: dict[str, str], year: int = 1990, degree: int = 1) -> Point:
    pid = f"PMID:{row['pmid']}"
    payload = {
        "paper_id": pid,
        "pmid": row["pmid"],
        "title": row["title"],
        "year": year,
        "source": row["chemical_name"],
        "source_id": row["chemical_id"],
        "source_key": row["chemical_id"],
        "source_type": "chemical",
        "target": row["disease_name"],
        "target_id": row["disease_id"],
        "target_key": row["disease_id"],
        "target_type": "disease",
        "relationship_type": "induces",
        "description": f"{row['chemical_name']} induces {row['disease_name']}",
        "source_degree": degree,
        "target_degree": degree,
        "paper_weight": 1.5,
        "words": edge_words([row["chemical_name"], row["disease_name"]]),
    }
    return Point(
        edge_point_id(pid, row["chemical_id"], "induces", row["disease_id"]),
        vec(payload["description"]),
        payload,
    )


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store
    if request.param == "edge":
        s = EdgeStore(tmp_path / "shard")
    else:
        s = ServerStore(QdrantClient(location=":memory:"), "cid")
    yield s
    s.close()


@pytest.fixture
def loaded(store: Store) -> Store:
    store.ensure_collection(DIM)
    store.upsert([point(r) for r in cid_rows()])
    store.flush()
    return store


def test_point_id_is_uuid5_of_the_edge_key() -> None:
    # Fixed namespace: this value must never change, or re-indexing would duplicate edges.
    pid = edge_point_id("PMID:2696505", "D009599", "induces", "D007022")
    assert pid == "72c1edff-bc02-54b5-a20f-3076c12ab1e8"
    assert edge_point_id("PMID:2696505", "D009599", "induces", "D016534") != pid
    assert edge_point_id("PMID:2696505", "D007022", "induces", "D009599") != pid


def test_node_key() -> None:
    assert node_key("HGNC:5992", "gene", "IL1B") == "HGNC:5992"
    assert node_key(None, "Cell Type", "Stromal Cells") == "Cell Type:stromal cells"
    assert node_key("", "disease", "Endometriosis") == "disease:endometriosis"


def test_ensure_collection_and_dimension_mismatch(store: Store) -> None:
    assert store.vector_size() is None
    store.ensure_collection(DIM)
    assert store.vector_size() == DIM
    store.ensure_collection(DIM)  # idempotent
    with pytest.raises(DimensionMismatch, match=r"16-d.*1024-d|16.*1024"):
        store.ensure_collection(1024)


def test_upsert_counts_and_replaces_exactly(loaded: Store) -> None:
    rows = cid_rows()
    assert loaded.count() == len(rows) == 57
    # Re-upserting the same edges overwrites them: no duplicates.
    loaded.upsert([point(r, year=2001) for r in rows[:10]])
    loaded.flush()
    assert loaded.count() == 57
    assert loaded.count(Filter(must=(Match("year", 2001),))) == 10
    # no value: the field is missing (no pmcid here) or empty
    assert loaded.count(Filter(must=(Match("pmcid"),))) == 57
    assert loaded.count(Filter(must_not=(Match("pmid"),))) == 57


def _many_points(copies: int) -> list[Point]:
    """``copies`` x the 57 relations, each copy as another relation type (distinct ids), the
    copy's number in the payload's ``year``."""
    points = []
    for k in range(copies):
        for r in cid_rows():
            p = point(r, year=k)
            rel = f"induces_{k}"
            pid = edge_point_id(p.payload["paper_id"], r["chemical_id"], rel, r["disease_id"])
            points.append(Point(pid, p.vector, {**p.payload, "relationship_type": rel}))
    return points


def test_upsert_of_several_batches_and_an_error_inside_one(store: Store) -> None:
    """Large upserts go to the engine in batches: every point lands, and an error in one batch
    reaches the caller and stops the call (no later batch is written), leaving the store
    usable."""
    store.ensure_collection(DIM)
    points = _many_points(10)  # 570 points: several batches on both backends
    store.upsert(points)
    store.flush()
    assert store.count() == 570
    assert store.count(Filter(must=(Range("year", gte=9),))) == 57

    store.delete(Filter(must=(Range("year", gte=0),)))
    store.flush()
    assert store.count() == 0
    bad = list(points)
    bad[5] = Point(bad[5].id, [0.5] * (DIM + 1), bad[5].payload)  # in the first batch
    with pytest.raises(Exception, match=r"(?i)dim"):
        store.upsert(bad)
    store.flush()
    # copy 9 (points 513-569) lies after the first batch of either backend (512, 256 points)
    assert store.count(Filter(must=(Range("year", gte=9),))) == 0
    # the store stays usable: the same points, all valid, land in full
    store.upsert(points)
    store.flush()
    assert store.count() == 570


def test_delete_by_paper(loaded: Store) -> None:
    assert loaded.count(Filter(must=(Match("paper_id", "PMID:2696505"),))) == 3
    loaded.delete(Filter(must=(Match("paper_id", "PMID:2696505"),)))
    loaded.flush()
    assert loaded.count(Filter(must=(Match("paper_id", "PMID:2696505"),))) == 0
    assert loaded.count() == 54
    assert "PMID:2696505" not in loaded.paper_ids()


def test_a_ranked_search_adds_the_largest_boost_an_edge_earns_in_the_store(
    loaded: Store,
) -> None:
    query = vec("nitroprusside induces hypotension")
    plain = loaded.search(query, limit=loaded.count())
    similarity = {h.id: h.score or 0.0 for h in plain}
    into = Filter(must=(Match("target_id", "D007022"),))  # edges into hypotension
    labetalol = Filter(must=(Match("source_id", "D007741"),))
    boosts = (Boost("into", 0.1, into), Boost("labetalol", 1.0, labetalol))
    ranking = Ranking(boosts=boosts)
    hits = loaded.ranked(query, None, ranking, limit=50)
    # only edges that earn a boost, ranked by their similarity (each hit's score) plus the
    # largest boost they earn, which their payload tells
    assert hits and all(h.payload["target_id"] == "D007022"
                        or h.payload["source_id"] == "D007741" for h in hits)  # fmt: skip
    ranks = []
    for h in hits:
        earned = 1.0 if h.payload["source_id"] == "D007741" else 0.1
        assert h.score == pytest.approx(similarity[h.id], abs=2e-3)
        assert ranking.earned(h) == boosts[earned == 1.0]
        ranks.append((h.score or 0.0) + earned)
    assert ranks == sorted(ranks, reverse=True)
    # the larger boost outranks similarity: labetalol's edge above the exact match
    assert hits[0].payload["source_id"] == "D007741"
    assert similarity[hits[1].id] > similarity[hits[0].id]
    # the flags' filter holds for every candidate
    only = Filter(must=(Match("source_id", "D009599"),))
    assert {h.payload["source_id"] for h in loaded.ranked(query, only, ranking, 50)} == {
        "D009599"
    }
    assert loaded.ranked(query, None, Ranking(), 50) == []


def test_a_ranked_search_relates_edges_by_their_words_bm25_in_the_same_request(
    loaded: Store,
) -> None:
    query = vec("what lowers blood pressure")
    plain = {h.id: h.score or 0.0 for h in loaded.search(query, limit=loaded.count())}
    labetalol = Filter(must=(Match("source_id", "D007741"),))
    words = " ".join(stems("Which drugs cause hypotension?"))
    held = [h for h in loaded.scroll() if "hypotens" in h.payload["words"].split()]
    assert 0 < len(held) < loaded.count()
    ranking = Ranking(boosts=(Boost("labetalol", 1.0, labetalol),), words=words,
                      words_floor=0.5, words_weight=0.05)  # fmt: skip
    hits = loaded.ranked(query, None, ranking, limit=50)
    # the edges the word relates, and those earning the boost: each with what it earns
    assert {h.id for h in hits} == {h.id for h in held} | {
        h.id for h in loaded.scroll(labetalol)
    }
    for h in hits:
        b = ranking.earned(h)
        assert h.score == pytest.approx(plain[h.id], abs=2e-3)
        if b is None:  # all of the words' weight: their BM25 passes words_full (the floor)
            assert plain[h.id] + 0.05 <= max(plain[x.id] + 1.0 for x in hits)
    # a floor above the word's weight in the collection relates nothing by words
    high = Ranking(words=words, words_floor=50.0, words_weight=0.05)
    assert loaded.ranked(query, None, high, 50) == []
    # without a vector: the same edges, by what they earn
    assert {h.id for h in loaded.ranked(None, None, ranking, 50)} == {h.id for h in hits}


def test_search_with_filters_and_threshold(loaded: Store) -> None:
    query = vec("nitroprusside induces hypotension")
    hits = loaded.search(query, limit=3)
    assert hits[0].payload["source_id"] == "D009599"
    assert hits[0].payload["target_id"] == "D007022"
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)  # 16-bit vectors in the embedded store
    # keyword filter: only edges into hypotension (MeSH D007022)
    flt = Filter(must=(Match("target_id", "D007022"),))
    hits = loaded.search(vec("labetalol"), flt, limit=50)
    assert hits and {h.payload["target_id"] for h in hits} == {"D007022"}
    assert {h.payload["source_id"] for h in hits} >= {"D009599", "D007741"}
    # any_of + must_not + range
    flt = Filter(
        must=(Match("source_id", any_of=("D009599", "D007741")), Range("year", gte=1990, lte=1990)),
        must_not=(Match("target_id", "D016534"),),
    )
    hits = loaded.search(query, flt, limit=50)
    assert {(h.payload["source_id"], h.payload["target_id"]) for h in hits} == {
        (s, t)
        for r in cid_rows()
        for s, t in [(r["chemical_id"], r["disease_id"])]
        if s in ("D009599", "D007741") and t != "D016534"
    }
    # score threshold keeps only the exact match
    hits = loaded.search(query, limit=10, score_threshold=0.999)
    assert [(h.payload["source_id"], h.payload["target_id"]) for h in hits] == [
        ("D009599", "D007022")
    ] * len(hits)
    assert 1 <= len(hits) <= 5


def test_scroll_all_and_filtered(loaded: Store) -> None:
    all_hits = list(loaded.scroll(batch_size=7))
    assert len(all_hits) == 57
    assert len({h.id for h in all_hits}) == 57
    assert all(h.score is None for h in all_hits)
    pmids = {
        h.payload["pmid"] for h in loaded.scroll(Filter(must=(Match("source_id", "D009599"),)))
    }
    expected = {r["pmid"] for r in cid_rows() if r["chemical_id"] == "D009599"}
    assert pmids == expected and "2696505" in pmids


def test_set_payload_by_filter(loaded: Store) -> None:
    n_hypo = sum(1 for r in cid_rows() if r["disease_id"] == "D007022")
    loaded.set_payload(
        {"target_degree": 9}, Filter(must=(Match("target_key", any_of=("D007022",)),))
    )
    loaded.flush()
    assert loaded.count(Filter(must=(Range("target_degree", gte=9),))) == n_hypo
    # other fields are kept (merge, not overwrite)
    hit = next(iter(loaded.scroll(Filter(must=(Match("target_key", "D007022"),)))))
    assert hit.payload["target_id"] == "D007022" and hit.payload["relationship_type"] == "induces"


def test_paper_ids(loaded: Store) -> None:
    assert loaded.paper_ids() == {f"PMID:{r['pmid']}" for r in cid_rows()}
    assert len(loaded.paper_ids()) == 30


def test_empty_store_reads(store: Store) -> None:
    assert store.count() == 0
    assert store.search(vec("x")) == []
    assert list(store.scroll()) == []
    assert store.paper_ids() == set()


def test_embedded_reopen_keeps_everything(tmp_path: Path) -> None:
    s = EdgeStore(tmp_path / "shard")
    s.ensure_collection(DIM)
    s.upsert([point(r) for r in cid_rows()])
    s.flush()
    s.close()
    again = EdgeStore(tmp_path / "shard")
    try:
        assert again.vector_size() == DIM
        assert again.count() == 57
        assert again.count(Filter(must=(Match("pmid", "2696505"),))) == 3
        hits = again.search(vec("nitroprusside induces hypotension"), limit=1)
        assert hits[0].payload["target"] == "hypotension"
        # durable through flush alone: shards are made without a write-ahead log
        assert not (tmp_path / "shard" / "wal").exists()
        # vectors are mapped and read on use, not pre-warmed into RAM at every open
        segments = [
            json.loads(f.read_text()) for f in (tmp_path / "shard").glob("segments/*/segment.json")
        ]
        assert [seg["config"]["vector_data"][""]["storage_type"] for seg in segments] == [
            "ChunkedMmap"
        ]
        # the payload indexes (the fields filters read) survive a reopen
        kinds = again.indexed_fields()
        assert {k: kinds[k] for k in KEYWORD_FIELDS} == dict.fromkeys(KEYWORD_FIELDS, "Keyword")
        assert {k: kinds[k] for k in INTEGER_FIELDS} == dict.fromkeys(INTEGER_FIELDS, "Integer")
        assert {k: kinds[k] for k in TEXT_FIELDS + BM25_FIELDS} == dict.fromkeys(
            TEXT_FIELDS + BM25_FIELDS, "Text"
        )
        # no index that no filter or score reads
        assert kinds.keys() == {*KEYWORD_FIELDS, *INTEGER_FIELDS, *TEXT_FIELDS, *BM25_FIELDS}
    finally:
        again.close()


def test_embedded_readahead_reads_what_an_open_reads(tmp_path: Path) -> None:
    """The readahead a query starts before its imports covers the payload indexes (and the HNSW
    graph, where the shard is large enough to have one), never the vectors or payloads (read on
    use), and is a no-op where no shard is."""
    assert readahead(tmp_path / "nothing") is None
    s = EdgeStore(tmp_path / "shard")
    try:
        s.ensure_collection(DIM)
        s.upsert([point(r) for r in cid_rows()])
        s.flush()
    finally:
        s.close()
    files = [Path(f).relative_to(tmp_path / "shard") for f in readahead_files(tmp_path / "shard")]
    folders = {part for f in files for part in f.parts}
    assert "payload_index" in folders and any(f.name == "segment.json" for f in files)
    assert not folders & {"vector_storage", "payload_storage"}
    # every payload index is read ahead
    assert all(any(name[:8] in part for part in folders) for name in KEYWORD_FIELDS)
    reader = readahead(tmp_path / "shard")
    assert reader is not None
    assert reader.wait(timeout=30) == 0


def test_embedded_optimize_indexes_points(tmp_path: Path) -> None:
    s = EdgeStore(tmp_path / "shard")
    try:
        s.ensure_collection(DIM)
        s.upsert([point(r) for r in cid_rows()])
        s.flush()
        before = s.unindexed_points()
        s.optimize()
        assert before == 57
        assert s.count() == 57
        # optimised segments keep the vectors mapped, read on use
        segments = [
            json.loads(f.read_text()) for f in (tmp_path / "shard").glob("segments/*/segment.json")
        ]
        storage = {seg["config"]["vector_data"][""]["storage_type"] for seg in segments}
        assert storage <= {"Mmap", "ChunkedMmap"}, storage
        hits = s.search(vec("nitroprusside induces hypotension"), limit=1)
        assert hits[0].payload["source"] == "nitroprusside"
    finally:
        s.close()


def test_embedded_vectors_are_float16_and_rank_as_an_exact_float32_scan(tmp_path: Path) -> None:
    """A new shard stores 16-bit vectors and merges segments up to MAX_SEGMENT_KB only; a
    search scores each point as an exact float32 scan of the vectors given does, to 16-bit
    precision, and finds the top 5 that scan finds but for ties closer than that."""
    points = [point(r) for r in cid_rows()]
    s = EdgeStore(tmp_path / "shard")
    try:
        s.ensure_collection(DIM)
        s.upsert(points)
        s.flush()
        config = json.loads((tmp_path / "shard" / CONFIG_FILE).read_text())
        assert config["vectors"][""]["datatype"] == "float16"
        assert config["optimizers"]["max_segment_size"] == MAX_SEGMENT_KB
        matrix = np.stack([np.asarray(p.vector, dtype=np.float32) for p in points])
        for p in points[:20]:
            exact = dict(zip((q.id for q in points), matrix @ p.vector, strict=True))
            hits = s.search(p.vector, limit=5)
            assert exact[hits[0].id] == pytest.approx(1.0, abs=1e-6)  # itself, or its copy
            assert all(h.score == pytest.approx(exact[h.id], abs=2e-3) for h in hits)
            fifth = sorted(exact.values(), reverse=True)[4]
            assert {i for i, score in exact.items() if score > fifth + 4e-3} <= {h.id for h in hits}
    finally:
        s.close()


def test_embedded_shard_of_an_earlier_layout_gets_on_disk_indexes(tmp_path: Path) -> None:
    """A shard whose payload indexes were loaded onto the heap (one lacking an index, and
    indexes of fields no filter reads) is given this version's indexes by its next writer, and
    its data and filters stay intact."""
    import qdrant_edge as qe

    from fastbmrag.store.base import vector_list
    from fastbmrag.store.edge import INDEX_MEMORY

    path = tmp_path / "shard"
    shard = qe.EdgeShard.create(
        str(path), qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine))
    )
    # relationship_type left without an index; finding not a field yet
    for name in (f for f in KEYWORD_FIELDS if f not in ("relationship_type", "finding")):
        shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
    for name in INTEGER_FIELDS:
        shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Integer))
    # indexes an earlier version made of fields no filter reads
    for name in ("source", "source_id", "target", "target_id"):
        shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
    shard.update(qe.UpdateOperation.create_field_index("paper_weight", qe.PayloadSchemaType.Float))
    rows = cid_rows()
    shard.update(
        qe.UpdateOperation.upsert_points(
            [qe.Point(p.id, vector_list(p.vector), p.payload) for p in map(point, rows)]
        )
    )
    shard.flush()
    shard.close()

    s = EdgeStore(path)
    try:
        assert "relationship_type" not in s.indexed_fields()
        assert "paper_weight" in s.indexed_fields()
        s.upgrade_indexes()
        kinds = s.indexed_fields()
        assert kinds == {**dict.fromkeys(KEYWORD_FIELDS, "Keyword"),
                         **dict.fromkeys(INTEGER_FIELDS, "Integer"),
                         **dict.fromkeys(TEXT_FIELDS + BM25_FIELDS, "Text")}  # fmt: skip
        assert s.count() == 57
        assert s.count(Filter(must=(Match("pmid", "2696505"),))) == 3
        assert s.count(Filter(must=(Range("year", gte=1990),))) == 57
    finally:
        s.close()
    again = qe.EdgeShard.load(str(path))
    try:
        memory = {
            k: getattr(v.params, "memory", None) for k, v in again.info().payload_schema.items()
        }
        assert memory == dict.fromkeys(
            KEYWORD_FIELDS + INTEGER_FIELDS + TEXT_FIELDS + BM25_FIELDS, INDEX_MEMORY
        )
    finally:
        again.close()


def test_what_an_edge_earned_is_read_from_its_payload_as_the_engine_decides(
    tmp_path: Path,
) -> None:
    """Ranking.earned reads a returned edge's boosts from its payload (no other read): the
    Python reading of a filter (``admits``) agrees with the embedded engine, point by point."""
    from fastbmrag.store.base import HasId, Words, admits

    rows = cid_rows()
    store = EdgeStore(tmp_path / "shard")
    try:
        store.ensure_collection(DIM)
        points = [point(r, year=1985 + i % 10) for i, r in enumerate(rows)]
        for i, p in enumerate(points):  # names over several values, some ancestors, some none
            p.payload["names"] = [p.payload["source"], f"{p.payload['target']} in adults"]
            p.payload["source_ancestors"] = ["D000001"] if i % 3 == 0 else []
        store.upsert(points)
        store.flush()
        first = points[0].id
        filters = [
            Filter(must=(Match("target_id", "D007022"),)),
            Filter(should=(Match("source_id", any_of=("D009599", "D007741")),
                           Match("source_ancestors", any_of=("D000001",)))),
            Filter(must=(Range("year", gte=1988, lt=1992),), must_not=(Match("pmid", "2696505"),)),
            Filter(must=(Match("source_ancestors"),)),  # empty
            Filter(must=(Words("names", "hypotension adults"),)),  # words of two values
            Filter(must=(Words("names", "the hypotension"),)),  # a stop word
            Filter(must=(Filter(should=(HasId((first,)), Words("names", "nitroprusside"))),)),
        ]  # fmt: skip
        for flt in filters:
            engine = {h.id for h in store.scroll(flt)}
            assert engine, flt
            assert {p.id for p in points if admits(flt, p.id, p.payload)} == engine, flt
    finally:
        store.close()
