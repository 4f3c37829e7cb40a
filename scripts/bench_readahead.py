#!/usr/bin/env python
"""What reading an embedded shard's files ahead saves: opening it on an empty page cache and
its first filtered searches, with and without `fastbmrag.store.edge.readahead` started first.

For each mode, ``--repeat`` times: empty the page cache (Linux, root), start a fresh process, then

* ``none``: open the shard (`EdgeShard.load`) and run ``--searches`` filtered top-50 searches
  (edges touching ``--entity``) at once;
* ``readahead``: start the readahead, do ``--work`` seconds of other things (what the CLI's
  imports and vocabulary load take), then open and search;
* ``read``: read the files of the readahead in full first (the best a readahead can do);
* ``read-vectors``: read the vector files in full first;
* ``read-all``: read every file of the shard in full first (vectors and payloads too).

    python scripts/bench_readahead.py /tmp/fastbmrag-bench-query-200000-1024/bench/shard
    python scripts/bench_readahead.py /tmp/store200k/edge/bench/shard --entity MESH:D600000 \
        --searches 50 --modes none,read-vectors,read-all

(the shards that ``scripts/bench_query.py --n 200000`` and ``scripts/bench_store.py --n 200000
--workdir /tmp/store200k`` build). Prints one JSON line per run: the open, the first search,
and p50 / p95 over all searches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from fastbmrag.store.base import Filter, Match
from fastbmrag.store.edge import readahead, readahead_files, to_edge_filter

MODES = ("none", "readahead", "read", "read-vectors", "read-all")


def read_in_full(names: list[str]) -> None:
    for name in names:
        with open(name, "rb") as f:
            while f.read(1 << 20):
                pass


def shard_files(path: Path, folder: str | None = None) -> list[str]:
    """Every file of the shard's segments, or those under folders named ``folder``."""
    return [
        str(p)
        for p in sorted(path.glob("segments/**/*"))
        if p.is_file() and (folder is None or folder in p.relative_to(path).parts)
    ]


def probe(path: Path, mode: str, work: float, entity: str, searches: int) -> dict[str, object]:
    t = time.perf_counter()
    if mode == "readahead":
        reader = readahead(path)
        assert reader is not None, f"no shard at {path}"
        time.sleep(work)
    elif mode == "read":
        read_in_full(readahead_files(path))
    elif mode == "read-vectors":
        read_in_full(shard_files(path, "vector_storage"))
    elif mode == "read-all":
        read_in_full(shard_files(path))
    before_open = time.perf_counter() - t
    t = time.perf_counter()
    shard = qe.EdgeShard.load(str(path))
    open_s = time.perf_counter() - t
    flt = to_edge_filter(Filter(should=(Match("source_key", entity), Match("target_key", entity))))
    rng = np.random.default_rng(3)
    times, hits = [], 0
    for _ in range(searches):
        q = rng.standard_normal(1024).astype(np.float32).tolist()
        t = time.perf_counter()
        hits += len(
            shard.query(
                qe.QueryRequest(query=qe.Query.Nearest(q), filter=flt, limit=50, with_payload=True)
            )
        )
        times.append(time.perf_counter() - t)
    shard.close()
    ms = sorted(x * 1000 for x in times)
    return {
        "mode": mode,
        "before_open_s": round(before_open, 3),
        "open_s": round(open_s, 3),
        "first_search_s": round(times[0], 3),
        "searches": searches,
        "p50_ms": round(ms[len(ms) // 2], 1),
        "p95_ms": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 1),
        "mean_hits": round(hits / searches, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shard", type=Path, help="an embedded shard folder (<collection>/shard)")
    ap.add_argument("--work", type=float, default=0.45, help="seconds between readahead and open")
    ap.add_argument("--entity", default="HGNC:5992", help="entity key of the filtered search")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--searches", type=int, default=1, help="filtered searches after the open")
    ap.add_argument("--modes", default="none,readahead,read", help=f"of {', '.join(MODES)}")
    ap.add_argument("--probe", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.shard, args.probe, args.work, args.entity, args.searches)))
        return
    modes = args.modes.split(",")
    if unknown := set(modes) - set(MODES):
        ap.error(f"unknown mode(s) {', '.join(sorted(unknown))}: use {', '.join(MODES)}")
    for _ in range(args.repeat):
        for mode in modes:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("1\n")
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    str(args.shard),
                    "--probe",
                    mode,
                    "--work",
                    str(args.work),
                    "--entity",
                    args.entity,
                    "--searches",
                    str(args.searches),
                ],  # fmt: skip
                check=True,
                capture_output=True,
                text=True,
            )
            print(out.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
