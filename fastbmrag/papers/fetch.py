"""PubMed search and fetch (NCBI E-utilities through Biopython's ``Bio.Entrez``) plus PMC full text.

Flow of :func:`fetch_papers`:

1. **ESearch** ``db=pubmed`` for the query, optionally limited to a date window
   (``mindate``/``maxdate``, inclusive, whole days). The window is on the
   **Entrez date** (``datetype=edat``: the day the record entered PubMed) by
   default, which is what "new since the last run" means; ``datetype=pdat``
   (publication date) is available for one-off fetches. PMIDs are collected
   with ``retstart`` paging (not ``usehistory``), so PMIDs already indexed can
   be dropped *before* anything is fetched. ESearch can page only through the
   first 9,999 hits of a search; a larger window is split in halves by date
   until each part fits.
2. **EFetch** the remaining PMIDs as MEDLINE XML in batches of 200 and read them
   with :func:`fastbmrag.papers.medline.parse_medline` (``paper_id`` = PMID; the
   PMCID comes from the record's ``ArticleIdList``). Citations without an
   abstract are left out, as every reader does.
3. **Full text**: for each record with a PMCID, GET the JATS XML from the
   full-text service (default Europe PMC
   ``https://www.ebi.ac.uk/europepmc/webservices/rest/{pmcid}/fullTextXML``)
   and take its main text (:func:`fastbmrag.papers.jats.parse_jats`). A 404
   (no open-access text) keeps the paper abstract-only, with no main text.

The client, its settings, rate limit and retries: :mod:`fastbmrag.papers.eutils`.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Iterator, Sized
from datetime import date, timedelta

from fastbmrag.errors import FetchError, InputError
from fastbmrag.papers.eutils import DEFAULT_DATETYPE, PubMedClient
from fastbmrag.papers.model import Paper
from fastbmrag.util.wording import option_named

log = logging.getLogger(__name__)


def date_window(
    since: date | None = None, days: int | None = None, *, today: date | None = None
) -> tuple[date | None, date | None]:
    """(mindate, maxdate) for ``--since`` / ``--days``; (None, None) when neither is given."""
    today = today or date.today()
    if since is not None and days is not None:
        raise InputError(f"Give {option_named('since')} or {option_named('days')}, not both")
    if days is not None:
        if days < 0:
            raise InputError(f"{option_named('days')} must be 0 or more, not {days}", field="days")
        return today - timedelta(days=days), today
    if since is not None:
        if since > today:
            raise InputError(
            f"{option_named('since')} {since} is in the future; give a past date (YYYY-MM-DD)",
            field="since",
        )
        return since, today
    return None, None


def fetch_papers(
    client: PubMedClient,
    query: str,
    *,
    mindate: date | None = None,
    maxdate: date | None = None,
    datetype: str = DEFAULT_DATETYPE,
    max_papers: int | None = None,
    skip: Container[str] = frozenset(),
) -> Iterator[Paper]:
    """Papers matching ``query`` (Entrez date in [mindate, maxdate]), with full text where available.

    ``skip`` holds PMIDs and PMCIDs already indexed: their PMIDs are dropped before
    EFetch, and a record whose PMCID is in it is dropped before its full text is fetched.
    A paper whose full text keeps failing after the retries is left out and listed in
    ``client.report.failed``. Progress and counts are in ``client.report``.
    """
    if not query.strip():
        raise InputError(
            f"The PubMed query is empty; pass {option_named('query')}, e.g. 'endometriosis[tiab]'"
        )
    if datetype not in ("edat", "pdat", "mdat"):
        raise InputError(f"Unknown date type {datetype!r}: use edat, pdat or mdat")
    report = client.report
    search_limit = max_papers if _is_empty(skip) else None
    pmids = client.search(
        query, mindate=mindate, maxdate=maxdate, datetype=datetype, limit=search_limit
    )
    report.found = len(pmids)
    new = [p for p in pmids if p not in skip]
    report.known = len(pmids) - len(new)
    if max_papers is not None:
        new = new[:max_papers]
    log.info("%s: %d PMIDs, %d new", query, len(pmids), len(new))
    for paper in client.records(new):
        if paper.pmcid and paper.pmcid in skip:
            report.known += 1
            continue
        try:
            paper = client.add_full_text(paper)
        except FetchError as err:
            report.failed[paper.pmid] = str(err)
            log.error("%s: left out: %s", paper.pmid, err)
            continue
        report.fetched += 1
        if paper.has_main_text:
            report.full_text += 1
        yield paper


def _is_empty(skip: Container[str]) -> bool:
    return isinstance(skip, Sized) and len(skip) == 0
