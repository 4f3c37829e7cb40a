"""`fastbmrag fetch` (PubMed/PMC -> papers CSV) and `fastbmrag sync` (fetch what is new, index it)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, TypeVar

import click

from fastbmrag import DEFAULT_DATETYPE, FetchSettings, UpdateOptions, config
from fastbmrag.cli.common import (
    IntRange,
    collection_option,
    command_logging,
    counted,
    declared_values,
    index_options,
    quiet_option,
    strict_exit,
    working_dir_option,
)

F = TypeVar("F", bound=Callable[..., Any])


def fetch_options(f: F) -> F:
    """--email, --ncbi-api-key, --eutils-url, --fulltext-url, --no-full-text."""
    decorators = [
        click.option(
            "--email",
            default=None,
            help=f"Your contact email, sent to NCBI with every request [env {config.ENV_NCBI_EMAIL}].",
        ),
        click.option(
            "--ncbi-api-key",
            default=None,
            help=f"NCBI API key: 10 requests/s instead of 3 [env {config.ENV_NCBI_API_KEY}].",
        ),
        click.option(
            "--eutils-url",
            default=None,
            help=f"E-utilities base URL, for mirrors and tests [env {config.ENV_EUTILS_URL}, "
            "default https://eutils.ncbi.nlm.nih.gov/entrez/eutils].",
        ),
        click.option(
            "--fulltext-url",
            default=None,
            help="Full-text JATS URL with {pmcid}, or a Europe PMC REST base "
            f"[env {config.ENV_FULLTEXT_URL}, default Europe PMC .../rest/{{pmcid}}/fullTextXML].",
        ),
        click.option(
            "--no-full-text", is_flag=True, help="Abstracts only: do not fetch PMC full text."
        ),
    ]
    for deco in reversed(decorators):
        f = deco(f)
    return f


def window_options(f: F) -> F:
    f = click.option(
        "--days",
        type=IntRange(0),
        default=None,
        help="Only records entered in PubMed in the last N days.",
    )(f)
    return click.option(
        "--since",
        type=click.DateTime(formats=["%Y-%m-%d"]),
        default=None,
        help="Only records entered in PubMed on or after this date (YYYY-MM-DD).",
    )(f)


def settings_from(opts: dict[str, Any]) -> FetchSettings:
    return FetchSettings.resolve(
        email=opts["email"],
        api_key=opts["ncbi_api_key"],
        eutils_url=opts["eutils_url"],
        fulltext_url=opts["fulltext_url"],
        full_text=not opts["no_full_text"],
    )


def _day(value: datetime | None) -> date | None:
    return value.date() if value is not None else None


@click.command("fetch")
@click.option("--query", required=True, help="PubMed query, as typed in PubMed.")
@window_options
@click.option("--max", "max_papers", type=IntRange(1), default=None, help="At most N papers.")
@click.option(
    "--datetype",
    type=click.Choice(["edat", "pdat"]),
    default=DEFAULT_DATETYPE,
    show_default=True,
    help="Date the window applies to: edat (entered PubMed) or pdat (published).",
)
@fetch_options
@collection_option(default="none: no paper is skipped")
@working_dir_option
@quiet_option
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False), help="Papers CSV to write."
)
def fetch(**opts: Any) -> None:
    """Search PubMed and write the papers (with PMC full text where available) as a papers CSV.

    Records come from NCBI E-utilities (ESearch, then EFetch of MEDLINE XML in batches of
    200), full texts as JATS from Europe PMC; papers without open full text are kept with
    an empty main_text. With --collection, papers already indexed there are not fetched.
    Exit 0 on success, 1 when some full texts failed (those papers are left out),
    2 when PubMed cannot be reached or an option is wrong.

    \b
    Example:
      fastbmrag fetch --query "endometriosis[tiab] AND free full text[sb]" \\
          --days 30 --email you@example.org -o papers.csv
    """
    from fastbmrag import RAG

    settings = settings_from(opts)
    with command_logging(None, opts["quiet"]):
        rag = RAG.from_options(opts)
        written, report = rag.fetch(
            opts["query"],
            opts["output"],
            settings=settings,
            since=_day(opts["since"]),
            days=opts["days"],
            datetype=opts["datetype"],
            max_papers=opts["max_papers"],
        )
    click.echo(f"Wrote {counted(written, 'paper')} to {opts['output']}: {report.line()}", err=True)
    if report.failed:
        if not opts["quiet"]:
            for pmid, why in list(report.failed.items())[:20]:
                click.echo(f"  left out {pmid}: {why}", err=True)
        raise SystemExit(1)


@click.command("sync")
@collection_option(required=True)
@click.option("--query", required=True, help="PubMed query, as typed in PubMed.")
@window_options
@fetch_options
@index_options(UpdateOptions)
@click.option(
    "--digest",
    "digest_file",
    default=None,
    metavar="FILE",
    help="Write what this sync changed to FILE (format from its suffix: .md, .html, .json, "
    "else text), as `fastbmrag digest` says it.",
)
def sync(collection: str, digest_file: str | None, **opts: Any) -> None:
    """Fetch the papers PubMed added for a query since the last sync, and index them.

    The first run fetches --since / --days, else the last 30 days; later runs start at
    the last successful sync of this (collection, query), with one day of overlap, and
    skip papers already indexed. The last-sync mark moves only when every paper was
    fetched and indexed, so failed papers are retried by the next run. Safe under cron:
    one lock per collection, shared with `update`.
    Exit 0 ok, 1 some papers failed, 2 cannot start, 3 the collection is locked.

    \b
    Example:
      fastbmrag sync -c endometriosis --email you@example.org \\
          --query "endometriosis[tiab] AND free full text[sb]" --quiet --log-file sync.log
    """

    from fastbmrag import RAG

    settings = settings_from(opts)
    with command_logging(opts["log_file"], opts["quiet"]):
        # The collection lock first (a second sync/update stops here with exit 3), then the
        # model server, and only then anything fetched or created.
        rag = RAG.from_options({**opts, "collection": collection})
        result = rag.sync(
            opts["query"],
            settings=settings,
            since=_day(opts["since"]),
            days=opts["days"],
            progress=not opts["quiet"],
            **declared_values(UpdateOptions, opts),
        )
        logging.getLogger("fastbmrag.papers.sync").info("%s", result.line())
        if digest_file and result.run_id is not None:
            from fastbmrag.cli.digest import write_digest

            write_digest(rag, str(result.run_id), digest_file, None)
    if opts["as_json"]:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        click.echo(result.line(), err=True)
        failures = list(result.fetch.failed.items())
        if result.index is not None:
            failures += list(getattr(result.index, "failures", []))
        if failures and not opts["quiet"]:
            for paper_id, why in failures[:20]:
                click.echo(f"  failed {paper_id}: {why}", err=True)
    raise SystemExit(strict_exit(result.exit_code, len(result.fetch.unusable), opts["strict"]))
