"""What an indexing run can be told (:class:`UpdateOptions`), with its defaults."""

from __future__ import annotations

from dataclasses import dataclass

from fastbmrag import config
from fastbmrag.index.refine import CHUNK_CHARS, CHUNK_OVERLAP, MIN_SIMILARITY, TOP_K


@dataclass
class UpdateOptions:
    force: bool = False  # re-index papers that are done and unchanged
    dry_run: bool = False  # say what would happen, no LLM call, no write
    refine: bool = True  # stage 2 for papers with main text
    # Papers in flight: the model requests in flight (--concurrency), so that every request
    # slot has a paper to work on; the LLM client bounds the requests themselves.
    concurrency: int = config.DEFAULT_CONCURRENCY
    chunk_chars: int = CHUNK_CHARS
    chunk_overlap: int = CHUNK_OVERLAP
    top_k: int = TOP_K
    min_similarity: float = MIN_SIMILARITY
    commit_every: int = 32  # finished papers per store flush + ledger transaction
    commit_seconds: float = 5.0  # ... or fewer, when this long has passed since the last
    num_predict: int | None = None  # completion cap of the draft and refine calls (else theirs)
