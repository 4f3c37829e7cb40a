"""Shard open time and first queries vs Qdrant Edge memory placement.

Builds an optimised Qdrant Edge shard of N synthetic 1024-d edges with the project's payload
indexes (a hub entity on ~25 % of the edges) and no write-ahead log, as EdgeStore makes them,
in one placement mode, then opens it three times, each in a fresh process (as `fastbmrag query`
does), and times the open, an exact count with the hub filter, the first filtered top-50 query
and a second one. ``--wal`` builds with the engine's write-ahead log, for comparison
(upserts/s covers building the points, the updates and the flushes: one at the end, and one
every ``--flush-every`` points as the indexer's commits do).

Modes:
  default    the engine's defaults (payload indexes deserialised onto the heap at open)
  idxcached  payload indexes as memory maps pre-warmed at open
  veccold    idxcached + vectors read on first use (what EdgeStore creates)
  idxcold    payload indexes as memory maps read on first use
  cold       idxcold + vectors and HNSW graph read on first use
  sq8        veccold + int8 scalar quantization, the quantized vectors pre-warmed at open (a
             quarter of the originals' size); searches use them and rescore their candidates
             with the original vectors
  sq8cold    sq8 with the quantized vectors read on first use

    python scripts/bench_shard_memory.py --n 200000 --mode veccold --ef-construct 16

``--ef-construct`` only makes the HNSW build cheaper (the graph has the same size for a given
m), so that large shards can be compared in minutes; the product uses the engine's default.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from fastbmrag.store.payload import INTEGER_FIELDS, KEYWORD_FIELDS

HUB = "D600000"


# --payload-hnsw entity: the engine builds per-value HNSW links only for these keyword fields
ENTITY_FIELDS = ("source_key", "target_key", "relationship_type")


def index_params(kind: str, memory: qe.Memory | None, hnsw: bool | None = None) -> object:
    if hnsw is not None and kind == "keyword":
        return qe.KeywordIndexParams(memory=memory, enable_hnsw=hnsw)
    if memory is None:
        return {
            "keyword": qe.PayloadSchemaType.Keyword,
            "integer": qe.PayloadSchemaType.Integer,
        }[kind]
    if kind == "keyword":
        return qe.KeywordIndexParams(memory=memory)
    return qe.IntegerIndexParams(lookup=True, range=True, memory=memory)


def build(
    path: Path,
    n: int,
    mode: str,
    ef_construct: int | None,
    wal: bool,
    flush_every: int,
    payload_hnsw: str,
) -> dict[str, float]:
    cold = mode == "cold"
    index_memory = {
        "idxcached": qe.Memory.Cached,
        "veccold": qe.Memory.Cached,
        "idxcold": qe.Memory.Cold,
        "cold": qe.Memory.Cold,
        "sq8": qe.Memory.Cached,
        "sq8cold": qe.Memory.Cached,
    }
    cold_vectors = mode in ("veccold", "cold", "sq8", "sq8cold")
    vectors = qe.EdgeVectorParams(
        size=1024,
        distance=qe.Distance.Cosine,
        **({"memory": qe.Memory.Cold} if cold_vectors else {}),
    )
    hnsw = None
    if cold or ef_construct:
        hnsw = qe.HnswIndexConfig(
            m=16,
            ef_construct=ef_construct or 100,
            full_scan_threshold=10000,
            **({"memory": qe.Memory.Cold} if cold else {}),
        )
    quantization = None
    if mode.startswith("sq8"):
        quantization = qe.ScalarQuantizationConfig(
            type=qe.ScalarType.Int8,
            quantile=0.99,
            memory=qe.Memory.Cold if mode == "sq8cold" else qe.Memory.Cached,
        )
    config = qe.EdgeConfig(
        vectors=vectors, hnsw_config=hnsw, quantization_config=quantization, wal_enabled=wal
    )
    shard = qe.EdgeShard.create(str(path), config)
    memory = index_memory.get(mode)
    for names, kind in ((KEYWORD_FIELDS, "keyword"), (INTEGER_FIELDS, "integer")):
        for name in names:
            hnsw = None if payload_hnsw == "all" else name in ENTITY_FIELDS
            params = index_params(kind, memory, hnsw)
            shard.update(qe.UpdateOperation.create_field_index(name, params))
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    for start in range(0, n, 1000):
        vecs = rng.standard_normal((1000, 1024)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        points = []
        for j in range(1000):
            i = start + j
            source = HUB if i % 4 == 0 else f"HGNC:{i % 3000}"
            payload = {
                "paper_id": f"P{i // 10}", "pmid": str(i // 10), "title": "t " * 60,
                "journal": f"J{i % 300}", "year": 2000 + i % 25, "authors": "Doe J; Roe R",
                "source": source, "source_id": source, "source_key": source,
                "source_type": "gene", "target": f"D{i % 500}", "target_id": f"D{i % 500}",
                "target_key": f"D{i % 500}", "target_type": "disease",
                "relationship_type": f"r{i % 19}", "source_degree": i % 50,
                "target_degree": i % 70, "paper_weight": 1.0, "description": "x " * 80,
            }  # fmt: skip
            points.append(qe.Point(str(uuid.uuid4()), vecs[j].tolist(), payload))
        shard.update(qe.UpdateOperation.upsert_points(points))
        if flush_every and (start + 1000) % flush_every == 0:
            shard.flush()
    shard.flush()
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    shard.optimize()
    shard.flush()
    shard.close()
    return {
        "upserts_per_s": round(n / load_s),
        "optimize_s": round(time.perf_counter() - t, 1),
    }


def probe(path: str) -> None:
    """One fresh-process open + hub count + two filtered queries (printed as JSON)."""
    t = time.perf_counter()
    shard = qe.EdgeShard.load(path)
    open_s = time.perf_counter() - t
    flt = qe.Filter(
        should=[
            qe.FieldCondition("source_key", match=qe.MatchValue(HUB)),
            qe.FieldCondition("target_key", match=qe.MatchValue(HUB)),
        ]
    )
    q = np.random.default_rng(3).standard_normal(1024).astype(np.float32).tolist()
    t = time.perf_counter()
    matched = shard.count(qe.CountRequest(exact=True, filter=flt))
    count_ms = 1000 * (time.perf_counter() - t)
    times = []
    found = []
    for _ in range(2):
        t = time.perf_counter()
        hits = shard.query(qe.QueryRequest(query=qe.Query.Nearest(q), filter=flt, limit=50,
                                           with_payload=True))  # fmt: skip
        times.append(1000 * (time.perf_counter() - t))
        found.append({str(h.id) for h in hits})
    t = time.perf_counter()
    hits = shard.query(qe.QueryRequest(query=qe.Query.Nearest(q), limit=50, with_payload=True))
    unfiltered_ms = 1000 * (time.perf_counter() - t)
    exact = shard.query(qe.QueryRequest(query=qe.Query.Nearest(q), filter=flt, limit=50,
                                        params=qe.SearchParams(exact=True)))  # fmt: skip
    recall = len(found[0] & {str(h.id) for h in exact}) / max(1, len(exact))
    shard.close()
    print(json.dumps({"open_s": round(open_s, 3), "hub_count_ms": round(count_ms, 1),
                      "matched": matched, "first_filtered_ms": round(times[0], 1),
                      "second_filtered_ms": round(times[1], 1),
                      "then_unfiltered_ms": round(unfiltered_ms, 1),
                      "filtered_recall_at_50": round(recall, 3)}))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument(
        "--mode",
        choices=["default", "idxcached", "veccold", "idxcold", "cold", "sq8", "sq8cold"],
        default="default",
    )
    ap.add_argument("--ef-construct", type=int, default=None)
    ap.add_argument("--wal", action="store_true", help="with a write-ahead log (EdgeStore: none)")
    ap.add_argument(
        "--payload-hnsw",
        choices=["all", "entity"],
        default="all",
        help="per-value HNSW links for every keyword index (engine default, EdgeStore) or only "
        "for source_key, target_key and relationship_type",
    )
    ap.add_argument(
        "--flush-every",
        type=int,
        default=0,
        help="also flush after every N points while loading (a multiple of 1000; 0: only at the end)",
    )
    ap.add_argument(
        "--drop-caches",
        action="store_true",
        help="empty the page cache before each open (Linux, root): every open reads from disk",
    )
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        probe(args.probe)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "shard"
        built = build(
            path,
            args.n,
            args.mode,
            args.ef_construct,
            args.wal,
            args.flush_every,
            args.payload_hnsw,
        )
        print(
            json.dumps(
                {
                    "mode": args.mode,
                    "n": args.n,
                    "wal": args.wal,
                    "payload_hnsw": args.payload_hnsw,
                    **built,
                }
            ),  # fmt: skip
            flush=True,
        )
        for _ in range(3):
            if args.drop_caches:
                os.sync()
                Path("/proc/sys/vm/drop_caches").write_text("1\n")
            out = subprocess.run(
                [sys.executable, __file__, "--probe", str(path)],
                check=True,
                capture_output=True,
                text=True,
            )
            print(out.stdout.strip(), flush=True)
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
