"""The library object: :class:`RAG`, a workspace. It owns the settings and is the one place
that builds the model-server client, the normaliser and the collection (a reader shared by
overlapping calls, a writer). Its other methods are the operations of the registry
(:data:`fastbmrag.registry.OPERATIONS`), each a function in the package of its concern that
takes the workspace first: indexing, fetching and syncing in :mod:`fastbmrag.index.operations`,
the query in :mod:`fastbmrag.query.command`, the graph commands in
:mod:`fastbmrag.explore.commands`, status, delete and export in :mod:`fastbmrag.store.admin`.
Every command of the CLI is a call of one of them, so the Python API runs exactly the code the
command line runs::

    import pandas as pd
    from fastbmrag import RAG

    rag = RAG(collection_name="endometriosis")   # in ~/.fastbmrag, as the CLI
    summary = rag.insert_paper(pd.read_csv("papers.csv"))     # = fastbmrag update
    result = rag.query("What is the role of IL1B in endometriosis?")
    print(result["answer"])                                     # or result.answer
    frame = rag.edges(entities=["IL1B"])                       # a pandas DataFrame
    graph = rag.graph(since=2015)                              # a networkx DiGraph
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastbmrag import config
from fastbmrag.declared import check
from fastbmrag.errors import ConfigError, FastbmragError, InputError, StoreBusy
from fastbmrag.registry import OPERATIONS, Operation
from fastbmrag.store.collection import Collection
from fastbmrag.store.opening import check_no_writer_waits
from fastbmrag.store.places import check_name, choose_collection, readahead
from fastbmrag.util.wording import option_named
from fastbmrag.vocab.base import IdentityNormalizer, Normalizer

if TYPE_CHECKING:
    from fastbmrag.llm import BaseLLM, ServerPool


class RAG:
    """One collection in one working directory, with every setting resolved once.

    ``RAG(working_dir, collection_name, **flags)`` takes the flags of
    :func:`fastbmrag.config.resolve` (``ollama_host``, ``llm_backend``, ``openai_base_url``,
    ``openai_api_key``, ``llm_model``, ``concurrency``, ``qdrant_url``, ...); what is not given
    comes from the environment, then the defaults, as on the command line.

    Model-server clients are bound to an event loop, so each call builds a fresh one with
    :meth:`llm` (``llm_factory`` replaces it, e.g. to share a client across calls in tests).

    Its operations (``rag.query(...)``, ``rag.insert_paper(...)``, ``rag.entity(...)`` ...) are
    the registry's (:mod:`fastbmrag.registry`): ``help(RAG.query)`` shows each one's arguments.
    """

    if TYPE_CHECKING:  # the registry's operations, set on the class below, as a type checker
        # follows them: their own functions (a test holds this list to the registry)
        from fastbmrag.explore import commands as _explore
        from fastbmrag.index import operations as _index
        from fastbmrag.query import command as _query
        from fastbmrag.store import admin as _admin

        insert_paper = _index.insert_paper
        fetch = _index.fetch
        sync = _index.sync
        status = _admin.status
        update_running = _admin.update_running
        check_store = _admin.check_store
        delete = _admin.delete
        export = _admin.export
        overview = _explore.overview
        find_entities = _explore.find_entities
        query = _query.ask
        node_keys = _explore.node_keys
        entity = _explore.entity
        narrower = _explore.narrower
        edges = _explore.edges
        neighbours = _explore.neighbours
        graph = _explore.graph
        path = _explore.path
        contradictions = _explore.contradictions
        digest = _explore.digest
        watch = _explore.watch
        unwatch = _explore.unwatch
        watched = _explore.watched

    def __init__(
        self,
        working_dir: str | Path | None = None,
        collection_name: str | None = None,
        *,
        settings: config.Settings | None = None,
        llm_factory: Callable[[], Any] | None = None,
        **flags: Any,
    ) -> None:
        if collection_name is not None:  # the second argument, or the setting by its name
            if flags.get("collection") not in (None, collection_name):
                raise InputError(
                    f"RAG() was given two collections, {collection_name!r} and "
                    f"{flags['collection']!r}: give one"
                )
            flags["collection"] = collection_name
        self.settings = settings or config.resolve(working_dir=working_dir, **flags)
        s = self.settings
        if s.collection is not None:
            check_name(s.collection)
        if settings is not None:  # resolve() checked the others, as the command line's
            check(settings)
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
        from fastbmrag.llm import llm_for

        return llm_for(self.settings, cache=cache, query=query)

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
                    self.working_dir, self.collection_name, command=command, **self.where()
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

    def writer(self, *, create: bool = False, command: str | None = None, repair: bool = False,
               wait: float | None = None) -> Collection:  # fmt: skip
        """The collection opened for writing: takes its lock (LockedError: exit 3) and finishes
        what a killed writer left; ``create`` makes it when missing; ``repair`` sets papers whose
        edges the store lost back to pending (else StoreLost)."""
        name = self.settings.collection if create else self.collection_name
        if not name:
            raise ConfigError(f"No collection name: pass {option_named('collection')}, or set "
                              f"{config.ENV_COLLECTION}")  # fmt: skip
        waiting: dict[str, Any] = {} if wait is None else {"busy_timeout": wait}  # for readers
        return Collection.writer(
            self.working_dir, name, create=create, command=command, repair=repair,
            **waiting, **self.where(),
        )  # fmt: skip

    def ledger(self) -> Collection:
        """The collection's ledger alone (status, the papers already indexed): works while an
        update holds the collection."""
        return Collection.ledger_only(self.working_dir, self.collection_name, **self.where())

    @contextlib.contextmanager
    def reading(self) -> Iterator[Collection]:
        """The collection to read for a dry run: with its store, or, while an update holds
        the store, its ledger alone (what the collection holds, not the pmids of its edges)."""
        with contextlib.ExitStack() as stack:
            try:
                coll = stack.enter_context(self.reader())
            except StoreBusy:
                coll = stack.enter_context(self.ledger())
            yield coll

    def where(self) -> dict[str, Any]:
        """Where the store lives: a Qdrant server's URL and key, or None (embedded)."""
        return {"qdrant_url": self.settings.qdrant_url, "api_key": self.settings.qdrant_api_key}

    def readahead(self) -> None:
        """Start reading the collection's embedded shard into the page cache in the background:
        a query's open then finds the files in memory. A hint, once per process; nothing for a
        Qdrant server, nor where no one collection is named or found (the query says why)."""
        if self.settings.qdrant_url:
            return
        with contextlib.suppress(FastbmragError):
            readahead(self.working_dir, self.collection_name)


class _Method:
    """A method of :class:`RAG` made from an operation of the registry: its function, with
    the workspace as its first argument (imported on the first call, not with the class). Its
    arguments are held to the function's signature as the other doors hold theirs: one it does
    not take is an InputError naming what it takes, not a TypeError."""

    def __init__(self, op: Operation) -> None:
        self.op = op

    def __get__(self, rag: RAG | None, owner: type | None = None) -> Any:
        fn = self.op.function()
        if rag is None:
            return fn
        signature = inspect.signature(fn)
        name = self.op.name

        @functools.wraps(fn)
        def method(*args: Any, **kwargs: Any) -> Any:
            try:
                signature.bind(rag, *args, **kwargs)
            except TypeError as err:
                takes = [p for p in list(signature.parameters)[1:] if p not in ("options",
                                                                                "filters")]  # fmt: skip
                raise InputError(
                    f"rag.{name}(): {err}; it takes {', '.join(takes) or 'no argument'}"
                    + (" and the declared options as keywords" if len(takes) <
                       len(signature.parameters) - 1 else "")  # fmt: skip
                ) from None
            return fn(rag, *args, **kwargs)

        return method


for _op in OPERATIONS:
    if _op.method:
        setattr(RAG, _op.name, _Method(_op))
