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
  of the edges' diseases, an HGNC gene group), which match through the ends' ancestors;
* ``--layout SPEC`` (repeatable): a copy of the collection whose shard is laid out otherwise,
  timed in turn with it, series by series (``--series``): ``merge:N:KB`` the engine's merge of
  the segments towards N of at most KB of vectors each, ``int8`` int8 codes of the vectors
  mapped from disk, searched first and rescored; what making the copy took is printed;
* ``--pieces``: the store's one request per query (p50) and a plain top-100 similarity search
  (wall and CPU time per search).

    python scripts/bench_query.py --n 200000 --dim 1024 [--broad] [--layout merge:4:112640]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
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


async def in_process(
    wd: Path,
    url: str,
    repeat: int,
    dim: int,
    broad: bool = False,
    store_times: list[float] | None = None,
) -> list[float]:
    from fastbmrag.llm import make_llm
    from fastbmrag.query import QueryOptions, aquery
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.loading import load_normalizer

    norm = load_normalizer()
    llm = make_llm("ollama", host=url)
    times = []
    with Collection.reader(wd, "bench") as coll:
        if store_times is not None:  # the store's one request, timed apart
            timed(coll.store, "ranked", store_times)
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
            elif store_times is not None:
                store_times.clear()  # the warm-up's
            assert res.edges, "no edges retrieved"
    await llm.aclose()
    return times


def timed(obj: Any, name: str, seconds: list[float]) -> None:
    """Append the seconds of each later call of ``obj.name`` to ``seconds`` (the method wrapped
    on the instance)."""
    method = getattr(obj, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            seconds.append(time.perf_counter() - t)

    setattr(obj, name, wrapper)


def plain_search(wd: Path, url: str, searches: int = 20) -> tuple[float, float]:
    """Wall and CPU seconds of a plain top-100 similarity search (median of ``searches``, the
    benchmark's questions in turn, after one of each)."""
    from fastbmrag.llm import make_llm
    from fastbmrag.store.collection import Collection

    async def embed() -> list[Any]:
        llm = make_llm("ollama", host=url)
        try:
            return list(await llm.embed(QUESTIONS))
        finally:
            await llm.aclose()

    vectors = asyncio.run(embed())
    wall, cpu = [], []
    with Collection.reader(wd, "bench") as coll:
        for v in vectors:  # the pages their walks visit
            coll.store.search(v, None, limit=100)
        for i in range(searches):
            t, c = time.perf_counter(), time.process_time()
            coll.store.search(vectors[i % len(vectors)], None, limit=100)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return pct(wall, 50), pct(cpu, 50)


def relayout(wd: Path, layout: str) -> Path:
    """A copy of the collection at ``wd`` whose shard is laid out as ``layout`` says
    (``merge:N:KB`` or ``int8``), made once; prints what making it took."""
    out = wd.with_name(f"{wd.name}-{layout.replace(':', '-')}")
    if (out / "built").is_file():
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(wd, out)
    t = time.perf_counter()
    child = multiprocessing.get_context("spawn").Process(
        target=relaid_shard, args=(str(out / "bench" / "shard"), layout)
    )
    child.start()
    child.join()
    if child.exitcode != 0:
        sys.exit(f"could not lay {out} out as {layout}")
    (out / "built").write_text(f"{layout}\n")
    print(f"laid {out} out as {layout} in {time.perf_counter() - t:.0f} s", flush=True)
    return out


def relaid_shard(shard: str, layout: str) -> None:
    """Lay the shard at ``shard`` out as ``layout`` says, in this process (see :func:`relayout`)."""
    import qdrant_edge as qe

    from fastbmrag.store import edge

    kind, *rest = layout.split(":")
    if kind not in ("merge", "int8") or (kind == "merge") != (len(rest) == 2):
        raise SystemExit(f"--layout takes merge:N:KB or int8, not {layout!r}")
    size = json.loads((Path(shard) / edge.CONFIG_FILE).read_text())["vectors"][""]["size"]
    optimizers = (
        qe.EdgeOptimizersConfig(default_segment_number=int(rest[0]), max_segment_size=int(rest[1]))
        if kind == "merge" else qe.EdgeOptimizersConfig(max_segment_size=edge.MAX_SEGMENT_KB)
    )  # fmt: skip
    config = qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=size, distance=qe.Distance.Cosine,
                                    memory=edge.VECTOR_MEMORY, datatype=edge.VECTOR_DATATYPE),
        quantization_config=qe.ScalarQuantizationConfig(
            type=qe.ScalarType.Int8, quantile=0.99, memory=qe.Memory.Cold
        ) if kind == "int8" else None,
        optimizers=optimizers,
        wal_enabled=edge.WAL_ENABLED,
    )  # fmt: skip
    shard_ = qe.EdgeShard.load(shard, config)
    shard_.optimize()
    shard_.flush()
    segments = shard_.info().segments_count
    shard_.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{layout}: {segments} segments, peak RSS {peak:.0f} MB", flush=True)


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
        "--layout",
        action="append",
        default=[],
        metavar="SPEC",
        help="a copy laid out otherwise (merge:N:KB, int8), timed in turn with --dir; repeatable",
    )
    ap.add_argument("--series", type=int, default=1, help="in-process series of each collection")
    ap.add_argument(
        "--pieces",
        action="store_true",
        help="also the store's request alone and a plain top-100 search (wall and CPU)",
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

    laid = [relayout(wd, layout) for layout in args.layout]
    with FakeOllama(dims=args.dim) as fake:
        for _ in range(args.series):
            for d in [wd, *laid]:  # series by series, so that every layout sees the same box
                in_process_series(d, fake.url, args, where=f" ({d})" if laid else "")
        dirs = [wd, *(Path(d) for d in args.alternate), *laid]
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


def in_process_series(wd: Path, url: str, args: argparse.Namespace, where: str) -> None:
    """One in-process series on the collection at ``wd``, printed."""
    store: list[float] | None = [] if args.pieces else None
    times = asyncio.run(in_process(wd, url, args.repeat, args.dim, args.broad, store))
    print(
        f"in-process --no-answer top-50{' (broader concepts)' if args.broad else ''}{where}: "
        f"p50 {pct(times, 50) * 1000:.1f} ms, p95 {pct(times, 95) * 1000:.1f} ms "
        f"({len(times)} queries)", flush=True,
    )  # fmt: skip
    if store:
        wall, cpu = plain_search(wd, url)
        print(f"  the store's one request p50 {pct(store, 50) * 1000:.1f} ms; a plain top-100 "
              f"search {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU", flush=True)  # fmt: skip


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
