"""Every command's output on a collection built from tests/data, masked, in one file: run it in
two checkouts and diff the files to see what a change did to what users read.

The collection is indexed from the real papers in tests/data (papers.csv, the PMC texts, 60
MEDLINE records) against the fake model server with the test suite's careful answers and no
PubTator3. Then status, query (text, JSON, Markdown; a list question, an unknown name, a refused
option), entity, contradictions, path, digest (text, Markdown, JSON) and both exports run
through the command line. Timings, process ids, dates and the working directory are masked.

    python scripts/command_outputs.py OUT.txt      # then, in the other checkout, OTHER.txt
    diff OUT.txt OTHER.txt
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from pathlib import Path

from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
QUESTION = "What is the role of IL1B in endometriosis?"


def masked(text: str, wd: Path) -> str:
    text = text.replace(str(wd), "WD")
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?(\+00:00)?", "DATE", text)
    text = re.sub(r"\b\d+(\.\d+)?\s?(s|ms|MB|KB|GB|kB)\b", "N", text)
    text = re.sub(r'"(\w+_s|seconds|elapsed|wall_seconds|pid)": [0-9.e-]+', r'"\1": N', text)
    return re.sub(r"pid \d+", "pid N", text)


def outputs(wd: Path) -> str:
    os.environ["FASTBMRAG_HOME"] = str(wd / "home")
    runs: list[tuple[str, int, str]] = []
    with FakeOllama(responder=responder) as fake:
        host = ["--ollama-host", fake.url]
        inputs = [DATA / "papers" / "papers.csv", DATA / "pmc",
                  DATA / "medline" / "pubmed20n0014_first60.xml.gz"]  # fmt: skip
        commands = [
            ["update", *host, "-q", "--no-pubtator", *map(str, inputs)],
            ["status"], ["status", "--json"],
            ["query", QUESTION, *host], ["query", QUESTION, *host, "--json"],
            ["query", QUESTION, *host, "--format", "markdown"],
            ["query", "Which genes are upregulated in cancer?", *host, "--no-answer", "--json"],
            ["query", "zombies", *host, "--no-answer"], ["query", "x", *host, "--top-k", "0"],
            ["entity", "IL1B"], ["entity", "IL1B", "--json"], ["entity", "endometriosis"],
            ["contradictions"], ["contradictions", "--json"],
            ["path", "IL1B", "endometriosis"], ["path", "IL1B", "endometriosis", "--json"],
            ["digest"], ["digest", "--format", "markdown"], ["digest", "--format", "json"],
            ["export", "-o", "-", "-f", "csv"], ["export", "-o", str(wd / "graph.graphml")],
        ]  # fmt: skip
        for argv in commands:
            result = CliRunner().invoke(cli, [argv[0], "-c", "t", "--working-dir", str(wd), *argv[1:]])
            said = " ".join(argv).replace(fake.url, "URL").replace(str(DATA), "DATA")
            runs.append((masked(said, wd), result.exit_code,
                         masked(result.output, wd)))  # fmt: skip
    graph = wd / "graph.graphml"
    runs.append(("graph.graphml", 0, masked(graph.read_text(encoding="utf-8"), wd)))
    return "\n\n".join(f"=== {name} -> exit {code}\n{out}" for name, code, out in runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the file the outputs are written to")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="outputs") as tmp:
        args.out.write_text(outputs(Path(tmp)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
