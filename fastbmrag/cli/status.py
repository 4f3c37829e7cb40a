"""`fastbmrag status`: what a collection holds, from its ledger (works while an update runs)."""

from __future__ import annotations

import json
from typing import Any

import click

from fastbmrag import DESIGNS
from fastbmrag.cli.common import (
    collection_option,
    counted,
    json_option,
    qdrant_options,
    working_dir_option,
)


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover


def _interrupted(info: dict[str, Any]) -> str:
    what = []
    if info["delete"]:
        what.append(f"a delete of {counted(info['delete'], 'paper')}")
    if info["commit"]:
        what.append(
            f"the indexing of {counted(info['commit'], 'paper')} (each keeps its old edges or "
            "its new ones)"
        )
    done = "finished now" if info["finished"] else f"to be finished by {info['by']}"
    return f"Cut short by an interruption: {' and '.join(what)}; {done}"


def _human(stats: dict[str, Any]) -> str:
    p = stats["papers"]
    lines = [
        f"Collection  {stats['collection']}",
        f"Store       {stats['backend']}: {stats['location']}"
        + (f" (not opened: {stats['store_not_opened']})" if stats.get("store_not_opened") else ""),
        f"Ledger      {stats['ledger']}",
        f"Papers      {p['done']:,} done, {p['failed']:,} failed, {p['pending']:,} pending"
        + (f", {stats['retracted_papers']:,} retracted" if stats.get("retracted_papers") else ""),
        f"Edges       {stats['edges']:,} ({stats['distinct_edges']:,} distinct), "
        f"{counted(stats['entities'], 'entity', 'entities')}"
        + (f", {stats['vector_size']}-d vectors" if stats["vector_size"] else ""),
    ]
    designs = stats["designs"]
    if p["done"]:
        lines.append(
            "Designs     "
            + ", ".join(f"{n:,} {DESIGNS.get(d, d)}" for d, n in designs["by_design"].items())
            + " (labels: "
            + ", ".join(
                f"{n:,} {'from ' + s if s != 'unknown' else s}"
                for s, n in designs["by_source"].items()
            )  # fmt: skip
            + ")"
        )
    supp = stats["supplementary"]
    if supp["ids"]:
        lines.append(
            f"Ids         {counted(supp['ids'], 'supplementary concept')} (MeSH C ids): "
            f"{supp['with_heading']:,} under a heading descriptor, {supp['without_heading']:,} "
            "whose heading the vocabularies do not know (a filter on a heading misses them); "
            "edges indexed before the vocabularies knew a C id's headings get them with "
            "`fastbmrag update --force` on their input"
            + (f" ({counted(supp['edges_without_headings'], 'edge')} carry none yet)"
               if supp.get("edges_without_headings") else "")
        )
    if stats["outdated_papers"]:
        lines.append(
            f"Payload     {stats['outdated_papers']:,} papers were indexed by an earlier version "
            "(evidence without its place in the paper): run `fastbmrag update --force` on their "
            "input to re-index them"
        )
    if stats.get("interrupted"):
        lines.append(_interrupted(stats["interrupted"]))
    run = stats["last_run"]
    if run:
        end = run["ended_at"] or "still running or interrupted"
        lines.append(f"Last run    #{run['run_id']} {run['command']}: {run['started_at']} -> {end}")
        summary = run["summary"] or {}
        text = summary.get("line") or ", ".join(
            f"{k}={v}" for k, v in summary.items() if isinstance(v, (str, int, float))
        )
        if text:
            lines.append(f"            {text}")
    else:
        lines.append("Last run    none")
    lines.append(f"Size        {_size(stats['size_on_disk'])} on disk")
    if stats["failed"]:
        lines.append("Failed papers:")
        for f in stats["failed"]:
            lines.append(f"  {f['paper_id']}  {f['error']}")
        if p["failed"] > len(stats["failed"]):
            lines.append(
                f"  ... and {p['failed'] - len(stats['failed']):,} more (--json lists them)"
            )
    return "\n".join(lines)


@click.command("status")
@collection_option()
@working_dir_option
@qdrant_options
@json_option
def status(
    collection: str,
    working_dir: str | None,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    as_json: bool,
) -> None:
    """Show what a collection holds.

    Papers done / failed / pending (with the failure reasons), edges, entities, the last run,
    where the edges are stored and the size on disk. It reads the ledger and opens the store to
    check it (skipped while an update holds the embedded store), so it works while an update is
    running. An operation a killed command left half done (a delete, a
    commit) is finished here when no other command holds the collection, else reported.

    \b
    Example:
      fastbmrag status --collection endometriosis
      fastbmrag status -c endometriosis --json
    """
    from fastbmrag import RAG

    rag = RAG.from_options(
        {"working_dir": working_dir, "collection": collection, "qdrant_url": qdrant_url,
         "qdrant_api_key": qdrant_api_key}
    )  # fmt: skip
    stats = rag.status(max_failed=None if as_json else 20)
    held = rag.check_store()  # a damaged store is an error here too
    stats["store_opened"], stats["store_not_opened"] = held is None, held
    if as_json:
        click.echo(json.dumps(stats, indent=2))
    else:
        click.echo(_human(stats))
