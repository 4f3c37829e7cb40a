"""The Python API: ``RAG(working_dir, collection_name).insert_paper(df)`` and ``.query(question)``.

It runs exactly the code the command line runs::

    import pandas as pd
    from fastbmrag import RAG

    rag = RAG(working_dir="~/fastbmrag", collection_name="endometriosis")
    summary = rag.insert_paper(pd.read_csv("papers.csv"))     # = fastbmrag update
    result = rag.query("What is the role of IL1B in endometriosis?")
    print(result["answer"])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fastbmrag import config
from fastbmrag.llm.base import LLMClient
from fastbmrag.papers.model import Paper
from fastbmrag.pipeline import RunSummary, UpdateOptions, index_papers
from fastbmrag.store.collection import Collection, readahead
from fastbmrag.vocab.base import IdentityNormalizer, Normalizer


class RAG:
    """One collection in one working directory.

    Model-server clients are bound to an event loop, so a fresh one is built for each
    call through ``llm_factory`` (default: from the settings given here, the environment
    and the defaults, exactly as the command line builds it).
    """

    def __init__(
        self,
        working_dir: str | Path | None = None,
        collection_name: str | None = None,
        *,
        qdrant_url: str | None = None,
        qdrant_api_key: str | None = None,
        llm_backend: str = "ollama",
        ollama_host: str | None = None,
        llm_model: str | None = None,
        embed_model: str | None = None,
        answer_model: str | None = None,
        concurrency: int = config.DEFAULT_CONCURRENCY,
        embed_batch: int = config.DEFAULT_EMBED_BATCH,
        num_ctx: int = config.DEFAULT_NUM_CTX,
        use_cache: bool = True,
        normalize: bool = True,
        llm_factory: Callable[[], LLMClient] | None = None,
    ) -> None:
        import os

        self.working_dir = config.working_dir(working_dir)
        name = collection_name or os.environ.get(config.ENV_COLLECTION)
        if not name:
            from fastbmrag.errors import ConfigError

            raise ConfigError(
                f"No collection name: pass collection_name= or set {config.ENV_COLLECTION}"
            )
        self.collection_name = name
        self.qdrant_url = config.qdrant_url(qdrant_url)
        self.qdrant_api_key = config.qdrant_api_key(qdrant_api_key)
        self.answer_model = answer_model or os.environ.get(config.ENV_ANSWER_MODEL)
        self.concurrency = concurrency
        self.embed_batch = embed_batch
        self.num_ctx = num_ctx
        self.normalize = normalize
        self._llm_factory = llm_factory or (
            lambda: self._default_llm(llm_backend, ollama_host, llm_model, embed_model, use_cache)
        )

    def _default_llm(
        self,
        backend: str,
        host: str | None,
        model: str | None,
        embed_model: str | None,
        use_cache: bool,
    ) -> LLMClient:
        from fastbmrag.llm import ResponseCache, make_llm

        return make_llm(
            backend,
            host=host,
            model=config.llm_model(model),
            embed_model=config.embed_model(embed_model),
            concurrency=self.concurrency,
            embed_batch=self.embed_batch,
            num_ctx=self.num_ctx,
            cache=ResponseCache.for_working_dir(self.working_dir) if use_cache else None,
        )

    def _normalizer(self) -> Normalizer:
        if not self.normalize:
            return IdentityNormalizer()
        from fastbmrag.vocab import load_normalizer

        return load_normalizer()

    def _open(self, *, write: bool) -> Collection:
        return Collection.open(
            self.working_dir,
            self.collection_name,
            qdrant_url=self.qdrant_url,
            api_key=self.qdrant_api_key,
            write=write,
            create=write,
        )

    def insert_paper(
        self,
        papers: Any,
        *,
        force: bool = False,
        dry_run: bool = False,
        progress: bool = False,
        **options: Any,
    ) -> RunSummary:
        """Index papers: a DataFrame with the papers-CSV columns, a CSV path, or Paper records.

        Keyword ``options`` are :class:`fastbmrag.pipeline.UpdateOptions` fields
        (``refine``, ``chunk_chars``, ``top_k``, ...). Same behaviour as ``fastbmrag update``.
        """
        records = _as_papers(papers)
        opts = UpdateOptions(force=force, dry_run=dry_run, concurrency=self.concurrency, **options)
        with self._open(write=not dry_run) as coll:
            return index_papers(
                records, coll, self._llm_factory(), self._normalizer(), opts, progress=progress
            )

    def query(self, question: str, **options: Any) -> dict[str, Any]:
        """Answer ``question`` from the collection; same result as ``fastbmrag query --format json``."""
        from fastbmrag.query import QueryOptions, run_query

        if self.answer_model:
            options.setdefault("answer_model", self.answer_model)
        opts = QueryOptions(**options)
        llm = None if opts.no_answer and opts.no_llm_parse else self._llm_factory()
        if not self.qdrant_url:
            readahead(self.working_dir, self.collection_name)
        with self._open(write=False) as coll:
            return run_query(question, coll, llm, self._normalizer(), options=opts).to_dict()


def _as_papers(papers: Any) -> Iterable[Paper]:
    from fastbmrag.papers import ReadReport, iter_papers, papers_from_frame

    if isinstance(papers, (str, Path)):
        return iter_papers([papers], ReadReport())
    if hasattr(papers, "to_dict") and hasattr(papers, "columns"):  # a pandas DataFrame
        return papers_from_frame(papers, ReadReport())
    return list(papers)
