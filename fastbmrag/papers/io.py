"""One entry point over every reader, and the papers CSV writer.

:func:`iter_papers` takes files, directories (searched recursively) and glob patterns and
dispatches by extension: ``.csv``/``.tsv`` to the papers CSV reader, ``.nxml`` to the JATS
reader, ``.xml``/``.xml.gz`` by their root element (``<PubmedArticleSet>`` -> MEDLINE,
``<article>``/``<pmc-articleset>`` -> JATS). A file that cannot be read is recorded in the
report and skipped; it never stops the others.

:func:`write_papers_csv` writes the papers CSV contract (``main_text`` as a Python list
literal), which reads back identically through :func:`read_papers_csv`.
"""

from __future__ import annotations

import codecs
import csv
import glob
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from fastbmrag.errors import InputError, TruncatedInput
from fastbmrag.papers.csv_reader import (
    CONTRACT_COLUMNS,
    KNOWN_COLUMNS,
    allow_large_fields,
    papers_from_frame,
    read_papers_csv,
)
from fastbmrag.papers.design import METADATA
from fastbmrag.papers.jats import parse_jats_all
from fastbmrag.papers.medline import parse_medline
from fastbmrag.papers.model import Paper
from fastbmrag.papers.report import CONTROL_CHARACTERS, NO_INPUT, UNREADABLE, ReadReport
from fastbmrag.util.files import replacing

__all__ = [
    "CSV_COLUMNS",
    "PaperFiles",
    "as_papers",
    "expand_inputs",
    "iter_papers",
    "read_path",
    "sniff_xml",
    "write_papers_csv",
]

SUFFIXES = (".csv", ".tsv", ".nxml", ".nxml.gz", ".xml", ".xml.gz")
CSV_COLUMNS = (
    "paper_id",
    "article_title",
    "abstract",
    "main_text",
    "year",
    "authors",
    "journal",
    "weight",
    "pmid",
    "pmcid",
    "doi",
    "design",
    "organisms",
)


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return ""


def expand_inputs(paths: Iterable[str | os.PathLike[str]], report: ReadReport) -> list[Path]:
    """The input files named by ``paths``: files as given, directories searched recursively
    for the supported extensions, glob patterns expanded. Names that match nothing are
    recorded in ``report``. Each file appears once, in the order first named."""
    files: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            files.append(path)

    supported = ", ".join(SUFFIXES)
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _suffix(p))
            if not found:
                report.skip(str(path), NO_INPUT, f"no {supported} files in this directory")
            for p in found:
                add(p)
        elif path.is_file():
            add(path)
        elif glob.has_magic(str(raw)):
            matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True))
            found = [m for m in matches if m.is_file() and _suffix(m)]
            for m in matches:
                if m.is_dir():
                    found += sorted(p for p in m.rglob("*") if p.is_file() and _suffix(p))
            if not found:
                report.skip(str(raw), NO_INPUT, f"the pattern matches no {supported} files")
            for p in found:
                add(p)
        elif path.exists():  # /dev/null, a pipe: no papers file
            report.skip(str(path), UNREADABLE, "not a regular file (a device or a pipe)")
        else:
            report.skip(str(path), NO_INPUT, "no such file or directory")
    return files


def _head(path: Path, size: int = 65536) -> bytes:
    """The first bytes of a file, decompressed if it is gzip."""
    with path.open("rb") as fh:
        head = fh.read(size)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as gz:
                return gz.read(size)
        except (OSError, EOFError, zlib.error) as err:
            raise InputError(f"{path.name}: damaged gzip file ({err})") from err
    return head


def sniff_xml(path: Path) -> str:
    """``"medline"`` or ``"jats"`` from the root element of an XML file; InputError otherwise."""
    head = _head(path)
    if not head.strip():
        raise InputError(f"{path.name}: the file is empty")
    parser = etree.XMLPullParser(
        events=("start",), resolve_entities=False, no_network=True, load_dtd=False
    )
    try:
        parser.feed(head)
        root_tag = next((el.tag for _, el in parser.read_events()), None)
    except etree.XMLSyntaxError as err:
        raise InputError(f"{path.name}: not well-formed XML ({err.msg or err})") from err
    if root_tag is None:
        raise InputError(f"{path.name}: no XML element in the first {len(head):,} bytes")
    local = str(root_tag).rsplit("}", 1)[-1]
    if local == "PubmedArticleSet":
        return "medline"
    if local in ("article", "pmc-articleset"):
        return "jats"
    raise InputError(
        f"{path.name}: root element <{local}> is neither <PubmedArticleSet> (MEDLINE) "
        "nor <article> (JATS)"
    )


MAX_TEXT_NULS = 8  # NUL bytes the first 8 KB of a text file may hold


def _binary(head: bytes) -> bool:
    if b"\x00" not in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 3:  # not merely a character cut at the end of the 8 KB
            return True
    return head.count(b"\x00") > MAX_TEXT_NULS


def read_path(path: Path, report: ReadReport) -> Iterator[Paper]:
    """The papers of one file by its type; raises :class:`InputError` if it is unusable
    (possibly after yielding the papers before a defect in a streamed file)."""
    suffix = _suffix(path)
    if suffix in (".csv", ".tsv"):
        head = _head(path, 8192)
        # text holds a stray NUL at most (a copy from a PDF: removed and counted, as control
        # characters are) and reads as UTF-8; an image, an archive or a binary holds NULs among
        # bytes that are no UTF-8 (UTF-16 aside, which begins with its byte order mark)
        if _binary(head) and not head.startswith(
            (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        ):
            raise InputError(
                f"{path.name}: a binary file, not CSV text: give a papers CSV or TSV saved as text"
            )
        yield from read_papers_csv(path, report)
        return
    kind = "jats" if suffix in (".nxml", ".nxml.gz") else sniff_xml(path)
    if kind == "medline":
        yield from parse_medline(path, report)
        return
    papers = parse_jats_all(path)
    report.files += 1
    for i, paper in enumerate(papers, start=1):
        where = path.name if len(papers) == 1 else f"{path.name} article {i}"
        if report.admit(paper, where):
            yield paper


def iter_papers(paths: Iterable[str | os.PathLike[str]], report: ReadReport) -> Iterator[Paper]:
    """Every paper of every input (files, directories, globs), duplicates across files dropped.

    A file that cannot be read, or breaks part way, is recorded in ``report`` (as
    ``(path, "unreadable file: ...")``) and the next file is read.
    """
    for path in expand_inputs(paths, report):
        yield from iter_file(path, report)


class PaperFiles:
    """Papers in files, directories and globs, read as `fastbmrag update` reads them: twice.

    :meth:`read`, the first pass, counts the papers (a progress bar's total), records what it
    skipped, notes the latest version of each MEDLINE citation, and refuses an input with
    nothing to index; the library object calls it once the collection and the model server
    are checked, so that a bad input is the last error a run can meet. Iterating is the
    second pass: each citation in its latest version, deletions kept.
    """

    def __init__(self, inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> None:
        # one path given as it is, not as the characters of its name
        self.inputs: tuple[str | os.PathLike[str], ...] = (
            (inputs,) if isinstance(inputs, str | os.PathLike) else tuple(inputs)
        )
        self.report: ReadReport | None = None  # the first pass's, once read

    def read(self) -> ReadReport:
        report = ReadReport()
        total = sum(1 for _ in iter_papers(self.inputs, report))
        if total == 0 and not report.deleted:  # an update file may only delete citations
            why = "; ".join(f"{where}: {reason}" for where, reason in report.skipped[:3])
            named = ", ".join(str(i) for i in self.inputs)
            raise InputError(f"No papers to index in {named}: {why or report.summary()}")
        self.report = report
        return report

    def __iter__(self) -> Iterator[Paper]:
        latest = self.report.versions if self.report else {}
        return iter_papers(self.inputs, ReadReport(deletions=True, latest=latest, logged=False))


def iter_file(path: Path, report: ReadReport) -> Iterator[Paper]:
    """The papers of one file; a defect is recorded in ``report`` and not raised, except a file
    cut short (:class:`TruncatedInput`)."""
    supported = ", ".join(SUFFIXES)
    if not _suffix(path):
        report.skip(str(path), UNREADABLE, f"unsupported file type (expected {supported})")
        return
    try:
        for paper in read_path(path, report):
            if removed := paper.clean_controls():
                report.repair(paper.paper_id, CONTROL_CHARACTERS, removed)
            yield paper
    except TruncatedInput:
        raise  # a file cut short: the user fixes it before anything is indexed
    except InputError as err:
        detail = str(err).removeprefix(f"{path.name}: ")
        report.skip(str(path), UNREADABLE, detail)
    except OSError as err:
        report.skip(str(path), UNREADABLE, err.strerror or str(err))


def _row(paper: Paper, extra_columns: list[str]) -> list[str]:
    main_text = repr(list(paper.paragraphs)) if paper.paragraphs else ""
    row = [
        paper.paper_id,
        paper.title,
        paper.abstract,
        main_text,
        "" if paper.year is None else str(paper.year),
        paper.authors,
        paper.journal,
        "" if paper.weight is None else repr(float(paper.weight)),
        paper.pmid,
        paper.pmcid,
        paper.doi,
        paper.design if paper.design_from == METADATA else "",  # a record's, never a model's
        "; ".join(paper.organisms) if paper.organisms_from == METADATA else "",
    ]
    row += ["" if (v := paper.extra.get(c)) is None else str(v) for c in extra_columns]
    return row


def write_papers_csv(papers: Iterable[Paper], path: str | os.PathLike[str]) -> int:
    """Write ``papers`` as a papers CSV (TSV if ``path`` ends in ``.tsv``); returns the count.

    Streams: the header's extra columns are those of the first 1,000 papers; if a later
    paper brings a new one, the written rows are copied once more under the full header.
    The file appears complete or not at all (written beside it, then renamed).
    """
    path = Path(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    path.parent.mkdir(parents=True, exist_ok=True)
    it = iter(papers)
    head: list[Paper] = []
    for paper in it:
        head.append(paper)
        if len(head) >= 1000:
            break
    extra_columns: list[str] = []
    for paper in head:
        extra_columns += [_extra_name(k) for k in paper.extra if k not in extra_columns]

    count = 0
    late_columns: list[str] = []
    with replacing(path) as tmp:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, delimiter=delimiter)
            writer.writerow([*CSV_COLUMNS, *extra_columns])

            def rest() -> Iterator[Paper]:
                yield from head
                yield from it

            for paper in rest():
                for key in paper.extra:
                    if key not in extra_columns and key not in late_columns:
                        late_columns.append(_extra_name(key))
                writer.writerow(_row(paper, extra_columns + late_columns))
                count += 1
        if late_columns:
            _rewrite_header(tmp, delimiter, [*CSV_COLUMNS, *extra_columns, *late_columns])
    return count


_RESERVED = frozenset({*CSV_COLUMNS, *KNOWN_COLUMNS, *CONTRACT_COLUMNS})


def _extra_name(key: str) -> str:
    """An extra column name, refused if it would read back as a known column."""
    if not isinstance(key, str) or not key.strip() or key.strip().lower() in _RESERVED:
        raise InputError(
            f"Paper.extra key {key!r} is empty or names a papers CSV column; rename it"
        )
    return key


def _rewrite_header(tmp: Path, delimiter: str, header: list[str]) -> None:
    """Copy ``tmp`` under a wider header, padding the rows written before the new columns."""
    allow_large_fields()
    final = tmp.with_suffix(".part2")
    with (
        tmp.open("r", encoding="utf-8", newline="") as src,
        final.open("w", encoding="utf-8", newline="") as dst,
    ):
        reader = csv.reader(src, delimiter=delimiter)
        writer = csv.writer(dst, delimiter=delimiter)
        next(reader)
        writer.writerow(header)
        for row in reader:
            writer.writerow(row + [""] * (len(header) - len(row)))
    os.replace(final, tmp)


def as_papers(papers: Any, report: ReadReport) -> Iterable[Paper]:
    """Paper records from a papers-CSV path, a DataFrame with the papers-CSV columns, a list of
    dicts with those columns, or Paper records as they are; ``report`` records what reading
    them skipped or repaired (control characters removed, as from a file). InputError for
    anything else, and for a path that does not exist."""
    if isinstance(papers, (str, Path)):
        path = Path(papers).expanduser()
        if not path.exists():
            raise InputError(f"No such file or directory: {papers}; check the path")
        return iter_papers([path], report)
    if hasattr(papers, "to_dict") and hasattr(papers, "columns"):  # a pandas DataFrame
        return _cleaned(papers_from_frame(papers, report), report)
    items = list(papers) if isinstance(papers, Iterable) else None
    if items is not None and all(isinstance(p, dict) for p in items) and items:
        import pandas

        return _cleaned(papers_from_frame(pandas.DataFrame(items), report), report)
    if items is None or not all(isinstance(p, Paper) for p in items):
        raise InputError(
            "Papers must be a papers-CSV path, a DataFrame or a list of dicts with its columns "
            "(paper_id, article_title, abstract, ...), or Paper records"
        )
    return _cleaned(items, report)


def _cleaned(papers: Iterable[Paper], report: ReadReport) -> Iterator[Paper]:
    for paper in papers:
        if removed := paper.clean_controls():
            report.repair(paper.paper_id, CONTROL_CHARACTERS, removed)
        yield paper
