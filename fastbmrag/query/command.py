"""The query operation of a workspace (:class:`fastbmrag.RAG`): the options checked once,
the workspace's settings applied (the answer model, the map-reduce width), an update that holds
the embedded store said before any model call, then :func:`fastbmrag.query.run.query`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastbmrag.declared import options_of
from fastbmrag.errors import InputError, StoreBusy
from fastbmrag.query.options import AskOptions
from fastbmrag.query.result import QueryResult
from fastbmrag.query.run import query
from fastbmrag.util.wording import option_named

if TYPE_CHECKING:
    from typing import Unpack

    from fastbmrag.keywords import QueryKeywords
    from fastbmrag.store.collection import Collection
    from fastbmrag.store.workspace import Workspace


def ask(rag: Workspace, question: str, **options: Unpack[QueryKeywords]) -> QueryResult:
    """Answer ``question`` from the workspace's collection: the typed result, which reads as
    what ``fastbmrag query --format json`` prints (``result["answer"]``; the page sends it, the
    command line renders its text and Markdown from it); ``options`` are
    :class:`~fastbmrag.query.QueryOptions` fields (with the question, :class:`AskOptions`')."""
    if not isinstance(question, str):
        raise InputError(
            f"The question must be text, got {type(question).__name__}: "
            'rag.query("What is the role of IL1B in endometriosis?")'
        )
    opts = options_of(AskOptions, {**options, "question": question})
    if rag.settings.answer_model and opts.answer_model is None:
        opts.answer_model = rag.settings.answer_model
    opts.concurrency = rag.settings.concurrency  # map-reduce width = requests in flight
    rag.readahead()  # the disk reads the shard while the vocabularies load
    needs_names = opts.link or opts.entities or opts.sources or opts.targets
    normalizer = rag.normalizer() if needs_names else None
    if not rag.settings.qdrant_url and (running := rag.update_running()):
        raise StoreBusy(  # an update holds the embedded store: said before any model call
            f"{running}, and its embedded store can be open in one process at a time: wait "
            f"for it to finish, or run a Qdrant server and use {option_named('qdrant_url')} / QDRANT_URL to "
            "query during updates"
        )
    llm = None if opts.no_answer and opts.no_llm_parse else rag.llm(query=True)
    return query(question, _Reading(rag), llm, normalizer, options=opts)


@dataclass
class _Reading:
    """A query's collection, opened only while it reads (:class:`fastbmrag.query.run.Reading`):
    the shared reader for the store, the ledger alone before and after."""

    rag: Workspace

    def open_store(self) -> contextlib.AbstractContextManager[Collection]:
        return self.rag.reader(command="query")

    def open_ledger(self) -> contextlib.AbstractContextManager[Collection]:
        return self.rag.ledger()
