"""A fake NCBI PubTator3 API, for tests and offline scripts.

A real HTTP server on 127.0.0.1 (free port) that answers as PubTator3 does:

* ``GET /publications/export/biocjson?pmids=1,2[&full=true]`` and
  ``GET /publications/pmc_export/biocjson?pmcids=PMC1,PMC2``: ``{"PubTator3": [documents]}``,
  at most 100 ids a request (more: HTTP 400), ids it holds no document for left out (as NCBI
  leaves out papers it has not annotated yet).

The documents come from PubTator-format files (``PMID|t|title``, ``PMID|a|abstract``,
``PMID<TAB>start<TAB>end<TAB>text<TAB>type<TAB>id``: BioRED, BC5CDR) or are added one by one
(:meth:`FakePubTator.add`). They reproduce the format facts of the real service: ``_id`` is
``"PMID|PMCID"`` or ``"PMID|None"``; passages and locations carry document-absolute offsets;
a gene's id is ``"5609"`` with ``normalized_id`` an integer, a disease's and chemical's
``"MESH:D008545"`` with a string one; a variant's fields ``"RS#:..."`` / ``"HGVS:..."``;
annotation text ASCII-folded (``TNF-a`` for ``TNF-α``).

Faults (:meth:`fail`): the next N requests answer a status (429 with ``Retry-After``, 500 ...)
or drop the connection; :meth:`answer_raw` answers a body as given (a malformed reply),
:meth:`trickle` sends the reply a byte at a time. :attr:`requests` logs every request (path, params); :meth:`withhold`
makes a paper "not yet annotated" until :meth:`release`.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastbmrag.testing.serving import LocalServer

API_PATH = "/research/pubtator3-api"
MAX_IDS = 100

# The annotation types of the PubTator-format corpora, as PubTator3 names them.
CORPUS_TYPES = {
    "GeneOrGeneProduct": "Gene",
    "Gene": "Gene",
    "DiseaseOrPhenotypicFeature": "Disease",
    "Disease": "Disease",
    "ChemicalEntity": "Chemical",
    "Chemical": "Chemical",
    "SequenceVariant": "Variant",
    "OrganismTaxon": "Species",
    "CellLine": "CellLine",
}


@dataclass
class Mention:
    start: int  # document offset
    end: int
    text: str
    type: str  # PubTator3's: Gene, Disease, Chemical, Variant, Species, CellLine
    identifier: str  # as PubTator3 writes it ("5609", "MESH:D008545", "RS#:123;HGVS:...")
    name: str = ""  # a gene's symbol (infons.name), where known


@dataclass
class Doc:
    pmid: str
    title: str
    abstract: str
    pmcid: str = ""
    mentions: list[Mention] = field(default_factory=list)


@dataclass
class Logged:
    path: str
    params: dict[str, str]
    status: int = 0


def ascii_fold(text: str) -> str:
    """What PubTator3 does to a Greek letter: its Latin initial ("TNF-α" -> "TNF-a")."""
    out = []
    for ch in text:
        if "\u0391" <= ch <= "\u03c9":
            name = unicodedata.name(ch, "")
            letter = name.split()[-1][0] if name else ch
            ch = letter.lower() if "SMALL" in name else letter
        out.append(ch)
    return "".join(out)


def corpus_identifier(kind: str, raw: str) -> str:
    """A corpus id as PubTator3 writes it: genes bare, MeSH ids prefixed, variants as fields."""
    raw = raw.split("|")[0].split(",")[0].split(";")[0].strip()
    if kind in ("Disease", "Chemical"):
        if raw.startswith(("D", "C")) and raw[1:].isdigit():
            return f"MESH:{raw}"
        return raw if ":" in raw else ""
    if kind == "Variant":
        if raw.startswith("rs") and raw[2:].isdigit():
            return f"RS#:{raw[2:]}"
        return f"tmVar:{raw};HGVS:{raw}" if raw else ""
    return raw


def read_pubtator(path: Path) -> list[Doc]:
    """The documents of a PubTator-format file (BioRED, BC5CDR)."""
    docs: dict[str, Doc] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "|t|" in line[:20]:
            pmid, _, title = line.split("|", 2)
            docs[pmid] = Doc(pmid, title, "")
        elif "|a|" in line[:20]:
            pmid, _, abstract = line.split("|", 2)
            docs[pmid].abstract = abstract
        elif line.count("\t") >= 5:
            pmid, start, end, text, kind, ident = line.split("\t")[:6]
            mapped = CORPUS_TYPES.get(kind)
            if pmid in docs and mapped:
                docs[pmid].mentions.append(
                    Mention(int(start), int(end), text, mapped, corpus_identifier(mapped, ident))
                )
    return list(docs.values())


def biocjson(doc: Doc) -> dict[str, Any]:
    """A document as PubTator3's BioC JSON writes it."""
    title_end = len(doc.title)
    passages = []
    for i, (kind, offset, text) in enumerate(
        (("title", 0, doc.title), ("abstract", title_end + 1, doc.abstract))
    ):
        anns = []
        for n, m in enumerate(doc.mentions):
            if not (offset <= m.start < offset + len(text) + 1):
                continue
            infons: dict[str, Any] = {"identifier": m.identifier, "type": m.type, "valid": True}
            if m.type == "Gene" and m.identifier.isdigit():
                infons.update(database="ncbi_gene", normalized_id=int(m.identifier))
                if m.name:
                    infons["name"] = m.name
            elif m.identifier.startswith("MESH:"):
                infons.update(database="ncbi_mesh", normalized_id=m.identifier.split(":")[1])
            anns.append({
                "id": f"{i}{n}",
                "infons": infons,
                "text": ascii_fold(m.text),
                "locations": [{"offset": m.start, "length": m.end - m.start}],
            })  # fmt: skip
        passages.append({
            "infons": {"type": kind, "section_type": kind.upper()},
            "offset": offset, "text": text, "sentences": [], "annotations": anns, "relations": [],
        })  # fmt: skip
    return {
        "_id": f"{doc.pmid}|{doc.pmcid or 'None'}",
        "id": doc.pmid,
        "infons": {},
        "passages": passages,
        "relations": [],
        "pmid": int(doc.pmid),
        "pmcid": doc.pmcid or None,
    }


class _Handler(BaseHTTPRequestHandler):
    owner: FakePubTator
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        owner = self.owner
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query).items()}
        logged = Logged(url.path, params)
        with owner._lock:
            owner.requests.append(logged)
            fault = owner._faults.popleft() if owner._faults else None
        if fault is not None:
            status, retry_after = fault
            logged.status = status
            if status == 0:
                self.close_connection = True
                self.connection.close()
                return
            wait = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
            self._send(status, b'{"detail":"fake fault"}', wait)
            return
        logged.status, body = owner._answer(url.path, params)
        with owner._lock:
            shaped = owner._shaped.popleft() if owner._shaped else None
        if shaped is not None and shaped[0] == "raw":
            body = shaped[1]
        if shaped is not None and shaped[0] == "trickle":
            self._trickle(logged.status, body, shaped[1], owner.closing)
            return
        self._send(logged.status, body)

    def _trickle(self, status: int, body: bytes, seconds: float, stop: threading.Event) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for i in range(len(body)):
            if stop.wait(seconds):
                return
            try:
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
            except OSError:  # the client gave up
                return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


class FakePubTator(LocalServer):
    """The fake server. Start with ``with FakePubTator(files...) as fake:``; ``fake.url`` is the
    API base (``FASTBMRAG_PUBTATOR_URL``)."""

    handler = _Handler
    thread_name = "fake-pubtator"

    def __init__(self, *files: str | Path) -> None:
        super().__init__()
        self.docs: dict[str, Doc] = {}
        self.requests: list[Logged] = []
        self.withheld: set[str] = set()
        self._faults: deque[tuple[int, float | None]] = deque()
        self._shaped: deque[tuple[str, Any]] = deque()  # ("raw", body) | ("trickle", seconds)
        self.closing = threading.Event()
        self._lock = threading.Lock()
        for f in files:
            self.add_file(f)

    def add_file(self, path: str | Path) -> list[str]:
        docs = read_pubtator(Path(path))
        for d in docs:
            self.docs[d.pmid] = d
        return [d.pmid for d in docs]

    def add(
        self, pmid: str, title: str, abstract: str, mentions: Iterable[tuple[str, str, str]],
        *, pmcid: str = "", names: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        """A document whose ``mentions`` are (text, PubTator3 type, identifier): each
        annotated wherever the text occurs in the title or abstract; ``names``: gene symbols."""
        doc = Doc(pmid, title, abstract, pmcid)
        full = f"{title} {abstract}"
        for text, kind, ident in mentions:
            start = full.find(text)
            while start >= 0:
                doc.mentions.append(
                    Mention(
                        start, start + len(text), text, kind, ident, (names or {}).get(text, "")
                    )
                )
                start = full.find(text, start + 1)
        self.docs[pmid] = doc

    def withhold(self, *pmids: str) -> None:
        self.withheld.update(pmids)

    def release(self, *pmids: str) -> None:
        self.withheld.difference_update(pmids)

    def fail(self, status: int, times: int = 1, *, retry_after: float | None = None) -> None:
        """The next ``times`` requests answer ``status`` (0: the connection is dropped), with a
        ``Retry-After`` header when given."""
        self._faults.extend([(status, retry_after)] * times)

    def answer_raw(self, body: bytes, times: int = 1) -> None:
        """The next ``times`` requests answer HTTP 200 with ``body`` as it is (a malformed reply)."""
        self._shaped.extend([("raw", body)] * times)

    def trickle(self, seconds: float, times: int = 1) -> None:
        """The next ``times`` requests get their reply one byte every ``seconds``."""
        self._shaped.extend([("trickle", seconds)] * times)

    def close(self) -> None:
        self.closing.set()  # a reply trickling out stops
        super().close()

    def count(self) -> int:
        return len(self.requests)

    @property
    def url(self) -> str:
        return self.base + API_PATH

    def _answer(self, path: str, params: dict[str, str]) -> tuple[int, bytes]:
        if path == API_PATH + "/publications/export/biocjson":
            ids = [i.strip() for i in params.get("pmids", "").split(",") if i.strip()]
            found = [d for i in ids if (d := self.docs.get(i)) and i not in self.withheld]
        elif path == API_PATH + "/publications/pmc_export/biocjson":
            ids = [i.strip().upper() for i in params.get("pmcids", "").split(",") if i.strip()]
            by_pmcid = {d.pmcid: d for d in self.docs.values() if d.pmcid}
            found = [d for i in ids if (d := by_pmcid.get(i)) and d.pmid not in self.withheld]
        else:
            return 404, b'{"detail":"Not Found"}'
        if len(ids) > MAX_IDS:
            return 400, b'{"detail":"at most 100 ids"}'
        return 200, json.dumps({"PubTator3": [biocjson(d) for d in found]}).encode()
