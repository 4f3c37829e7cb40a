"""The PubMed E-utilities client (:class:`PubMedClient`, through Biopython's ``Bio.Entrez``) and
the PMC full-text service: search, fetch, full text, retracted PMIDs; its settings
(:class:`FetchSettings`) and what a fetch did (:class:`FetchReport`). The flow that uses it is
:func:`fastbmrag.papers.fetch.fetch_papers`.

Pointing ``Bio.Entrez`` elsewhere: Biopython (1.83-1.88 checked) writes the
NCBI URL inside each function (``Entrez.esearch`` has it as a local
``cgi = "https://eutils.ncbi.nlm.nih.gov/..."``), so there is no module
setting to change. Requests are therefore built with Entrez's own
``_build_request(cgi, params)`` for the configured base URL -- which adds
``tool``/``email``/``api_key`` exactly as ``Entrez.esearch`` does -- and sent
through ``Entrez._open``, which applies NCBI's rate limit (one request per
0.37 s, per 0.1 s when the request carries an ``api_key``; shared by every
Entrez call in the process). ``tool``, ``email`` and ``api_key`` go into every
request's parameters rather than the ``Entrez`` module globals, so nothing
global changes.

Retries: ``Entrez._open`` retries an HTTP 429 or 5xx at once, with no pause,
and sleeps 15 s after a connection error (``Entrez.max_tries`` = 3). An
immediate retry after a 429 asks for another 429, so each call here runs with
``Entrez.max_tries = 1`` (set and restored under a lock) and this module
retries itself: 429, 5xx, connection errors and timeouts, up to
``max_tries`` attempts, pausing ``backoff * 2**n`` seconds (or the server's
``Retry-After``), capped at ``max_backoff``. Each retry goes through
Entrez's throttle again. Entrez's ``urlopen`` has no timeout, so the socket
default timeout is set to ``timeout`` for the duration of each call.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import TypeVar
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit

from lxml import etree

from fastbmrag import config
from fastbmrag.errors import ConfigError, FetchError, InputError
from fastbmrag.papers.jats import parse_jats
from fastbmrag.papers.medline import parse_medline
from fastbmrag.papers.model import Paper
from fastbmrag.papers.report import ReadReport
from fastbmrag.util.closing import Closing
from fastbmrag.util.wording import option_named

log = logging.getLogger(__name__)

DEFAULT_TOOL = "fastbmrag"
DEFAULT_BATCH = 200
DEFAULT_MAX_TRIES = 5
DEFAULT_BACKOFF = 2.0
DEFAULT_MAX_BACKOFF = 60.0
DEFAULT_TIMEOUT = 60.0
DEFAULT_DATETYPE = "edat"
RETRACTION_BATCH = 200  # PMIDs per search for retracted ones
ESEARCH_CAP = 9_999  # ESearch pages only through the first 9,999 hits of a search
ESEARCH_PAGE = 9_999
EARLIEST = date(1781, 1, 1)  # older than the oldest PubMed record

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_ENTREZ_LOCK = threading.Lock()

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """Where and how to fetch. Build with :meth:`resolve` (flag > environment > default)."""

    email: str
    api_key: str | None = None
    tool: str = DEFAULT_TOOL
    eutils_url: str = config.DEFAULT_EUTILS_URL
    fulltext_url: str = config.DEFAULT_FULLTEXT_URL
    full_text: bool = True
    batch_size: int = DEFAULT_BATCH
    max_tries: int = DEFAULT_MAX_TRIES
    backoff: float = DEFAULT_BACKOFF
    max_backoff: float = DEFAULT_MAX_BACKOFF
    timeout: float = DEFAULT_TIMEOUT
    esearch_cap: int = ESEARCH_CAP
    esearch_page: int = ESEARCH_PAGE

    @classmethod
    def resolve(
        cls,
        *,
        email: str | None = None,
        api_key: str | None = None,
        eutils_url: str | None = None,
        fulltext_url: str | None = None,
        **overrides: object,
    ) -> FetchSettings:
        """Settings from flags, then ``NCBI_EMAIL``/``NCBI_API_KEY``/``FASTBMRAG_*_URL``, then defaults."""
        email = config.setting(email, config.ENV_NCBI_EMAIL) or ""
        if email and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
            raise ConfigError(
                f"{email!r} is not an email address: NCBI asks for a contact it can write to "
                f"({option_named('email')} you@example.org)"
            )
        if "@" not in email:
            raise ConfigError(
                "NCBI asks every E-utilities user for a contact email: pass "
                f"{option_named('email')} you@example.org or set {config.ENV_NCBI_EMAIL}"
            )
        eutils = config.setting(eutils_url, config.ENV_EUTILS_URL, config.DEFAULT_EUTILS_URL)
        config.checked_url(
            eutils or "",
            f"{option_named('eutils_url')} / {config.ENV_EUTILS_URL}",
            config.DEFAULT_EUTILS_URL,
        )
        eutils = (eutils or "").rstrip("/")
        fulltext = (
            config.setting(fulltext_url, config.ENV_FULLTEXT_URL, config.DEFAULT_FULLTEXT_URL) or ""
        )
        config.checked_url(
            fulltext.replace("{pmcid}", "PMC1"),
            f"{option_named('fulltext_url')} / {config.ENV_FULLTEXT_URL}",
            config.DEFAULT_FULLTEXT_URL,
        )
        if "{pmcid}" not in fulltext:  # a Europe PMC REST base, e.g. a mirror
            fulltext = fulltext.rstrip("/") + "/{pmcid}/fullTextXML"
        settings = cls(
            email=email,
            api_key=config.setting(api_key, config.ENV_NCBI_API_KEY),
            eutils_url=eutils,
            fulltext_url=fulltext,
        )
        return replace(settings, **overrides)  # type: ignore[arg-type]


@dataclass
class FetchReport:
    """What one fetch did; filled while :func:`fetch_papers` runs."""

    found: int = 0  # PMIDs the search returned
    known: int = 0  # left out because they are already indexed (the skip set)
    fetched: int = 0  # papers yielded
    full_text: int = 0  # ... of which with main text
    no_full_text: int = 0  # had a PMCID but the service has no text (404)
    unusable: list[str] = field(default_factory=list)  # no abstract, a book, or not returned
    failed: dict[str, str] = field(default_factory=dict)  # PMID -> why it was left out
    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0

    def line(self) -> str:
        parts = [
            f"{self.found:,} found",
            f"{self.known:,} already indexed",
            f"{self.fetched:,} fetched ({self.full_text:,} with full text)",
        ]
        if self.unusable:
            parts.append(f"{len(self.unusable):,} without abstract or not returned")
        if self.failed:
            parts.append(f"{len(self.failed):,} failed")
        return ", ".join(parts)


class _Retry(Exception):
    """A transient failure: retry after ``wait`` seconds (or the backoff)."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


def _unresolved(url: str, err: object) -> str:
    host = urlsplit(url).hostname or url
    return (
        f"Cannot resolve {host} ({err}): this machine's network or DNS is down, not the "
        "service; check the connection and try again"
    )


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: fall back to the backoff


@contextlib.contextmanager
def _entrez_call(timeout: float) -> Iterator[None]:
    """One Entrez request at a time, with Entrez's own retries off and a socket timeout."""
    from Bio import Entrez  # imported where PubMed is asked, not by every command

    with _ENTREZ_LOCK:
        saved_tries, saved_timeout = Entrez.max_tries, socket.getdefaulttimeout()
        Entrez.max_tries = 1
        socket.setdefaulttimeout(timeout)
        try:
            yield
        finally:
            Entrez.max_tries = saved_tries
            socket.setdefaulttimeout(saved_timeout)


class PubMedClient(Closing):
    """ESearch / EFetch through ``Bio.Entrez`` and full text over HTTP, with retries."""

    def __init__(
        self, settings: FetchSettings, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        import httpx
        from Bio import Entrez

        if not hasattr(Entrez, "_build_request"):
            raise ConfigError("fastbmrag fetch needs biopython >= 1.83: pip install -U biopython")
        self.settings = settings
        self.report = FetchReport()
        self._sleep = sleep
        self._http = httpx.Client(
            timeout=settings.timeout,
            follow_redirects=True,
            headers={"User-Agent": f"{settings.tool}/{config.__version__} (mailto:{settings.email})"},
        )

    def close(self) -> None:
        self._http.close()

    # --- transport ---------------------------------------------------------------------------

    def _retrying(self, what: str, host: str, call: Callable[[], T]) -> T:
        s = self.settings
        for attempt in range(1, s.max_tries + 1):
            self.report.requests += 1
            try:
                return call()
            except _Retry as err:
                if attempt == s.max_tries:
                    raise FetchError(
                        f"{what} failed {s.max_tries} times ({err.reason}); {host} may be down "
                        "or rate-limiting: try again later"
                        + (
                            f", or set {config.ENV_NCBI_API_KEY} for a higher limit"
                            if err.reason == "HTTP 429" and not s.api_key
                            else ""
                        )
                    ) from err
                pause = err.wait if err.wait is not None else s.backoff * 2 ** (attempt - 1)
                pause = min(pause, s.max_backoff)
                self.report.retries += 1
                log.info("%s: %s; retry %d in %.1f s", what, err.reason, attempt, pause)
                self._sleep(pause)
        raise AssertionError("unreachable")

    def eutils(self, tool: str, params: dict[str, str | int]) -> bytes:
        """One E-utilities request (``esearch``, ``efetch``...); the response body."""
        s = self.settings
        cgi = f"{s.eutils_url}/{tool}.fcgi"
        full = {k: str(v) for k, v in params.items()}
        full.update(tool=s.tool, email=s.email)
        if s.api_key:
            full["api_key"] = s.api_key

        from Bio import Entrez

        def call() -> bytes:
            request = Entrez._build_request(cgi, dict(full))
            try:
                with _entrez_call(s.timeout):
                    handle = Entrez._open(request)
                    try:
                        data = handle.read()
                    finally:
                        handle.close()
            except HTTPError as err:
                retry_after = _retry_after(err.headers.get("Retry-After") if err.headers else None)
                err.close()
                if err.code in _RETRY_STATUS:
                    raise _Retry(f"HTTP {err.code}", retry_after) from err
                raise FetchError(
                    f"PubMed {tool} answered HTTP {err.code} {err.reason}; check the query "
                    f"and the E-utilities URL {s.eutils_url}"
                ) from err
            except (URLError, OSError, http.client.HTTPException) as err:
                reason = getattr(err, "reason", None) or err
                if isinstance(reason, socket.gaierror):  # no name resolution: not PubMed's fault
                    raise FetchError(_unresolved(s.eutils_url, reason)) from err
                raise _Retry(f"connection error: {reason}") from err
            return data if isinstance(data, bytes) else data.encode("utf-8")

        return self._retrying(f"PubMed {tool}", urlsplit(s.eutils_url).netloc, call)

    def full_text_xml(self, pmcid: str) -> bytes | None:
        """The JATS XML of an article, or None when the service has no text for it (404)."""
        s = self.settings
        url = s.fulltext_url.format(pmcid=pmcid)
        import httpx

        def call() -> bytes | None:
            try:
                resp = self._http.get(url)
            except httpx.ConnectError as err:
                cause = err.__cause__ or err.__context__
                if isinstance(cause, socket.gaierror) or "Name or service not known" in str(err):
                    raise FetchError(_unresolved(url, err)) from err
                raise _Retry(f"connection error: {err}") from err
            except httpx.TransportError as err:
                raise _Retry(f"connection error: {err}") from err
            if resp.status_code == 404:
                return None
            if resp.status_code in _RETRY_STATUS:
                raise _Retry(
                    f"HTTP {resp.status_code}", _retry_after(resp.headers.get("Retry-After"))
                )
            if resp.status_code != 200:
                raise FetchError(
                    f"Full text of {pmcid}: HTTP {resp.status_code} from {url}; "
                    f"check the full-text URL ({config.ENV_FULLTEXT_URL})"
                )
            return resp.content

        return self._retrying(f"Full text of {pmcid}", urlsplit(url).netloc, call)

    # --- E-utilities -------------------------------------------------------------------------

    def esearch(
        self,
        query: str,
        *,
        mindate: date | None = None,
        maxdate: date | None = None,
        datetype: str = DEFAULT_DATETYPE,
        retstart: int = 0,
        retmax: int = 0,
    ) -> tuple[int, list[str]]:
        """One ESearch page: (total count, PMIDs of this page)."""
        params: dict[str, str | int] = {
            "db": "pubmed",
            "term": query,
            "retstart": retstart,
            "retmax": retmax,
        }
        if mindate or maxdate:
            params.update(
                datetype=datetype,
                mindate=(mindate or EARLIEST).strftime("%Y/%m/%d"),
                maxdate=(maxdate or date.today()).strftime("%Y/%m/%d"),
            )
        data = self.eutils("esearch", params)
        try:
            root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False))
        except etree.XMLSyntaxError as err:
            raise FetchError(
                f"PubMed esearch answered something that is not XML ({data[:80]!r}); "
                f"check the E-utilities URL {self.settings.eutils_url}"
            ) from err
        error = root.findtext("ERROR")
        if error:
            raise FetchError(f"PubMed rejected the search: {error.strip()}; check {option_named('query')}")
        for phrase in root.iterfind("ErrorList/PhraseNotFound"):
            log.warning("PubMed: phrase not found: %s", phrase.text)
        count_text = root.findtext("Count")
        if count_text is None:
            raise FetchError(
                f"PubMed esearch answered without a Count ({data[:80]!r}); "
                f"check the E-utilities URL {self.settings.eutils_url}"
            )
        pmids = [(i.text or "").strip() for i in root.iterfind("IdList/Id")]
        return int(count_text), [p for p in pmids if p]

    def search(
        self,
        query: str,
        *,
        mindate: date | None = None,
        maxdate: date | None = None,
        datetype: str = DEFAULT_DATETYPE,
        limit: int | None = None,
    ) -> list[str]:
        """Every PMID matching ``query`` in the window (at most ``limit``), newest first."""
        out: list[str] = []
        seen: set[str] = set()
        for pmid in self._search(query, mindate, maxdate, datetype, limit):
            if pmid not in seen:
                seen.add(pmid)
                out.append(pmid)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def _search(
        self,
        query: str,
        mindate: date | None,
        maxdate: date | None,
        datetype: str,
        limit: int | None,
    ) -> Iterator[str]:
        s = self.settings
        want = s.esearch_cap if limit is None else min(limit, s.esearch_cap)
        page = min(s.esearch_page, want)
        count, ids = self.esearch(
            query, mindate=mindate, maxdate=maxdate, datetype=datetype, retmax=page
        )
        if count > s.esearch_cap and (limit is None or limit > s.esearch_cap):
            lo, hi = mindate or EARLIEST, maxdate or date.today()
            if lo < hi:  # too many for one search: split the window by date
                mid = lo + (hi - lo) // 2
                log.info("%d hits from %s to %s: splitting the window", count, lo, hi)
                yield from self._search(query, mid + timedelta(days=1), hi, datetype, limit)
                yield from self._search(query, lo, mid, datetype, limit)
                return
            log.warning(
                "PubMed lists %d papers for %s alone; only the first %d can be fetched",
                count,
                lo,
                s.esearch_cap,
            )
        yield from ids
        start = len(ids)
        total = min(count, want)
        while start < total and ids:
            _, ids = self.esearch(
                query,
                mindate=mindate,
                maxdate=maxdate,
                datetype=datetype,
                retstart=start,
                retmax=min(page, total - start),
            )
            yield from ids
            start += len(ids)

    def retracted(self, pmids: list[str]) -> list[str]:
        """Those of ``pmids`` that PubMed now lists as retracted (the publication type
        "Retracted Publication"), asked :data:`RETRACTION_BATCH` PMIDs at a time."""
        out: list[str] = []
        for i in range(0, len(pmids), RETRACTION_BATCH):
            batch = pmids[i : i + RETRACTION_BATCH]
            ids = " OR ".join(f"{p}[uid]" for p in batch)
            _, found = self.esearch(f'"retracted publication"[pt] AND ({ids})', retmax=len(batch))
            out += [p for p in found if p in set(batch)]
        return out

    def study_labels(self, pmids: list[str]) -> dict[str, Paper]:
        """The records of ``pmids`` that now say something of their study (publication types
        naming a design, MeSH check tags), :data:`RETRACTION_BATCH` PMIDs a request."""
        out: dict[str, Paper] = {}
        for i in range(0, len(pmids), RETRACTION_BATCH):
            data = self.efetch(pmids[i : i + RETRACTION_BATCH])
            try:
                for paper in parse_medline(data, ReadReport()):
                    if paper.design_from or paper.organisms_from:
                        out[paper.pmid] = paper
            except InputError as err:
                raise FetchError(
                    f"PubMed efetch answered malformed MEDLINE XML ({err}); try again later"
                ) from err
        return out

    def efetch(self, pmids: list[str]) -> bytes:
        """MEDLINE XML (``PubmedArticleSet``) of these PMIDs."""
        return self.eutils(
            "efetch",
            {"db": "pubmed", "id": ",".join(pmids), "retmode": "xml", "rettype": "abstract"},
        )

    # --- papers ------------------------------------------------------------------------------

    def records(self, pmids: list[str]) -> Iterator[Paper]:
        """MEDLINE papers of these PMIDs, fetched in batches (no full text yet)."""
        size = max(1, self.settings.batch_size)
        for i in range(0, len(pmids), size):
            batch = pmids[i : i + size]
            data = self.efetch(batch)
            returned: set[str] = set()
            try:
                for paper in parse_medline(data, ReadReport()):
                    returned.add(paper.pmid)
                    yield paper
            except InputError as err:
                raise FetchError(
                    f"PubMed efetch answered malformed MEDLINE XML ({err}); try again later"
                ) from err
            # Citations without an abstract (the reader logs each), book chapters, deleted
            # or unknown PMIDs: nothing to index.
            self.report.unusable.extend(p for p in batch if p not in returned)

    def add_full_text(self, paper: Paper) -> Paper:
        """The paper with its main text from the full-text service, when there is one."""
        if not paper.pmcid or not self.settings.full_text:
            return paper
        data = self.full_text_xml(paper.pmcid)
        if data is None:
            self.report.no_full_text += 1
            log.debug("%s: no full text for %s", paper.pmid, paper.pmcid)
            return paper
        try:
            full = parse_jats(data)
        except InputError as err:
            log.warning(
                "%s: the full text of %s is unusable (%s); abstract only",
                paper.pmid,
                paper.pmcid,
                err,
            )
            return paper
        paper.paragraphs = full.paragraphs
        if not paper.abstract:
            paper.abstract = full.abstract
        if not paper.doi:
            paper.doi = full.doi
        return paper
