"""The digest of a run that added ``--new`` papers to a collection of ``--papers`` papers.

Builds (once, reused) an embedded collection through :meth:`Collection.commit_papers`, as
``update`` commits: a first run of ``papers - new`` papers, then a second run of ``new``
papers, a tenth of which state the opposite direction of a pair the first run holds; then
times ``RAG.digest("last")`` and its Markdown rendering (the median of ``--repeat``).

    python scripts/bench_digest.py                       # 20,000 papers, 500 new
    python scripts/bench_digest.py --papers 2000 --new 50 --dir /tmp/small
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from pathlib import Path

import numpy as np

EDGES_PER_PAPER = 5
GENES = 2000
DISEASES = 300
DIM = 64  # the digest reads payloads, never vectors


def paper(i: int, flipped: bool) -> tuple[str, list[object], list[object]]:
    """Paper ``i``'s edges: gene -> disease pairs, their direction from ``i`` (opposite when
    ``flipped``)."""
    from fastbmrag.store.base import EdgeRef, Point, edge_point_id

    pid = str(30_000_000 + i)
    rng = np.random.default_rng(i)
    points, refs = [], []
    for j in range(EDGES_PER_PAPER):
        g, d = (i * 7 + j * 13) % GENES, (i * 3 + j) % DISEASES
        rel = ("upregulated_in", "downregulated_in")[(g + d + flipped) % 2]
        ref = EdgeRef(f"HGNC:{g}", f"GENE{g}", "gene", f"HGNC:{g}", rel, f"D{d:06d}",
                      f"Disease {d}", "disease", f"D{d:06d}", f"GENE{g}", f"disease {d}")  # fmt: skip
        vector = rng.standard_normal(DIM).astype(np.float32)
        payload = {
            "title": f"Study {i} of GENE{g}", "journal": "Journal", "year": 2000 + i % 25,
            "pmid": pid, "source": f"GENE{g}", "target": f"Disease {d}",
            "relationship_type": rel, "description": f"GENE{g} {rel} disease {d}.",
            "evidence": [{"text": f"GENE{g} was {rel.split('_')[0]} in disease {d}.",
                          "where": "abstract", "passage": 0, "section": "", "start": 0,
                          "end": 40}],
        }  # fmt: skip
        points.append(Point(edge_point_id(pid, ref.source_key, rel, ref.target_key),
                            vector / np.linalg.norm(vector), payload))  # fmt: skip
        refs.append(ref)
    return pid, points, refs


def build(wd: Path, papers: int, new: int) -> None:
    from fastbmrag.store.collection import Collection, PaperEdges

    if (wd / "bench" / "built").exists():
        return
    for run, numbers in (("first", range(papers - new)), ("second", range(papers - new, papers))):
        with Collection.writer(wd, "bench", create=True) as coll:
            coll.ledger.runs.begin(f"bench {run}")
            coll.ensure_vector_size(DIM)
            batch = []
            for i in numbers:
                # a tenth of the new papers restate an older paper's pairs, the other way round
                flipped = run == "second" and i % 10 == 0
                pid, points, refs = paper(i - (papers - new) if flipped else i, flipped)
                if flipped:
                    pid = str(30_000_000 + i)
                    for pt in points:
                        pt.id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pid}/{pt.id}"))
                batch.append(PaperEdges(pid, f"h{i}", points, refs))  # type: ignore[arg-type]
                if len(batch) == 500:
                    coll.commit_papers(batch)
                    batch.clear()
            coll.commit_papers(batch)
            coll.optimize()
    (wd / "bench" / "built").touch()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=20_000)
    ap.add_argument("--new", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None, help="working dir (default /tmp/fastbmrag-bench-digest-N)")
    args = ap.parse_args()
    wd = Path(args.dir or f"/tmp/fastbmrag-bench-digest-{args.papers}-{args.new}")
    started = time.perf_counter()
    build(wd, args.papers, args.new)
    print(f"collection: {args.papers:,} papers, {args.papers * EDGES_PER_PAPER:,} edges "
          f"({time.perf_counter() - started:.0f} s to build or open) in {wd}")  # fmt: skip

    from fastbmrag import RAG, render_digest

    rag = RAG(wd, "bench")
    times, shown = [], ""
    for _ in range(args.repeat):
        t = time.perf_counter()
        found = rag.digest("last")
        shown = render_digest(found, "markdown")
        times.append(time.perf_counter() - t)
    edges = sum(len(e["edges"]) for e in found["entities"])
    conflicts = sum(c["kind"] == "newly contradicted" for e in found["entities"] for c in e["changes"])
    print(f"digest of the last run: {len(found['papers']):,} new papers, {edges:,} new edges, "
          f"{conflicts:,} newly contradicted pairs, {len(shown):,} characters of Markdown")  # fmt: skip
    print(f"time: median {statistics.median(times):.2f} s, max {max(times):.2f} s "
          f"over {args.repeat} (target < 2 s)")  # fmt: skip


if __name__ == "__main__":
    main()
