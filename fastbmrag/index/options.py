"""What an indexing run can be told (:class:`UpdateOptions`), with its defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastbmrag import config
from fastbmrag.errors import InputError

MAX_WAIT = 3600  # seconds a run may wait for the store (--wait)


@dataclass
class UpdateOptions:
    force: bool = False  # re-index papers that are done and unchanged
    dry_run: bool = False  # say what would happen, no LLM call, no write
    refine: bool = True  # stage 2 for papers with main text
    # Papers in flight: the model requests in flight (--concurrency), so that every request
    # slot has a paper to work on; the LLM client bounds the requests themselves.
    concurrency: int = config.DEFAULT_CONCURRENCY
    chunk_chars: int = config.DEFAULT_CHUNK_CHARS
    chunk_overlap: int = config.DEFAULT_CHUNK_OVERLAP
    top_k: int = config.DEFAULT_REFINE_TOP_K
    min_similarity: float = config.DEFAULT_MIN_SIMILARITY
    commit_every: int = 32  # finished papers per store flush + ledger transaction
    commit_seconds: float = 5.0  # ... or fewer, when this long has passed since the last
    num_predict: int | None = None  # completion cap of the draft and refine calls (else theirs)
    # seconds a run waits for the embedded store while a query or the page reads it
    wait: float = config.DEFAULT_WRITE_WAIT
    # ground the names of papers with a PMID or PMCID on PubTator3's annotations first
    # (--no-pubtator, or FASTBMRAG_PUBTATOR=0, turns it off)
    pubtator: bool = field(default_factory=config.pubtator_on)
    # input skipped as unusable (unreadable files, rows without text or id; not a citation
    # without an abstract) makes a run that indexed the rest exit 1
    strict: bool = False

    def __post_init__(self) -> None:
        for name, (low, high) in config.UPDATE_RANGES.items():
            value = getattr(self, name)
            if value is None and name == "num_predict":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(
                    f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}",
                    field=name,
                )
        if not isinstance(self.commit_seconds, int | float) or not self.commit_seconds >= 0:
            raise InputError(
                f"commit_seconds must be seconds, 0 or more, got {self.commit_seconds!r}",
                field="commit_seconds",
            )
        if not 0 <= self.wait <= MAX_WAIT:  # NaN too
            raise InputError(
                f"wait must be seconds from 0 to {MAX_WAIT}, got {self.wait}", field="wait"
            )
        if not -1.0 <= self.min_similarity <= 1.0:  # NaN too
            raise InputError(
                f"min_similarity must be a cosine similarity between -1 and 1, got "
                f"{self.min_similarity}",
                field="min_similarity",
            )
        if self.chunk_overlap >= self.chunk_chars:  # checked before any input is read
            raise InputError(
                f"chunk_overlap {self.chunk_overlap} must be smaller than the chunk size, "
                f"{self.chunk_chars}",
                field="chunk_overlap",
            )
