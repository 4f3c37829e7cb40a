"""A command imports what its path needs: the model client only where a model is called, the
web stack only for `serve`, the findings model only where papers are indexed, the English word
table only without vocabularies. Each command runs in a process of its own, whose imported
packages are read at its end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastbmrag import RAG
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

PROBE = """
import json, sys
sys.argv = ["fastbmrag", *sys.argv[1:]]
from fastbmrag.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""
NEVER = {"starlette", "uvicorn", "lightgbm", "scipy", "wordfreq", "networkx", "pandas", "selenium"}
NEEDS_NO_MODEL = NEVER | {"ollama", "httpx", "httpcore"}


def imported(args: list[str], home: Path) -> set[str]:
    env = {**os.environ, "FASTBMRAG_HOME": str(home), "FASTBMRAG_PUBTATOR": "0"}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, FakeOllama]]:
    where = tmp_path_factory.mktemp("cold")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(where, "c", ollama_host=fake.url)
        rag.insert_paper([{"paper_id": "P1", "abstract": "IL6 rose in asthma."}], pubtator=False)
        yield where, fake


@pytest.mark.parametrize(
    ("args", "left_out"),
    [
        (["--help"], NEEDS_NO_MODEL | {"qdrant_edge"}),
        (["status", "-c", "c"], NEEDS_NO_MODEL | {"pydantic"}),
        (["normalize", "BRCA1"], NEEDS_NO_MODEL | {"qdrant_edge"}),
        (["query", "--no-answer", "-c", "c", "What raises IL6 in asthma?"], NEVER),
    ],
)
def test_a_command_imports_only_what_its_path_needs(
    home: tuple[Path, FakeOllama], args: list[str], left_out: set[str]
) -> None:
    where, fake = home
    if args[0] == "query":
        args = [*args, "--ollama-host", fake.url]
    got = imported(args, where)
    assert "fastbmrag" in got  # the probe ran the command
    assert got & left_out == set(), args
