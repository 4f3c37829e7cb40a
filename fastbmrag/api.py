"""The library object: :class:`RAG` owns the settings and builds everything from them.

It is the only place that builds the model-server client, the normaliser and the collection,
and every command of the CLI is a call of one of its methods, so the Python API runs exactly
the code the command line runs::

    import pandas as pd
    from fastbmrag import RAG

    rag = RAG(collection_name="endometriosis")   # in ~/.fastbmrag, as the CLI
    summary = rag.insert_paper(pd.read_csv("papers.csv"))     # = fastbmrag update
    result = rag.query("What is the role of IL1B in endometriosis?")
    print(result["answer"])
    frame = rag.edges(entities=["IL1B"])                       # a pandas DataFrame
    graph = rag.graph(since=2015)                              # a networkx DiGraph
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from fastbmrag import config
from fastbmrag.errors import (
    CollectionNotFound,
    ConfigError,
    FastbmragError,
    InputError,
    StoreBusy,
)
from fastbmrag.papers.model import Paper
from fastbmrag.store.collection import Collection
from fastbmrag.store.opening import check_no_writer_waits
from fastbmrag.store.places import (
    WRITE_FREE,
    check_name,
    check_space,
    choose_collection,
    ensure_creatable,
    readahead,
)
from fastbmrag.store.status import collection_status
from fastbmrag.util.wording import counted
from fastbmrag.vocab.base import IdentityNormalizer, Normalizer

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import networkx
    import pandas

    from fastbmrag.index import RunSummary, UpdateOptions
    from fastbmrag.llm import BaseLLM, ServerPool
    from fastbmrag.papers.eutils import FetchReport, FetchSettings
    from fastbmrag.papers.pubtator import PubTatorClient
    from fastbmrag.papers.sync import SyncResult

T = TypeVar("T")


class RAG:
    """One collection in one working directory, with every setting resolved once.

    ``RAG(working_dir, collection_name, **flags)`` takes the flags of
    :func:`fastbmrag.config.resolve` (``ollama_host``, ``llm_backend``, ``openai_base_url``,
    ``openai_api_key``, ``llm_model``, ``concurrency``, ``qdrant_url``, ...); what is not given
    comes from the environment, then the defaults, as on the command line.

    Model-server clients are bound to an event loop, so each call builds a fresh one with
    :meth:`llm` (``llm_factory`` replaces it, e.g. to share a client across calls in tests).
    """

    def __init__(
        self,
        working_dir: str | Path | None = None,
        collection_name: str | None = None,
        *,
        settings: config.Settings | None = None,
        llm_factory: Callable[[], Any] | None = None,
        **flags: Any,
    ) -> None:
        self.settings = settings or config.resolve(
            working_dir=working_dir, collection=collection_name, **flags
        )
        s = self.settings
        if s.collection is not None:
            check_name(s.collection)
        for name in ("concurrency", "embed_batch", "num_ctx"):
            value = getattr(s, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a whole number of at least 1, got {value!r}")
        self._llm_factory = llm_factory
        self._shared: Collection | None = None  # the reader the overlapping calls share
        self._readers = 0
        self._shared_lock = threading.Lock()

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> RAG:
        """From a CLI command's parsed options (the settings flags among them)."""
        return cls(settings=config.resolve(**config.flags(options)))

    # --- the one builder of each collaborator ----------------------------------------------

    @property
    def working_dir(self) -> Path:
        return self.settings.working_dir

    @property
    def collection_name(self) -> str:
        """The collection: as set, else the only one in the working dir (ConfigError if none
        or several)."""
        s = self.settings
        return choose_collection(s.working_dir, s.collection, qdrant_url=s.qdrant_url)

    def llm(self, *, cache: bool | None = None, query: bool = False) -> BaseLLM | ServerPool:
        """A client for the model server(s), with the response cache unless ``cache`` False.
        ``query``: a question's one embedding must come within the preflight bound, so that a
        server that hangs is named (or, in a pool, left out) at once."""
        if self._llm_factory is not None:
            return self._llm_factory()
        from fastbmrag.llm import ResponseCache, make_llm

        s = self.settings
        use_cache = s.use_cache if cache is None else cache and s.use_cache
        return make_llm(
            s.llm_backend,
            host=s.host,
            model=s.llm_model,
            embed_model=s.embed_model,
            concurrency=s.concurrency,
            embed_batch=s.embed_batch,
            num_ctx=s.num_ctx,
            cache=ResponseCache.for_working_dir(s.working_dir) if use_cache else None,
            api_key=s.api_key,
            preflight_timeout=s.preflight_timeout,
            **({"embed_timeout": s.preflight_timeout} if query else {}),
        )

    def normalizer(self) -> Normalizer:
        if not self.settings.normalize:
            return IdentityNormalizer()
        from fastbmrag.vocab import load_normalizer

        return load_normalizer()

    @contextlib.contextmanager
    def reader(self, *, command: str | None = None) -> Iterator[Collection]:
        """The collection opened for reading (a query, an export), shared by the calls of this
        object that overlap (the web page's requests): the embedded store opens in one
        process at a time, so a second open would wait for the first; closed when the last
        one is done, so that an update can take it."""
        with self._shared_lock:
            if self._shared is None:
                self._shared = Collection.reader(
                    self.working_dir, self.collection_name, command=command, **self._where()
                )
            elif not self.settings.qdrant_url:  # an update waits for the store: no new reader
                check_no_writer_waits(self.working_dir / self.collection_name, self.collection_name)
            self._readers += 1
            shared = self._shared
        try:
            yield shared
        finally:
            with self._shared_lock:
                self._readers -= 1
                if self._readers == 0:
                    self._shared = None
                    shared.close()

    def writer(
        self,
        *,
        create: bool = False,
        command: str | None = None,
        repair: bool = False,
        wait: float | None = None,
    ) -> Collection:
        """The collection opened for writing: takes its lock (LockedError: exit 3) and finishes
        what a killed writer left; ``create`` makes it when missing; ``repair`` sets papers whose
        edges the store lost back to pending (else StoreLost)."""
        name = self.settings.collection if create else self.collection_name
        if not name:
            raise ConfigError(
                f"No collection name: pass collection_name= or --collection, or set "
                f"{config.ENV_COLLECTION}"
            )
        waiting: dict[str, Any] = {} if wait is None else {"busy_timeout": wait}  # for readers
        return Collection.writer(
            self.working_dir, name, create=create, command=command, repair=repair,
            **waiting, **self._where(),
        )  # fmt: skip

    def ledger(self) -> Collection:
        """The collection's ledger alone (status, the papers already indexed): works while an
        update holds the collection."""
        return Collection.ledger_only(self.working_dir, self.collection_name, **self._where())

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Collection]:
        """The collection to read for a dry run: with its store, or, while an update holds
        the store, its ledger alone (what the collection holds, not the pmids of its edges)."""
        with contextlib.ExitStack() as stack:
            try:
                coll = stack.enter_context(self.reader())
            except StoreBusy:
                coll = stack.enter_context(self.ledger())
            yield coll

    def _where(self) -> dict[str, Any]:
        return {"qdrant_url": self.settings.qdrant_url, "api_key": self.settings.qdrant_api_key}

    # --- indexing ----------------------------------------------------------------------------

    def check_model_server(self) -> int:
        """Preflight with a client of its own that writes nothing: the server answers, the models
        are pulled. Returns the embedding size."""
        llm = self.llm(cache=False)

        async def run() -> int:
            try:
                await llm.preflight()
                return await llm.embedding_dim()
            finally:
                await llm.aclose()

        return asyncio.run(run())

    @contextlib.contextmanager
    def open_for_writing(
        self, read_input: Callable[[], T], *, repair: bool = False, wait: float | None = None
    ) -> Iterator[tuple[Collection, T]]:
        """The collection opened for writing, with the errors in the order a user wants them.

        First the collection's name, then the lock of an existing collection (exit 3 at once)
        or, for a new one, whether its folder can be created (exit 2), then the model server,
        its models and the embedding size (exit 2), then ``read_input`` (bad input: exit 2),
        and only then is a new collection created: a run that cannot start leaves nothing on
        disk. ``repair``: as for :meth:`writer` (``update --force``).
        """
        s = self.settings
        if not s.collection:
            raise ConfigError("No collection name: give --collection (or collection_name=)")
        with contextlib.ExitStack() as stack:
            coll = None
            if Collection.exists(s.working_dir, s.collection):
                coll = stack.enter_context(self.writer(repair=repair, wait=wait))
            else:
                ensure_creatable(s.working_dir / s.collection)
                if not s.qdrant_url:  # the embedded store's files: checked before any work
                    check_space(s.working_dir / s.collection, WRITE_FREE,
                                f"opening collection '{s.collection}' for writing")  # fmt: skip
            dim = self.check_model_server()
            if coll is not None:
                coll.ensure_vector_size(dim)
            value = read_input()
            if coll is None:
                coll = stack.enter_context(self.writer(create=True))
            yield coll, value

    def _update_options(self, options: dict[str, Any]) -> UpdateOptions:
        """:class:`UpdateOptions` from keyword options, with this object's settings: as many
        papers in flight as model requests (``concurrency`` per server), the token cap."""
        from fastbmrag.index import UpdateOptions

        return options_of(
            UpdateOptions,
            {
                "concurrency": self.settings.concurrency * len(self.settings.hosts),
                "num_predict": self.settings.num_predict,
                **options,
            },
        )

    def index(
        self,
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
                self.llm(),
                self.normalizer(),
                options,
                progress=progress,
                total=total,
                pubtator=stack.enter_context(self.pubtator()) if self._grounds(options) else None,
            )

    def _grounds(self, options: UpdateOptions) -> bool:
        """Whether a run grounds names on PubTator3 (not in a dry run, nor with no vocabularies)."""
        return options.pubtator and self.settings.normalize and not options.dry_run

    def pubtator(self) -> PubTatorClient:
        """A PubTator3 client with this working directory's cache of annotations."""
        from fastbmrag.papers.pubtator import (
            CACHE_FILENAME,
            AnnotationCache,
            PubTatorClient,
            PubTatorSettings,
        )

        cache = AnnotationCache.open(self.working_dir / CACHE_FILENAME)
        return PubTatorClient(PubTatorSettings.resolve(), cache)

    def insert_paper(self, papers: Any, *, progress: bool = False, **options: Any) -> RunSummary:
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

        opts = self._update_options(options)
        report = ReadReport()  # what reading skipped and repaired (files: the first pass's)
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
                return read_as(self.index(records, coll, opts, progress=progress, total=total))
            except (FastbmragError, KeyboardInterrupt) as err:  # a run that stopped early
                if getattr(err, "summary", None) is not None:
                    read_as(err.summary)  # type: ignore[union-attr]
                raise

        if opts.dry_run:  # no lock, no model server, no write
            first = read()
            if not Collection.exists(self.working_dir, self.settings.collection or ""):
                return run(None, first)
            with self._reading() as coll:
                return run(coll, first)
        with self.open_for_writing(read, repair=opts.force, wait=opts.wait) as (coll, first):
            return run(coll, first)

    def fetch(
        self,
        query: str,
        fetch: FetchSettings,
        output: str | Path,
        *,
        since: Any = None,
        days: int | None = None,
        datetype: str | None = None,
        max_papers: int | None = None,
    ) -> tuple[int, FetchReport]:
        """Search PubMed and write the papers (with PMC full text where there is one) as a
        papers CSV at ``output``; with a collection, the papers it holds are not fetched.
        Returns the papers written and what the fetch did."""
        from fastbmrag.papers.eutils import DEFAULT_DATETYPE, PubMedClient
        from fastbmrag.papers.fetch import date_window, fetch_papers
        from fastbmrag.papers.io import write_papers_csv
        from fastbmrag.papers.sync import DoneSet

        mindate, maxdate = date_window(since, days)
        with contextlib.ExitStack() as stack:
            skip: Any = frozenset()
            if self.settings.collection:
                skip = DoneSet(stack.enter_context(self.ledger()))
            client = stack.enter_context(PubMedClient(fetch))
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
        self,
        query: str,
        fetch: FetchSettings,
        *,
        since: Any = None,
        days: int | None = None,
        progress: bool = False,
        **options: Any,
    ) -> SyncResult:
        """Fetch what PubMed added for ``query`` since the last sync, and index it; keyword
        ``options`` as for :meth:`insert_paper`."""
        from fastbmrag.papers.sync import sync_collection

        opts = self._update_options(options)
        with contextlib.ExitStack() as stack:
            if opts.dry_run:
                try:
                    coll = stack.enter_context(self._reading())
                except CollectionNotFound as err:
                    raise CollectionNotFound(
                        f"No collection '{self.settings.collection}' yet: a dry run reads its "
                        "last sync and the papers it holds, and the first `sync` without "
                        "--dry-run creates it (or check --collection and --working-dir)"
                    ) from err
            else:
                coll, _ = stack.enter_context(self.open_for_writing(_nothing, wait=opts.wait))
            # one run for all the sync writes (indexing, re-grounding, retractions): a digest
            # of it says what the sync changed
            run_id = None if opts.dry_run else coll.ledger.begin_run("sync", {"query": query})
            ended: dict[str, Any] = {"stopped": "interrupted"}
            try:
                result = sync_collection(
                    coll,
                    query,
                    fetch,
                    lambda papers: self.index(
                        papers, coll, opts, progress=progress, total=len(papers)
                    ),
                    since=since,
                    days=days,
                    dry_run=opts.dry_run,
                    reground=(lambda: self.reground(coll)) if self._grounds(opts) else None,
                )
                ended = result.to_dict()
                result.run_id = run_id
                return result
            except Exception as err:
                ended = {"stopped": str(err) or type(err).__name__}
                raise
            finally:
                if run_id is not None:
                    coll.record_run_end(run_id, ended)

    def reground(self, collection: Collection) -> tuple[int, int, int]:
        """Ground the papers NCBI had not annotated when they were indexed, now that it has:
        their edges re-keyed and embedded again, with no chat call
        (:mod:`fastbmrag.index.reground`). How many, the embedding requests sent, the texts the
        cache answered."""
        from fastbmrag.index.reground import reground_papers
        from fastbmrag.papers.pubtator import PubTatorUnavailable

        with self.pubtator() as client:
            try:
                return reground_papers(collection, client, self.llm(), self.normalizer())
            except PubTatorUnavailable as err:
                log.warning("PubTator3 cannot be reached (%s): papers not yet annotated wait for "
                            "the next sync", err)  # fmt: skip
                return 0, 0, 0

    # --- reading -----------------------------------------------------------------------------

    def readahead(self) -> None:
        """Start reading the collection's embedded shard into the page cache in the background:
        a query's open then finds the files in memory. A hint, once per process; nothing for a
        Qdrant server, nor where no one collection is named or found (the query says why)."""
        if self.settings.qdrant_url:
            return
        with contextlib.suppress(FastbmragError):
            readahead(self.working_dir, self.collection_name)

    def query(self, question: str, **options: Any) -> dict[str, Any]:
        """Answer ``question``: what ``fastbmrag query --format json`` prints (the CLI renders
        its text and Markdown from it). Keyword ``options`` are
        :class:`fastbmrag.query.QueryOptions` fields (``top_k``, ``entities``, ``since``, ...)."""
        from fastbmrag.query import QueryOptions
        from fastbmrag.query import query as run_query

        if not isinstance(question, str):
            raise InputError(
                f"The question must be text, got {type(question).__name__}: "
                'rag.query("What is the role of IL1B in endometriosis?")'
            )
        opts = options_of(QueryOptions, options)
        if self.settings.answer_model and opts.answer_model is None:
            opts.answer_model = self.settings.answer_model
        opts.concurrency = self.settings.concurrency  # map-reduce width = requests in flight
        self.readahead()  # the disk reads the shard while the vocabularies load
        needs_names = opts.link or opts.entities or opts.sources or opts.targets
        normalizer = self.normalizer() if needs_names else None
        if not self.settings.qdrant_url and (running := self.update_running()):
            raise StoreBusy(  # an update holds the embedded store: said before any model call
                f"{running}, and its embedded store can be open in one process at a time: wait "
                "for it to finish, or run a Qdrant server and use --qdrant-url / QDRANT_URL to "
                "query during updates"
            )
        llm = None if opts.no_answer and opts.no_llm_parse else self.llm(query=True)
        return run_query(question, _QueryReading(self), llm, normalizer, options=opts).to_dict()

    def status(self, *, max_failed: int | None = 100) -> dict[str, Any]:
        """What the collection holds (from the ledger); finishes an operation a killed command
        left half done when no other command holds the collection (``interrupted``)."""
        with self.ledger() as coll:
            journal = coll.ledger.journal()
        interrupted = self._finish_interrupted(journal)
        with self.ledger() as coll:
            # the vocabularies say where a supplementary concept sits, if the graph has one
            vocab = self.normalizer() if coll.ledger.supplementary_ids() else None
            stats = collection_status(coll, max_failed=max_failed, normalizer=vocab)
        stats["interrupted"] = interrupted
        return stats

    def update_running(self) -> str | None:
        """While an update or sync runs (its run recorded, not ended): which, since when, and
        how many papers it has committed so far; None when none runs."""
        with self.ledger() as coll:
            run = coll.ledger.last_run()
            if run is None or run.ended_at is not None or not _alive(run.pid):
                return None  # none runs, or its process was killed
            done = coll.ledger.papers_done_since(run.started_at)
        since = run.started_at.replace("T", " ").removesuffix("+00:00")
        command = run.command if run.command.startswith("fastbmrag") else f"fastbmrag {run.command}"
        return (
            f"`{command}` is updating collection '{coll.name}' since {since} UTC "
            f"({counted(done, 'paper')} committed so far)"
        )

    def check_store(self) -> str | None:
        """Open the collection's store and close it: StoreError, one line with the fix, when
        it is damaged or lost; why it was not opened (another process holds it, its volume is
        full), None when it opened."""
        from fastbmrag.errors import DiskFull, StoreBusy

        try:  # no wait: status says who holds it
            with Collection.reader(self.working_dir, self.collection_name, command="status",
                                   busy_timeout=0, **self._where()):  # fmt: skip
                return None
        except StoreBusy as err:
            return f"held by {err.holder or 'another process'}"
        except DiskFull as err:
            return str(err).split(" and ")[0].replace("The volume", "its volume")

    def _finish_interrupted(self, journal: dict[str, str]) -> dict[str, Any] | None:
        """None when nothing was left, else the operations (``delete``: papers whose deletion
        was cut short; ``commit``: papers whose indexing was, indexed again next run) with
        ``finished`` true, or false and ``by`` saying which command will finish them. With the
        lock held, the journal is the running writer's own work in flight: nothing to report."""
        from fastbmrag.errors import LockedError, StoreBusy

        if not journal:
            return None
        ops = {op: sum(1 for o in journal.values() if o == op) for op in ("delete", "commit")}
        try:
            with self.writer():
                pass  # opening for writing finishes it (Collection.recover)
        except LockedError:
            return None
        except StoreBusy as err:
            return {**ops, "finished": False, "by": f"the next update, sync or delete ({err})"}
        return {**ops, "finished": True, "by": "this status"}

    def delete(self, paper_ids: str | Sequence[str]) -> tuple[list[str], list[str], int]:
        """Remove papers and their edges: (ids deleted, ids not in the collection, edges
        removed); a string is one id. InputError when none of the ids is there (nothing
        changes)."""
        if isinstance(paper_ids, str):  # one id, not its characters
            paper_ids = [paper_ids]
        if not isinstance(paper_ids, Sequence) or not all(isinstance(i, str) for i in paper_ids):
            raise InputError(
                f"paper_ids must be a paper id or a list of them, as text (\"PMID:12345\"), got "
                f"{paper_ids!r}"
            )
        ids = list(dict.fromkeys(str(i).strip() for i in paper_ids))
        if not all(ids):
            raise InputError("An empty paper id was given: pass the ids `fastbmrag export` lists")
        with self.writer(command="fastbmrag delete") as coll:
            known = list(coll.ledger.paper_states(ids))
            # a PubMed id names the paper whose pmid it is, too (a PMC full text, a CSV row)
            by_pmid = {i: coll.papers_of_pmids([i]) for i in ids if i not in known}
            known = list(dict.fromkeys([*known, *(p for ps in by_pmid.values() for p in ps)]))
            unknown = [i for i in ids if i not in known and not by_pmid.get(i)]
            if not known:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                held = list(coll.ledger.paper_states(v for i in ids for v in _id_spellings(i)))
                hint = f" (it holds {', '.join(held[:5])}: pass those)" if held else ""
                raise InputError(
                    f"None of the paper ids ({shown}) is in collection '{coll.name}'{hint}: "
                    f"check the ids (`fastbmrag export -c {coll.name} --format csv -o "
                    "edges.csv` lists them)"
                )
            run_id = coll.ledger.begin_run("fastbmrag delete", {"paper_ids": known})
            removed = coll.delete_papers(known)
            if run_id is not None:
                coll.record_run_end(run_id, {"papers_deleted": len(known), "edges_removed": removed})
        return known, unknown, removed

    def export(self, fmt: str, out: IO[Any], *, raw: bool = False) -> tuple[int, int]:
        """Write the graph to ``out`` (binary for graphml, text for csv): (nodes, edges). CSV
        cells that a spreadsheet would run as formulas get a leading ``'`` unless ``raw``."""
        from fastbmrag.store.export import write_csv, write_graphml

        with self.reader(command="fastbmrag export") as coll:
            if fmt == "graphml":
                return write_graphml(coll, out)
            return 0, write_csv(coll, out, raw=raw)

    # --- the graph itself (no model call) ----------------------------------------------------

    def node_keys(self, name: str) -> tuple[str, ...]:
        """The node keys a name or id (IL1B, HGNC:5992, endometriosis) can have."""
        from fastbmrag.query import resolve_entity

        return resolve_entity(name, self.normalizer()).node_keys()

    def overview(self) -> dict[str, Any]:
        """The collection at a glance (a start page): counts, the last update, the most
        connected genes, diseases and chemicals, the papers indexed last, example questions."""
        from fastbmrag.explore import overview

        stats = self.status(max_failed=0)
        with self.reader(command="overview") as coll:
            return {
                "collection": stats["collection"],
                "papers": stats["papers"]["done"],
                "edges": stats["edges"],
                "entities": stats["entities"],
                "retracted_papers": stats["retracted_papers"],
                "last_update": (stats["last_run"] or {}).get("ended_at"),
                **overview(coll),
            }

    def find_entities(self, text: str, limit: int = 10) -> list[dict[str, Any]]:
        """The collection's entities named or identified by ``text`` (a prefix first)."""
        from fastbmrag.explore import find_entities

        _text_arg(text, "text")
        with self.reader(command="entity") as coll:
            return find_entities(coll, text, limit=limit)

    def contradictions(
        self, entity: str | None = None, *, designs: Any = (), organisms: Any = ()
    ) -> list[dict[str, Any]]:
        """The entity pairs whose papers disagree (opposite relationship types), most papers
        first; with ``entity``, only pairs it is part of; ``designs`` / ``organisms``: only
        papers of these study designs and organisms (as a query's)."""
        from fastbmrag.explore import contradictions, node_names
        from fastbmrag.query import resolve_entity

        studies = _studies(designs, organisms)
        if entity is not None:
            _text_arg(entity, "entity")
        if entity is None:
            with self.ledger() as coll:
                return contradictions(coll, (), studies)
        found = resolve_entity(entity, self.normalizer())  # "" is an error there
        with self.ledger() as coll:
            known = node_names(coll)
            if not any(k in known for k in found.node_keys()):
                raise _absent(entity, found, coll.name, "so no pair holds it")
            return contradictions(coll, found.node_keys(), studies)

    def path(
        self, start: str, end: str, *, max_hops: int = 3, designs: Any = (), organisms: Any = ()
    ) -> list[list[dict[str, Any]]]:
        """The best-supported paths between two entities, each hop with its relation, papers
        and an evidence sentence; ``designs`` / ``organisms`` as for :meth:`contradictions`."""
        from fastbmrag.explore import node_names, paths
        from fastbmrag.query import resolve_entity

        _text_arg(start, "start")
        _text_arg(end, "end")
        norm = self.normalizer()
        ends = [resolve_entity(start, norm), resolve_entity(end, norm)]
        if set(ends[0].node_keys()) & set(ends[1].node_keys()):
            named = f"{ends[0].name} ({ends[0].id})" if ends[0].id else repr(start)
            raise InputError(
                f"{start!r} and {end!r} both name {named}: a path joins two different entities"
            )
        with self.reader(command="path") as coll:
            known = node_names(coll)
            for given, found in zip((start, end), ends, strict=True):
                if not any(k in known for k in found.node_keys()):
                    raise _absent(given, found, coll.name, "so no path reaches it")
            return paths(coll, ends[0].node_keys(), ends[1].node_keys(), max_hops=max_hops,
                         studies=_studies(designs, organisms))  # fmt: skip

    def entity(
        self, name: str, *, designs: Any = (), organisms: Any = ()
    ) -> dict[str, Any] | None:
        """An entity's card: vocabulary facts and what the collection holds about it (in the
        papers of ``designs`` / ``organisms``, as for :meth:`contradictions`), its papers
        counted by study design. An entry of the vocabularies that no edge is about gets its
        facts alone (``in_collection`` false); a name neither knows is None."""
        from fastbmrag.explore import entity_card, node_names, vocabulary_card
        from fastbmrag.query import resolve_entity

        studies = _studies(designs, organisms)
        _text_arg(name, "name")
        norm = self.normalizer()
        found = resolve_entity(name, norm)
        with self.reader(command="entity") as coll:
            known = node_names(coll)
            key = next((k for k in found.node_keys() if k in known), None)
            if key is not None:
                ontology_id = known[key]["id"]
                facts: dict[str, Any] = norm.facts(ontology_id) if ontology_id else {}
                return entity_card(coll, key, facts, studies)
        facts = norm.facts(found.id) if found.id else {}
        return vocabulary_card(found.name, found.type, found.id, facts) if facts else None

    def digest(self, since: str = "last") -> dict[str, Any]:
        """What the runs since ``since`` changed (:mod:`fastbmrag.explore.digest`): new papers
        and edges by entity, watched ones first, pairs that newly disagree or agree,
        retractions. No model call."""
        from fastbmrag.explore.digest import digest

        if not isinstance(since, str):
            raise InputError(f"since must be 'last', a run number or a date as text, got {since!r}")
        with self.reader(command="digest") as coll:
            return digest(coll, since)

    def watch(self, names: Sequence[str]) -> list[tuple[str, str]]:
        """Watch these entities (names or ids, normalised as a query's ``entities`` are): their
        news come first in a digest. The (node key, name) watched."""
        from fastbmrag.explore import node_names
        from fastbmrag.query import resolve_entity

        norm = self.normalizer()
        with self.ledger() as coll:
            known = node_names(coll)
            chosen = []
            for name in names:
                _text_arg(name, "name")
                found = resolve_entity(name, norm)
                keys = found.node_keys()
                key = next((k for k in keys if k in known), keys[0])
                chosen.append((key, known.get(key, {}).get("name") or found.name))
            coll.ledger.watch(chosen)
        return chosen

    def unwatch(self, names: Sequence[str]) -> int:
        """Stop watching these entities (names, ids or the keys ``watched`` lists): how many."""
        from fastbmrag.query import resolve_entity

        norm = self.normalizer()
        with self.ledger() as coll:
            watched = coll.ledger.watched()
            keys = set()
            for name in names:
                _text_arg(name, "name")
                named = {k for k, n in watched.items() if name in (k, n)}
                keys |= named or set(resolve_entity(name, norm).node_keys())
            return coll.ledger.unwatch(sorted(keys))

    def watched(self) -> dict[str, str]:
        """Node key -> name of the watched entities."""
        with self.ledger() as coll:
            return coll.ledger.watched()

    def narrower(self, name: str, limit: int = 5) -> list[str]:
        """The collection's entities below a concept (MeSH descendants, an HGNC gene group's
        genes), most connected first: where to look when no edge is about the concept itself."""
        from fastbmrag.explore import node_names
        from fastbmrag.query import resolve_entity

        norm = self.normalizer()
        concept = resolve_entity(name, norm).id
        if not concept:
            return []
        with self.reader(command="entity") as coll:
            below = [
                e
                for e in node_names(coll).values()
                if e["id"] and concept in norm.ancestors(e["id"])
            ]
        return [e["name"] for e in sorted(below, key=lambda e: -e["degree"])[:limit]]

    def edges(self, **filters: Any) -> pandas.DataFrame:
        """Every edge passing the query filters (``entities``, ``relationship_types``,
        ``since``, ``min_weight``, ...): one row per edge, its payload and current weight."""
        import pandas

        rows = [{"point_id": point_id, **payload} for point_id, payload in self._edges(filters)]
        if not rows:  # no edge: the columns all the same
            import dataclasses

            from fastbmrag.store.payload import EdgePayload

            fields = [f.name for f in dataclasses.fields(EdgePayload)]
            return pandas.DataFrame(columns=["point_id", *fields, "weight"])
        return pandas.DataFrame(rows)

    def graph(self, **filters: Any) -> networkx.DiGraph:
        """The edges passing the query filters as a directed graph: a node per entity (name,
        type, ontology id), an edge per (source, target) with every relation between them
        (``relations``: type, paper, description) and the pair's largest weight."""
        from fastbmrag.explore import as_digraph

        return as_digraph(payload for _, payload in self._edges(filters))

    def _edges(self, filters: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        from fastbmrag.query import FilterSpec, Parse, QueryOptions, build_spec

        opts = options_of(QueryOptions, {**filters, "link": False})
        with self.reader(command="edges") as coll:
            spec: FilterSpec = build_spec(opts, [], Parse(), self.normalizer())
            spec = spec.resolve_weight(coll)
            for hit in coll.edges(spec.to_filter() or None):
                yield hit.id, hit.payload


@dataclasses.dataclass
class _QueryReading:
    """A query's collection, opened only while it reads (:class:`fastbmrag.query.run.Reading`):
    the shared reader for the store, the ledger alone before and after."""

    rag: RAG

    def open_store(self) -> contextlib.AbstractContextManager[Collection]:
        return self.rag.reader(command="query")

    def open_ledger(self) -> contextlib.AbstractContextManager[Collection]:
        return self.rag.ledger()


def _studies(designs: Any, organisms: Any) -> Any:
    """The study filter of a graph command, its values checked as a query's."""
    from fastbmrag.explore import Studies
    from fastbmrag.query import QueryOptions

    checked = QueryOptions(designs=designs, organisms=organisms)
    return Studies(checked.designs, checked.organisms)


def _text_arg(value: Any, name: str) -> None:
    """InputError naming the argument where a name or id is not text."""
    if not isinstance(value, str):
        raise InputError(
            f"{name} must be an entity's name or id as text (IL1B, HGNC:5992), got {value!r}"
        )


def options_of(kind: Any, given: dict[str, Any]) -> Any:
    """``kind(**given)`` for an options dataclass, an unknown keyword an InputError naming the
    known ones."""
    import dataclasses

    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(f"Unknown option {unknown[0]!r}: use one of {', '.join(sorted(known))}")
    return kind(**given)


def _nothing() -> None:
    """An input read in memory: nothing to read once the checks are done."""


def _alive(pid: int | None) -> bool:
    """Whether process ``pid`` runs (unknown: assumed so)."""
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _absent(given: str, found: Any, collection: str, so: str) -> InputError:
    """The error for an entity (``found``: its resolution) no edge of the collection is about."""
    named = f"{found.name} ({found.id})" if found.id else repr(given)
    return InputError(
        f"{named} is not in collection '{collection}': no edge is about it, {so} "
        f"(`fastbmrag entity {shlex.quote(given)}` says what the vocabularies know of it)"
    )


def _id_spellings(paper_id: str) -> list[str]:
    """The other way a PMID is written as a paper id: "PMID:123" for "123" and back."""
    head, sep, rest = paper_id.partition(":")
    if sep and head.lower() == "pmid":
        return [rest.strip()]
    return [f"PMID:{paper_id}"] if paper_id.isdigit() else []
