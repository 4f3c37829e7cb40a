"""`fastbmrag export`: a collection's graph as GraphML or CSV."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fastbmrag import ExportOptions
from fastbmrag.cli.common import (
    collection_option,
    counted,
    declared_options,
    qdrant_options,
    quiet_option,
    replacing,
    working_dir_option,
)
from fastbmrag.errors import InputError


@click.command("export")
@collection_option()
@working_dir_option
@qdrant_options
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="File to write ('-' for stdout); replaced if it exists.",
)
@declared_options(ExportOptions)
@quiet_option
def export(
    collection: str | None,
    working_dir: str | None,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    fmt: str | None,
    output: str,
    raw: bool,
    quiet: bool,
) -> None:
    """Export a collection's knowledge graph.

    GraphML: a directed graph with one node per entity (name, type, ontology_id, degree,
    weight) and one edge per stored relation (relationship_type, paper_id, description,
    weight and every other payload field). CSV: one row per edge with its full payload.

    \b
    Example:
      fastbmrag export --collection endometriosis --format graphml -o endometriosis.graphml
      fastbmrag export -c endometriosis -o edges.csv
    """
    from fastbmrag import RAG

    if fmt is None:
        suffix = Path(output).suffix.lower().lstrip(".")
        if suffix not in ("graphml", "csv"):
            raise InputError(
                f"Cannot tell the export format from {output!r}: add --format graphml or "
                "--format csv"
            )
        fmt = suffix
    rag = RAG.from_options(
        {"working_dir": working_dir, "collection": collection, "qdrant_url": qdrant_url,
         "qdrant_api_key": qdrant_api_key}
    )  # fmt: skip
    collection = rag.collection_name  # the one there is, when not given; checked before writing
    try:
        if output == "-":
            nodes, edges = rag.export(
                fmt, sys.stdout.buffer if fmt == "graphml" else sys.stdout, raw=raw
            )
            sys.stdout.flush()
        elif fmt == "graphml":
            with replacing(Path(output)) as tmp, open(tmp, "wb") as fb:
                nodes, edges = rag.export(fmt, fb)
        else:
            with replacing(Path(output)) as tmp, open(tmp, "w", newline="", encoding="utf-8") as ft:
                nodes, edges = rag.export(fmt, ft, raw=raw)
    except BrokenPipeError:
        raise  # the reader of stdout stopped early (`-o - | head`): not an error
    except OSError as err:
        named = "standard output" if output == "-" else output
        raise InputError(f"Cannot write {named}: {err.strerror}: choose another -o path") from err
    what = counted(edges, "edge")
    if fmt == "graphml":
        what = f"{counted(nodes, 'node')} and {what}"
    if not quiet and output != "-":
        click.echo(f"Wrote {what} of collection '{collection}' to {output}.", err=True)
