"""The `fastbmrag` command: a thin layer over the library.

Commands parse options, call the library, format output and turn
:class:`fastbmrag.errors.FastbmragError` into one-line messages with the
documented exit codes. Each command lives in its own module here and is
declared in the registry (:mod:`fastbmrag.registry`).
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys

import click

from fastbmrag.cli.common import FastbmragGroup, stdout_failed
from fastbmrag.config import __version__
from fastbmrag.registry import COMMANDS as REGISTERED

# Command name -> "module:attribute", from the registry. Modules are imported only when their
# command runs (or when --help lists them), so `fastbmrag query ...` does not pay for the
# indexer's imports.
COMMANDS = dict(sorted(REGISTERED.items()))


class LazyGroup(FastbmragGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS:
            module, attr = COMMANDS[name].split(":")
            command: click.Command = getattr(importlib.import_module(module), attr)
            return command
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    # SIGTERM (systemd, `timeout`, a cron kill) and SIGHUP (the terminal gone) end a run as
    # Ctrl-C does: committed work kept, the run's summary recorded, exit 128 + the signal
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    try:
        cli(args=[_utf8(arg) for arg in sys.argv[1:]], prog_name="fastbmrag")
    except OSError as err:  # --help, --version: standard output takes nothing (/dev/full)
        stdout_failed(err)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


class Terminated(KeyboardInterrupt):
    """A signal that ends the run as an interruption does (:func:`main`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.exit_code = 128 + signum


def _utf8(arg: str) -> str:
    """An argument as valid UTF-8 text: bytes that are not UTF-8 (which Python keeps as lone
    surrogates) become U+FFFD, except in the name of a file that exists."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        if not os.path.exists(arg):
            return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return arg
