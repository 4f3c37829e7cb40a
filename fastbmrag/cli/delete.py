"""`fastbmrag delete`: remove papers' edges from a collection; degrees and weights follow."""

from __future__ import annotations

import click

from fastbmrag.cli.common import (
    collection_option,
    qdrant_options,
    working_dir_option,
)


@click.command("delete")
@collection_option(required=True)
@working_dir_option
@qdrant_options
@click.argument("paper_ids", nargs=-1, required=True, metavar="PAPER_ID...")
def delete(
    collection: str,
    working_dir: str | None,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    paper_ids: tuple[str, ...],
) -> None:
    """Remove papers and their edges from a collection.

    Entity degrees and edge weights are updated at once. Ids that are not in the collection
    (done, failed or pending) are listed on stderr; when none of the ids is there nothing
    changes and the exit code is 2.

    \b
    Example:
      fastbmrag delete --collection endometriosis PMC3324826 PMC3339580
    """
    from fastbmrag import RAG

    rag = RAG.from_options(
        {"working_dir": working_dir, "collection": collection, "qdrant_url": qdrant_url,
         "qdrant_api_key": qdrant_api_key}
    )  # fmt: skip
    known, unknown, removed = rag.delete(paper_ids)
    if unknown:
        click.echo(f"Not in collection '{collection}': {', '.join(unknown)}", err=True)
    papers = f"{len(known):,} paper{'s' if len(known) != 1 else ''}"
    edges = f"{removed:,} edge{'s' if removed != 1 else ''}"
    click.echo(f"Deleted {papers} ({edges}) from collection '{collection}'.")
