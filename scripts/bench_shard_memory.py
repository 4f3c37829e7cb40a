"""Shard open time vs Qdrant Edge memory placement (why the embedded store keeps the default).

Builds an optimised Qdrant Edge shard of N synthetic 1024-d edges with the project's payload
indexes, once with the default placement and once with ``Memory.Cold`` for vectors, HNSW and
payload indexes (``--mode cold``; ``--mode idxcold`` for the payload indexes only), then
reopens it three times and times the open, a first filtered and a first unfiltered query.

    python scripts/bench_shard_memory.py --n 50000 --mode default
    python scripts/bench_shard_memory.py --n 50000 --mode cold
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from fastbmrag.store.base import FLOAT_FIELDS, INTEGER_FIELDS, KEYWORD_FIELDS


def build(path: Path, n: int, mode: str) -> float:
    cold = mode == "cold"
    index_cold = mode in ("cold", "idxcold")
    memory = {"memory": qe.Memory.Cold} if cold else {}
    extra = (
        {
            "hnsw_config": qe.HnswIndexConfig(
                m=16, ef_construct=100, full_scan_threshold=10000, memory=qe.Memory.Cold
            ),
            "on_disk_payload": True,
        }
        if cold
        else {}
    )
    vectors = qe.EdgeVectorParams(size=1024, distance=qe.Distance.Cosine, **memory)
    shard = qe.EdgeShard.create(str(path), qe.EdgeConfig(vectors=vectors, **extra))
    for name in KEYWORD_FIELDS:
        params = qe.KeywordIndexParams(memory=qe.Memory.Cold) if index_cold else None
        shard.update(
            qe.UpdateOperation.create_field_index(name, params or qe.PayloadSchemaType.Keyword)
        )
    for name in INTEGER_FIELDS:
        iparams = (
            qe.IntegerIndexParams(lookup=True, range=True, memory=qe.Memory.Cold)
            if index_cold
            else None
        )
        shard.update(
            qe.UpdateOperation.create_field_index(name, iparams or qe.PayloadSchemaType.Integer)
        )
    for name in FLOAT_FIELDS:
        fparams = qe.FloatIndexParams(memory=qe.Memory.Cold) if index_cold else None
        shard.update(
            qe.UpdateOperation.create_field_index(name, fparams or qe.PayloadSchemaType.Float)
        )
    rng = np.random.default_rng(0)
    for start in range(0, n, 1000):
        vecs = rng.standard_normal((1000, 1024)).astype(np.float32)
        points = []
        for j in range(1000):
            i = start + j
            payload = {
                "paper_id": f"P{i // 5}",
                "pmid": str(i // 5),
                "source": f"G{i % 3000}",
                "source_id": f"G{i % 3000}",
                "source_key": f"G{i % 3000}",
                "target": f"D{i % 500}",
                "target_id": f"D{i % 500}",
                "target_key": f"D{i % 500}",
                "relationship_type": f"r{i % 19}",
                "year": 2000 + i % 25,
                "source_degree": i % 50,
                "target_degree": i % 70,
                "journal": f"J{i % 300}",
                "source_type": "gene",
                "target_type": "disease",
                "description": "x " * 80,
            }
            points.append(qe.Point(str(uuid.uuid4()), vecs[j].tolist(), payload))
        shard.update(qe.UpdateOperation.upsert_points(points))
    shard.flush()
    t = time.perf_counter()
    shard.optimize()
    shard.flush()
    shard.close()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--mode", choices=["default", "cold", "idxcold"], default="default")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "shard"
        print(f"{args.mode}: optimise {build(path, args.n, args.mode):.1f} s")
        for _ in range(3):
            t = time.perf_counter()
            shard = qe.EdgeShard.load(str(path))
            load_s = time.perf_counter() - t
            q = rng.standard_normal(1024).astype(np.float32).tolist()
            flt = qe.Filter(must=[qe.FieldCondition(key="source_key", match=qe.MatchValue("G17"))])
            t = time.perf_counter()
            shard.query(qe.QueryRequest(query=qe.Query.Nearest(q), filter=flt, limit=50))
            filtered_ms = 1000 * (time.perf_counter() - t)
            t = time.perf_counter()
            shard.query(qe.QueryRequest(query=qe.Query.Nearest(q), limit=50, with_payload=True))
            unfiltered_ms = 1000 * (time.perf_counter() - t)
            shard.close()
            print(
                f"{args.mode}: open {load_s:.3f} s, first filtered query {filtered_ms:.1f} ms, "
                f"first unfiltered query {unfiltered_ms:.1f} ms"
            )
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
