"""The papers CSV (or TSV): the input contract of ``fastbmrag update``.

Columns: ``paper_id``, ``abstract`` and ``main_text``, at least one of the last two.
``main_text`` is a Python list literal (``['para 1', 'para 2']``), or plain text with
paragraphs separated by blank lines (or, when it has no blank line, by newlines); an empty cell
or no such column means an abstract-only paper. Without a ``paper_id`` column (the reference
fastbmRAG project's CSV has none) a row's id is its PMCID, PMID or DOI, as for a JATS file,
else ``csv:`` and a hash of its title and abstract (or main text), the same on every run.
Known optional columns: ``article_title`` (aliases ``title``, ``articletitle``, ``article
title``), ``year`` (``publication year``), ``author``/``authors``, ``journal`` (``journal/book``),
``weight``, ``pmid``, ``pmcid``, ``doi``; the aliases are the column names of the reference
fastbmRAG project's CSV and of PubMed's CSV export. Every other column goes to
``Paper.extra``. Column names match case-insensitively.

The file may be UTF-8 (with or without a byte-order mark) or UTF-16 with its byte-order mark.
A quoted cell that does not close before the end of the file is an error (the file was cut
short, or a quote is unbalanced); one that swallows later lines that read as rows (or leaves a
row of the wrong width) skips that row, naming the lines it swallowed.

The file is streamed row by row with the ``csv`` module, so memory stays flat however many
rows it has. Row numbers in messages count the header as row 1, as a spreadsheet shows them.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import csv
import hashlib
import io
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from fastbmrag.errors import InputError, TruncatedInput
from fastbmrag.papers.design import METADATA, ORGANISMS, named_design, named_organism, strongest
from fastbmrag.papers.model import Paper
from fastbmrag.papers.report import (
    BAD_PMID,
    BAD_WEIGHT,
    BAD_YEAR,
    MALFORMED_LIST,
    NO_PAPER_ID,
    RAGGED_ROW,
    TOO_LARGE,
    UNBALANCED_QUOTE,
    UNKNOWN_DESIGN,
    UNKNOWN_ORGANISM,
    ReadReport,
)

log = logging.getLogger("fastbmrag.papers")
_PMID = re.compile(r"(?:PMID:?\s*)?(\d+)", re.I)

# The columns of the input contract: at least one of the text columns is required.
ID_COLUMN = "paper_id"
TEXT_COLUMNS = ("abstract", "main_text")
CONTRACT_COLUMNS = (ID_COLUMN, *TEXT_COLUMNS)
# Known optional columns -> Paper field. The first name listed for a field wins.
KNOWN_COLUMNS: dict[str, str] = {
    "article_title": "title",
    "title": "title",
    "articletitle": "title",  # the reference fastbmRAG project's CSV
    "article title": "title",
    "year": "year",
    "publication year": "year",  # PubMed's CSV export
    "pub_year": "year",
    "author": "authors",
    "authors": "authors",
    "journal": "journal",
    "journal/book": "journal",  # PubMed's CSV export
    "journal_title": "journal",
    "weight": "weight",
    "pmid": "pmid",
    "pmcid": "pmcid",
    "doi": "doi",
    "design": "design",  # a design ("rct", "RCT", "Randomized Controlled Trial", ...)
    "publication_types": "publication_types",  # MEDLINE publication types, ";"-separated
    "organisms": "organisms",  # ";"- or ","-separated ("human; mouse", "Humans")
}
# A cell longer than this (characters) skips its row: no paper is that long, a stray quote is.
MAX_CELL_CHARS = 10_000_000
# Values that mean "missing" (what pandas writes for NaN, and literal NaN text).
_MISSING = frozenset({"", "nan", "NaN", "NAN"})
# Index columns pandas writes (``df.to_csv()`` without ``index=False``).
_PANDAS_INDEX = re.compile(r"^(Unnamed: \d+)?$")
_INT_FLOAT = re.compile(r"^(\d+)\.0+$")
# What a list literal of strings starts with ("[Results] text" is prose, not a list).
_LIST_START = re.compile(r"""\[\s*(['"]|\]|$)""")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_LETTERS = re.compile(r"[^\W\d_]+")
_DIGITS = re.compile(r"\d+")


def csv_error(err: Exception) -> str:
    """The csv module's message without its advice to Python programmers ("do you need to open
    the file in universal-newline mode?")."""
    return str(err).split(" - do you need")[0]


def allow_large_fields() -> None:
    """Lift the csv module's 128 KiB cell limit (process-wide); cell size is checked per row."""
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))


def _delimiter(path: Path, header_line: str) -> str:
    if path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    if "\t" in header_line and "," not in header_line:
        return "\t"
    return ","


def _decoded_lines(fh: IO[bytes], name: str, report: ReadReport) -> Iterator[str]:
    """Text lines of a binary file: UTF-16 where it starts with a UTF-16 byte-order mark, else
    UTF-8 (undecodable bytes become U+FFFD and are reported)."""
    if isinstance(fh, io.BufferedReader) and fh.peek(2)[:2] in (
        codecs.BOM_UTF16_LE,
        codecs.BOM_UTF16_BE,
    ):
        text = io.TextIOWrapper(fh, encoding="utf-16", errors="replace", newline="")
        try:
            yield from text
        finally:
            with contextlib.suppress(ValueError):  # the caller closes the file itself
                text.detach()
        return
    for lineno, raw in enumerate(fh, start=1):
        try:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8", errors="replace")
            report.decode_error(f"{name} line {lineno}")
        yield line


def split_main_text(cell: str) -> tuple[list[str], bool]:
    """Paragraphs of a ``main_text`` cell, and whether it looked like a list literal but was not one."""
    text = cell.strip()
    if not text or text in _MISSING or text == "[]":
        return [], False
    if _LIST_START.match(text):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, list | tuple) and all(
            isinstance(v, str | int | float) or v is None for v in value
        ):
            return [s for v in value if v is not None and (s := str(v).strip())], False
        malformed = True
    else:
        malformed = False
    pieces = _BLANK_LINE.split(text) if _BLANK_LINE.search(text) else text.split("\n")
    paragraphs = [" ".join(p.split()) for p in pieces]
    return [p for p in paragraphs if p], malformed


def _clean_id(value: str) -> str:
    """An identifier cell: strip it, and undo the float formatting pandas gives numeric ids."""
    value = value.strip()
    if value in _MISSING:
        return ""
    m = _INT_FLOAT.match(value)
    return m.group(1) if m else value


def _parse_year(value: str) -> int | None:
    value = value.strip()
    if value in _MISSING:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(value) from None
    if not math.isfinite(number) or number != int(number) or not 1800 <= number <= 2100:
        raise ValueError(value)
    return int(number)


def _parse_weight(value: str) -> float | None:
    value = value.strip()
    if value in _MISSING:
        return None
    number = float(value)  # ValueError for text
    if not math.isfinite(number):
        raise ValueError(value)
    return number


class _Columns:
    """Where each required, known and extra column sits in a row."""

    def __init__(self, header: list[str], name: str) -> None:
        names = [h.strip() for h in header]
        lower = [n.lower() for n in names]
        if not any(c in lower for c in TEXT_COLUMNS):
            found = ", ".join(repr(n) for n in names if n) or "none"
            raise InputError(
                f"{name}: no abstract or main_text column (columns found: {found}): a papers "
                "CSV needs at least one of them"
            )
        self.width = len(names)
        # column index of paper_id, abstract, main_text; None where the file has none
        self.contract = {c: lower.index(c) if c in lower else None for c in CONTRACT_COLUMNS}
        self.known: dict[str, int] = {}  # Paper field -> column index
        self.extra: dict[str, int] = {}
        for i, (n, low) in enumerate(zip(names, lower, strict=True)):
            if low in CONTRACT_COLUMNS and self.contract[low] == i:
                continue
            field_name = KNOWN_COLUMNS.get(low)
            if field_name is not None and field_name not in self.known:
                self.known[field_name] = i
            elif _PANDAS_INDEX.match(n):
                continue
            elif n not in self.extra:
                self.extra[n] = i


def _row_to_paper(row: list[str], cols: _Columns, where: str, report: ReadReport) -> Paper | None:
    """The Paper of one row, or None (recorded in ``report``) when the row cannot be one."""

    def cell(i: int | None) -> str:
        return row[i] if i is not None and i < len(row) else ""

    paper_id = _paper_id(cell, cols)
    label = f"{where} (paper_id {paper_id})" if paper_id else where
    if len(row) != cols.width and any(row):
        report.repair(label, RAGGED_ROW)
    longest = max((len(c) for c in row), default=0)
    if longest > MAX_CELL_CHARS:
        report.skip(
            label,
            TOO_LARGE,
            f"a cell of {longest:,} characters exceeds the {MAX_CELL_CHARS:,} limit "
            "(check for an unbalanced quote)",
        )
        return None
    if not paper_id:
        report.skip(where, NO_PAPER_ID)
        return None

    paragraphs, malformed = split_main_text(cell(cols.contract["main_text"]))
    if malformed:
        report.repair(label, MALFORMED_LIST)
    abstract = cell(cols.contract["abstract"]).strip()
    if abstract in _MISSING:
        abstract = ""
    paper = Paper(paper_id=paper_id, abstract=abstract, paragraphs=paragraphs)

    for field_name, i in cols.known.items():
        raw = cell(i)
        if field_name == "year":
            try:
                paper.year = _parse_year(raw)
            except ValueError:
                report.repair(label, BAD_YEAR)
        elif field_name == "weight":
            try:
                paper.weight = _parse_weight(raw)
            except ValueError:
                report.repair(label, BAD_WEIGHT)
        elif field_name == "pmid" and (pmid := _clean_id(raw)):
            if _PMID.fullmatch(pmid):  # "24111943", "PMID:24111943": kept as written
                paper.pmid = pmid
            else:
                report.repair(label, BAD_PMID)  # "notapmid": no PubMed id, left empty
        elif field_name in ("pmid", "pmcid", "doi"):
            setattr(paper, field_name, _clean_id(raw))
        elif field_name in ("design", "publication_types"):
            # a design column names designs; most publication types name none ("Journal
            # Article"): only a design column's unknown value is said. Both give the strongest.
            parts = [t for t in re.split(r"[;|]", raw) if t.strip() and t.strip() not in _MISSING]
            named = [named_design(t) for t in parts]
            if field_name == "design":
                for t, known in zip(parts, named, strict=True):
                    if not known:
                        report.repair(label, UNKNOWN_DESIGN, detail=f"design {t.strip()!r} "
                                      f"({label}) is no known study design")  # fmt: skip
            paper.design = strongest([*named, paper.design])
            paper.design_from = METADATA if paper.design else paper.design_from
        elif field_name == "organisms":
            parts = [t for t in re.split(r"[;,|]", raw) if t.strip() and t.strip() not in _MISSING]
            found = {named_organism(t) for t in parts}
            for t in parts:
                if not named_organism(t):
                    report.repair(label, UNKNOWN_ORGANISM, detail=f"organism {t.strip()!r} "
                                  f"({label}) is no known organism")  # fmt: skip
            paper.organisms = sorted(found - {""}, key=list(ORGANISMS).index)
            paper.organisms_from = METADATA if paper.organisms else ""
        else:
            value = raw.strip()
            setattr(paper, field_name, "" if value in _MISSING else value)
    for name, i in cols.extra.items():
        value = cell(i).strip()
        if value not in _MISSING:
            paper.extra[name] = value
    return paper


def _paper_id(cell: Callable[[int | None], str], cols: _Columns) -> str:
    """A row's paper_id: its ``paper_id`` cell; with no such column its PMCID, PMID or DOI
    (as a JATS file's), else ``csv:`` and a hash of its title and abstract (or main text)."""
    if cols.contract[ID_COLUMN] is not None:
        return _clean_id(cell(cols.contract[ID_COLUMN]))
    for field_name in ("pmcid", "pmid", "doi"):
        if value := _clean_id(cell(cols.known.get(field_name))):
            return value
    text = cell(cols.contract["abstract"]).strip() or cell(cols.contract["main_text"])
    words = f"{cell(cols.known.get('title'))} {text}".lower().split()
    return f"csv:{hashlib.sha256(' '.join(words).encode()).hexdigest()[:16]}" if words else ""


def _id_shape(value: str) -> str:
    """An identifier's shape: runs of letters as ``a``, of digits as ``9`` (PMC123 -> a9)."""
    return _DIGITS.sub("9", _LETTERS.sub("a", value.strip()))


def _holds_rows(row: list[str], cols: _Columns, delimiter: str) -> bool:
    """Whether a cell of ``row`` holds lines that read as rows like ``row`` itself (as wide as
    the header, their paper_id of the same shape as its own): what an unbalanced quote swallows.
    A structured abstract's line ("Design, Setting, and Participants: ...") is no row."""
    at = cols.contract[ID_COLUMN] or 0  # without ids, the first column (pandas' row index)
    shape = _id_shape(row[at]) if at < len(row) else ""
    for cell in row:
        for line in cell.split("\n")[1:]:
            fields = next(csv.reader([line], delimiter=delimiter), [])
            if len(fields) == cols.width and shape and _id_shape(fields[at]) == shape:
                return True
    return False


def _iter_rows(
    path: Path, report: ReadReport, fh: IO[bytes]
) -> Iterator[tuple[list[str], _Columns, str]]:
    """Rows of an open papers file with their column map and location label."""
    allow_large_fields()
    name = path.name
    lines = _decoded_lines(fh, name, report)
    first = next(lines, None)
    if first is None or not first.strip():
        raise InputError(
            f"{name}: the file is empty; a papers CSV starts with a header row naming paper_id, "
            "abstract and main_text (at least one of the last two)"
        )

    ended = False

    def all_lines() -> Iterator[str]:
        nonlocal ended
        yield first
        yield from lines
        ended = True

    delimiter = _delimiter(path, first)
    reader = csv.reader(all_lines(), delimiter=delimiter)
    header = next(reader)
    cols = _Columns(header, name)
    last = reader.line_num
    for rowno, row in enumerate(reader, start=2):
        start, last = last + 1, reader.line_num
        if ended:  # the reader hit the end of the file inside a quoted cell
            raise TruncatedInput(
                f"{name}: the file ends inside a quoted cell that starts on line {start}: the "
                "file was cut short, or a quote there is unbalanced; fix it and run again"
            )
        if not any(c.strip() for c in row):
            continue
        where = f"{name} row {rowno}"
        if last > start and (len(row) != cols.width or _holds_rows(row, cols, delimiter)):
            report.skip(
                f"{where} (line {start})",
                UNBALANCED_QUOTE,
                f"a quoted cell swallowed lines {start + 1}-{last}; nothing was indexed from "
                "them: fix the quote",
            )
            continue
        yield row, cols, where


def read_papers_csv(
    path: str | Path, report: ReadReport | None = None, *, chunksize: int = 2000
) -> Iterator[Paper]:
    """Stream the papers of a papers CSV/TSV (``.tsv`` or a tab-separated header -> tabs).

    Raises :class:`InputError` before yielding anything when the file cannot be opened, is
    empty, or lacks a required column (the message names them and the columns found). Rows
    without text, without paper_id, with a giant cell, or repeating an earlier paper_id are
    skipped and recorded in ``report``; repaired values are recorded too. ``chunksize`` is
    accepted for API compatibility; rows are streamed one at a time whatever its value.
    """
    del chunksize
    path = Path(path)
    report = report if report is not None else ReadReport()
    try:
        fh = path.open("rb")
    except OSError as err:
        raise InputError(f"{path}: cannot open ({err.strerror or err}); check the path") from err
    return _read(path, report, fh)


def _read(path: Path, report: ReadReport, fh: IO[bytes]) -> Iterator[Paper]:
    # Check the header eagerly (so a missing column raises at the call), then stream lazily.
    try:
        rows = _iter_rows(path, report, fh)
        first = next(rows, None)
    except csv.Error as err:
        fh.close()
        raise InputError(f"{path.name}: not a readable CSV ({csv_error(err)})") from err
    except BaseException:
        fh.close()
        raise
    report.files += 1
    return _papers(path, report, fh, first, rows)


def _papers(
    path: Path,
    report: ReadReport,
    fh: IO[bytes],
    first: tuple[list[str], _Columns, str] | None,
    rows: Iterator[tuple[list[str], _Columns, str]],
) -> Iterator[Paper]:
    with fh:
        if first is None:
            return

        def all_rows() -> Iterable[tuple[list[str], _Columns, str]]:
            yield first
            yield from rows

        try:
            for row, cols, where in all_rows():
                paper = _row_to_paper(row, cols, where, report)
                if paper is not None and report.admit(paper, where):
                    yield paper
        except csv.Error as err:
            raise InputError(
                f"{path.name}: CSV parse error ({csv_error(err)}); rows before it were kept"
            ) from err


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return repr([str(v) for v in value])  # read back as a list literal
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


def papers_from_frame(frame: Any, report: ReadReport | None = None) -> Iterator[Paper]:
    """The papers of a pandas DataFrame with the papers-CSV columns (the Python API's input).

    Same contract as :func:`read_papers_csv`: the same required columns, known columns,
    extras, skips and repairs. ``main_text`` may also hold Python lists of paragraphs.
    """
    report = report if report is not None else ReadReport()
    cols = _Columns([str(c) for c in frame.columns], "DataFrame")
    report.files += 1
    for rowno, values in enumerate(frame.itertuples(index=False, name=None)):
        row = [_cell_text(v) for v in values]
        where = f"DataFrame row {rowno}"
        paper = _row_to_paper(row, cols, where, report)
        if paper is not None and report.admit(paper, where):
            yield paper
