#!/usr/bin/env python
"""Storage benchmark: Qdrant Edge (embedded, through Collection) vs qdrant-client local mode.

Synthetic but realistic edges: 10 per paper, entities drawn from a Zipf-like vocabulary (a few
hubs such as the disease itself, a long tail of genes), ~200-character descriptions, the payload
fields of DESIGN.md, unit 1024-d vectors. Each backend runs in its own process so that peak RAM
(ru_maxrss) is its own.

    python scripts/bench_store.py                      # 200k edges embedded, 20k local mode
    python scripts/bench_store.py --n 20000 --local-n 5000
    python scripts/bench_store.py --backend edge --n 200000 --json

Embedded phases: load (Collection.commit_papers in batches, ledger + flush included; the
store's own share, upsert + delete + flush, is reported beside it as store_edges_per_s), with the
index builds `update` makes as it goes (``Collection.optimize`` after each batch: a segment
each time 20,000 points lack an index; ``index_s``, their time apart from the load's), reopen +
search in the layout that leaves, and a nightly update of 500 edges (commit + the optimise
policy, which skips). ``--load-only`` builds no index and stops after the reopen. The filtered
searches: edges of the most connected entity (a hub), then also year >= 2010 and
``--min-weight 0.001`` (the collection's own filter for it, resolved from the ledger at each
open).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from fastbmrag.store import Collection, EdgeRef, Filter, Match, PaperEdges, Point, edge_point_id
from fastbmrag.store.base import Range, Store, vector_list

DIM = 1024
EDGES_PER_PAPER = 10
RELATIONS = [
    "upregulates", "downregulates", "activates", "inhibits", "associated_with", "biomarker_of",
    "causes", "treats", "increases_risk_of", "expressed_in", "interacts_with", "regulates",
]  # fmt: skip
TYPES = ["gene", "disease", "chemical", "cell_type", "pathway", "phenotype"]
JOURNALS = [f"Journal of Reproductive Biology {i}" for i in range(60)]
WORDS = [
    "expression",
    "elevated",
    "ectopic",
    "endometrium",
    "lesions",
    "stromal",
    "cells",
    "women",
    "patients",
    "increased",
    "significantly",
    "compared",
    "controls",
    "peritoneal",
    "fluid",
    "inflammation",
    "signalling",
    "pathway",
    "proliferation",
    "invasion",
    "angiogenesis",
    "estrogen",
    "progesterone",
    "resistance",
    "cytokine",
    "secretion",
    "macrophages",
]


class Vocabulary:
    """Entities with Zipf-like popularity: a few hubs, a long tail."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.n = n
        ranks = np.arange(1, n + 1, dtype=np.float64)
        p = 1.0 / ranks**1.1
        self.p = p / p.sum()
        self.rng = rng

    def key(self, i: int) -> str:
        return f"HGNC:{100000 + i}" if i % 3 else f"MESH:D{600000 + i:06d}"

    def entity(self, i: int) -> tuple[str, str, str]:
        return self.key(i), f"ENT{i}", TYPES[i % len(TYPES)]

    def draw(self, k: int) -> np.ndarray:
        return self.rng.choice(self.n, size=k, p=self.p)


class Vectors:
    """Unit vectors for edge descriptions and questions.

    ``random``: isotropic Gaussian directions, every pair nearly orthogonal: no neighbourhood
    structure, the worst case for an HNSW graph. ``clustered``: each paper has one of
    ``TOPICS`` topics (the same for every seed) and its vectors are the topic direction plus noise (cosine ~0.7 to the
    topic, ~0.5 between two edges of one topic, ~0 across topics), closer to text embeddings,
    which group by subject. Questions are drawn the same way.
    """

    TOPICS = 512
    kind = "random"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(10_000 + seed)
        topics = np.random.default_rng(0).standard_normal((self.TOPICS, DIM)).astype(np.float32)
        self.topics = topics / np.linalg.norm(topics, axis=1, keepdims=True)

    def draw(self, k: int) -> np.ndarray:
        noise = self.rng.standard_normal((k, DIM)).astype(np.float32)
        if self.kind == "clustered":
            topic = self.topics[int(self.rng.integers(self.TOPICS))]
            noise = topic + noise * np.float32(1.02 / np.sqrt(DIM))
        return noise / np.linalg.norm(noise, axis=1, keepdims=True)


def sentence(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(rng.choice(WORDS, size=n_words))


def papers(n_edges: int, seed: int, start: int = 0) -> Iterator[PaperEdges]:
    """Papers of EDGES_PER_PAPER edges each, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    vocab = Vocabulary(max(1000, n_edges // 8), np.random.default_rng(seed + 1))
    vector_model = Vectors(seed)
    for paper_no in range(start, start + n_edges // EDGES_PER_PAPER):
        pid = f"PMID:{30000000 + paper_no}"
        title = sentence(rng, 14)
        year = int(rng.integers(1990, 2025))
        journal = JOURNALS[int(rng.integers(len(JOURNALS)))]
        src, tgt = vocab.draw(EDGES_PER_PAPER), vocab.draw(EDGES_PER_PAPER)
        vectors = vector_model.draw(EDGES_PER_PAPER)
        points: list[Point] = []
        refs: list[EdgeRef] = []
        seen: set[str] = set()
        for j in range(EDGES_PER_PAPER):
            (sk, sn, st), (tk, tn, tt) = vocab.entity(int(src[j])), vocab.entity(int(tgt[j]))
            rel = RELATIONS[int(rng.integers(len(RELATIONS)))]
            point_id = edge_point_id(pid, sk, rel, tk)
            if point_id in seen:
                continue
            seen.add(point_id)
            refs.append(EdgeRef(sk, sn, st, sk, rel, tk, tn, tt, tk))
            payload = {
                "paper_id": pid, "pmid": pid[5:], "pmcid": f"PMC{9000000 + paper_no}",
                "title": title, "journal": journal, "year": year,
                "authors": "Smith J, Garcia M, Chen L, Okafor A",
                "source": sn, "source_id": sk, "source_type": st, "source_raw": sn.lower(),
                "target": tn, "target_id": tk, "target_type": tt, "target_raw": tn.lower(),
                "relationship_type": rel,
                "description": sentence(rng, 28), "draft_description": sentence(rng, 16),
                "evidence": sentence(rng, 22), "refined": bool(j % 2), "paper_weight": 3.2,
            }  # fmt: skip
            points.append(Point(point_id, vectors[j], payload))
        yield PaperEdges(pid, f"sha256:{pid}", points, refs)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (VmHWM), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def percentiles(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))], 3),
    }


def time_searches(store: Store, flt: Filter | None, n: int, seed: int) -> dict[str, Any]:
    questions = Vectors(seed)
    samples = []
    hits = 0
    for _ in range(n):
        q = questions.draw(1)[0]
        t = time.perf_counter()
        res = store.search(q, flt, limit=10)
        samples.append(time.perf_counter() - t)
        hits += len(res)
    return {**percentiles(samples), "mean_hits": round(hits / n, 2), "queries": n}


MIN_WEIGHT = 0.001


def filters(hub: str, weight: Filter) -> dict[str, Filter]:
    entity = Filter(should=(Match("source_key", hub), Match("target_key", hub)))
    return {
        "filtered_entity": entity,
        "filtered_entity_year_weight": entity.and_(Range("year", gte=2010), weight),
    }


def reopen_and_search(r: dict[str, Any], workdir: Path, queries: int, hub: str, label: str) -> None:
    """Reopen the collection, then time each kind of search twice: the first ``queries``
    searches after the open (their vectors and payloads may still be on disk only), then as
    many new ones (seeds differ) once the first have run."""
    open_s, c = timed(lambda: Collection.reader(workdir, "bench"))
    try:
        r[label] = {"reopen_s": round(open_s, 3), "unindexed_points": c.store.unindexed_points()}
        weight_s, weight = timed(lambda: c.min_weight_filter(MIN_WEIGHT))
        r[label]["min_weight_filter_s"] = round(weight_s, 3)
        kinds = {"unfiltered": None, **filters(hub, weight)}
        for rnd, suffix in ((0, ""), (1, "_again")):
            for i, (name, flt) in enumerate(kinds.items()):
                r[label][name + suffix] = time_searches(
                    c.store, flt, queries, seed=7 + i + 10 * rnd
                )
    finally:
        c.close()
    note(label, r[label])


def note(label: str, value: Any) -> None:
    """Progress on stderr, phase by phase (a 200k run takes a while)."""
    print(
        f"[{time.strftime('%H:%M:%S')}] {label}: {json.dumps(value)}", file=sys.stderr, flush=True
    )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


class StoreClock:
    """Seconds spent in the store's own upsert, delete and flush during the load (the rest of a
    commit is the ledger), counted by wrapping the methods of the one store instance."""

    def __init__(self, store: Store) -> None:
        self.seconds = 0.0
        for name in ("upsert", "delete", "flush"):
            setattr(store, name, self._timed(getattr(store, name)))

    def _timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t

        return wrapper


def bench_edge(
    n: int,
    workdir: Path,
    queries: int,
    batch_papers: int,
    load_only: bool,
    profile: bool = False,
    searches_only: bool = False,
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "backend": "qdrant-edge (Collection)",
        "n_edges": n,
        "vectors": Vectors.kind,
    }
    if searches_only:  # a collection this script built before, in --workdir
        with Collection.reader(workdir, "bench") as coll:
            hub = max(coll.ledger.entities(), key=lambda e: e[4])[0]
        reopen_and_search(r, workdir, queries, hub, "reopened")
        return r
    coll = Collection.writer(workdir, "bench", create=True)
    clock = StoreClock(coll.store)
    loaded = 0
    load_s = 0.0  # time inside commit_papers only: generating the synthetic data is not counted
    index_s = 0.0  # time inside the index builds update makes as it goes
    batch: list[PaperEdges] = []

    profiler = cProfile.Profile() if profile else None

    def commit() -> None:
        nonlocal loaded, load_s, index_s, batch
        t = time.perf_counter()
        if profiler is not None:
            profiler.runcall(coll.commit_papers, batch)
        else:
            coll.commit_papers(batch)
        load_s += time.perf_counter() - t
        loaded += sum(len(p.points) for p in batch)
        batch = []
        if not load_only:
            t = time.perf_counter()
            coll.optimize()
            index_s += time.perf_counter() - t

    for paper in papers(n, seed=1):
        batch.append(paper)
        if len(batch) == batch_papers:
            commit()
    if batch:
        commit()
    r["load"] = {
        "edges": loaded,
        "seconds": round(load_s, 2),
        "edges_per_s": round(loaded / load_s),
        "store_seconds": round(clock.seconds, 2),
        "store_edges_per_s": round(loaded / clock.seconds),
        "index_s": round(index_s, 1),
        "peak_rss_mb": peak_rss_mb(),
    }
    note("load", r["load"])
    if profiler is not None:  # where the load's time goes, on stderr
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(15)
    nodes = coll.ledger.node_count()
    hub = max(coll.ledger.entities(), key=lambda e: e[4])[0]
    min_degree = coll.min_degree(MIN_WEIGHT)
    coll.close()

    reopen_and_search(r, workdir, queries, hub, "reopened")
    if load_only:
        return r

    # a nightly update: 50 papers, then the batch-end routine
    coll = Collection.writer(workdir, "bench")
    nightly = list(papers(500, seed=99, start=n // EDGES_PER_PAPER + 1))
    t0 = time.perf_counter()
    coll.commit_papers(nightly)
    t1 = time.perf_counter()
    ran = coll.optimize()
    t2 = time.perf_counter()
    r["nightly_500_edges"] = {
        "commit_policy_s": round(t2 - t0, 2),
        "commit_s": round(t1 - t0, 2),
        "policy_s": round(t2 - t1, 2),
        "optimize_ran": ran,
    }
    coll.close()
    r["nodes"] = nodes
    r["hub"] = hub
    r[f"min_degree_for_weight_{MIN_WEIGHT}"] = min_degree
    r["disk_mb"] = round(Collection.ledger_only(workdir, "bench").size_on_disk() / 2**20, 1)
    return r


def bench_local(n: int, workdir: Path, queries: int) -> dict[str, Any]:
    import warnings

    from qdrant_client import QdrantClient

    from fastbmrag.store.edge import dir_size
    from fastbmrag.store.server import ServerStore

    warnings.filterwarnings("ignore", message=".*local Qdrant.*")
    r: dict[str, Any] = {"backend": "qdrant-client local mode (path=)", "n_edges": n}
    path = workdir / "local"
    store = ServerStore(QdrantClient(path=str(path)), "bench")
    store.ensure_collection(DIM)
    loaded = 0
    t0 = time.perf_counter()
    pending: list[Point] = []
    for paper in papers(n, seed=1):
        for p, ref in zip(paper.points, paper.refs, strict=True):
            p.payload.update(source_key=ref.source_key, target_key=ref.target_key)
        pending.extend(paper.points)
        if len(pending) >= 1000:
            store.upsert(pending)
            loaded += len(pending)
            pending = []
    store.upsert(pending)
    loaded += len(pending)
    load_s = time.perf_counter() - t0
    r["load"] = {
        "edges": loaded,
        "seconds": round(load_s, 2),
        "edges_per_s": round(loaded / load_s),
        "peak_rss_mb": peak_rss_mb(),
    }
    store.client.close()
    open_s, store = timed(lambda: ServerStore(QdrantClient(path=str(path)), "bench"))
    open_s2, _ = timed(store.count)  # local mode loads the collection lazily
    vocab = Vocabulary(max(1000, n // 8), np.random.default_rng(2))
    hub = vocab.key(0)
    r["reopen"] = {
        "reopen_s": round(open_s + open_s2, 3),
        "unfiltered": time_searches(store, None, queries, seed=7),
        **{
            name: time_searches(store, flt, queries, seed=8)
            for name, flt in filters(hub, Filter(must=(Range("year", gte=2000),))).items()
        },
    }
    store.client.close()
    r["disk_mb"] = round(dir_size(path) / 2**20, 1)
    return r


def point_cost(reps: int = 5000) -> dict[str, Any]:
    """Microseconds the Qdrant Edge bindings take to build one ``qdrant_edge.Point``: with this
    benchmark's payload as stored (with the keys the collection adds and the
    pipeline's chunk list), and per payload
    value type (27 values of one type, the empty payload's cost subtracted, divided by 27)."""
    import qdrant_edge as qe

    paper = next(papers(EDGES_PER_PAPER, seed=1))
    p = paper.points[0]
    vector = vector_list(p.vector)
    ref = paper.refs[0]
    payload = {**p.payload, "chunks": [1, 4], "source_key": ref.source_key,
               "target_key": ref.target_key}  # fmt: skip

    def us(body: dict[str, Any]) -> float:
        t = time.perf_counter()
        for _ in range(reps):
            qe.Point(p.id, vector, body)
        return (time.perf_counter() - t) / reps * 1e6

    empty = us({})
    per_type = {
        kind: round((us({f"k{i}": value for i in range(27)}) - empty) / 27, 2)
        for kind, value in (
            ("str", "abc"),
            ("int", 7),
            ("float", 1.5),
            ("bool", True),
            ("null", None),
            ("list of 2 ints", [1, 4]),
        )  # fmt: skip
    }
    kinds = [type(v).__name__ for v in payload.values()]
    return {
        "payload_fields": len(payload),
        "payload_field_types": {k: kinds.count(k) for k in sorted(set(kinds))},
        "point_with_payload_us": round(us(payload), 1),
        "point_without_payload_us": round(empty, 1),
        "per_value_us": per_type,
    }


def child(args: argparse.Namespace) -> None:
    workdir = Path(args.workdir)
    if args.backend == "edge":
        result = bench_edge(
            args.n,
            workdir,
            args.queries,
            args.batch_papers,
            args.load_only,
            args.profile,
            args.searches_only,
        )
    else:
        result = bench_local(args.n, workdir, args.queries)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=200_000, help="edges for the embedded store")
    ap.add_argument("--local-n", type=int, default=20_000, help="edges for local mode (slow)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--batch-papers", type=int, default=100, help="papers per commit")
    ap.add_argument("--backend", choices=["edge", "local", "both"], default="both")
    ap.add_argument(
        "--load-only", action="store_true", help="build no index; stop after the load and a reopen"
    )
    ap.add_argument(
        "--profile", action="store_true", help="cProfile the load, top functions on stderr"
    )
    ap.add_argument(
        "--vectors",
        choices=["random", "clustered"],
        default="random",
        help="edge and question vectors: isotropic (worst case) or grouped by topic",
    )
    ap.add_argument("--workdir", default=None, help="where to build (default: a temp dir, removed)")
    ap.add_argument("--json", action="store_true", help="print only JSON")
    ap.add_argument(
        "--searches-only",
        action="store_true",
        help="reopen the collection an earlier run built in --workdir and time the searches",
    )
    ap.add_argument(
        "--point-cost",
        action="store_true",
        help="only time how long the bindings take to build one point, by payload value type",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.searches_only and not args.workdir:
        ap.error("--searches-only needs the --workdir of an earlier run")
    Vectors.kind = args.vectors
    if args.point_cost:
        print(json.dumps(point_cost(), indent=2))
        return
    if args.child:
        child(args)
        return
    results = []
    for backend, n in (("edge", args.n), ("local", args.local_n)):
        if args.backend not in (backend, "both") or n <= 0:
            continue
        tmp = Path(args.workdir or tempfile.mkdtemp(prefix="bench_store_")) / backend
        if args.searches_only:
            if backend != "edge" or not (tmp / "bench").is_dir():
                continue
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
        cmd = [sys.executable, __file__, "--child", "--backend", backend, "--n", str(n),
               "--queries", str(args.queries), "--batch-papers", str(args.batch_papers),
               "--workdir", str(tmp), "--vectors", args.vectors,
               *(["--load-only"] if args.load_only else []),
               *(["--searches-only"] if args.searches_only else []),
               *(["--profile"] if args.profile else [])]  # fmt: skip
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        if not args.workdir:
            shutil.rmtree(tmp.parent, ignore_errors=True)
        if not args.json:
            print(json.dumps(results[-1], indent=2), file=sys.stderr)
    print(json.dumps(results, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
