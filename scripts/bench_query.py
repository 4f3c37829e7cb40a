"""Retrieval-only query latency (``--no-answer``) on a large embedded collection.

Builds (once, reused when its build finished) a collection of ``--n`` synthetic edges with realistic
payloads and ``--dim``-d unit vectors written straight through the store API, then times:

* in-process: :func:`fastbmrag.query.aquery` with one open collection and one LLM client
  (the question embedding comes from a fake Ollama over HTTP), p50/p95 over ``--repeat``;
* cold CLI: ``python -m fastbmrag query ... --no-answer --format json --min-score -1`` as a
  subprocess (top-50 edges with their payloads, like in-process), p50/p95 over ``--cli-repeat``
  runs (interpreter start, imports, vocab load, shard open), call by call in turn with the
  collections of ``--alternate`` if any; ``--drop-caches`` empties the page cache before
  each call, so that it reads the shard (and Python's own files) from disk;
* ``--broad``: the in-process series with entity filters on broader concepts (a MeSH ancestor
  of the edges' diseases, an HGNC gene group), which match through the ends' ancestors.

    python scripts/bench_query.py --n 200000 --dim 1024 [--broad]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

GENES = ["IL1B", "IL6", "TNF", "ESR2", "PGR", "VEGFA", "PTGS2", "MMP9", "CYP19A1", "KRAS"]
GENE_IDS = ["HGNC:5992", "HGNC:6018", "HGNC:11892", "HGNC:3468", "HGNC:8910", "HGNC:12680",
            "HGNC:9605", "HGNC:7176", "HGNC:2594", "HGNC:6407"]  # fmt: skip
RELS = ["upregulated_in", "downregulated_in", "biomarker_of", "associated_with", "causes"]
QUESTIONS = [
    "What is the role of IL1B in endometriosis?",
    "Which genes are up- or down-regulated in endometriosis?",
    "What pathways contribute to endometriosis?",
    "What mutations contribute to endometriosis?",
    "What is the causal mechanism of endometriosis?",
]


def build(wd: Path, n: int, dim: int) -> None:
    from fastbmrag.store.base import Point
    from fastbmrag.store.collection import Collection

    rng = np.random.default_rng(0)
    with Collection.writer(wd, "bench", create=True) as coll:
        coll.ensure_vector_size(dim)
        batch = 2000
        for start in range(0, n, batch):
            vecs = rng.standard_normal((min(batch, n - start), dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            points = []
            for j, v in enumerate(vecs):
                i = start + j
                g = i % len(GENES)
                endo = i % 3 != 0
                points.append(
                    Point(
                        str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{i}")),
                        v,
                        {
                            "paper_id": f"P{i // 8}",
                            "pmid": str(30000000 + i // 8),
                            "pmcid": "",
                            "doi": "",
                            "title": f"Study {i // 8} of {GENES[g]} in endometriosis",
                            "journal": ["Human Reproduction", "Fertility and Sterility"][i % 2],
                            "year": 2000 + i % 25,
                            "authors": "Doe J; Roe R",
                            "paper_weight": None,
                            "source": GENES[g],
                            "source_id": GENE_IDS[g],
                            "source_type": "gene",
                            "source_raw": GENES[g],
                            "source_key": GENE_IDS[g],
                            "source_ancestors": ["HGNC-GROUP:601"] if g % 3 == 0 else [],
                            "target": "Endometriosis" if endo else "Adenomyosis",
                            "target_id": "D004715" if endo else "D062788",
                            "target_type": "disease",
                            "target_raw": "endometriosis" if endo else "adenomyosis",
                            "target_key": "D004715" if endo else "D062788",
                            "target_ancestors": ["D005831", "D052776"] if endo else ["D014591"],
                            "relationship_type": RELS[i % len(RELS)],
                            "names": [GENES[g], "Endometriosis" if endo else "Adenomyosis",
                                      "endometriosis" if endo else "adenomyosis"],  # fmt: skip
                            "words": f"{GENES[g].lower()} {'endometriosi' if endo else 'adenomyosi'}",
                            "description": f"{GENES[g]} is altered in lesions; " * 8,
                            "description_source": "refined" if i % 2 else "cited",
                            "evidence": [
                                {
                                    "text": "Levels were higher in ectopic than eutopic tissue.",
                                    "where": "passage",
                                    "passage": 4,
                                    "section": "Results",
                                    "start": 0,
                                    "end": 52,
                                }
                            ],
                        },
                    )
                )
            coll.store.upsert(points)
            coll.ledger.apply_papers(ledger_rows(points))  # the graph's nodes, as update keeps them
            coll.optimize()  # as `update` does after each commit: one segment per ~20k points


def ledger_rows(points: list[Any]) -> list[tuple[str, None, list[tuple[str, Any]]]]:
    """The points grouped by paper as the ledger records them (edge refs with raw names)."""
    from fastbmrag.store.base import EdgeRef

    papers: dict[str, list[tuple[str, Any]]] = {}
    for p in points:
        x = p.payload
        ref = EdgeRef(x["source_key"], x["source"], x["source_type"], x["source_id"],
                      x["relationship_type"], x["target_key"], x["target"], x["target_type"],
                      x["target_id"], x["source_raw"], x["target_raw"])  # fmt: skip
        papers.setdefault(x["paper_id"], []).append((p.id, ref))
    return [(pid, None, refs) for pid, refs in papers.items()]


def drop_page_cache() -> None:
    """Empty the OS page cache (Linux, as root), so that a call reads the shard from disk."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1\n")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


# Entity filters on broader concepts, which match edges only through the ends' ancestors:
# "Genital Diseases, Female" (above Endometriosis, 87 descriptors), "Uterine Diseases" (above
# Adenomyosis) and the HGNC gene group 601 (a third of the genes).
BROAD = [("D005831",), ("D014591",), ("HGNC-GROUP:601", "D005831")]


async def in_process(wd: Path, url: str, repeat: int, dim: int, broad: bool = False) -> list[float]:
    from fastbmrag.llm import make_llm
    from fastbmrag.query import QueryOptions, aquery
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.loading import load_normalizer

    norm = load_normalizer()
    llm = make_llm("ollama", host=url)
    times = []
    with Collection.reader(wd, "bench") as coll:
        plain = QueryOptions(no_answer=True, min_score=None)
        # the broad concepts alone filter: no linking, no relaxing
        runs = [
            (q, replace(plain, entities=e, link=False, fallback=False) if e else plain)
            for e in (BROAD if broad else [()])
            for q in QUESTIONS
        ]
        # Warm-up: each distinct question and filter once (the first search of each faults in
        # the vectors its graph walk visits).
        for i in range(len(runs) + repeat):
            question, opts = runs[i % len(runs)]
            t = time.perf_counter()
            res = await aquery(question, coll, llm, norm, options=opts)
            if i >= len(runs):
                times.append(time.perf_counter() - t)
            assert res.edges, "no edges retrieved"
    await llm.aclose()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--cli-repeat", type=int, default=10)
    ap.add_argument(
        "--drop-caches",
        action="store_true",
        help="empty the page cache before each CLI call (Linux, root): every call reads from disk",
    )
    ap.add_argument(
        "--dir", default=None, help="working dir (default /tmp/fastbmrag-bench-query-N-DIM)"
    )
    ap.add_argument(
        "--broad",
        action="store_true",
        help="in-process series with entity filters on broader concepts (a MeSH ancestor, an "
        "HGNC gene group), matched through the edges' ancestors",
    )
    ap.add_argument(
        "--alternate",
        action="append",
        default=[],
        metavar="DIR",
        help="another built collection (an earlier version's, say): the CLI calls alternate "
        "between --dir and it, one series each; repeatable",
    )
    args = ap.parse_args()

    from fastbmrag.testing.fake_ollama import FakeOllama

    wd = Path(args.dir or f"/tmp/fastbmrag-bench-query-{args.n}-{args.dim}")
    built = wd / "built"  # written once the build has finished: a cut-short build is redone
    if not built.is_file():
        shutil.rmtree(wd, ignore_errors=True)
        t = time.perf_counter()
        build(wd, args.n, args.dim)
        built.write_text(f"{time.perf_counter() - t:.1f} s\n")
        print(f"built {args.n} edges ({args.dim}-d) in {time.perf_counter() - t:.1f} s", flush=True)

    with FakeOllama(dims=args.dim) as fake:
        times = asyncio.run(in_process(wd, fake.url, args.repeat, args.dim, args.broad))
        print(
            f"in-process --no-answer top-50{' (broader concepts)' if args.broad else ''}: p50 {pct(times, 50) * 1000:.1f} ms, "
            f"p95 {pct(times, 95) * 1000:.1f} ms ({len(times)} queries)"
        )
        dirs = [wd, *(Path(d) for d in args.alternate)]
        cold: dict[Path, list[float]] = {d: [] for d in dirs}
        for i in range(args.cli_repeat):
            for d in dirs:  # call by call, so that every collection sees the same box
                cold[d].append(cli_call(d, fake.url, QUESTIONS[i % len(QUESTIONS)], args))
        for d, series in cold.items() if args.cli_repeat else ():
            where = f" ({d})" if len(dirs) > 1 else ""
            print(
                f"cold CLI --no-answer{where}: p50 {pct(series, 50):.2f} s, p95 "
                f"{pct(series, 95):.2f} s ({len(series)} runs)"
            )


def cli_call(wd: Path, url: str, question: str, args: argparse.Namespace) -> float:
    """Seconds of one ``fastbmrag query --no-answer`` in a process of its own."""
    env = {**os.environ, "OLLAMA_HOST": url, "FASTBMRAG_HOME": str(wd)}
    cmd = [sys.executable, "-m", "fastbmrag", "query", question, "-c", "bench", "--no-answer",
           "--format", "json", "--no-cache", "--min-score", "-1"]  # fmt: skip
    if args.drop_caches:
        drop_page_cache()
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"CLI failed: {proc.stderr.strip()}")
    if not json.loads(proc.stdout)["edges"]:
        sys.exit("CLI retrieved no edges")
    return seconds


if __name__ == "__main__":
    main()
