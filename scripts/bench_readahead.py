#!/usr/bin/env python
"""What the shard readahead of `fastbmrag query` saves: opening an embedded shard on an empty
page cache, with and without `fastbmrag.store.edge.readahead` started first.

For each mode, three times: empty the page cache (Linux, root), start a fresh process, then

* ``none``: open the shard (`EdgeShard.load`) and run one filtered top-50 search at once;
* ``readahead``: start the readahead, do ``--work`` seconds of other things (what the CLI's
  imports and vocabulary load take), then open and search;
* ``read``: read the files of the readahead in full first (the best a readahead can do).

    python scripts/bench_readahead.py /tmp/fastbmrag-bench-query-200000-1024/bench/shard

(the shard that ``scripts/bench_query.py --n 200000`` builds). Prints one JSON line per run.
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

MODES = ("none", "readahead", "read")


def probe(path: Path, mode: str, work: float, entity: str) -> dict[str, object]:
    t = time.perf_counter()
    if mode == "readahead":
        reader = readahead(path)
        assert reader is not None, f"no shard at {path}"
        time.sleep(work)
    elif mode == "read":
        for name in readahead_files(path):
            with open(name, "rb") as f:
                while f.read(1 << 20):
                    pass
    before_open = time.perf_counter() - t
    t = time.perf_counter()
    shard = qe.EdgeShard.load(str(path))
    open_s = time.perf_counter() - t
    flt = to_edge_filter(Filter(should=(Match("source_key", entity), Match("target_key", entity))))
    q = np.random.default_rng(3).standard_normal(1024).astype(np.float32).tolist()
    t = time.perf_counter()
    hits = shard.query(
        qe.QueryRequest(query=qe.Query.Nearest(q), filter=flt, limit=50, with_payload=True)
    )
    search_s = time.perf_counter() - t
    shard.close()
    return {
        "mode": mode,
        "before_open_s": round(before_open, 3),
        "open_s": round(open_s, 3),
        "first_search_s": round(search_s, 3),
        "hits": len(hits),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shard", type=Path, help="an embedded shard folder (<collection>/shard)")
    ap.add_argument("--work", type=float, default=0.45, help="seconds between readahead and open")
    ap.add_argument("--entity", default="HGNC:5992", help="entity key of the filtered search")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--probe", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.shard, args.probe, args.work, args.entity)))
        return
    for _ in range(args.repeat):
        for mode in MODES:
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
                ],  # fmt: skip
                check=True,
                capture_output=True,
                text=True,
            )
            print(out.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
