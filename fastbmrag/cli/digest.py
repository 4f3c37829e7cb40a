"""`fastbmrag digest` and `fastbmrag watch`: what changed since a run, and the entities whose
news come first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from fastbmrag import DigestOptions
from fastbmrag.cli.common import (
    collection_option,
    declared_options,
    json_option,
    qdrant_options,
    replacing,
    working_dir_option,
    workspace,
)
from fastbmrag.errors import InputError

FORMATS = ("text", "markdown", "json", "html")
_BY_SUFFIX = {".md": "markdown", ".markdown": "markdown", ".json": "json", ".html": "html",
              ".htm": "html"}  # fmt: skip


def format_of(output: str | None, fmt: str | None) -> str:
    """The format asked for, else the one the output file's suffix names, else text."""
    if fmt:
        return fmt
    return _BY_SUFFIX.get(Path(output).suffix.lower(), "text") if output else "text"


def write_digest(
    rag: Any, since: str, output: str | None, fmt: str | None, findings_only: bool = False
) -> bool:
    """Write the digest since ``since`` to ``output`` (standard output when None or "-");
    whether there was anything new."""
    from fastbmrag import render_digest

    found = rag.digest(since, findings_only=findings_only)
    text = render_digest(found, format_of(output, fmt))
    if output in (None, "-"):
        click.echo(text, nl=False)
    else:
        try:
            with replacing(Path(output)) as tmp:
                tmp.write_text(text, encoding="utf-8")
        except OSError as err:
            raise InputError(
                f"Cannot write {output}: {err.strerror or err}: choose another -o path"
            ) from err
    return not found.get("nothing")


@click.command("digest")
@collection_option()
@working_dir_option
@qdrant_options
@declared_options(DigestOptions)
@click.option(
    "--watch",
    "watch_names",
    multiple=True,
    metavar="NAME",
    help="Also watch this entity (name or id) from now on: its news come first.",
)
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default=None,
    help="Output format (default: from the -o suffix .md/.json/.html, else text).",
)  # fmt: skip
@click.option("-o", "--output", default=None, help="Write to this file (default: standard output).")
def digest(
    since: str, findings_only: bool, watch_names: tuple[str, ...], fmt: str | None,
    output: str | None, **opts: Any,
) -> None:  # fmt: skip
    """Say what the last runs changed: new papers, new edges by entity (watched ones first),
    pairs whose papers newly disagree or newly agree, retracted and removed papers, entities
    new to the collection. "Nothing new since ..." when nothing changed. No model call.

    \b
    Examples:
      fastbmrag digest -c endometriosis
      fastbmrag digest -c endometriosis --since 2026-11-01 -o news.html
    """
    rag = workspace(**opts)
    if watch_names:
        rag.watch(list(watch_names))
    write_digest(rag, since, output, fmt, findings_only)


@click.group("watch")
def watch() -> None:
    """The entities whose news come first in a collection's digest (and on its page)."""


@watch.command("add")
@collection_option()
@working_dir_option
@click.argument("names", nargs=-1, required=True)
def watch_add(names: tuple[str, ...], **opts: Any) -> None:
    """Watch these entities (names or ids, normalised as --entity is).

    \b
    Example:
      fastbmrag watch add -c endometriosis IL1B endometriosis
    """
    for key, name in workspace(**opts).watch(list(names)):
        click.echo(f"watching {name} ({key})")


@watch.command("list")
@collection_option()
@working_dir_option
@json_option
def watch_list(as_json: bool, **opts: Any) -> None:
    """List the watched entities."""
    watched = workspace(**opts).watched()
    if as_json:
        click.echo(json.dumps([{"key": k, "name": n} for k, n in watched.items()], indent=2))
        return
    if not watched:
        click.echo("No entity is watched: fastbmrag watch add -c NAME IL1B")
    for key, name in watched.items():
        click.echo(f"{name} ({key})")


@watch.command("remove")
@collection_option()
@working_dir_option
@click.argument("names", nargs=-1, required=True)
def watch_remove(names: tuple[str, ...], **opts: Any) -> None:
    """Stop watching these entities."""
    removed = workspace(**opts).unwatch(list(names))
    if not removed:
        raise InputError(
            f"None of {', '.join(names)} is watched: `fastbmrag watch list` shows those that are"
        )
    click.echo(f"{removed} no longer watched")
