"""Keep a collection current with PubMed: fetch what is new for a query and index it.

:func:`sync_collection` is one idempotent step, safe to run from cron:

1. The caller has opened the collection for writing, which takes the collection lock
   (shared with ``update``): a second sync or update exits at once with
   :class:`~fastbmrag.errors.LockedError` (exit 3); a lock left by a dead process is
   released by the kernel (``flock``), so the next run simply takes it.
2. The window: ``--since`` / ``--days`` when given; otherwise from the last successful
   sync of this (collection, query), recorded in the ledger, **minus one day of
   overlap** (PubMed dates are whole days in US Eastern time, so a record entered late on
   the last day is not lost); on the first run, the last :data:`DEFAULT_SYNC_DAYS`
   days. The window is on the Entrez date (the day a record entered PubMed), up to
   today, both ends inclusive.
3. PMIDs (and PMCIDs) already *done* in the ledger are dropped before anything is
   fetched, so an overlap, a rerun or a resumed run costs one ESearch, not EFetches.
4. The new papers are indexed exactly as ``update`` indexes them (the ``index``
   callable: :func:`fastbmrag.index.index_papers` with the same options).
5. The last-sync mark (the ledger's ``last_date`` for the query) moves to today **only
   when the run succeeded**: nothing failed to fetch and nothing failed to index. After a
   partial failure (exit 1) the mark stays and the ledger notes the window's start
   (``retry_from``), so the next run -- with or without ``--since`` -- searches from the
   same date again: the papers done in the meantime are skipped (no EFetch), and the
   failed ones are fetched and retried. A paper that keeps failing therefore keeps the
   window open and the exit code at 1 until it is fixed or deleted (``fastbmrag status``
   lists it). An interrupted run (Ctrl-C, a killed process, a crash) behaves the same:
   ``retry_from`` is written before anything is fetched, every paper the run committed
   is kept and skipped next time, and the next run searches the same window.
6. Retractions: every run then asks PubMed which of the collection's PMIDs are now
   retracted (a search on the "Retracted Publication" type restricted to those PMIDs,
   :data:`~fastbmrag.papers.eutils.RETRACTION_BATCH` at a time) and flags the edges of the
   newly retracted papers, without a model call (a dry run only counts them).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Protocol

from fastbmrag.errors import EXIT_OK, EXIT_PARTIAL, InputError
from fastbmrag.papers.eutils import DEFAULT_DATETYPE, FetchReport, FetchSettings, PubMedClient
from fastbmrag.papers.fetch import date_window, fetch_papers
from fastbmrag.papers.model import Paper
from fastbmrag.util.wording import counted, option_named

log = logging.getLogger(__name__)

DEFAULT_SYNC_DAYS = 30  # first sync of a query without --since / --days
SYNC_OVERLAP_DAYS = 1  # later syncs start this many days before the last mark


class IndexResult(Protocol):
    """What the ``index`` callable returns (:class:`fastbmrag.index.RunSummary`)."""

    failed: int
    indexed: int

    @property
    def exit_code(self) -> int: ...

    def line(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class SyncLedger(Protocol):
    """The part of :class:`fastbmrag.store.collection.Collection` that sync uses (its ledger:
    paper states and the last-sync marks, through ``ledger``)."""

    @property
    def ledger(self) -> Any: ...

    def retraction_candidates(self) -> list[str]: ...

    def mark_retracted(self, paper_ids: list[str], source: str) -> list[str]: ...

    def relabel_candidates(self) -> list[str]: ...

    def relabel(self, records: dict[str, Paper]) -> list[str]: ...


class DoneSet:
    """``pmid in DoneSet(collection)``: is that paper id done in the collection's ledger?"""

    def __init__(self, collection: SyncLedger) -> None:
        self.collection = collection

    def __contains__(self, paper_id: object) -> bool:
        if not isinstance(paper_id, str) or not paper_id:
            return False
        state = self.collection.ledger.paper_state(paper_id)
        return state is not None and state.status == "done"


@dataclass
class SyncResult:
    query: str
    mindate: date
    maxdate: date
    fetch: FetchReport
    index: IndexResult | None = None  # None when there was nothing new to index
    mark: str | None = None  # the last-sync mark after the run
    mark_moved: bool = False
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)
    newly_retracted: list[str] = field(default_factory=list)
    regrounded: int = 0  # papers not yet annotated at indexing, grounded on PubTator3 now
    reground_requests: int = 0  # the embedding requests that took (no chat call) ...
    reground_cached: int = 0  # ... and the texts the embedding cache answered
    run_id: int | None = None  # the ledger's run of this sync (its digest's)
    # papers whose records gained publication types or check tags: their edges relabelled
    relabelled: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.fetch.failed) + (self.index.failed if self.index is not None else 0)

    @property
    def exit_code(self) -> int:
        return EXIT_PARTIAL if self.failed else EXIT_OK

    def line(self) -> str:
        head = f"sync {self.query!r} {self.mindate}..{self.maxdate}: {self.fetch.line()}"
        body = self.index.line() if self.index is not None else "nothing new to index"
        if self.regrounded:
            body += (
                f"; {counted(self.regrounded, 'paper')} re-grounded on PubTator3 (no chat call; "
                f"{counted(self.reground_requests, 'embedding request')} to the model server, "
                f"{counted(self.reground_cached, 'text')} embedded from the cache)"
            )
        if self.relabelled:
            body += (
                f"; {counted(len(self.relabelled), 'paper')} relabelled from their records "
                "(design, organisms; no model call)"
            )
        if self.newly_retracted:
            body += (
                f"; {counted(len(self.newly_retracted), 'paper')} newly retracted (edges flagged)"
            )
        if self.dry_run:
            tail = "dry run: last-sync mark unchanged"
        elif self.mark_moved:
            tail = f"last-sync mark now {self.mark}"
        else:
            kept = f"kept at {self.mark}" if self.mark else "not set"
            tail = (
                f"last-sync mark {kept}: {self.failed:,} failed, "
                f"retried by the next run (from {self.mindate})"
            )
        return f"{head}; {body}; {tail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mindate": self.mindate.isoformat(),
            "maxdate": self.maxdate.isoformat(),
            "found": self.fetch.found,
            "already_indexed": self.fetch.known,
            "fetched": self.fetch.fetched,
            "with_full_text": self.fetch.full_text,
            "fetch_failed": dict(self.fetch.failed),
            "unusable": list(self.fetch.unusable),
            "index": self.index.to_dict() if self.index is not None else None,
            "newly_retracted": len(self.newly_retracted),
            "regrounded": self.regrounded,
            "relabelled": len(self.relabelled),
            "reground_requests": self.reground_requests,
            "reground_cached": self.reground_cached,
            "deleted": self.index.to_dict().get("deleted", 0) if self.index is not None else 0,
            "mark": self.mark,
            "mark_moved": self.mark_moved,
            "exit_code": self.exit_code,
            "line": self.line(),
        }


def sync_window(
    collection: SyncLedger,
    query: str,
    *,
    since: date | None = None,
    days: int | None = None,
    today: date | None = None,
) -> tuple[date, date, str | None]:
    """(mindate, maxdate, current mark) for this run; see the module docstring."""
    today = today or date.today()
    state = collection.ledger.syncs.get(query)
    mark: str | None = (state.last_date or None) if state is not None else None
    retry_from = state.info.get("retry_from") if state is not None else None
    lo, hi = date_window(since, days, today=today)
    if lo is not None and hi is not None:
        return lo, hi, mark
    if retry_from:  # the last run failed in part: search its window again
        return min(_ledger_date(query, retry_from), today), today, mark
    if mark:
        last = _ledger_date(query, mark)
        return min(last - timedelta(days=SYNC_OVERLAP_DAYS), today), today, mark
    return today - timedelta(days=DEFAULT_SYNC_DAYS), today, None


def _ledger_date(query: str, value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as err:
        raise InputError(
            f"The ledger's sync date for {query!r} is {value!r}, not YYYY-MM-DD; "
            f"pass {option_named('since')} to choose the window"
        ) from err


def sync_collection(
    collection: SyncLedger,
    query: str,
    settings: FetchSettings,
    index: Callable[[list[Paper]], IndexResult],
    *,
    since: date | None = None,
    days: int | None = None,
    today: date | None = None,
    dry_run: bool = False,
    sleep: Callable[[float], None] | None = None,
    reground: Callable[[], tuple[int, int, int]] | None = None,
) -> SyncResult:
    """Fetch what is new for ``query`` and index it with ``index``; move the mark on success.
    ``reground`` grounds the papers NCBI had not annotated yet (not in a dry run).

    ``collection`` must be open for writing (its lock held) unless ``dry_run``.
    ``index`` indexes a list of papers the way ``update`` does and returns its run
    summary, e.g. ``lambda papers: index_papers(papers, coll, llm, normalizer, options)``.
    """
    query = query.strip()
    if not query:
        raise InputError(
            f"The PubMed query is empty; pass {option_named('query')}, e.g. 'endometriosis[tiab]'"
        )
    today = today or date.today()
    mindate, maxdate, mark = sync_window(collection, query, since=since, days=days, today=today)
    log.info("sync %r: Entrez dates %s..%s (last mark %s)", query, mindate, maxdate, mark)
    if not dry_run:  # until this run succeeds, the next one starts from the same date
        collection.ledger.syncs.set(query, mark or "", retry_from=mindate.isoformat())

    kwargs: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
    with PubMedClient(settings, **kwargs) as client:
        papers = list(
            fetch_papers(
                client,
                query,
                mindate=mindate,
                maxdate=maxdate,
                datetype=DEFAULT_DATETYPE,
                skip=DoneSet(collection),
            )
        )
        report = client.report
    result = SyncResult(query, mindate, maxdate, report, mark=mark, dry_run=dry_run)
    if papers:
        result.index = index(papers)
    if reground is not None and not dry_run:
        result.regrounded, result.reground_requests, result.reground_cached = reground()
    with PubMedClient(settings, **kwargs) as client:
        found = client.retracted(collection.retraction_candidates())
    result.newly_retracted = found if dry_run else collection.mark_retracted(found, "pubmed")
    if dry_run:
        return result
    # the papers whose records now say their design or organisms: relabelled, no model call
    with PubMedClient(settings, **kwargs) as client:
        records = client.study_labels(collection.relabel_candidates())
    result.relabelled = collection.relabel(records)
    if result.failed == 0:
        collection.ledger.syncs.set(
            query,
            maxdate.isoformat(),
            mindate=mindate.isoformat(),
            found=report.found,
            fetched=report.fetched,
            indexed=result.index.indexed if result.index is not None else 0,
        )
        result.mark, result.mark_moved = maxdate.isoformat(), True
    else:
        collection.ledger.syncs.set(
            query,
            mark or "",
            retry_from=mindate.isoformat(),
            failed=result.failed,
        )
        log.warning(
            "sync %r: %d papers failed; the last-sync mark stays at %s and the next run "
            "searches from %s again",
            query,
            result.failed,
            mark or "(none)",
            mindate,
        )
    return result
