"""`fastbmrag query`: ask the knowledge graph a question; answers cite their papers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from fastbmrag import AskOptions
from fastbmrag.cli.common import (
    collection_option,
    declared_options,
    declared_values,
    flag_of,
    llm_options,
    qdrant_options,
    working_dir_option,
)

F = TypeVar("F", bound=Callable[..., Any])


@click.command("query")
@working_dir_option
@collection_option()
@qdrant_options
@llm_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output: readable text, JSON (answer, references, edges, filters, timings, LLM calls), or Markdown.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@declared_options(AskOptions)
def query(**kw: Any) -> None:
    """Answer QUESTION from a collection, citing the papers behind each statement.

    \b
    Examples:
      fastbmrag query "What is the role of IL1B in endometriosis?"
      fastbmrag query "Which genes are up- or down-regulated in endometriosis?" --since 2015 --format markdown
      fastbmrag query "IL1B" --entity IL1B -r upregulated_in --no-answer --json
    """
    from fastbmrag import RAG

    fmt = "json" if kw.pop("as_json") else kw.pop("fmt")
    rag = RAG.from_options(kw)
    rag.readahead()  # the disk reads the shard while the modules and vocabularies load

    from fastbmrag import render

    options = declared_values(AskOptions, kw)
    click.echo(render(rag.query(**options), fmt, flag_of), nl=False)
