"""fastbmrag: turn biomedical literature into a queryable, cited knowledge graph.

The Python API mirrors the command line::

    from fastbmrag import RAG
    rag = RAG(working_dir="~/fastbmrag", collection_name="endometriosis")
    rag.insert_paper(df)            # same as `fastbmrag update`
    result = rag.query("What is the role of IL1B in endometriosis?")

Besides :class:`RAG`, the face names what a user of the library (and the command line) reads
and writes: papers and their files, PubMed's settings, a normalised name and the vocabularies,
a query's options and rendering, the web page. Each is imported on first use, so that
``import fastbmrag`` (and ``fastbmrag --help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastbmrag.config import __version__
from fastbmrag.util.lazy import lazy

if TYPE_CHECKING:
    from fastbmrag.api import RAG
    from fastbmrag.explore.commands import (
        ContradictionOptions,
        DigestOptions,
        EntityOptions,
        PathOptions,
    )
    from fastbmrag.explore.digest import render_digest
    from fastbmrag.index.options import UpdateOptions
    from fastbmrag.papers import (
        Paper,
        ReadReport,
        expand_inputs,
        iter_file,
        iter_papers,
        write_papers_csv,
    )
    from fastbmrag.papers.design import DESIGNS
    from fastbmrag.papers.eutils import DEFAULT_DATETYPE, FetchSettings
    from fastbmrag.papers.io import SUFFIXES, PaperFiles
    from fastbmrag.prompts import MAX_NAME_CHARS
    from fastbmrag.query import render
    from fastbmrag.query.filters import PAYLOAD_FILTERS
    from fastbmrag.query.options import AskOptions, QueryOptions
    from fastbmrag.query.understand import GROUNDED_TYPES, found_in
    from fastbmrag.store.admin import ExportOptions
    from fastbmrag.vocab import Normalized, abstention, update_vocab, vocab_cache_dir, vocab_info
    from fastbmrag.web import create_app

# name -> the module that defines it (the module itself, not its package: the least is loaded)
_FACE = {
    "RAG": "fastbmrag.api",
    "Paper": "fastbmrag.papers.model",
    "ReadReport": "fastbmrag.papers.report",
    "expand_inputs": "fastbmrag.papers.io",
    "iter_file": "fastbmrag.papers.io",
    "iter_papers": "fastbmrag.papers.io",
    "write_papers_csv": "fastbmrag.papers.io",
    "SUFFIXES": "fastbmrag.papers.io",
    "PaperFiles": "fastbmrag.papers.io",
    "DESIGNS": "fastbmrag.papers.design",
    "DEFAULT_DATETYPE": "fastbmrag.papers.eutils",
    "FetchSettings": "fastbmrag.papers.eutils",
    "MAX_NAME_CHARS": "fastbmrag.prompts",
    "AskOptions": "fastbmrag.query.options",
    "QueryOptions": "fastbmrag.query.options",
    "PathOptions": "fastbmrag.explore.commands",
    "EntityOptions": "fastbmrag.explore.commands",
    "ContradictionOptions": "fastbmrag.explore.commands",
    "DigestOptions": "fastbmrag.explore.commands",
    "UpdateOptions": "fastbmrag.index.options",
    "ExportOptions": "fastbmrag.store.admin",
    "render": "fastbmrag.query",
    "render_digest": "fastbmrag.explore.digest",
    "PAYLOAD_FILTERS": "fastbmrag.query.filters",
    "GROUNDED_TYPES": "fastbmrag.query.understand",
    "found_in": "fastbmrag.query.understand",
    "Normalized": "fastbmrag.vocab",
    "abstention": "fastbmrag.vocab",
    "update_vocab": "fastbmrag.vocab",
    "vocab_cache_dir": "fastbmrag.vocab",
    "vocab_info": "fastbmrag.vocab",
    "create_app": "fastbmrag.web",
}
__all__ = [
    "DESIGNS",
    "__version__",
    "abstention",
    "AskOptions",
    "ContradictionOptions",
    "create_app",
    "DEFAULT_DATETYPE",
    "DigestOptions",
    "EntityOptions",
    "expand_inputs",
    "ExportOptions",
    "FetchSettings",
    "found_in",
    "GROUNDED_TYPES",
    "iter_file",
    "iter_papers",
    "MAX_NAME_CHARS",
    "Normalized",
    "Paper",
    "PaperFiles",
    "PathOptions",
    "PAYLOAD_FILTERS",
    "QueryOptions",
    "RAG",
    "ReadReport",
    "render",
    "render_digest",
    "SUFFIXES",
    "update_vocab",
    "UpdateOptions",
    "vocab_cache_dir",
    "vocab_info",
    "write_papers_csv",
]

__getattr__ = lazy(__name__, _FACE)
