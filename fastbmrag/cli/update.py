"""`fastbmrag update`: index papers into a collection."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import click

from fastbmrag import config
from fastbmrag.cli.common import (
    collection_option,
    command_logging,
    json_option,
    llm_options,
    qdrant_options,
    quiet_option,
    working_dir_option,
)
from fastbmrag.papers.report import ReadReport

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from fastbmrag.api import RAG
    from fastbmrag.papers.model import Paper


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
            default=config.DEFAULT_CHUNK_CHARS,
            show_default=True,
            help="Max characters per main-text chunk.",
        ),
        click.option(
            "--chunk-overlap",
            type=click.IntRange(0, 5000),
            default=config.DEFAULT_CHUNK_OVERLAP,
            show_default=True,
            help="Characters repeated where a paragraph is split.",
        ),
        click.option(
            "--top-k",
            type=click.IntRange(1, 20),
            default=config.DEFAULT_REFINE_TOP_K,
            show_default=True,
            help="Chunks per relation in stage 2.",
        ),
        click.option(
            "--min-similarity",
            type=click.FloatRange(-1, 1),
            default=config.DEFAULT_MIN_SIMILARITY,
            show_default=True,
            help="Cosine floor for a chunk to refine a relation.",
        ),
        click.option(
            "--no-pubtator",
            is_flag=True,
            help="Ground names with the dictionaries only, not on NCBI's PubTator3 annotations of "
            f"papers with a PMID or PMCID [env {config.ENV_PUBTATOR}=0].",
        ),
        click.option(
            "--no-normalize",
            is_flag=True,
            help="Keep entity names as the model wrote them (no HGNC/MeSH ids).",
        ),
        click.option(
            "--num-predict",
            type=click.IntRange(16, 1_000_000),
            default=None,
            envvar=config.ENV_NUM_PREDICT,
            help=f"Cap on the tokens the model writes per draft / refine call [env "
            f"{config.ENV_NUM_PREDICT}, default {config.DEFAULT_DRAFT_NUM_PREDICT} / {config.DEFAULT_REFINE_NUM_PREDICT}].",
        ),
        click.option(
            "--wait",
            type=click.FloatRange(0, 3600),
            default=config.DEFAULT_WRITE_WAIT,
            show_default=True,
            help="Seconds to wait for a query or the web page reading the embedded store before "
            "giving up (exit 3).",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Exit 1 when input rows or records were skipped as unusable (for cron).",
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


def update_options(rag: RAG, opts: dict[str, Any]) -> Any:
    """The indexing options of `update` and `sync`, with the settings of ``rag``."""
    return rag.update_options(
        force=opts["force"],
        dry_run=opts["dry_run"],
        refine=not opts["no_refine"],
        chunk_chars=opts["chunk_size"],
        chunk_overlap=opts["chunk_overlap"],
        top_k=opts["top_k"],
        min_similarity=opts["min_similarity"],
        wait=opts["wait"],
        **({"pubtator": False} if opts["no_pubtator"] else {}),
    )


MAX_LINES = 20  # skipped inputs and failed papers listed; the rest counted


def count_input(inputs: tuple[str, ...], quiet: bool) -> ReadReport:
    """The first pass over the input: counts papers for the progress bar, reports skipped rows,
    and fails (exit 2) when there is nothing to index."""
    from fastbmrag.errors import InputError
    from fastbmrag.papers import iter_papers

    report = ReadReport()
    total = sum(1 for _ in iter_papers(inputs, report))
    if total == 0 and not report.deleted:  # an update file may only delete citations
        why = "; ".join(f"{where}: {reason}" for where, reason in report.skipped[:3])
        raise InputError(f"No papers to index in {', '.join(inputs)}: {why or report.summary()}")
    if not quiet:  # defects of the input first (unreadable files), then routine skips
        shown = [*report.unusable, *(s for s in report.skipped if s not in report.unusable)]
        for where, reason in shown[:MAX_LINES]:
            click.echo(f"  skipped {where}: {reason}", err=True)
        if len(shown) > MAX_LINES:
            click.echo(f"  ... and {len(shown) - MAX_LINES:,} more skipped", err=True)
    if not quiet or report.skipped:
        click.echo(report.summary(), err=True)
    return report


def strict_exit(code: int, unusable: int, strict: bool) -> int:
    """``--strict``: input skipped as unusable (not a citation without an abstract) makes a
    successful run exit 1, and says so."""
    if strict and unusable and code == 0:
        click.echo(f"--strict: {unusable:,} input rows or records unusable: exit 1", err=True)
        return 1
    return code


def report_summary(summary: Any, *, as_json: bool, quiet: bool, code: int, read: Any) -> None:
    """The run's summary: JSON on stdout (with the read's ``input`` and the process's exit
    code), else a line on stderr and the failures (under ``--quiet`` too: they are errors)."""
    if as_json:
        out = {**summary.to_dict(), "exit_code": code}
        if read is not None:
            out["input"] = read.to_dict()
        click.echo(json.dumps(out, indent=2, default=str))
    else:
        click.echo(summary.line(), err=True)
        for paper_id, error in summary.failures[:MAX_LINES]:
            click.echo(f"  failed {paper_id}: {error}", err=True)
        if len(summary.failures) > MAX_LINES:
            click.echo(
                f"  ... and {len(summary.failures) - MAX_LINES:,} more: fastbmrag status", err=True
            )


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
    from fastbmrag.api import RAG
    from fastbmrag.papers import iter_papers

    with command_logging(opts["log_file"], opts["quiet"]):
        rag = RAG.from_options({**opts, "collection": collection})
        counted: list[ReadReport] = []  # the first pass: the latest version of each PMID

        def count() -> ReadReport:
            counted.append(count_input(inputs, opts["quiet"]))
            return counted[0]

        def papers() -> Iterator[Paper]:
            latest = counted[0].versions if counted else {}
            return iter_papers(inputs, ReadReport(deletions=True, latest=latest))

        summary, first = rag.update(
            papers,
            update_options(rag, opts),
            count=count,
            progress=not opts["quiet"],
        )
        code = strict_exit(summary.exit_code, len(first.unusable), opts["strict"])
        report_summary(summary, as_json=opts["as_json"], quiet=opts["quiet"], code=code, read=first)
        logging.getLogger("fastbmrag.update").info("%s", summary.line())  # the log file's
    raise SystemExit(code)
