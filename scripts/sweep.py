"""A bounded sweep of an installed fastbmrag as a new user tries it, against the fake model
server: every command with bad, empty, binary and hostile input and malformed environment
variables; the page (``fastbmrag serve`` on 127.0.0.1) with hostile parameters and bodies under
a bounded load (4 clients, 1,000 requests); SIGKILLs during ``update``, each run resumed and its
export compared with an uninterrupted run's. Counts exit codes, page statuses, tracebacks, exit
70, signals and hangs, and prints each defect found.

    python scripts/sweep.py [--kills 12] [--requests 1000]

Exit 1 where it found a traceback, an exit 70, a signal, a hang, a 5xx other than 503 (the model
server is not running for the page) or a resumed run that differs.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

HOSTILE = ["", " ", "\u202e", "x" * 5000, "'; DROP TABLE papers;--", "<script>alert(1)</script>",
           "\x1b]0;owned\x07", "C000002", "C04", "HGNC:999999999", "pH", "../../etc/passwd",
           "IL1B" * 300, "\U0001f600", "%s%s%n", "null"]  # fmt: skip
ENVIRONMENTS = {
    "OLLAMA_HOST": [" ", ",", ", ,", "http://[::1", "localhost:abc", "ftp://x"],
    "QDRANT_URL": ["http://127.0.0.1:1", "nonsense", " "],
    "FASTBMRAG_NUM_PREDICT": ["abc", "5", "0", "-1"],
    "FASTBMRAG_PREFLIGHT_TIMEOUT": ["abc", "0", "inf"],
    "FASTBMRAG_PUBTATOR": ["maybe"],
    "FASTBMRAG_HOME": ["/proc/1/nope", ""],
    "FASTBMRAG_COLLECTION": ["../x", " "],
}


class Sweep:
    def __init__(self, fastbmrag: str, where: Path) -> None:
        self.fastbmrag, self.where = fastbmrag, where
        self.env = {**os.environ, "FASTBMRAG_HOME": str(where / "home"), "FASTBMRAG_PUBTATOR": "0"}
        self.counts: collections.Counter[str] = collections.Counter()
        self.defects: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()

    def run(self, *args: str, env: dict[str, str] | None = None) -> None:
        try:
            done = subprocess.run([self.fastbmrag, *args], env={**self.env, **(env or {})},
                                  capture_output=True, text=True, timeout=120)  # fmt: skip
        except subprocess.TimeoutExpired:
            self.counts["hang"] += 1
            self.defects.append(("hang", args))
            return
        self.counts["runs"] += 1
        self.counts[f"exit {done.returncode}"] += 1
        said = done.stdout + done.stderr
        if "Traceback" in said or done.returncode not in (0, 1, 2, 3, 130):
            self.defects.append(("command", args, done.returncode, said[-300:]))

    def files(self) -> dict[str, Path]:
        w = self.where
        (w / "ok.csv").write_text(
            "paper_id,article_title,abstract,design,organisms\n"
            "b1,IL1B in endometriosis,IL1B rose in endometriosis lesions.,banana,martian\n"
            'b2,TNF,"TNF \u202eis raised in endometriosis.",rct,human\n',
            encoding="utf-8",
        )
        (w / "empty.csv").write_text("")
        (w / "binary.csv").write_bytes(random.randbytes(3000))
        (w / "nocol.csv").write_text("a,b\n1,2\n")
        (w / "trunc.csv").write_text('paper_id,abstract\nx,"unclosed\n')
        (w / "dir.csv").mkdir(exist_ok=True)
        return {p.name: p for p in w.iterdir()} | {"missing.csv": w / "missing.csv"}

    def commands(self, host: str) -> None:
        files = self.files()
        self.run("update", "-c", "demo", "--ollama-host", host, str(files["ok.csv"]))
        for name in ("empty.csv", "binary.csv", "nocol.csv", "trunc.csv", "dir.csv",
                     "missing.csv"):  # fmt: skip
            path = str(files[name])
            self.run("update", "-c", "demo", "--ollama-host", host, path)
            self.run("update", "-c", "demo", "--dry-run", path)
            self.run("convert", path, "-o", str(self.where / "out.csv"))
            self.run("normalize", "--input", path)
            self.run("normalize", "--find", "--input", path)
        for h in HOSTILE:
            for args in (["query", h, "-c", "demo", "--no-answer", "--ollama-host", host],
                         ["query", h, "-c", "demo", "--ollama-host", host],
                         ["entity", h, "-c", "demo"], ["path", h, "IL1B", "-c", "demo"],
                         ["contradictions", h, "-c", "demo"], ["normalize", h],
                         ["normalize", "--find", h], ["watch", "add", h, "-c", "demo"],
                         ["digest", "--since", h, "-c", "demo"]):  # fmt: skip
                self.run(*args)
        for variable, values in ENVIRONMENTS.items():
            for value in values:
                for args in (["status", "-c", "demo"], ["normalize", "IL6"],
                             ["query", "IL1B?", "-c", "demo", "--ollama-host", host, "--no-answer"],
                             ["update", "-c", "demo", "--dry-run", str(files["ok.csv"])],
                             ["entity", "IL1B", "-c", "demo"], ["digest", "-c", "demo"]):  # fmt: skip
                    self.run(*args, env={variable: value})
        for option in (["--top-k", "0"], ["--top-k", "abc"], ["--min-score", "nan"],
                       ["--since", "1500"], ["--concurrency", "0"], ["--num-ctx", "0"],
                       ["--top-k", "\u0663"], ["--entity", ""]):  # fmt: skip
            self.run("query", "IL1B?", "-c", "demo", "--ollama-host", host, *option)
        for args in (["status"], ["status", "-c", "nope"], ["export", "-c", "demo", "-o",
                     "/proc/x.csv"], ["export", "-c", "demo", "-o", str(self.where / "e.graphml")],
                     ["delete", "-c", "nope"], ["vocab", "status"], ["--help"], ["nonsense"],
                     ["query"], ["update"]):  # fmt: skip
            self.run(*args)

    def page(self, requests: int) -> None:
        server = subprocess.Popen([self.fastbmrag, "serve", "-c", "demo", "--port", "8765"],
                                  env=self.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        for _ in range(100):
            try:
                httpx.get("http://127.0.0.1:8765/api/status", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        gets: list[tuple[str, dict[str, str]]] = [get for h in HOSTILE for get in (
            ("/api/entities", {"text": h, "limit": random.choice(["5", "0", "x", "999"])}),
            ("/api/entity", {"name": h}), ("/api/neighbours", {"name": h, "limit": "3"}),
            ("/api/path", {"start": h, "end": "IL1B", "max_hops": random.choice(["2", "0", "x"])}),
            ("/api/contradictions", {"entity": h}), ("/api/digest", {"since": h}),
            ("/api/contradictions", {"organisms": h}), ("/api/entity", {"name": "IL1B", "designs": h}),
            ("/api/status", {"max_failed": random.choice(["5", "-1", "x", ""])}),
            ("/api/overview", {}), ("/api/options", {}), ("/api/nonsense", {h or "x": "1"}))]  # fmt: skip
        posts: list[Any] = [{"question": h} for h in HOSTILE]
        posts += [{"question": "IL1B?", "top_k": v} for v in (0, -1, 1e9, "5", None, True)]
        posts += [{"question": "IL1B?", "bogus": 1}, ["a"], "x", 5, None,
                  {"question": "IL1B?", "journals": [[[[]]]]}]  # fmt: skip
        raw = ['{"question": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}", "{", "[" * 100000]

        def client(n: int) -> None:
            with httpx.Client(base_url="http://127.0.0.1:8765", timeout=60) as c:
                for _ in range(n):
                    kind = random.random()
                    try:
                        if kind < 0.6:
                            path, params = random.choice(gets)
                            r = c.get(path, params=params)
                        elif kind < 0.9:
                            r = c.post("/api/query", json=random.choice(posts))
                        else:
                            r = c.post("/api/query", content=random.choice(raw),
                                       headers={"Content-Type": "application/json"})  # fmt: skip
                    except httpx.HTTPError as err:
                        with self.lock:
                            self.defects.append(("page", repr(err)[:200]))
                        continue
                    with self.lock:
                        self.counts[f"page {r.status_code}"] += 1
                        if r.status_code >= 500 and r.status_code != 503:
                            self.defects.append(("page", r.status_code, r.text[:200]))

        clients = [threading.Thread(target=client, args=(requests // 4,)) for _ in range(4)]
        for t in clients:
            t.start()
        for t in clients:
            t.join()
        server.send_signal(signal.SIGINT)
        _, log = server.communicate(timeout=30)
        if "Traceback" in log:
            self.defects.append(("serve log", log[-500:]))

    def kills(self, trials: int) -> None:
        papers = self.where / "many.csv"
        with papers.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["paper_id", "article_title", "abstract"])
            for i in range(40):
                gene = f"IL{i % 9 + 1}"
                w.writerow([f"k{i}", f"{gene} in endometriosis {i}",
                            f"{gene} rose in endometriosis lesions of {i} women. TNF rose too."])  # fmt: skip
        with FakeOllama(responder=responder, latency=0.05) as fake:
            update = [self.fastbmrag, "update", "-c", "k", "--ollama-host", fake.url, "-q",
                      str(papers)]  # fmt: skip
            subprocess.run([*update, "--working-dir", str(self.where / "whole")], env=self.env,
                           check=True, capture_output=True)  # fmt: skip
            whole = self.export(self.where / "whole")
            for trial in range(trials):
                wd = str(self.where / f"kill{trial}")
                child = subprocess.Popen([*update, "--working-dir", wd], env=self.env,
                                         stderr=subprocess.DEVNULL)  # fmt: skip
                time.sleep(random.uniform(0.5, 4.0))
                child.send_signal(signal.SIGKILL)
                child.wait()
                self.counts["sigkill"] += 1
                again = subprocess.run([*update, "--working-dir", wd], env=self.env,
                                       capture_output=True, text=True)  # fmt: skip
                if again.returncode != 0 or "Traceback" in again.stderr:
                    self.defects.append(("resume", trial, again.returncode, again.stderr[-300:]))
                elif self.export(Path(wd)) != whole:
                    self.defects.append(("resumed export differs", trial))
                else:
                    self.counts["resumed export equal"] += 1

    def export(self, wd: Path) -> list[tuple[tuple[str, str], ...]]:
        out = wd / "export.csv"
        subprocess.run([self.fastbmrag, "export", "-c", "k", "--working-dir", str(wd), "-o",
                        str(out)], env=self.env, check=True, capture_output=True)  # fmt: skip
        when = ("indexed_at", "run_id", "updated_at")
        with out.open(encoding="utf-8") as fh:
            return sorted(tuple(sorted((k, v) for k, v in r.items() if k not in when))
                          for r in csv.DictReader(fh))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--requests", type=int, default=1000)
    args = ap.parse_args(argv)
    fastbmrag = shutil.which("fastbmrag")
    if fastbmrag is None:
        print("install fastbmrag first (pip install -e .)", file=sys.stderr)
        return 2
    random.seed(5)
    sweep = Sweep(fastbmrag, Path(tempfile.mkdtemp(prefix="fastbmrag-sweep-")))
    with FakeOllama(responder=responder) as fake:
        sweep.commands(fake.url)
    sweep.page(args.requests)
    sweep.kills(args.kills)
    print(json.dumps(dict(sorted(sweep.counts.items()))))
    for defect in sweep.defects:
        print(defect)
    return 1 if sweep.defects else 0


if __name__ == "__main__":
    sys.exit(main())
