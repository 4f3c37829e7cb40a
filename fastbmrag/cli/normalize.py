"""`fastbmrag normalize`: entity names -> HGNC / MeSH ids, offline."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from fastbmrag import MAX_NAME_CHARS, Normalized, abstention
from fastbmrag.cli.common import json_option
from fastbmrag.errors import InputError

TYPES = ("auto", "gene", "disease", "chemical", "pathway")
COLUMNS = ("name", "type", "normalized_name", "ontology_id", "matched_by", "score")


def read_rows(path: Path, default_type: str) -> list[tuple[str, str, str]]:
    """(name, type, context) rows of a TSV or CSV with a header: name, type, optional context;
    or of a plain list, one name per line (a first line with no header and no delimiter). A
    name longer than a model writes one is left out, its line named on stderr."""
    text = read_input(path, "a UTF-8 TSV or CSV file")
    first = text.split("\n", 1)[0]
    if "\t" not in first and "," not in first and first.strip().lower() != "name":
        lines = enumerate(text.splitlines(), start=1)
        return [
            (line.strip(), default_type, "")
            for n, line in lines
            if line.strip() and name_fits(line.strip(), f"{path} line {n}")
        ]
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") or "\t" in first else ","
    reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    if "name" not in fields:
        raise InputError(
            f"{path} has no 'name' column (found: {', '.join(fields) or 'nothing'}); "
            "give a header line (name<TAB>type<TAB>context), or one name per line."
        )
    rows = []
    for raw in reader:
        row = {(k or "").strip().lower(): (v or "") for k, v in raw.items()}
        name = row.get("name", "").strip()
        if name and name_fits(name, f"{path} line {reader.line_num}"):
            rows.append((name, row.get("type", "").strip() or default_type, row.get("context", "")))
    return rows


def read_input(path: Path, wanted: str) -> str:
    """The text of ``--input``: InputError for a path that is not there, cannot be read, or is
    empty (``/dev/null`` too)."""
    if not path.exists():
        raise InputError(f"No such file: {path}; check the --input path.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"Cannot read {path} ({err}); give {wanted}.") from err
    if not text.strip():
        raise InputError(f"{path} is empty: give {wanted}.")
    return text


def name_fits(name: str, where: str) -> bool:
    """Whether ``name`` is short enough to be an entity's; a line naming ``where`` if not."""
    if len(name) <= MAX_NAME_CHARS:
        return True
    click.echo(f"skipped {where}: {too_long(name)}", err=True)
    return False


def too_long(name: str) -> str:
    return (
        f"a name of {len(name):,} characters ({name[:40]!r}...) is no entity name: names are at "
        f"most {MAX_NAME_CHARS} characters (as the model writes them)"
    )


def format_table(results: list[Normalized]) -> str:
    def named(r: Normalized) -> tuple[str, str]:
        if r.parts:  # a coordination: every part's name and id
            return "; ".join(p.normalized_name for p in r.parts), "; ".join(r.candidates)
        return r.normalized_name, r.ontology_id or "-"

    table = [list(COLUMNS)] + [
        [r.name, r.type, *named(r), r.matched_by, f"{r.score:.2f}"] for r in results
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in table]
    return "\n".join(line.rstrip() for line in lines)


@click.command()
@click.argument("names", nargs=-1)
@click.option(
    "-t",
    "--type",
    "type_",
    type=click.Choice(TYPES, case_sensitive=False),
    default="auto",
    show_default=True,
    help="Entity type of the NAMEs (auto: gene, disease and chemical, best match wins; pathway: "
    "a biological process).",
)
@click.option(
    "--context",
    default="",
    help="Text around the names: defines abbreviations, resolves ambiguity.",
)
@click.option(
    "-i",
    "--input",
    "input_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TSV or CSV with a header: name, type (optional), context (optional); or a list of "
    "names, one per line.",
)
@click.option(
    "--explain",
    is_flag=True,
    help="For each name: the stage that decided, the score, the candidates and the parts.",
)
@click.option(
    "--find",
    is_flag=True,
    help="The arguments (or --input's lines) are texts: print the genes, diseases and chemicals "
    "each names, as a query finds them in a question (--type narrows the types).",
)
@json_option
def normalize(
    names: tuple[str, ...],
    type_: str,
    context: str,
    input_file: Path | None,
    explain: bool,
    find: bool,
    as_json: bool,
) -> None:
    """Normalise entity names: genes to HGNC symbols, diseases and chemicals to MeSH.

    Works offline with the bundled vocabularies (or those rebuilt by `fastbmrag vocab update`).

    \b
    Examples:
      fastbmrag normalize IL-1β "interleukin 1 beta" endometrioma
      fastbmrag normalize --type chemical T4 --context "levels of thyroxine (T4) rose"
      fastbmrag normalize --input entities.tsv --json
      fastbmrag normalize --explain --type gene SMAD2/3 TIPE2 caspases
      fastbmrag normalize --find "Which drugs treat type 2 diabetes?"
    """
    from fastbmrag import RAG

    if find:
        find_in_texts(names, input_file, type_.lower(), as_json)
        return
    rows = [(n, type_.lower(), context) for n in names if n.strip()]  # as in --input
    longest = max((n for n, _, _ in rows), key=len, default="")
    if len(longest) > MAX_NAME_CHARS:  # a NAME typed: refused at once
        message = too_long(longest)
        raise InputError(message[0].upper() + message[1:])
    if input_file is not None:
        rows += read_rows(input_file, type_.lower())
    if not rows:
        raise InputError("Nothing to normalise: give NAMEs or --input FILE (see --help).")
    norm = RAG().normalizer()
    results = [norm.normalize(*row) for row in rows]

    def explained(r: Normalized, row: tuple[str, str, str]) -> list[str]:
        stages = norm.explain(*row)
        return (
            explanation(r, norm.label)
            + ["  stages tried:"] * bool(stages)
            + [f"    {s}" for s in stages]
        )

    if as_json:
        for r, asked in zip(results, rows, strict=True):
            out = result_dict(r)
            if explain:
                out["explain"] = explained(r, asked)
            click.echo(json.dumps(out, ensure_ascii=False))
    elif explain:
        click.echo(
            "\n\n".join(
                "\n".join(explained(r, asked)) for r, asked in zip(results, rows, strict=True)
            )
        )
    else:
        click.echo(format_table(results))


def find_in_texts(
    texts: tuple[str, ...], input_file: Path | None, type_: str, as_json: bool
) -> None:
    """``normalize --find``: the mentions the finder gets in each text (one JSON list per text
    with ``--json``; else each text, then a line per mention)."""
    from fastbmrag import RAG

    lines = [t for t in texts if t.strip()]
    if input_file is not None:
        lines += read_input(input_file, "a UTF-8 text file").splitlines()
    if not any(line.strip() for line in lines):
        raise InputError("Nothing to search: give TEXTs or --input FILE (see --help).")
    from fastbmrag import GROUNDED_TYPES, found_in

    norm = RAG().normalizer()
    types = GROUNDED_TYPES if type_ == "auto" else (type_,)
    for text in lines:
        found = [
            {"start": s, "end": e, "text": text[s:e], "type": p.type, "ontology_id": p.ontology_id,
             "normalized_name": p.normalized_name, "matched_by": p.matched_by}
            for s, e, m in found_in(text, norm, types)
            for p in (m.parts or (m,))
        ]  # fmt: skip
        if as_json:
            click.echo(json.dumps(found, ensure_ascii=False))
            continue
        click.echo(text)
        for f in found:
            click.echo(
                f"  {f['start']}-{f['end']}  {f['text']}  {f['type']}  "
                f"{f['ontology_id'] or '-'}  {f['normalized_name']}  ({f['matched_by']})"
            )
        if not found:
            click.echo("  (no gene, disease, chemical or process found)")


def result_dict(r: Normalized) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": r.name,
        "type": r.type,
        "normalized_name": r.normalized_name,
        "ontology_id": r.ontology_id,
        "matched_by": r.matched_by,
        "score": r.score,
    }
    if r.matched_by in ("ambiguous", "abstained", "coordination"):
        out["candidates"] = list(r.candidates)
    if r.via:
        out["via"] = r.via
    if r.parts:
        out["parts"] = [result_dict(p) for p in r.parts]
    return out


def explanation(r: Normalized, label: Callable[[str], str | None]) -> list[str]:
    """The decision for one name, as lines: what decided, with which score, among what."""

    def named(ontology_id: str) -> str:
        return f"{ontology_id} {label(ontology_id) or ''}".rstrip()

    lines = [f"{r.name} ({r.type})"]
    if r.parts:
        lines.append(f"  decided by: coordination of {len(r.parts)} names (score {r.score:.2f})")
        lines += [
            f"    {p.name} -> {named(p.ontology_id or '')} by {p.matched_by} ({p.score:.2f})"
            for p in r.parts
        ]
    elif r.ontology_id:
        lines.append(f"  decided by: {r.matched_by} (score {r.score:.2f})")
        if r.via:
            lines.append(f"  by way of: {r.via!r}")
        lines.append(f"  -> {named(r.ontology_id)}")
        others = [c for c in r.candidates if c != r.ontology_id]
        if others:
            lines.append("  runners-up: " + "; ".join(named(c) for c in others))
    elif r.matched_by == "ambiguous":
        lines.append("  no id: the name fits several, and the context picks none of them:")
        lines += [f"    {named(c)}" for c in r.candidates]
    elif r.matched_by == "abstained":
        why = abstention(r.name, r.type)
        closest = f"the closest term{f' ({r.via!r})' if r.via else ''}"
        lines.append(
            f"  no id: {closest} {why} (score {r.score:.2f}); kept as {r.normalized_name!r}"
        )
        lines += [f"    candidate: {named(c)}" for c in r.candidates]
    else:
        lines.append(f"  no id: no stage matched (kept as {r.normalized_name!r})")
    return lines
