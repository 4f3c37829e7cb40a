"""How fast the web page's API answers on a large collection, without a model.

Builds a collection of ``--edges`` edges (8 per paper; genes, diseases and chemicals drawn from
the bundled vocabularies, with a few opposite relations so that papers disagree) through the
collection's own commits (store and ledger), then times each endpoint the page calls before
and around a question: the overview (start page), entity completion, an entity card, a path
between two entities and the contradictions, through the ASGI app (no network, no model).
Median and maximum of ``--repeat`` calls each, after one warm-up call.

    python scripts/bench_web.py [--edges 20000] [--repeat 5] [--workdir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 64
RELS = ["upregulated_in", "downregulated_in", "biomarker_of", "associated_with", "treats"]


def build(wd: Path, n_edges: int) -> None:
    from fastbmrag.store.base import EdgeRef, Point, edge_point_id
    from fastbmrag.store.collection import Collection, PaperEdges
    from fastbmrag.vocab import load_normalizer

    norm = load_normalizer()
    rng = random.Random(0)
    genes = [(r[0], r[1]) for r in norm.genes[:3000]]  # a benchmark's sample
    mesh = [(r[0], r[1], r[2]) for r in norm.desc]
    diseases = [(d, name) for d, name, kinds in mesh if "C" in kinds][:400]
    chemicals = [(d, name) for d, name, kinds in mesh if "D" in kinds][:600]
    vecs = np.random.default_rng(0).standard_normal((n_edges, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with Collection.writer(wd, "bench", create=True) as coll:
        coll.ensure_vector_size(DIM)
        group: list[PaperEdges] = []
        for p in range(n_edges // 8):
            pid = f"P{p}"
            points, refs = [], []
            for j in range(8):
                i = p * 8 + j
                src_type, (sid, sname) = ("gene", rng.choice(genes))
                tgt_type, (tid, tname) = (
                    ("disease", rng.choice(diseases))
                    if j % 3
                    else ("chemical", rng.choice(chemicals))
                )
                rel = RELS[rng.randrange(len(RELS))]
                payload = {"paper_id": pid, "pmid": str(30000000 + p), "title": f"Study {p}",
                           "journal": "Journal", "year": 2000 + p % 25, "source": sname,
                           "source_id": sid, "source_type": src_type, "target": tname,
                           "target_id": tid, "target_type": tgt_type, "relationship_type": rel,
                           "description": f"{sname} {rel} {tname}.", "evidence": [
                               {"text": f"{sname} and {tname}.", "where": "abstract",
                                "passage": None, "section": "", "start": 0, "end": 10}]}  # fmt: skip
                points.append(Point(edge_point_id(pid, sid, rel, tid), vecs[i], payload))
                refs.append(EdgeRef(sid, sname, src_type, sid, rel, tid, tname, tgt_type, tid))
            group.append(PaperEdges(pid, f"hash{p}", points, refs))
            if len(group) == 250:
                coll.commit_papers(group)
                coll.optimize()  # as `update` does after each commit
                group = []
        coll.commit_papers(group)
        coll.optimize()


def timed(client: Any, url: str, repeat: int) -> dict[str, float]:
    response = client.get(url)  # warm-up: first reads of the files, the vocabularies
    assert response.status_code == 200, response.text
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - t0)
        assert response.status_code == 200, response.text
    return {"median_s": round(statistics.median(times), 4), "max_s": round(max(times), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--edges", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", type=Path, help="keep the collection here (default: a temp dir)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from starlette.testclient import TestClient

    from fastbmrag import RAG
    from fastbmrag.web import create_app

    wd = args.workdir or Path(tempfile.mkdtemp(prefix="bench-web-"))
    t0 = time.perf_counter()
    if not (wd / "bench").exists():
        build(wd, args.edges)
    built = time.perf_counter() - t0
    rag = RAG(wd, "bench")
    client = TestClient(create_app(rag))
    top = client.get("/api/overview").json()
    gene, disease = top["top"]["gene"][0]["name"], top["top"]["disease"][0]["name"]
    out: dict[str, Any] = {
        "edges": top["edges"],
        "entities": top["entities"],
        "build_s": round(built, 1),
    }
    for label, url in (
        ("overview", "/api/overview"),
        ("entity completion", f"/api/entities?text={gene[:3]}"),
        ("entity card", f"/api/entity?name={gene}"),
        ("path", f"/api/path?start={gene}&end={disease}&max_hops=3"),
        ("contradictions", f"/api/contradictions?entity={gene}"),
    ):
        out[label] = timed(client, url, args.repeat)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:18} {value}")


if __name__ == "__main__":
    main()
