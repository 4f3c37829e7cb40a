"""`fastbmrag query`: ask the knowledge graph a question; answers cite their papers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from fastbmrag import PAYLOAD_FILTERS, config
from fastbmrag.cli.common import (
    collection_option,
    llm_options,
    qdrant_options,
    working_dir_option,
)

F = TypeVar("F", bound=Callable[..., Any])


def payload_filter_options(f: F) -> F:
    """The CLI options of the payload filters, one per row of :data:`PAYLOAD_FILTERS`."""
    for spec in reversed(PAYLOAD_FILTERS):
        kind: Any = click.Choice(spec.choices) if spec.choices else spec.cast
        f = click.option(*spec.flags, spec.name, multiple=spec.multiple, type=kind, help=spec.help)(
            f
        )
    return f


@click.command("query")
@click.argument("question")
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
@click.option(
    "--top-k",
    type=click.IntRange(1, config.MAX_TOP_K),
    default=50,
    show_default=True,
    help="Edges to retrieve (--all: every one).",
)
@click.option(
    "--all", "all_", is_flag=True, help="Every edge that passes the filters and --min-score."
)
@click.option(
    "--min-score",
    type=float,
    default=None,
    help="Cosine similarity an edge needs to be retrieved [default 0.3]; --min-score -1 keeps all.",
)
@click.option("--no-answer", is_flag=True, help="Only the retrieved edges: zero chat calls.")
@click.option(
    "--no-llm-parse", is_flag=True, help="Skip the chat call that picks relation and answer types."
)
@click.option(
    "--no-link", is_flag=True, help="Do not link genes/diseases/chemicals in the question."
)
@click.option(
    "-e",
    "--entity",
    "entities",
    multiple=True,
    help="Entity name or id (HGNC:5992, D004715) on either end of an edge; repeatable. Replaces the question's entities.",
)
@click.option("--source", "sources", multiple=True, help="Entity name or id at the source end.")
@click.option("--target", "targets", multiple=True, help="Entity name or id at the target end.")
@click.option(
    "--match",
    type=click.Choice(["all", "any"]),
    default="all",
    show_default=True,
    help="Two entities: an edge joins both (all) or touches either (any).",
)
@payload_filter_options
@click.option(
    "--min-weight",
    type=float,
    default=None,
    help="Edge weight at least this (0-1), applied inside Qdrant.",
)
@click.option(
    "--exact",
    is_flag=True,
    help="An entity filter matches the entity itself, not the MeSH concepts below it or the "
    "genes of a gene group.",
)
@click.option(
    "--no-fallback",
    is_flag=True,
    help="Do not relax the join of two question entities or the parsed relation/answer types.",
)
@click.option(
    "--rank",
    type=click.Choice(["score", "design"]),
    default="score",
    show_default=True,
    help="Order of the evidence: by similarity, or by study design (meta-analyses and RCTs "
    "first), similarity within each.",
)
@click.option(
    "--include-retracted",
    is_flag=True,
    help="Keep the edges of retracted papers (left out by default), marked [retracted].",
)
@click.option(
    "--answer-model",
    default=None,
    envvar=config.ENV_ANSWER_MODEL,
    help="Chat model for the parse and the answer [env FASTBMRAG_ANSWER_MODEL, default --llm-model].",
)
def query(question: str, **kw: Any) -> None:
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

    from fastbmrag import options_from, render

    opts = options_from(
        {
            **kw,
            "all": kw["all_"],
            "min_score": config.DEFAULT_MIN_SCORE if kw["min_score"] is None else kw["min_score"],
            "link": not kw["no_link"],
            "fallback": not kw["no_fallback"],
        }
    )
    click.echo(render(rag.query(question, **vars(opts)), fmt), nl=False)
