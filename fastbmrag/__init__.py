"""fastbmrag: turn biomedical literature into a queryable, cited knowledge graph.

The Python API mirrors the command line::

    from fastbmrag import RAG
    rag = RAG(working_dir="~/fastbmrag", collection_name="endometriosis")
    rag.insert_paper(df)            # same as `fastbmrag update`
    result = rag.query("What is the role of IL1B in endometriosis?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from fastbmrag.api import RAG

__all__ = ["RAG", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported lazily so that `import fastbmrag` (and `fastbmrag --help`) stays fast.
    if name == "RAG":
        from fastbmrag.api import RAG

        return RAG
    raise AttributeError(name)
