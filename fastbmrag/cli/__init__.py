"""The `fastbmrag` command: a thin layer over the library.

Commands parse options, call the library, format output and turn
:class:`fastbmrag.errors.FastbmragError` into one-line messages with the
documented exit codes. Each command lives in its own module here and is
registered at the bottom of this file.
"""

from __future__ import annotations

import logging
import sys

import click

from fastbmrag import __version__
from fastbmrag.cli.common import FastbmragGroup


@click.group(cls=FastbmragGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="fastbmrag")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
def cli(verbose: int) -> None:
    """Turn biomedical papers into a weighted knowledge graph and ask it questions.

    \b
    Typical use:
      fastbmrag convert pmc_articles/ -o papers.csv
      fastbmrag update --collection endometriosis papers.csv
      fastbmrag query "What is the role of IL1B in endometriosis?"
    """
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )


def main() -> None:
    cli(prog_name="fastbmrag")


# --- command registration (one line per command module) ---------------------------------------
from fastbmrag.cli.convert import convert  # noqa: E402

cli.add_command(convert)
from fastbmrag.cli.status import status  # noqa: E402

cli.add_command(status)
from fastbmrag.cli.delete import delete  # noqa: E402

cli.add_command(delete)
from fastbmrag.cli.export import export  # noqa: E402

cli.add_command(export)
from fastbmrag.cli.query import query  # noqa: E402

cli.add_command(query)
from fastbmrag.cli.normalize import normalize  # noqa: E402

cli.add_command(normalize)
from fastbmrag.cli.vocab import vocab  # noqa: E402

cli.add_command(vocab)
from fastbmrag.cli.fetch import fetch, sync  # noqa: E402

cli.add_command(fetch)
cli.add_command(sync)
from fastbmrag.cli.update import update  # noqa: E402

cli.add_command(update)
