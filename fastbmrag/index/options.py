"""What an indexing run can be told (:class:`UpdateOptions`), each option declared once with its
default, range, flag and help (:mod:`fastbmrag.declared`): `update`, `sync` and
``RAG.insert_paper`` take these fields and refuse the same values the same way."""

from __future__ import annotations

from dataclasses import dataclass

from fastbmrag import config
from fastbmrag.declared import check, option
from fastbmrag.errors import InputError
from fastbmrag.util.wording import option_named

MAX_WAIT = 3600  # seconds a run may wait for the store (--wait)


def _whole(name: str) -> dict[str, int | bool]:
    """A whole-number option's bounds, from :data:`fastbmrag.config.UPDATE_RANGES`."""
    low, high = config.UPDATE_RANGES[name]
    return {"low": low, "high": high, "whole": True}


@dataclass
class UpdateOptions:
    force: bool = option(False, flag="--force", help="Re-index papers even when unchanged.")
    dry_run: bool = option(
        False, flag="--dry-run", help="Say what would be indexed; no LLM call, no write."
    )
    refine: bool = option(
        True, flag="--no-refine", negate=True,
        help="Skip stage 2 (abstract-only graph, 1 chat call).",
    )  # fmt: skip
    # Papers in flight: the model requests in flight (the settings' concurrency per server), so
    # that every request slot has a paper to work on; the LLM client bounds the requests.
    concurrency: int = option(
        config.DEFAULT_CONCURRENCY, **_whole("concurrency"), cli=False,
        help="Papers in flight.",
    )  # fmt: skip
    chunk_chars: int = option(
        config.DEFAULT_CHUNK_CHARS, flag="--chunk-size", **_whole("chunk_chars"),
        help="Max characters per main-text chunk.",
    )  # fmt: skip
    chunk_overlap: int = option(
        config.DEFAULT_CHUNK_OVERLAP, flag="--chunk-overlap", **_whole("chunk_overlap"),
        help="Characters repeated where a paragraph is split.",
    )  # fmt: skip
    top_k: int = option(
        config.DEFAULT_REFINE_TOP_K, flag="--top-k", **_whole("top_k"),
        help="Chunks per relation in stage 2.",
    )  # fmt: skip
    min_similarity: float = option(
        config.DEFAULT_MIN_SIMILARITY, flag="--min-similarity", low=-1, high=1,
        kind="a cosine similarity", help="Cosine floor for a chunk to refine a relation.",
    )  # fmt: skip
    commit_every: int = option(
        32, **_whole("commit_every"),
        cli=False, help="Finished papers per store flush and ledger transaction.",
    )  # fmt: skip
    commit_seconds: float = option(
        5.0, low=0, kind="seconds", cli=False,
        help="... or fewer, when this long has passed since the last.",
    )  # fmt: skip
    num_predict: int | None = option(
        None, **_whole("num_predict"),
        cli=False, help="Completion cap of the draft and refine calls (else theirs).",
    )  # fmt: skip
    wait: float = option(
        config.DEFAULT_WRITE_WAIT, flag="--wait", low=0, high=MAX_WAIT, kind="seconds",
        help="Seconds to wait for a query or the web page reading the embedded store before "
        "giving up (exit 3).",
    )  # fmt: skip
    pubtator: bool = option(
        factory=config.pubtator_on, flag="--no-pubtator", negate=True,
        help="Ground names with the dictionaries only, not on NCBI's PubTator3 annotations of "
        f"papers with a PMID or PMCID [env {config.ENV_PUBTATOR}=0].",
    )  # fmt: skip
    findings_model: bool = option(
        True, flag="--no-findings-model", negate=True,
        help="Tell a paper's findings from what it restates by the text's cues and the model's "
        "mark alone, not by the findings model.",
    )  # fmt: skip
    background_threshold: float | None = option(
        None, flag="--background-threshold", low=0, high=1, kind="a probability",
        help="The probability at or above which the findings model calls a relation background "
        "(the paper restates it as known) [default: the model's own, declared with it; higher: "
        "fewer relations called background, more surely].",
    )  # fmt: skip
    strict: bool = option(
        False, flag="--strict",
        help="Exit 1 when input rows or records were skipped as unusable (for cron).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)
        if self.chunk_overlap >= self.chunk_chars:  # checked before any input is read
            raise InputError(
                f"{option_named('chunk_overlap')} {self.chunk_overlap} must be smaller than the "
                f"chunk size, {self.chunk_chars}",
                field="chunk_overlap",
            )
