"""Options shared by several commands, defined once, and the error-to-exit-code mapping."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from fastbmrag import config
from fastbmrag.errors import EXIT_INTERRUPTED, FastbmragError

F = TypeVar("F", bound=Callable[..., Any])


class FastbmragGroup(click.Group):
    """Maps library errors to one-line messages and documented exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FastbmragError as err:
            click.echo(f"Error: {err}", err=True)
            sys.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo(
                "Interrupted: everything already committed is kept; rerun to continue.", err=True
            )
            sys.exit(EXIT_INTERRUPTED)


def working_dir_option(f: F) -> F:
    return click.option(
        "--working-dir",
        type=click.Path(file_okay=False),
        default=None,
        help=f"Directory holding collections and state [env {config.ENV_HOME}, default {config.DEFAULT_HOME}].",
    )(f)


def collection_option(required: bool = False) -> Callable[[F], F]:
    def deco(f: F) -> F:
        return click.option(
            "-c",
            "--collection",
            default=None,
            envvar=config.ENV_COLLECTION,
            required=required,
            help=f"Collection name [env {config.ENV_COLLECTION}].",
        )(f)

    return deco


def qdrant_options(f: F) -> F:
    f = click.option(
        "--qdrant-api-key",
        default=None,
        help=f"API key for the Qdrant server [env {config.ENV_QDRANT_API_KEY}].",
    )(f)
    return click.option(
        "--qdrant-url",
        default=None,
        help=f"Use a Qdrant server/cluster instead of the embedded store [env {config.ENV_QDRANT_URL}].",
    )(f)


def quiet_option(f: F) -> F:
    return click.option(
        "-q", "--quiet", is_flag=True, help="Only errors and a one-line summary (for cron)."
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout.")(
        f
    )
