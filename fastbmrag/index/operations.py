"""The indexing operations of a workspace (:class:`fastbmrag.RAG`): the model server's
preflight, the collection opened for writing in the order a user wants its errors, indexing
papers (`update`), fetching from PubMed (`fetch`), syncing a PubMed query (`sync`) and
re-grounding the papers PubTator3 has annotated since."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fastbmrag.declared import options_of
from fastbmrag.errors import CollectionNotFound, ConfigError, FastbmragError, InputError
from fastbmrag.papers.model import Paper
from fastbmrag.store.collection import Collection
from fastbmrag.store.places import WRITE_FREE, check_space, ensure_creatable
from fastbmrag.util.wording import option_named

if TYPE_CHECKING:
    from typing import Unpack

    from fastbmrag.index import RunSummary, UpdateOptions
    from fastbmrag.keywords import UpdateKeywords
    from fastbmrag.papers.eutils import FetchReport, FetchSettings
    from fastbmrag.papers.pubtator import PubTatorClient
    from fastbmrag.papers.sync import SyncResult
    from fastbmrag.store.workspace import Workspace

log = logging.getLogger(__name__)
T = TypeVar("T")


def check_model_server(rag: Workspace) -> int:
    """Preflight with a client of its own that writes nothing: the server answers, the models
    are pulled. Returns the embedding size."""
    llm = rag.llm(cache=False)

    async def run() -> int:
        try:
            await llm.preflight()
            return await llm.embedding_dim()
        finally:
            await llm.aclose()

    return asyncio.run(run())


@contextlib.contextmanager
def open_for_writing(
    rag: Workspace, read_input: Callable[[], T], *, repair: bool = False, wait: float | None = None
) -> Iterator[tuple[Collection, T]]:
    """The collection opened for writing, with the errors in the order a user wants them.

    First the collection's name, then the lock of an existing collection (exit 3 at once)
    or, for a new one, whether its folder can be created (exit 2), then the model server,
    its models and the embedding size (exit 2), then ``read_input`` (bad input: exit 2),
    and only then is a new collection created: a run that cannot start leaves nothing on
    disk. ``repair``: as for :meth:`writer` (``update --force``).
    """
    s = rag.settings
    if not s.collection:
        raise ConfigError(f"No collection name: give {option_named('collection')}")
    with contextlib.ExitStack() as stack:
        coll = None
        if Collection.exists(s.working_dir, s.collection):
            coll = stack.enter_context(rag.writer(repair=repair, wait=wait))
        else:
            ensure_creatable(s.working_dir / s.collection)
            if not s.qdrant_url:  # the embedded store's files: checked before any work
                check_space(s.working_dir / s.collection, WRITE_FREE,
                            f"opening collection '{s.collection}' for writing")  # fmt: skip
        dim = check_model_server(rag)
        if coll is not None:
            coll.ensure_vector_size(dim)
        value = read_input()
        if coll is None:
            coll = stack.enter_context(rag.writer(create=True))
        yield coll, value


def update_options(rag: Workspace, options: dict[str, Any]) -> UpdateOptions:
    """:class:`UpdateOptions` from keyword options, with this object's settings: as many
    papers in flight as model requests (``concurrency`` per server), the token cap."""
    from fastbmrag.index import UpdateOptions

    return options_of(
        UpdateOptions,
        {
            "concurrency": rag.settings.concurrency * len(rag.settings.hosts),
            "num_predict": rag.settings.num_predict,
            **options,
        },
    )


def index(
    rag: Workspace,
    papers: Iterable[Paper],
    collection: Collection | None,
    options: UpdateOptions,
    *,
    progress: bool = False,
    total: int | None = None,
) -> RunSummary:
    """Index ``papers`` into an open ``collection`` (None: a dry run of a new collection)."""
    from fastbmrag.index import index_papers

    with contextlib.ExitStack() as stack:
        return index_papers(
            papers,
            collection,
            rag.llm(),
            rag.normalizer(),
            options,
            progress=progress,
            total=total,
            pubtator=stack.enter_context(pubtator(rag)) if grounds(rag, options) else None,
        )


def grounds(rag: Workspace, options: UpdateOptions) -> bool:
    """Whether a run grounds names on PubTator3 (not in a dry run, nor with no vocabularies)."""
    return options.pubtator and rag.settings.normalize and not options.dry_run


def pubtator(rag: Workspace) -> PubTatorClient:
    """A PubTator3 client with this working directory's cache of annotations."""
    from fastbmrag.papers.pubtator import (
        CACHE_FILENAME,
        AnnotationCache,
        PubTatorClient,
        PubTatorSettings,
    )

    cache = AnnotationCache.open(rag.working_dir / CACHE_FILENAME)
    return PubTatorClient(PubTatorSettings.resolve(), cache)


def insert_paper(
    rag: Workspace, papers: Any, *, progress: bool = False, **options: Unpack[UpdateKeywords]
) -> RunSummary:
    """Index papers as `fastbmrag update` does: a DataFrame with the papers-CSV columns, a
    papers-CSV path, a list of dicts with those columns, Paper records, or
    :class:`fastbmrag.papers.io.PaperFiles` (files, directories and globs, read twice).

    Keyword ``options`` are :class:`fastbmrag.index.UpdateOptions` fields (``force``,
    ``dry_run``, ``refine``, ``chunk_chars``, ``top_k``, ``wait``, ...). A dry run reads the
    collection (or none, when it does not exist yet) and writes nothing; a run holds the
    write lock, with ``force`` repairing a collection whose store lost edges. Files are
    first read once the collection and the model server are checked.
    """
    from fastbmrag.papers.io import PaperFiles, as_papers
    from fastbmrag.papers.report import ReadReport

    opts = update_options(rag, dict(options))
    report = ReadReport()  # what reading skipped and repaired (files: the first pass's)
    if isinstance(papers, str | os.PathLike):  # a path: read as the command line reads one
        if not Path(papers).expanduser().exists():
            raise InputError(f"No such file or directory: {papers}; check the path")
        papers = PaperFiles(papers)
    if isinstance(papers, PaperFiles):  # files: read once the checks are done
        records: Iterable[Paper] = papers
        read: Callable[[], Any] = papers.read
    else:
        records, read = as_papers(papers, report), _nothing

    def run(coll: Collection | None, first: Any) -> RunSummary:
        def read_as(summary: RunSummary) -> RunSummary:
            summary.input = (first or report).to_dict()
            summary.strict = opts.strict
            return summary

        total = getattr(first, "read", None)  # the first pass's count of the papers
        try:
            return read_as(index(rag, records, coll, opts, progress=progress, total=total))
        except (FastbmragError, KeyboardInterrupt) as err:  # a run that stopped early
            if getattr(err, "summary", None) is not None:
                read_as(err.summary)  # type: ignore[union-attr]
            raise

    if opts.dry_run:  # no lock, no model server, no write
        first = read()
        if not Collection.exists(rag.working_dir, rag.settings.collection or ""):
            return run(None, first)
        with rag.reading() as coll:
            return run(coll, first)
    with open_for_writing(rag, read, repair=opts.force, wait=opts.wait) as (coll, first):
        return run(coll, first)


def fetch(
    rag: Workspace,
    query: str,
    output: str | Path,
    *,
    settings: FetchSettings | None = None,
    since: Any = None,
    days: int | None = None,
    datetype: str | None = None,
    max_papers: int | None = None,
) -> tuple[int, FetchReport]:
    """Search PubMed and write the papers (with PMC full text where there is one) as a
    papers CSV at ``output``; with a collection, the papers it holds are not fetched.
    Returns the papers written and what the fetch did. ``settings``: where and how to fetch
    (the e-mail, API key and servers; None: from the environment, as the command line's)."""
    from fastbmrag.papers.eutils import DEFAULT_DATETYPE, FetchSettings, PubMedClient
    from fastbmrag.papers.fetch import date_window, fetch_papers
    from fastbmrag.papers.io import write_papers_csv
    from fastbmrag.papers.sync import DoneSet

    for name, value, low in (("max_papers", max_papers, 1), ("days", days, 0)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < low
        ):
            raise InputError(
                f"{option_named(name)} must be a whole number of {low} or more, got {value!r}",
                field=name,
            )
    mindate, maxdate = date_window(since, days)
    settings = settings or FetchSettings.resolve()
    with contextlib.ExitStack() as stack:
        skip: Any = frozenset()
        if rag.settings.collection:
            skip = DoneSet(stack.enter_context(rag.ledger()))
        client = stack.enter_context(PubMedClient(settings))
        papers = fetch_papers(
            client,
            query,
            mindate=mindate,
            maxdate=maxdate,
            datetype=datetype or DEFAULT_DATETYPE,
            max_papers=max_papers,
            skip=skip,
        )
        return write_papers_csv(papers, output), client.report


def sync(
    rag: Workspace,
    query: str,
    *,
    settings: FetchSettings | None = None,
    since: Any = None,
    days: int | None = None,
    progress: bool = False,
    **options: Unpack[UpdateKeywords],
) -> SyncResult:
    """Fetch what PubMed added for ``query`` since the last sync, and index it; ``settings``
    as for :func:`fetch`; keyword ``options`` as for :meth:`insert_paper`."""
    from fastbmrag.papers.eutils import FetchSettings
    from fastbmrag.papers.sync import sync_collection

    settings = settings or FetchSettings.resolve()  # a setting refused before anything opens

    opts = update_options(rag, dict(options))
    with contextlib.ExitStack() as stack:
        if opts.dry_run:
            try:
                coll = stack.enter_context(rag.reading())
            except CollectionNotFound as err:
                raise CollectionNotFound(
                    f"No collection '{rag.settings.collection}' yet: a dry run reads its "
                    "last sync and the papers it holds, and the first `sync` without "
                    f"{option_named('dry_run')} creates it (or check {option_named('collection')} and "
                    f"{option_named('working_dir')})"
                ) from err
        else:
            coll, _ = stack.enter_context(open_for_writing(rag, _nothing, wait=opts.wait))
        # one run for all the sync writes (indexing, re-grounding, retractions): a digest
        # of it says what the sync changed
        run_id = None if opts.dry_run else coll.ledger.runs.begin("sync", {"query": query})
        ended: dict[str, Any] = {"stopped": "interrupted"}
        try:
            result = sync_collection(
                coll,
                query,
                settings,
                lambda papers: index(rag, papers, coll, opts, progress=progress, total=len(papers)),
                since=since,
                days=days,
                dry_run=opts.dry_run,
                reground=(lambda: reground(rag, coll)) if grounds(rag, opts) else None,
            )
            ended = result.to_dict()
            result.run_id = run_id
            return result
        except Exception as err:
            ended = {"stopped": str(err) or type(err).__name__}
            raise
        finally:
            if run_id is not None:
                coll.ledger.runs.end(run_id, ended)


def reground(rag: Workspace, collection: Collection) -> tuple[int, int, int]:
    """Ground the papers NCBI had not annotated when they were indexed, now that it has:
    their edges re-keyed and embedded again, with no chat call
    (:mod:`fastbmrag.index.reground`). How many, the embedding requests sent, the texts the
    cache answered."""
    from fastbmrag.index.reground import reground_papers
    from fastbmrag.papers.pubtator import PubTatorUnavailable

    with pubtator(rag) as client:
        try:
            return reground_papers(collection, client, rag.llm(), rag.normalizer())
        except PubTatorUnavailable as err:
            log.warning("PubTator3 cannot be used (%s): papers not yet annotated wait for "
                        "the next sync", err)  # fmt: skip
            return 0, 0, 0


def _nothing() -> None:
    """An input read in memory: nothing to read once the checks are done."""
