"""`fastbmrag update`: index papers into a collection."""

from __future__ import annotations

import json
import logging
from typing import Any

import click

from fastbmrag import PaperFiles, ReadReport, UpdateOptions
from fastbmrag.cli.common import (
    collection_option,
    command_logging,
    declared_values,
    index_options,
)
from fastbmrag.errors import EXIT_INTERRUPTED, FastbmragError

MAX_LINES = 20  # skipped inputs and failed papers listed; the rest counted


class ShownFiles(PaperFiles):
    """The input files of `update`, whose first read says what it skipped, before any paper
    is indexed: defects of the input first (unreadable files), then routine skips."""

    def __init__(self, inputs: tuple[str, ...], quiet: bool) -> None:
        super().__init__(inputs)
        self.quiet = quiet

    def read(self) -> ReadReport:
        report = super().read()
        if not self.quiet:
            shown = [*report.unusable, *(s for s in report.skipped if s not in report.unusable)]
            for where, reason in shown[:MAX_LINES]:
                click.echo(f"  skipped {where}: {reason}", err=True)
            if len(shown) > MAX_LINES:
                click.echo(f"  ... and {len(shown) - MAX_LINES:,} more skipped", err=True)
        if not self.quiet or report.skipped:
            click.echo(report.summary(), err=True)
        return report


def report_summary(summary: Any, *, as_json: bool) -> None:
    """The run's summary: JSON on stdout (with the read's ``input`` and the exit code), else a
    line on stderr and the failures (under ``--quiet`` too: they are errors)."""
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2, default=str))
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
@index_options(UpdateOptions)
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
    from fastbmrag import RAG

    with command_logging(opts["log_file"], opts["quiet"]):
        rag = RAG.from_options({**opts, "collection": collection})
        files = ShownFiles(inputs, opts["quiet"])  # the first pass: the latest version of each PMID
        try:
            summary = rag.insert_paper(
                files, progress=not opts["quiet"], **declared_values(UpdateOptions, opts)
            )
        except (FastbmragError, KeyboardInterrupt) as err:
            done = getattr(err, "summary", None)  # a run that stopped: what it committed
            if opts["as_json"] and done is not None:
                code = getattr(err, "exit_code", EXIT_INTERRUPTED)
                out = {**done.to_dict(), "exit_code": code, "error": str(err) or "interrupted"}
                click.echo(json.dumps(out, indent=2, default=str))
            raise
        report_summary(summary, as_json=opts["as_json"])
        logging.getLogger("fastbmrag.update").info("%s", summary.line())  # the log file's
    raise SystemExit(summary.exit_code)
