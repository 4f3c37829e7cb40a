"""A fake NCBI E-utilities + Europe PMC full-text server, for tests and offline scripts.

A real HTTP server on 127.0.0.1 (free port) that answers in the real formats:

* ``GET|POST /entrez/eutils/esearch.fcgi`` -- an ``eSearchResult`` document
  (``db=pubmed``, ``term``, ``retstart``/``retmax``, ``usehistory``,
  ``datetype`` = ``edat`` | ``pdat``, ``mindate``/``maxdate`` as
  ``YYYY[/MM[/DD]]``, ``reldate``); records are listed newest first
  (Entrez date, then PMID), as PubMed's "most recent" order.
* ``GET|POST /entrez/eutils/efetch.fcgi`` -- a ``PubmedArticleSet`` with the
  stored MEDLINE records, for an ``id`` list or a ``WebEnv`` + ``query_key``.
* ``GET /europepmc/webservices/rest/{PMCID}/fullTextXML`` -- the JATS file, or
  404 when the article has no full text (as Europe PMC answers).

The records are the real MEDLINE files and JATS articles the test gives it.
A JATS article whose PMID has no MEDLINE record gets one derived from its own
front matter (PMID, PMCID, DOI, title, abstract, authors, journal, dates), so
PMIDs, PMCIDs and full texts always agree.

Switchable faults (:meth:`FakeEutils.fail`): the next N requests of one kind
answer a status (429 with NCBI's JSON body, 500, 503...), drop the
connection, or never answer (``HANG``); :attr:`FakeEutils.requests` logs every request (kind, params,
time) so tests can count them. Records can be added between calls
(:meth:`add_medline`, :meth:`add_jats`) to simulate new papers, and retracted
(:meth:`retract`: the record gains the publication type "Retracted Publication", and the
search ``"retracted publication"[pt] AND (1[uid] OR 2[uid] ...)`` finds it).

Use::

    with FakeEutils() as fake:
        fake.add_medline("tests/data/eutils/pubmed21n1298_slice.xml")
        fake.add_jats("tests/data/eutils/PMC2774577.nxml")
        fake.url           # E-utilities base URL  (FASTBMRAG_EUTILS_URL)
        fake.fulltext_url  # full-text URL template (FASTBMRAG_FULLTEXT_URL)
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from lxml import etree

from fastbmrag.testing.medline_records import (
    date_window,
    element_text,
    history_date,
    medline_from_jats,
    pub_date,
    set_entrez_date,
)
from fastbmrag.testing.serving import LocalServer

EUTILS_PATH = "/entrez/eutils"
FULLTEXT_PATH = "/europepmc/webservices/rest"

MEDLINE_HEADER = (
    b'<?xml version="1.0" ?>\n'
    b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
    b"<PubmedArticleSet>\n"
)
MEDLINE_FOOTER = b"</PubmedArticleSet>\n"
ESEARCH_HEADER = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n'
    '<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n'
)
NCBI_429_BODY = (
    b'{"error":"API rate limit exceeded","api-key":"127.0.0.1","count":"4","limit":"3"}\n'
)
HANG = -1  # a fault status: no answer at all


@dataclass
class Record:
    """One MEDLINE record the fake serves."""

    pmid: str
    xml: bytes  # the <PubmedArticle> element, serialised
    edat: date  # Entrez date: when the record entered PubMed
    pdat: date  # publication date
    pmcid: str = ""
    retracted: bool = False


@dataclass
class Fault:
    status: int  # HTTP status; 0: drop the connection; HANG: no answer (a timeout)
    retry_after: float | None = None


@dataclass
class LoggedRequest:
    kind: str  # "esearch" | "efetch" | "fulltext" | "other"
    method: str
    path: str
    params: dict[str, str]
    at: float  # time.monotonic()
    status: int = 0


@dataclass
class _History:
    pmids: list[str] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeEutils
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._handle(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._handle(self.rfile.read(length) if length else b"")

    def _handle(self, body: bytes) -> None:
        owner = self.owner
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if body:
            form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
            params.update({k: v[-1] for k, v in form.items()})
        m = re.fullmatch(re.escape(FULLTEXT_PATH) + r"/([A-Za-z0-9]+)/fullTextXML", url.path)
        if url.path == EUTILS_PATH + "/esearch.fcgi":
            kind = "esearch"
        elif url.path == EUTILS_PATH + "/efetch.fcgi":
            kind = "efetch"
        elif m:
            kind = "fulltext"
        else:
            kind = "other"
        logged = LoggedRequest(kind, self.command, url.path, params, time.monotonic())
        with owner._lock:
            owner.requests.append(logged)
        fault = owner._take_fault(kind)
        if fault is not None:
            logged.status = fault.status
            if fault.status == HANG:
                owner._closing.wait(owner.hang_seconds)
                self.close_connection = True
                return
            if fault.status == 0:
                self.close_connection = True
                self.connection.close()
                return
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            if fault.status == 429:
                self._send(429, "application/json", NCBI_429_BODY, headers)
            else:
                msg = f"<html><body><h1>{fault.status} fake fault</h1></body></html>\n"
                self._send(fault.status, "text/html", msg.encode(), headers)
            return
        if kind == "esearch":
            status, ctype, data = owner._search(params)
        elif kind == "efetch":
            status, ctype, data = owner._fetch(params)
        elif kind == "fulltext":
            assert m is not None
            status, ctype, data = owner._full_text(m.group(1))
        else:
            status, ctype, data = 404, "text/plain", b"not found\n"
        logged.status = status
        self._send(status, ctype, data)

    def _send(
        self, status: int, ctype: str, data: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class FakeEutils(LocalServer):
    """The fake server. Start with ``with FakeEutils() as fake:`` or :meth:`start`/:meth:`stop`."""

    handler = _Handler
    thread_name = "fake-eutils"

    def __init__(self, *files: str | Path) -> None:
        super().__init__()
        self.records: dict[str, Record] = {}
        self.fulltext: dict[str, bytes] = {}  # PMCID ("PMC123") -> JATS bytes
        self.queries: dict[str, set[str]] = {}  # term -> PMIDs; a term not listed matches all
        self.requests: list[LoggedRequest] = []
        self._faults: dict[str, deque[Fault]] = {}
        self._histories: dict[str, _History] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.hang_seconds = 30.0
        for f in files:
            self.add_file(f)

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeEutils:
        self._closing.clear()
        return super().start()

    def stop(self) -> None:
        self._closing.set()  # frees handlers held by a HANG fault
        super().stop()

    @property
    def url(self) -> str:
        """E-utilities base URL, as ``https://eutils.ncbi.nlm.nih.gov/entrez/eutils``."""
        return self.base + EUTILS_PATH

    @property
    def fulltext_url(self) -> str:
        """Full-text URL template, as Europe PMC's ``.../rest/{pmcid}/fullTextXML``."""
        return self.base + FULLTEXT_PATH + "/{pmcid}/fullTextXML"

    # --- data ----------------------------------------------------------------------------------

    def add_file(self, path: str | Path) -> list[str]:
        """Add a MEDLINE file (``.xml``/``.xml.gz``) or a JATS article (``.nxml``); returns PMIDs."""
        p = Path(path)
        if p.suffix == ".nxml":
            return [self.add_jats(p)]
        return self.add_medline(p)

    def add_medline(
        self, source: str | Path | bytes, *, entrez_date: date | None = None
    ) -> list[str]:
        """Serve every ``PubmedArticle`` of a real MEDLINE file; ``entrez_date`` re-dates them."""
        pmids: list[str] = []
        with contextlib.ExitStack() as stack:
            stream: Any
            if isinstance(source, bytes):
                stream = io.BytesIO(source)
            elif Path(source).suffix == ".gz":
                stream = stack.enter_context(gzip.open(source, "rb"))
            else:
                stream = stack.enter_context(Path(source).open("rb"))
            for _, article in etree.iterparse(
                stream, tag="PubmedArticle", resolve_entities=False, no_network=True
            ):
                pmids.append(self._add_article(article, entrez_date))
                article.clear()
                parent = article.getparent()
                while parent is not None and article.getprevious() is not None:
                    del parent[0]
        return pmids

    def add_jats(
        self,
        path: str | Path,
        *,
        full_text: bool = True,
        entrez_date: date | None = None,
    ) -> str:
        """Serve a JATS article as full text under its PMCID; derive its MEDLINE record if needed.

        ``full_text=False`` keeps the record (with its PMCID) but answers 404 for the text.
        Returns the PMID.
        """
        data = Path(path).read_bytes()
        jats = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False))
        meta = jats.find("front/article-meta")
        if meta is None:
            raise ValueError(f"{path}: not a JATS article (no front/article-meta)")
        pmid = element_text(meta.find("article-id[@pub-id-type='pmid']"))
        pmcid = element_text(meta.find("article-id[@pub-id-type='pmc']")) or element_text(
            meta.find("article-id[@pub-id-type='pmcid']")
        )
        if not pmid or not pmcid:
            raise ValueError(f"{path}: the fake needs a JATS file with both a PMID and a PMCID")
        pmcid = pmcid if pmcid.upper().startswith("PMC") else "PMC" + pmcid
        with self._lock:
            known = pmid in self.records
        if not known or entrez_date is not None:
            self._add_article(medline_from_jats(jats), entrez_date)
        if full_text:
            with self._lock:
                self.fulltext[pmcid] = data
        return pmid

    def retract(self, pmid: str) -> None:
        """Mark a served record retracted, as PubMed does: its publication types gain
        "Retracted Publication"."""
        self.add_publication_type(pmid, "Retracted Publication")
        with self._lock:
            self.records[pmid].retracted = True

    def add_publication_type(self, pmid: str, name: str) -> None:
        """Give a served record one more publication type, as NLM's indexing does weeks after
        a citation appears."""
        with self._lock:
            rec = self.records[pmid]
            article = etree.fromstring(rec.xml, parser=etree.XMLParser(resolve_entities=False))
            art = article.find("MedlineCitation/Article")
            types = art.find("PublicationTypeList") if art is not None else None
            if art is not None and types is None:
                types = etree.SubElement(art, "PublicationTypeList")
            if types is not None:
                etree.SubElement(types, "PublicationType").text = name
            rec.xml = etree.tostring(article, encoding="utf-8")

    def remove_full_text(self, pmcid: str) -> None:
        with self._lock:
            self.fulltext.pop(pmcid, None)

    def set_query(self, term: str, pmids: Iterable[str]) -> None:
        """Make ``term`` match exactly these PMIDs (other terms match every record)."""
        with self._lock:
            self.queries[term] = set(pmids)

    def _add_article(self, article: etree._Element, entrez_date: date | None) -> str:
        pmid = element_text(article.find("MedlineCitation/PMID"))
        if entrez_date is not None:
            set_entrez_date(article, entrez_date)
        edat = history_date(article, "entrez") or date(1900, 1, 1)
        pdat = pub_date(article) or edat
        pmcid = element_text(article.find("PubmedData/ArticleIdList/ArticleId[@IdType='pmc']"))
        rec = Record(
            pmid=pmid,
            xml=etree.tostring(article, encoding="utf-8"),
            edat=edat,
            pdat=pdat,
            pmcid=pmcid,
            # a record that says so itself: PubMed's search on the type finds it too
            retracted=any(
                element_text(t) == "Retracted Publication"
                for t in article.iterfind("MedlineCitation/Article/PublicationTypeList/"
                                          "PublicationType")
            ),
        )
        with self._lock:
            self.records[pmid] = rec
        return pmid

    # --- faults and counters ---------------------------------------------------------------------

    def fail(
        self, kind: str, status: int, *, times: int = 1, retry_after: float | None = None
    ) -> None:
        """The next ``times`` requests of ``kind`` (esearch/efetch/fulltext) answer ``status``.

        ``status=0`` drops the connection without an answer (a connection error);
        ``status=HANG`` keeps it open without an answer for ``hang_seconds`` (a timeout).
        """
        with self._lock:
            q = self._faults.setdefault(kind, deque())
            q.extend(Fault(status, retry_after) for _ in range(times))

    def count(self, kind: str) -> int:
        """Requests received for ``kind``, faults included."""
        with self._lock:
            return sum(1 for r in self.requests if r.kind == kind)

    def efetched_ids(self) -> list[str]:
        """Every PMID asked for by ``id=`` in an EFetch (answered or not), in order."""
        with self._lock:
            reqs = [r for r in self.requests if r.kind == "efetch"]
        ids: list[str] = []
        for r in reqs:
            ids.extend(i.strip() for i in r.params.get("id", "").split(",") if i.strip())
        return ids

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()

    # --- request handling (called from the server threads) -----------------------------------------

    def _take_fault(self, kind: str) -> Fault | None:
        with self._lock:
            q = self._faults.get(kind)
            return q.popleft() if q else None

    def _search(self, params: dict[str, str]) -> tuple[int, str, bytes]:
        if params.get("db", "pubmed") != "pubmed":
            return 200, "text/xml", _esearch_error(f"Invalid db name specified: {params['db']}")
        term = params.get("term", "")
        if not term.strip():
            return 200, "text/xml", _esearch_error("Empty term and query_key - nothing todo")
        datetype = params.get("datetype", "pdat")
        try:
            lo, hi = date_window(params)
        except ValueError as err:
            return 200, "text/xml", _esearch_error(str(err))
        uids = set(re.findall(r"(\d+)\[uid\]", term))
        retracted = '"retracted publication"[pt]' in term.lower()
        with self._lock:
            wanted = self.queries.get(term)
            if wanted is None and uids:  # a search restricted to PMIDs
                wanted = uids
            records = [
                r
                for r in self.records.values()
                if (wanted is None or r.pmid in wanted) and (r.retracted or not retracted)
            ]
        if datetype not in ("edat", "pdat"):
            return 200, "text/xml", _esearch_error(f"Unsupported datetype {datetype!r} (fake)")
        key = (lambda r: r.edat) if datetype == "edat" else (lambda r: r.pdat)
        hits = [r for r in records if (lo is None or key(r) >= lo) and (hi is None or key(r) <= hi)]
        hits.sort(key=lambda r: (r.edat, int(r.pmid)), reverse=True)
        pmids = [r.pmid for r in hits]
        retstart = int(params.get("retstart", "0") or 0)
        retmax = int(params.get("retmax", "20") or 20)
        page = pmids[retstart : retstart + retmax]
        history = ""
        if params.get("usehistory", "").lower() == "y":
            with self._lock:
                webenv = f"MCID_fake_{len(self._histories) + 1}"
                self._histories[webenv] = _History(pmids)
            history = f"<QueryKey>1</QueryKey><WebEnv>{webenv}</WebEnv>"
        ids = "".join(f"<Id>{p}</Id>\n" for p in page)
        body = (
            f"{ESEARCH_HEADER}<eSearchResult><Count>{len(pmids)}</Count>"
            f"<RetMax>{len(page)}</RetMax><RetStart>{retstart}</RetStart>{history}"
            f"<IdList>\n{ids}</IdList><TranslationSet/>"
            f"<QueryTranslation>{_xml_escape(term)}</QueryTranslation></eSearchResult>\n"
        )
        return 200, "text/xml; charset=UTF-8", body.encode("utf-8")

    def _fetch(self, params: dict[str, str]) -> tuple[int, str, bytes]:
        if params.get("db", "pubmed") != "pubmed":
            return 400, "text/plain", b"fake E-utilities serve db=pubmed only\n"
        if "id" in params:
            pmids = [i.strip() for i in params["id"].split(",") if i.strip()]
        elif "WebEnv" in params:
            with self._lock:
                hist = self._histories.get(params["WebEnv"])
            if hist is None:
                return 400, "text/plain", b"Unknown WebEnv\n"
            start = int(params.get("retstart", "0") or 0)
            pmids = hist.pmids[start : start + int(params.get("retmax", "20") or 20)]
        else:
            return 400, "text/plain", b"Empty id list - nothing todo\n"
        with self._lock:
            found = [self.records[p].xml for p in pmids if p in self.records]
        body = MEDLINE_HEADER + b"\n".join(found) + b"\n" + MEDLINE_FOOTER
        return 200, "text/xml; charset=UTF-8", body

    def _full_text(self, pmcid: str) -> tuple[int, str, bytes]:
        with self._lock:
            data = self.fulltext.get(pmcid.upper())
        if data is None:
            return 404, "text/plain", b""
        return 200, "application/xml", data



# --- helpers ---------------------------------------------------------------------------------


def _xml_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _esearch_error(msg: str) -> bytes:
    return (
        f"{ESEARCH_HEADER}<eSearchResult><ERROR>{_xml_escape(msg)}</ERROR></eSearchResult>\n"
    ).encode()
