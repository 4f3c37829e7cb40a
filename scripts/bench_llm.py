"""Overhead of the LLM layer itself, measured against the fake Ollama (no model time).

    python scripts/bench_llm.py [--papers 400] [--texts 6400] [--dim 1024] [--concurrency 4]

Runs, through the real `ollama` client over HTTP on 127.0.0.1:
  1. `--papers` structured chat calls (one per "paper"), no cache;
  2. `--texts` embeddings in batches of 64;
  3. the same chat calls and embeddings again with a warm SQLite cache (expect 0 requests).
Prints one JSON object; docs/benchmarks.md records the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from fastbmrag.llm import KIND_EXTRACT, ResponseCache, make_llm
from fastbmrag.testing import FakeOllama


class Relation(BaseModel):
    source: str
    source_type: Literal["gene", "disease", "chemical", "cell", "pathway"]
    target: str
    target_type: Literal["gene", "disease", "chemical", "cell", "pathway"]
    relationship_type: Literal["upregulates", "downregulates", "associated_with"]
    description: str


class Draft(BaseModel):
    relations: list[Relation]


def abstract(i: int) -> str:
    return (
        f"Paper {i}: IL{i % 37} and ESR{i % 3} expression in ectopic endometriotic lesions "
        f"from {i % 90 + 10} patients; TNF and VEGFA were upregulated while PGR was reduced. "
    ) * 6


async def run(fake: FakeOllama, cache: ResponseCache | None, args: argparse.Namespace) -> dict:
    llm = make_llm(host=fake.url, concurrency=args.concurrency, cache=cache)
    fake.reset()
    async with llm:
        t0 = time.perf_counter()
        results = await asyncio.gather(
            *(
                llm.chat([{"role": "user", "content": abstract(i)}], Draft, kind=KIND_EXTRACT)
                for i in range(args.papers)
            )
        )
        t1 = time.perf_counter()
        vecs = await llm.embed([f"{abstract(i)} chunk {i}" for i in range(args.texts)])
        t2 = time.perf_counter()
    assert all(r.ok for r in results) and vecs.shape == (args.texts, args.dim)
    return {
        "chat_calls_per_s": round(args.papers / (t1 - t0), 1),
        "chat_ms_per_call": round(1000 * (t1 - t0) / args.papers, 2),
        "embed_texts_per_s": round(args.texts / (t2 - t1), 1),
        "server_requests": dict(fake.counts),
        "max_in_flight": fake.max_in_flight,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=400)
    ap.add_argument("--texts", type=int, default=6400)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(dims=args.dim) as fake:
        cold_cache = ResponseCache(Path(tmp) / "llm_cache.sqlite")
        report = {
            "no_cache": asyncio.run(run(fake, None, args)),
            "cold_cache": asyncio.run(run(fake, cold_cache, args)),
            "warm_cache": asyncio.run(run(fake, ResponseCache(cold_cache.path), args)),
            "cache_file_mb": round((Path(tmp) / "llm_cache.sqlite").stat().st_size / 1e6, 1),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
