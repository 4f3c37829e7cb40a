"""An edge field is declared once: one field of :class:`fastbmrag.fields.StoredEdge` (a row of
the table, :data:`~fastbmrag.fields.EDGE_FIELDS`), and every door has it.

A throwaway field, a journal tier read from the papers' input column ``tier`` with a keyword
index, a ledger column and a ``--tier`` filter, is added as one row in a fresh interpreter (the
table is read as the package's modules are imported). That interpreter opens a collection the
package built without the row (an older collection), indexes two papers with a tier into it,
and reports what each door shows: the flag, the API keyword, the page's form and
``/api/options``, the payload index on both stores, the ledger's column, the CSV and GraphML
exports, and what the older edges got.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import naming

NAMED = {"endometriosis": "disease", "IL6": "gene", "TNF": "gene", "BDNF": "gene", "ESR1": "gene"}
OLDER = [("E1", "IL6 in endometriosis", "IL6 was raised in endometriosis.")]
TIERED = [
    ("T1", "TNF in endometriosis", "TNF was raised in endometriosis.", "A"),
    ("T2", "BDNF in endometriosis", "BDNF was raised in endometriosis.", "B"),
]

# Run in a fresh interpreter: the row, then the package, then every door (argv: the working
# directory, the model server, the papers with a tier); prints what each door shows, as JSON.
DOORS = r'''
import csv, io, json, sqlite3, sys
from pathlib import Path

from dataclasses import dataclass

import fastbmrag.fields as F


@dataclass(slots=True)
class StoredEdge(F.StoredEdge):  # the row: one more field of the table
    tier: str = F.column(index="keyword", ledger="TEXT", paper=True, filters=(
        F.FieldFilter("tiers", ("--tier",), "any", "Only papers of this journal tier.", "tiers"),))


F.StoredEdge, F.EDGE_FIELDS = StoredEdge, F.rows(StoredEdge)

from click.testing import CliRunner
from qdrant_client import QdrantClient
from starlette.testclient import TestClient

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.store import Collection
from fastbmrag.store.server import ServerStore
from fastbmrag.web import create_app

wd, url, papers = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
seen = {}


def run(*args):
    result = CliRunner().invoke(cli, [*args, "-c", "w", "--working-dir", str(wd)])
    assert result.exit_code == 0, result.output
    return result.stdout


seen["help"] = "--tier" in run("query", "x", "--help")
run("update", "--ollama-host", url, "-q", papers)  # the older collection, opened for writing
with sqlite3.connect(wd / "w" / "ledger.sqlite") as db:
    seen["ledger"] = dict(db.execute("SELECT paper_id, tier FROM edges"))
with Collection.reader(wd, "w") as coll:
    seen["embedded_index"] = (coll.indexed_fields() or {}).get("tier")
answer = json.loads(run("query", "endometriosis", "--tier", "A", "--no-answer", "--no-link",
                        "--json", "--min-score", "-1", "--ollama-host", url))
seen["flag"] = sorted({e["paper_id"] for e in answer["edges"]})
rag = RAG(wd, "w", ollama_host=url)
seen["keyword"] = sorted(set(rag.edges(tiers="B")["paper_id"]))
asked = rag.query("endometriosis", tiers=["A"], no_answer=True, link=False, min_score=-1)
seen["api_query"] = sorted({e["paper_id"] for e in asked["edges"]})
seen["attribute"] = sorted({e.edge.tier for e in asked.edges})  # read by attribute
page = TestClient(create_app(rag))
seen["options"] = page.get("/api/options").json().get("tiers")
body = {"question": "endometriosis", "tiers": ["B"], "no_answer": True, "link": False,
        "min_score": -1}
seen["page"] = sorted({e["paper_id"] for e in page.post("/api/query", json=body).json()["edges"]})
seen["refused"] = page.post("/api/query", json={"question": "x", "tiers": 5}).json()
rows = csv.DictReader(io.StringIO(run("export", "-o", "-", "--format", "csv")))
seen["csv"] = {r["paper_id"]: r["tier"] for r in rows}
seen["graphml"] = 'attr.name="tier"' in run("export", "-o", "-", "--format", "graphml")

made = []  # the server store's indexes, as it asks the server for them
create = QdrantClient.create_payload_index
QdrantClient.create_payload_index = lambda self, c, name, **kw: made.append(name) or create(
    self, c, name, **kw)
with ServerStore.connect(":memory:", "t") as store:
    store.ensure_collection(4)
seen["server_index"] = "tier" in made
print(json.dumps(seen))
'''


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=naming(NAMED, "associated_with")) as server:
        yield server


def write(path: Path, rows: list[tuple[str, ...]], columns: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        w.writerows([(*row, 2020) for row in rows])
    return path


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> dict[str, Any]:
    wd = tmp_path_factory.mktemp("fields")
    older = write(wd / "older.csv", OLDER, ["paper_id", "title", "abstract", "year"])
    built = CliRunner().invoke(cli, ["update", "-c", "w", "--working-dir", str(wd),
                                     "--ollama-host", fake.url, "-q", str(older)])  # fmt: skip
    assert built.exit_code == 0, built.output
    tiered = write(wd / "tiered.csv", TIERED, ["paper_id", "title", "abstract", "tier", "year"])
    done = subprocess.run(
        [sys.executable, "-c", DOORS, str(wd), fake.url, str(tiered)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_the_row_gives_the_flag_the_keyword_and_the_page_s_input(seen: dict[str, Any]) -> None:
    assert seen["help"]
    assert seen["flag"] == ["T1"]  # --tier A: the tier-A paper's edges alone
    assert seen["keyword"] == ["T2"]  # rag.edges(tiers="B")
    assert seen["api_query"] == ["T1"]
    assert seen["attribute"] == ["A"]
    assert seen["page"] == ["T2"]
    opts = seen["options"]  # the page builds its form's input from this
    assert (opts["input"], opts["label"], opts["help"]) == (
        "list", "Tiers", "Only papers of this journal tier.")  # fmt: skip
    assert seen["refused"]["error"] == "'tiers' must be text or a list of texts, got 5"


def test_the_row_gives_both_stores_index_and_the_ledger_s_column(seen: dict[str, Any]) -> None:
    assert seen["embedded_index"].lower() == "keyword"  # added to the older collection's shard
    assert seen["server_index"]  # made with a server's new collection
    # the older paper's edge has the value an edge stored before the field stands for
    assert seen["ledger"] == {"E1": "", "T1": "A", "T2": "B"}


def test_every_export_has_the_column_and_the_older_edges_their_value(
    seen: dict[str, Any],
) -> None:
    assert seen["csv"] == {"E1": "", "T1": "A", "T2": "B"}
    assert seen["graphml"]


def test_a_stored_edge_is_read_by_attribute_an_older_one_with_the_values_it_stands_for() -> None:
    from fastbmrag.fields import StoredEdge
    from fastbmrag.store.payload import edge_payload

    stored = StoredEdge.of(edge_payload({"source": "IL6", "target": "Endometriosis", "year": 2020,
                                   "organisms": ["human"], "finding": "background"}))  # fmt: skip
    assert (stored.source, stored.year, stored.organisms, stored.finding) == (
        "IL6", 2020, ["human"], "background")  # fmt: skip
    assert stored.retracted == 0 and stored.background_p is None  # the declared defaults
    # an edge stored before ``finding`` and ``words``: a finding, its words from its names
    older = StoredEdge.of({"source": "IL6", "names": ["IL6", "Endometriosis"]})
    assert older.finding == "finding"
    assert older.words.split() == ["il6", "endometriosi"]
