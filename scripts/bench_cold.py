"""Cold commands against an older version, in alternating runs: each common command started as a
new process (interpreter, imports, vocabularies, store), timed and its peak memory taken, once
with this checkout's code and once with ``--base``'s (a git worktree), turn by turn.

The collection: the full texts of ``../shared/data/pmc_oa`` (16 PMC papers) converted and
indexed once against the fake model server (hashed-word embeddings), then read by both versions.

    python scripts/bench_cold.py --base 9b0e77c [--runs 10]

Prints, for ``query --no-answer``, ``status``, ``normalize BRCA1`` and ``--help``: the median
wall time and peak RSS of each version and their ratio (this / base).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PMC = ROOT.parent / "shared" / "data" / "pmc_oa"
QUESTION = "What does PBDE-47 regulate in endometriosis?"


def commands(url: str) -> dict[str, list[str]]:
    return {
        "query --no-answer": ["query", "--no-answer", "-c", "pmc", "--ollama-host", url, QUESTION],
        "status": ["status", "-c", "pmc"],
        "normalize BRCA1": ["normalize", "BRCA1"],
        "--help": ["--help"],
    }


def timed(tree: Path, args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of ``python -m fastbmrag ARGS`` run with ``tree``'s code (its directory
    first on the path)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fastbmrag", *args], cwd=tree,
                          env={**env, "PYTHONPATH": str(tree)}, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree}: fastbmrag {' '.join(args)} failed: {done.stderr[-300:]}")
    return wall


def peak_of(tree: Path, args: list[str], env: dict[str, str]) -> float:
    """Peak RSS (MiB) of one run: a child of its own, whose children's peak it prints."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "fastbmrag", *args],
                         env={**env, "PYTHONPATH": str(tree)}, cwd=tree, capture_output=True,
                         text=True)  # fmt: skip
    return int(out.stdout.strip() or 0) / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the older version: a commit or tag")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args(argv)
    if not PMC.is_dir():
        print(f"{PMC} not found: the 16 PMC full texts", file=sys.stderr)
        return 2
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    where = Path(tempfile.mkdtemp(prefix="fastbmrag-cold-"))
    base = where / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base),
                    args.base], check=True)  # fmt: skip
    env = {**os.environ, "FASTBMRAG_HOME": str(where / "home"), "FASTBMRAG_PUBTATOR": "0"}
    try:
        with FakeOllama(responder=responder) as fake:
            papers = where / "papers.csv"
            for step in (["convert", str(PMC), "-o", str(papers)],
                         ["update", "-c", "pmc", "-q", "--ollama-host", fake.url, str(papers)]):  # fmt: skip
                subprocess.run([sys.executable, "-m", "fastbmrag", *step], env=env, cwd=ROOT,
                               check=True, capture_output=True)  # fmt: skip
            report = {}
            for name, cmd in commands(fake.url).items():
                walls: dict[str, list[float]] = {"this": [], "base": []}
                for _ in range(args.runs):
                    for label, tree in (("base", base), ("this", ROOT)):
                        walls[label].append(timed(tree, cmd, env))
                peaks = {label: peak_of(tree, cmd, env) for label, tree in
                         (("base", base), ("this", ROOT))}  # fmt: skip
                this, old = statistics.median(walls["this"]), statistics.median(walls["base"])
                report[name] = {"this_s": round(this, 3), "base_s": round(old, 3),
                                "ratio": round(this / old, 2),
                                "this_peak_mib": round(peaks["this"]), "base_peak_mib":
                                round(peaks["base"])}  # fmt: skip
                print(f"{name:20s} {json.dumps(report[name])}")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                       check=False)  # fmt: skip
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
