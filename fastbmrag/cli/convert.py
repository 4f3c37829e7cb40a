"""`fastbmrag convert`: JATS / MEDLINE / papers CSV files -> one papers CSV for `update`."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from fastbmrag import SUFFIXES, Paper, ReadReport, expand_inputs, iter_file, write_papers_csv
from fastbmrag.cli.common import quiet_option
from fastbmrag.errors import InputError

MAX_DETAILS = 20


def _papers(files: list[Path], report: ReadReport, progress: bool) -> Iterator[Paper]:
    if not progress:
        for path in files:
            yield from iter_file(path, report)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("converting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files, {task.fields[papers]:,} papers"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("convert", total=len(files), papers=0)
        for path in files:
            for paper in iter_file(path, report):
                yield paper
                if report.read % 500 == 0:
                    bar.update(task, papers=report.read)
            bar.update(task, advance=1, papers=report.read)


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, writable=True),
    help="Papers CSV to write (.tsv for tab-separated); replaced if it exists.",
)
@quiet_option
def convert(inputs: tuple[str, ...], output: str, quiet: bool) -> None:
    """Convert PMC full texts, MEDLINE XML and papers CSVs into one papers CSV.

    INPUT is a file, a directory (searched recursively) or a quoted glob pattern.
    Accepted: .nxml (PMC JATS full text), .xml/.xml.gz (MEDLINE PubmedArticleSet or
    JATS, told apart by their root element), .csv/.tsv (papers CSVs, merged).
    A broken file is reported and skipped; a paper_id seen before is dropped.

    The output has the columns paper_id, article_title, abstract, main_text (a Python
    list literal, one element per paragraph), year, authors, journal, weight, pmid,
    pmcid, doi, then any extra CSV columns; it is the input of `fastbmrag update`.

    Exit status: 0 if at least one paper was written, 2 if none was.

    \b
    Example:
      fastbmrag convert pmc_articles/ 'medline/*.xml.gz' -o papers.csv
      fastbmrag update --collection endometriosis papers.csv
    """
    if output == "-":  # a file named "-" is never what was meant
        raise InputError(
            "convert writes a papers CSV file, not standard output: give a path (-o papers.csv)"
        )
    report = ReadReport()
    files = expand_inputs(inputs, report)
    progress = not quiet and len(files) > 1 and sys.stderr.isatty()
    out = Path(output)
    # Never read the output back in as an input (a rerun over the same directory).
    kept = [f for f in files if f.resolve() != out.resolve()]
    if files and not kept:
        raise InputError(
            f"Nothing to convert: the only input, {out}, is the output (-o); write to another file"
        )
    files = kept
    # a first pass over the XML notes each MEDLINE citation's latest version, which the
    # second keeps (as update does)
    medline = ReadReport()
    for path in files:
        if path.name.lower().endswith((".xml", ".xml.gz")):
            for _ in iter_file(path, medline):
                pass
    report.latest = medline.versions
    papers = _papers(files, report, progress)
    first = next(papers, None)  # nothing to write -> leave an existing output untouched
    written = 0 if first is None else write_papers_csv(itertools.chain([first], papers), out)
    if not quiet:
        for where, why in report.skipped[:MAX_DETAILS]:
            click.echo(f"skipped {where}: {why}", err=True)
        if len(report.skipped) > MAX_DETAILS:
            click.echo(
                f"... and {len(report.skipped) - MAX_DETAILS:,} more skipped (-v lists them all)",
                err=True,
            )
        for where, what in report.repaired[:MAX_DETAILS]:
            click.echo(f"repaired {where}: {what}", err=True)
    if written == 0:
        raise InputError(
            f"nothing converted: {report.summary()}; give {', '.join(SUFFIXES)} files "
            "whose papers have an abstract or main text"
        )
    click.echo(f"{report.summary()}; wrote {written:,} to {out}", err=True)
