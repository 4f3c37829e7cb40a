"""`fastbmrag contradictions`, `path` and `entity`: the graph itself, with no model call."""

from __future__ import annotations

import json
from typing import Any

import click

from fastbmrag import DESIGNS, ContradictionOptions, EntityOptions, PathOptions
from fastbmrag.cli.common import (
    collection_option,
    counted,
    declared_options,
    json_option,
    qdrant_options,
    working_dir_option,
    workspace,
)


def _by_design(counts: dict[str, int]) -> str:
    """ "1 RCT, 2 observational, 1 unknown"; "" where no paper's design is known."""
    if set(counts) <= {"unknown"}:
        return ""
    return ", ".join(f"{n} {DESIGNS.get(d, d)}" for d, n in counts.items())


def _papers(ids: list[str]) -> str:
    return f"{counted(len(ids), 'paper')} ({', '.join(ids[:4])}{', ...' if len(ids) > 4 else ''})"


@click.command("contradictions")
@collection_option()
@working_dir_option
@qdrant_options
@declared_options(ContradictionOptions)
@json_option
def contradictions(
    entity: str | None, designs: tuple[str, ...], organisms: tuple[str, ...],
    findings_only: bool, as_json: bool, **opts: Any,
) -> None:  # fmt: skip
    """List the entity pairs whose papers disagree (opposite relationship types, e.g.
    upregulated_in and downregulated_in), most papers first.

    \b
    Example:
      fastbmrag contradictions -c endometriosis --entity IL1B
    """
    found = workspace(**opts).contradictions(entity, designs=designs, organisms=organisms,
                                             findings_only=findings_only)  # fmt: skip
    if as_json:
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("No pair of entities on which papers disagree.")
    for pair in found:
        note = ", only with retracted papers" if pair["only_with_retracted"] else ""
        by = _by_design(pair["papers_by_design"])
        click.echo(
            f"{pair['source_name']} -> {pair['target_name']} ({pair['papers']} papers{note}"
            f"{': ' + by if by else ''})"
        )
        for rel, papers in pair["relations"].items():
            gone = pair["retracted"].get(rel)
            marked = f" ({len(gone)} retracted: {_papers(gone)})" if gone else ""
            cited = pair["cited"].get(rel)
            restated = f"; cited as known: {_papers(cited)}" if cited else ""
            click.echo(f"  {rel}: {_papers(papers) if papers else 'no paper found it'}{restated}"
                       f"{marked}")  # fmt: skip


@click.command("path")
@collection_option()
@working_dir_option
@qdrant_options
@declared_options(PathOptions)
@json_option
def path(
    start: str, end: str, max_hops: int, designs: tuple[str, ...], organisms: tuple[str, ...],
    findings_only: bool, as_json: bool, **opts: Any,
) -> None:  # fmt: skip
    """Show the best-supported paths between two entities (names or ids): fewest hops, then
    the most papers behind the weakest hop; each hop with its relation, papers and a sentence.

    \b
    Example:
      fastbmrag path -c endometriosis IL1B CYP19A1
    """
    found = workspace(**opts).path(start, end, max_hops=max_hops, designs=designs,
                                   organisms=organisms, findings_only=findings_only)  # fmt: skip
    if as_json:
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo(f"No path of at most {max_hops} hops between {start} and {end}.")
    for n, hops in enumerate(found, 1):
        click.echo(f"{n}. " + " - ".join([hops[0]["from"], *(h["to"] for h in hops)]))
        for h in hops:
            click.echo(
                f"   {h['source']} {h['relationship_type']} {h['target']}: {_papers(h['papers'])}"
            )
            if h["evidence"]:
                click.echo(f'     "{h["evidence"]["text"]}" ({h["evidence"]["paper_id"]})')


@click.command("entity")
@collection_option()
@working_dir_option
@qdrant_options
@declared_options(EntityOptions)
@json_option
def entity(
    name: str, designs: tuple[str, ...], organisms: tuple[str, ...], findings_only: bool,
    as_json: bool, **opts: Any,
) -> None:  # fmt: skip
    """Show an entity's card: what HGNC or MeSH says of it, its degree and weight in the
    collection, its relations by type, its strongest partners and its papers by study design
    and by year.

    \b
    Example:
      fastbmrag entity -c endometriosis IL1B
    """
    card = workspace(**opts).entity(name, designs=designs, organisms=organisms,
                                    findings_only=findings_only)  # fmt: skip
    below = card["narrower"]
    if as_json:
        click.echo(json.dumps(card, indent=2, ensure_ascii=False))
        return
    facts = card["vocabulary"]
    click.echo(f"{card['name']} ({card['type']}, {card['id'] or 'no id'})")
    if facts:
        click.echo("  " + "; ".join(f"{k}: {v}" for k, v in facts.items()))
    if not card["in_collection"]:
        click.echo("  no edge in this collection is about it")
        if below:
            click.echo("  concepts below it with edges: " + ", ".join(below))
        return
    n = card["papers"]
    click.echo(f"  degree {card['degree']}, weight {card['weight']:.4f}, {counted(n, 'paper')}")
    cited = card.get("cited", {})
    if not card["relations"] and (designs or organisms or findings_only):
        click.echo("  no edge about it passes the filters given (--design, --organism, "
                   "--findings-only)")  # fmt: skip
    else:
        click.echo("  relations (papers that found each; + those that cite it as known): " +
                   ", ".join(f"{t} {n}" + (f" +{cited[t]}" if cited.get(t) else "")
                             for t, n in card["relations"].items()))  # fmt: skip
        click.echo("  partners: " + ", ".join(f"{p['name']} ({p['papers']})"
                                              for p in card["partners"]))  # fmt: skip
    if _by_design(card["papers_by_design"]):
        click.echo("  by design: " + _by_design(card["papers_by_design"]))
    if card["papers_by_year"]:
        click.echo(
            "  by year: " + ", ".join(f"{y}: {n}" for y, n in card["papers_by_year"].items())
        )
    if card.get("retracted_papers"):
        click.echo(f"  left out, retracted: {_papers(card['retracted_papers'])}")
