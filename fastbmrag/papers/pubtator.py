"""NCBI's PubTator3 annotations of PubMed and PMC papers: the client (:class:`PubTatorClient`),
the documents it reads (:class:`Document`, :class:`Annotation`) and a cache on disk
(:class:`AnnotationCache`), so that a re-run asks nothing.

The API, as NCBI documents it (https://www.ncbi.nlm.nih.gov/research/pubtator3/api):

* ``GET {base}/publications/export/biocjson?pmids=1,2,3`` -- abstracts (``&full=true``: the
  PMC full text where there is one), at most :data:`MAX_IDS` ids a request;
* ``GET {base}/publications/pmc_export/biocjson?pmcids=PMC1,PMC2`` -- PMC full texts;
* at most three requests a second (:data:`MIN_INTERVAL`, shared by every client of the process).

The answer is ``{"PubTator3": [document, ...]}``; a document's ``_id`` is ``"PMID|PMCID"`` or
``"PMID|None"``; its passages carry a document-absolute ``offset`` and their annotations'
``locations[].offset`` are document-absolute too. An annotation's ``infons.identifier`` is
``"5609"`` for a gene, ``"MESH:D008545"`` for a disease, ``"MESH:C560077"`` or a D id for a
chemical, an rs id or an HGVS name among a variant's fields; ``normalized_id`` is sometimes an
integer, sometimes a string; the text may be ASCII-folded ("TNF-a" for "TNF-α"). Ids NCBI does
not return are papers it has not annotated yet (the pipeline runs weekly: 1-2 weeks behind
PubMed), not failures.

Failures: a 429 waits for ``Retry-After``; a 5xx, a dropped connection or a timeout is retried
with a doubling pause; a service that cannot be reached (no such host, nobody listening) or keeps
failing raises :class:`PubTatorUnavailable`, and the caller goes on with the dictionaries.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from fastbmrag import config
from fastbmrag.errors import FastbmragError
from fastbmrag.util.closing import Closing
from fastbmrag.util.wording import printable

log = logging.getLogger(__name__)

MAX_IDS = 100  # ids per request, NCBI's limit
MIN_INTERVAL = 1 / 3  # seconds between two requests of this process: three a second
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_TRIES = 4
DEFAULT_BACKOFF = 1.0
MAX_BACKOFF = 30.0
NOT_YET_RECHECK = timedelta(hours=20)  # an id NCBI had not annotated is asked again after this
CACHE_FILENAME = "pubtator_cache.sqlite"

# PubTator3's annotation types and the entity types of this project they ground.
TYPES = {
    "Gene": "gene",
    "Disease": "disease",
    "Chemical": "chemical",
    "Variant": "variant",
    "Mutation": "variant",
    "DNAMutation": "variant",
    "ProteinMutation": "variant",
    "SNP": "variant",
}

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_THROTTLE = threading.Lock()
_last_request = [0.0]


class PubTatorUnavailable(FastbmragError):
    """The PubTator3 service could not be reached or kept failing: ground with the dictionaries."""


@dataclass(frozen=True, slots=True)
class Annotation:
    """One annotated mention: its type (this project's: gene, disease, chemical, variant), the
    id as PubTator3 writes it, the text, and where: the passage type and document offset."""

    type: str
    identifier: str
    text: str
    offset: int
    passage: str  # "title", "abstract", or a full-text passage type ("paragraph" ...)
    name: str = ""  # the gene's symbol PubTator3 gives (infons.name), where it gives one


@dataclass(frozen=True, slots=True)
class Document:
    pmid: str
    pmcid: str
    annotations: tuple[Annotation, ...] = ()


@dataclass
class PubTatorReport:
    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0
    cached: int = 0  # ids answered from the cache
    not_yet: int = 0  # ids NCBI has not annotated yet


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _identifier(kind: str, infons: dict[str, Any]) -> str:
    """The id of an annotation as PubTator3 writes it: ``identifier``, else ``normalized_id``
    (an integer or a string); a variant's rs id or HGNC name among its fields."""
    ident = _text(infons.get("identifier")) or _text(infons.get("normalized_id"))
    if ident in ("-", "None", "null"):
        return ""
    if kind != "variant":
        ids = {i.strip() for i in ident.replace(",", ";").split(";") if i.strip()}
        return ids.pop() if len(ids) == 1 else ""  # several ids for one mention: none is chosen
    fields = dict(
        part.split(":", 1) for part in ident.split(";") if ":" in part
    )  # "tmVar:...;HGVS:p.V600E;VariantGroup:0;RS#:113488022"
    if fields.get("RS#"):
        return f"rs{fields['RS#']}"
    if fields.get("HGVS"):
        return fields["HGVS"]
    return ident


def parse_documents(data: Any) -> list[Document]:
    """The documents of a BioC JSON answer (``{"PubTator3": [...]}``, or one document)."""
    if isinstance(data, dict) and isinstance(data.get("PubTator3"), list):
        docs = data["PubTator3"]
    elif isinstance(data, list):
        docs = data
    elif isinstance(data, dict) and "passages" in data:
        docs = [data]
    else:
        raise ValueError("not a PubTator3 BioC JSON answer")
    out = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        pmid, _, pmcid = _text(doc.get("_id") or doc.get("id")).partition("|")
        infons = doc.get("infons") or {}
        pmcid = pmcid if pmcid.upper().startswith("PMC") else _text(infons.get("article-id_pmc"))
        if pmcid and not pmcid.upper().startswith("PMC"):
            pmcid = f"PMC{pmcid}"
        pmid = pmid if pmid.isdigit() else _text(infons.get("article-id_pmid"))
        anns = []
        for passage in doc.get("passages") or ():
            where = _text((passage.get("infons") or {}).get("type")) or "paragraph"
            for ann in passage.get("annotations") or ():
                a_infons = ann.get("infons") or {}
                kind = TYPES.get(_text(a_infons.get("type")))
                locations = ann.get("locations") or [{}]
                if kind is None or not _text(ann.get("text")):
                    continue
                anns.append(
                    Annotation(
                        kind,
                        _identifier(kind, a_infons),
                        _text(ann.get("text")),
                        int(locations[0].get("offset") or 0),
                        where.lower(),
                        _text(a_infons.get("name")),
                    )
                )
        out.append(Document(pmid, pmcid.upper(), tuple(anns)))
    return out


def document_json(doc: Document) -> str:
    return json.dumps(
        {"pmid": doc.pmid, "pmcid": doc.pmcid,
         "annotations": [[a.type, a.identifier, a.text, a.offset, a.passage, a.name]
                         for a in doc.annotations]},
        ensure_ascii=False,
    )  # fmt: skip


def document_from_json(text: str) -> Document:
    d = json.loads(text)
    return Document(d["pmid"], d["pmcid"], tuple(Annotation(*a) for a in d["annotations"]))


@dataclass(frozen=True, slots=True)
class Request:
    """What to ask for one paper: by PMID (``full``: with the PMC full text) or by PMCID."""

    kind: str  # "pmid" | "pmid-full" | "pmcid"
    id: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


def request_for(pmid: str, pmcid: str, *, full: bool) -> Request | None:
    """A paper's request: by PMID where it has one, else by PMCID; None without either."""
    pmid, pmcid = pmid.strip(), pmcid.strip().upper()
    if pmid.isdigit():
        return Request("pmid-full" if full and pmcid else "pmid", pmid)
    if pmcid.startswith("PMC") and pmcid[3:].isdigit():
        return Request("pmcid", pmcid)
    return None


class AnnotationCache(Closing):
    """One SQLite file: request key -> the document (or none yet) and when it was fetched."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._said = False  # a write failure, warned once
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        with self._conn:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, fetched TEXT NOT NULL, "
                "document TEXT)"
            )

    @classmethod
    def open(cls, path: Path) -> AnnotationCache | None:
        """The cache at ``path``. A file that is no cache is moved aside (``.broken``) and a new
        one made; where none can be made (a folder there, no permission), annotations are
        fetched without one. Each with one warning."""
        try:
            return cls(path)
        except (sqlite3.Error, OSError) as err:
            why = f"{type(err).__name__}: {err}"
        if path.is_file():
            aside = path.with_name(path.name + ".broken")
            try:
                os.replace(path, aside)
                cache = cls(path)
            except (sqlite3.Error, OSError):
                pass
            else:
                log.warning("The PubTator3 cache %s could not be read (%s): moved to %s, and a "
                            "new one made", path, why, aside)  # fmt: skip
                return cache
        log.warning("The PubTator3 cache %s cannot be used (%s): annotations are fetched "
                    "without it", path, why)  # fmt: skip
        return None

    def close(self) -> None:
        self._conn.close()

    def get(self, key: str, *, now: datetime) -> tuple[bool, Document | None]:
        """(known, document): known is False when the key was never fetched, or fetched without
        a document longer ago than :data:`NOT_YET_RECHECK`, or its row cannot be read."""
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT fetched, document FROM documents WHERE key = ?", (key,)
                ).fetchone()
            if row is None:
                return False, None
            if row[1] is None:
                return now - datetime.fromisoformat(row[0]) < NOT_YET_RECHECK, None
            return True, document_from_json(row[1])
        except (sqlite3.Error, ValueError, TypeError, KeyError):  # a damaged row: fetch it again
            return False, None

    def put(self, items: Iterable[tuple[str, Document | None]], *, now: datetime) -> None:
        stamp = now.isoformat(timespec="seconds")
        try:
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO documents (key, fetched, document) VALUES (?, ?, ?)",
                    [(k, stamp, None if d is None else document_json(d)) for k, d in items],
                )
        except sqlite3.Error as err:  # a full disk, a read-only file: the run goes on uncached
            if not self._said:
                log.warning("The PubTator3 cache %s cannot be written (%s): annotations are not "
                            "kept for the next run", self.path, err)  # fmt: skip
                self._said = True


@dataclass
class PubTatorSettings:
    url: str = config.DEFAULT_PUBTATOR_URL
    timeout: float = DEFAULT_TIMEOUT
    max_tries: int = DEFAULT_MAX_TRIES
    backoff: float = DEFAULT_BACKOFF

    @classmethod
    def resolve(cls, url: str | None = None) -> PubTatorSettings:
        base = config.setting(url, config.ENV_PUBTATOR_URL, config.DEFAULT_PUBTATOR_URL) or ""
        config.checked_url(base, config.ENV_PUBTATOR_URL, config.DEFAULT_PUBTATOR_URL)
        return cls(url=base.rstrip("/"))


@dataclass
class PubTatorClient(Closing):
    """Annotations of papers, from the cache or NCBI, :data:`MAX_IDS` ids a request."""

    settings: PubTatorSettings = field(default_factory=PubTatorSettings)
    cache: AnnotationCache | None = None
    sleep: Callable[[float], None] = time.sleep
    report: PubTatorReport = field(default_factory=PubTatorReport)
    now: Callable[[], datetime] = lambda: datetime.now(UTC)

    def __post_init__(self) -> None:
        self._http = httpx.Client(
            timeout=self.settings.timeout,
            headers={"User-Agent": f"fastbmrag/{config.__version__}"},
            follow_redirects=True,
        )

    def close(self) -> None:
        """Close the connections and the cache."""
        self._http.close()
        if self.cache is not None:
            self.cache.close()

    def documents(
        self, requests: Sequence[Request], *, refresh: bool = False
    ) -> dict[str, Document | None]:
        """Request key -> the document, or None where NCBI has not annotated the paper yet.
        ``refresh``: ask again for the ids cached as not annotated yet, however recent."""
        now = self.now()
        out: dict[str, Document | None] = {}
        todo: dict[str, list[Request]] = {}
        for req in dict.fromkeys(requests):
            if self.cache is not None:
                known, doc = self.cache.get(req.key, now=now)
                if known and not (refresh and doc is None):
                    out[req.key] = doc
                    self.report.cached += 1
                    continue
            todo.setdefault(req.kind, []).append(req)
        for kind, reqs in todo.items():
            for i in range(0, len(reqs), MAX_IDS):
                batch = reqs[i : i + MAX_IDS]
                found = self._fetch(kind, [r.id for r in batch])
                got = [(r.key, found.get(r.id)) for r in batch]
                self.report.not_yet += sum(d is None for _, d in got)
                if self.cache is not None:
                    self.cache.put(got, now=now)
                out.update(got)
        return out

    def reply(self, kind: str, ids: list[str]) -> bytes:
        """NCBI's reply, as sent, to one request for at most :data:`MAX_IDS` ids of ``kind``
        ("pmid", "pmid-full" or "pmcid")."""
        base = self.settings.url
        if kind == "pmcid":
            url, params = f"{base}/publications/pmc_export/biocjson", {"pmcids": ",".join(ids)}
        else:
            url, params = f"{base}/publications/export/biocjson", {"pmids": ",".join(ids)}
            if kind == "pmid-full":
                params["full"] = "true"
        return self._get(url, params)

    def _fetch(self, kind: str, ids: list[str]) -> dict[str, Document]:
        base = self.settings.url
        data = self.reply(kind, ids)
        try:
            docs = parse_documents(json.loads(data) if data.strip() else {"PubTator3": []})
        except (ValueError, TypeError, AttributeError) as err:  # not JSON, or not its shape
            raise PubTatorUnavailable(
                f"it answered something that is not BioC JSON as it writes it (beginning "
                f"{printable(data[:60].decode('utf-8', 'replace'))!r}); check "
                f"{config.ENV_PUBTATOR_URL} ({base})"
            ) from err
        return {(d.pmcid if kind == "pmcid" else d.pmid): d for d in docs}

    def _get(self, url: str, params: dict[str, str]) -> bytes:
        s = self.settings
        host = urlsplit(url).netloc
        reason = ""
        for attempt in range(1, s.max_tries + 1):
            wait: float | None = None
            _throttle()
            self.report.requests += 1
            try:
                status, headers, body = self._get_once(url, params)
            except httpx.ConnectError as err:  # nobody there, or no such host: not transient
                if isinstance(err.__cause__ or err.__context__, socket.gaierror) or (
                    "Name or service not known" in str(err)
                ):
                    raise PubTatorUnavailable(f"cannot resolve {host}") from err
                raise PubTatorUnavailable(f"cannot connect to {host}: {err}") from err
            except httpx.TransportError as err:  # a timeout, a dropped connection
                reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
            else:
                if status == 200:
                    return body
                if status not in _RETRY_STATUS:
                    raise PubTatorUnavailable(
                        f"PubTator3 answered HTTP {status} at {url}; check "
                        f"{config.ENV_PUBTATOR_URL}"
                    )
                reason = f"HTTP {status}"
                wait = _retry_after(headers.get("Retry-After"))
            if attempt == s.max_tries:
                break
            pause = min(wait if wait is not None else s.backoff * 2 ** (attempt - 1), MAX_BACKOFF)
            self.report.retries += 1
            log.info("PubTator3 %s: %s; retry %d in %.1f s", host, reason, attempt, pause)
            self.sleep(pause)
        raise PubTatorUnavailable(f"{host} failed {s.max_tries} times ({reason})")

    def _get_once(self, url: str, params: dict[str, str]) -> tuple[int, httpx.Headers, bytes]:
        """One request, whole within the timeout (connect and every read together): a server
        that trickles its reply is given up at the deadline, not kept while each byte comes in
        time. Not retried: a server that did not answer in that long would not sooner."""
        deadline = time.monotonic() + self.settings.timeout
        with self._http.stream("GET", url, params=params) as resp:
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if time.monotonic() > deadline:
                    raise PubTatorUnavailable(
                        f"{urlsplit(url).netloc} did not send its reply within "
                        f"{self.settings.timeout:g} s"
                    )
            return resp.status_code, resp.headers, bytes(body)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _throttle() -> None:
    """At most three requests a second from this process, as NCBI asks."""
    with _THROTTLE:
        pause = _last_request[0] + MIN_INTERVAL - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        _last_request[0] = time.monotonic()
