"""`fastbmrag update`: index papers into a collection."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fastbmrag import config
from fastbmrag.cli.common import (
    LLM_OPTION_NAMES,
    collection_option,
    command_logging,
    json_option,
    llm_from_options,
    llm_options,
    qdrant_options,
    quiet_option,
    working_dir_option,
)
from fastbmrag.refine import CHUNK_CHARS, CHUNK_OVERLAP, MIN_SIMILARITY, TOP_K

F = TypeVar("F", bound=Callable[..., Any])


def index_options(f: F) -> F:
    """Everything that shapes indexing; shared by `update` and `sync`."""
    decorators = [
        click.option("--force", is_flag=True, help="Re-index papers even when unchanged."),
        click.option(
            "--dry-run", is_flag=True, help="Say what would be indexed; no LLM call, no write."
        ),
        click.option(
            "--no-refine", is_flag=True, help="Skip stage 2 (abstract-only graph, 1 chat call)."
        ),
        click.option(
            "--chunk-size",
            type=click.IntRange(200, 20000),
            default=CHUNK_CHARS,
            show_default=True,
            help="Max characters per main-text chunk.",
        ),
        click.option(
            "--chunk-overlap",
            type=click.IntRange(0, 5000),
            default=CHUNK_OVERLAP,
            show_default=True,
            help="Characters repeated where a paragraph is split.",
        ),
        click.option(
            "--top-k",
            type=click.IntRange(1, 20),
            default=TOP_K,
            show_default=True,
            help="Chunks per relation in stage 2.",
        ),
        click.option(
            "--min-similarity",
            type=click.FloatRange(-1, 1),
            default=MIN_SIMILARITY,
            show_default=True,
            help="Cosine floor for a chunk to refine a relation.",
        ),
        click.option(
            "--no-normalize",
            is_flag=True,
            help="Keep entity names as the model wrote them (no HGNC/MeSH ids).",
        ),
        llm_options,
        qdrant_options,
        working_dir_option,
        quiet_option,
        json_option,
        click.option(
            "--log-file",
            type=click.Path(dir_okay=False),
            default=None,
            help="Also append log lines (warnings, failures, the summary) to this file.",
        ),
    ]
    for deco in reversed(decorators):
        f = deco(f)
    return f


def run_index(
    papers_factory: Callable[[], Any],
    collection: Any,
    wd: Path,
    opts: dict[str, Any],
    *,
    total: int | None,
) -> Any:
    """Build the model client and normaliser from the shared options and index; returns RunSummary."""
    from fastbmrag.pipeline import UpdateOptions, index_papers
    from fastbmrag.vocab import IdentityNormalizer

    if opts["no_normalize"]:
        normalizer: Any = IdentityNormalizer()
    else:
        from fastbmrag.vocab import load_normalizer

        normalizer = load_normalizer()
    llm_kwargs = {k: v for k, v in opts.items() if k in LLM_OPTION_NAMES}
    llm = llm_from_options(wd, **llm_kwargs)
    options = UpdateOptions(
        force=opts["force"],
        dry_run=opts["dry_run"],
        refine=not opts["no_refine"],
        concurrency=llm_kwargs.get("concurrency") or config.DEFAULT_CONCURRENCY,
        chunk_chars=opts["chunk_size"],
        chunk_overlap=opts["chunk_overlap"],
        top_k=opts["top_k"],
        min_similarity=opts["min_similarity"],
    )
    return index_papers(
        papers_factory(),
        collection,
        llm,
        normalizer,
        options,
        progress=not opts["quiet"],
        total=total,
    )


def report_summary(summary: Any, *, as_json: bool, quiet: bool) -> None:
    log = logging.getLogger("fastbmrag.update")
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2, default=str))
    else:
        click.echo(summary.line(), err=True)
        if summary.failures and not quiet:
            for paper_id, error in summary.failures[:20]:
                click.echo(f"  failed {paper_id}: {error}", err=True)
            if len(summary.failures) > 20:
                click.echo(
                    f"  ... and {len(summary.failures) - 20} more: fastbmrag status", err=True
                )
    log.info(summary.line())


@click.command("update")
@collection_option(required=True)
@index_options
@click.argument("inputs", nargs=-1, required=True)
def update(collection: str, inputs: tuple[str, ...], **opts: Any) -> None:
    """Index papers into a collection (two-stage: draft from abstract, refine from main text).

    INPUTS are papers CSV/TSV files, PMC JATS (.nxml) or MEDLINE (.xml, .xml.gz) files,
    directories or globs. Papers already indexed are skipped unless their content changed;
    failed papers are retried. Exit 0 when every paper was indexed, 1 when some failed
    (see `fastbmrag status`), 2 when the run cannot start, 3 when the collection is locked.

    \b
    Example:
      fastbmrag update --collection endometriosis papers.csv
      fastbmrag update -c endometriosis --llm-model llama3.1:8b --concurrency 8 pmc/
    """
    from fastbmrag.errors import CollectionNotFound, InputError
    from fastbmrag.papers import ReadReport, iter_papers
    from fastbmrag.store.collection import Collection

    with command_logging(opts["log_file"], opts["quiet"]):
        wd = config.working_dir(opts["working_dir"])

        # A first pass reads every input: bad input fails here, before any lock, model call or
        # write, and the progress bar gets a real total.
        first = ReadReport()
        total = sum(1 for _ in iter_papers(inputs, first))
        if total == 0:
            why = "; ".join(f"{where}: {reason}" for where, reason in first.skipped[:3])
            raise InputError(f"No papers to index in {', '.join(inputs)}: {why or first.summary()}")
        if first.skipped:
            for where, reason in first.skipped[:20]:
                click.echo(f"  skipped {where}: {reason}", err=True)
        if not opts["quiet"] or first.skipped:
            click.echo(first.summary(), err=True)

        def papers() -> Any:
            return iter_papers(inputs, ReadReport())

        try:
            coll = Collection.open(
                wd,
                collection,
                qdrant_url=config.qdrant_url(opts["qdrant_url"]),
                api_key=config.qdrant_api_key(opts["qdrant_api_key"]),
                write=not opts["dry_run"],
                create=not opts["dry_run"],
            )
        except CollectionNotFound:
            if not opts["dry_run"]:
                raise
            summary = run_index(papers, None, wd, opts, total=total)  # every paper is new
        else:
            with coll:
                summary = run_index(papers, coll, wd, opts, total=total)
        report_summary(summary, as_json=opts["as_json"], quiet=opts["quiet"])
    raise SystemExit(summary.exit_code)
