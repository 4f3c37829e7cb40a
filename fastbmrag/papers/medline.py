"""MEDLINE / PubMed XML (``PubmedArticleSet``, as in the baseline files and E-utilities efetch).

Abstract-only papers: ``paper_id`` is the PMID (of several versions of one PMID in a file, the
latest: a reader given the versions a first pass saw, ``ReadReport.latest``, skips the older
ones); a structured abstract becomes one
``"LABEL: text"`` paragraph per section, joined by newlines. Citations without an abstract
are skipped (and reported); ``DeleteCitation`` PMIDs are recorded in the report (and yielded
as deleted papers when it asks for them). Retractions: a citation with the publication type
"Retracted Publication" or a "RetractionIn" link is retracted; one with the publication type
"Retraction of Publication" or a "RetractionOf" link is a retraction notice (not indexed).

``pubmed_parser.parse_medline_xml`` reads the whole baseline file at about 1,400
citations/s here (it visits every element, keeps every cleared element attached to the
root, and needs a gzip path); this reader uses lxml ``iterparse`` restricted to the
citation elements, clears each one and its preceding siblings, and accepts plain XML,
gzip and bytes. docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from lxml import etree

from fastbmrag.errors import InputError
from fastbmrag.papers.design import METADATA, design_of_types, organisms_of_headings
from fastbmrag.papers.model import Paper
from fastbmrag.papers.report import NO_ABSTRACT, OLDER_VERSION, ReadReport

RETRACTED_TYPES = frozenset(["Retracted Publication"])
NOTICE_TYPES = frozenset(["Retraction of Publication"])
_TAGS = ("PubmedArticle", "PubmedBookArticle", "DeleteCitation")
_GZIP_MAGIC = b"\x1f\x8b"


def _text(el: etree._Element | None) -> str:
    """All text under ``el``, whitespace collapsed."""
    if el is None:
        return ""
    raw = el.text or "" if len(el) == 0 else "".join(el.itertext())
    return " ".join(raw.split())


def _year(value: str | None) -> int | None:
    value = (value or "").strip()[:4]
    return int(value) if len(value) == 4 and value.isdigit() else None


def _pub_year(journal: etree._Element) -> int | None:
    for part in journal:
        if part.tag == "JournalIssue":
            for date in part:
                if date.tag == "PubDate":
                    return _year(date.findtext("Year")) or _year(date.findtext("MedlineDate"))
    return None


def _abstract(abstract: etree._Element) -> str:
    parts = []
    for node in abstract:
        if node.tag != "AbstractText":
            continue
        text = _text(node)
        if not text:
            continue
        label = (node.get("Label") or "").strip()
        parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts)


def _authors(author_list: etree._Element) -> str:
    names = []
    for author in author_list:  # one pass over each author's children (hot loop)
        last = fore = initials = collective = None
        for part in author:
            tag = part.tag
            if tag == "LastName":
                last = part.text
            elif tag == "ForeName":
                fore = part.text
            elif tag == "Initials":
                initials = part.text
            elif tag == "CollectiveName":
                collective = _text(part)
        if collective:
            names.append(collective)
        elif last or fore or initials:
            names.append(" ".join(p for p in (fore or initials, last) if p))
    return "; ".join(names)


def paper_from_citation(element: etree._Element) -> Paper:
    """The Paper of one ``<PubmedArticle>`` element (its abstract may be empty).

    One pass over the children that matter: this runs for every citation of a
    baseline file, so it avoids path lookups.
    """
    citation = element.find("MedlineCitation")
    if citation is None:
        return Paper(paper_id="")
    pmid_el = citation.find("PMID")
    pmid = (pmid_el.text or "").strip() if pmid_el is not None else ""
    article = citation.find("Article")
    paper = Paper(paper_id=pmid, pmid=pmid)
    version = pmid_el.get("Version", "1") if pmid_el is not None else "1"
    paper.version = int(version) if version.isdigit() else 1
    if article is None:
        return paper
    article_year = None
    for child in article:
        tag = child.tag
        if tag == "Journal":
            paper.year = _pub_year(child)
            paper.journal = _text(child.find("Title"))
        elif tag == "ArticleTitle":
            paper.title = _text(child)
        elif tag == "Abstract":
            paper.abstract = _abstract(child)
        elif tag == "AuthorList":
            paper.authors = _authors(child)
        elif tag == "ELocationID" and child.get("EIdType") == "doi" and not paper.doi:
            paper.doi = (child.text or "").strip()
        elif tag == "ArticleDate" and article_year is None:
            article_year = _year(child.findtext("Year"))
    if paper.year is None:
        paper.year = article_year
    paper.retraction = _retraction(citation, article)
    types = [_text(t) for t in article.iterfind("PublicationTypeList/PublicationType")]
    headings = [_text(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")]
    paper.design, paper.organisms = design_of_types(types), organisms_of_headings(headings)
    paper.design_from = METADATA if paper.design else ""
    paper.organisms_from = METADATA if paper.organisms else ""
    ids = element.find("PubmedData/ArticleIdList")
    if ids is not None:
        doi = ""
        for aid in ids:
            kind = aid.get("IdType")
            if kind == "doi" and not doi:
                doi = (aid.text or "").strip()
            elif kind == "pmc" and not paper.pmcid:
                paper.pmcid = (aid.text or "").strip()
        paper.doi = doi or paper.doi
    return paper


def _retraction(citation: etree._Element, article: etree._Element) -> str:
    """ "notice" for a retraction notice, "retracted" for a retracted paper, else ""."""
    types = {_text(t) for t in article.iterfind("PublicationTypeList/PublicationType")}
    links = {c.get("RefType") for c in citation.iterfind("CommentsCorrectionsList/*")}
    if types & NOTICE_TYPES or "RetractionOf" in links:
        return "notice"
    if types & RETRACTED_TYPES or "RetractionIn" in links:
        return "retracted"
    return ""


def _open(source: str | Path | bytes) -> tuple[IO[bytes], str]:
    """A binary stream of the (decompressed) XML and a name for messages."""
    if isinstance(source, bytes):
        if source[:2] == _GZIP_MAGIC:
            return gzip.GzipFile(fileobj=io.BytesIO(source), mode="rb"), "<bytes>"  # type: ignore[return-value]
        return io.BytesIO(source), "<bytes>"
    path = Path(source)
    try:
        with path.open("rb") as fh:
            compressed = fh.read(2) == _GZIP_MAGIC
        stream: IO[bytes] = gzip.open(path, "rb") if compressed else path.open("rb")  # type: ignore[assignment]  # noqa: SIM115 (closed by the reader)
    except OSError as err:
        raise InputError(f"{path}: cannot open ({err.strerror or err}); check the path") from err
    return stream, path.name


def parse_medline(source: str | Path | bytes, report: ReadReport | None = None) -> Iterator[Paper]:
    """Stream the papers of a PubmedArticleSet file (``.xml``/``.xml.gz``, by content) or bytes.

    Citations without an abstract and repeated PMIDs are skipped and recorded in ``report``.
    A file that is not well-formed raises :class:`InputError` when the error is reached;
    the papers before it have already been yielded.
    """
    report = report if report is not None else ReadReport()
    stream, name = _open(source)
    return _iter(stream, name, report)


def _iter(stream: IO[bytes], name: str, report: ReadReport) -> Iterator[Paper]:
    count = 0
    with stream:
        try:
            context = etree.iterparse(
                stream,
                events=("end",),
                tag=_TAGS,
                resolve_entities=False,
                no_network=True,
                huge_tree=True,
            )
            for _, element in context:
                tag = element.tag
                if tag == "PubmedArticle":
                    count += 1
                    paper = paper_from_citation(element)
                    where = f"{name} citation {count}"
                    pmid, version = paper.paper_id, paper.version
                    label = f"{where} (PMID {pmid} version {version})"
                    seen = report.versions.get(pmid)
                    report.versions[pmid] = max(seen or 0, version)
                    latest = report.latest.get(pmid)
                    if latest is not None:  # a first pass saw every version: the latest wins
                        other = version != latest
                    else:  # a first pass counts one version; the skip names the older one
                        other = seen is not None and seen != version
                        if seen is not None and version > seen:
                            label, report.version_at[pmid] = report.version_at[pmid], label
                        elif not other:
                            report.version_at[pmid] = label
                    if not pmid:
                        report.skip(where, "no PMID")
                    elif other:  # one version of each PMID is read, the rest named, no error
                        report.skip(label, OLDER_VERSION)
                    elif not paper.abstract:
                        report.skip(f"{where} (PMID {paper.paper_id})", NO_ABSTRACT)
                    elif report.admit(paper, where):
                        yield paper
                elif tag == "DeleteCitation":
                    gone = [(p.text or "").strip() for p in element.iterfind("PMID")]
                    report.deleted.extend(gone)
                    if report.deletions:
                        yield from (Paper(paper_id=p, pmid=p, deleted=True) for p in gone if p)
                else:  # PubmedBookArticle: book chapters are not journal papers
                    count += 1
                    report.skip(f"{name} citation {count}", "book citation (not supported)")
                element.clear()
                parent = element.getparent()
                if parent is not None:
                    while element.getprevious() is not None:
                        del parent[0]
        except etree.XMLSyntaxError as err:
            raise InputError(
                f"{name}: not well-formed XML after {count:,} citations ({err.msg or err})"
            ) from err
        except (OSError, EOFError, zlib.error) as err:
            raise InputError(
                f"{name}: damaged or truncated file after {count:,} citations ({err})"
            ) from err
        root = context.root
        if root is not None and root.tag != "PubmedArticleSet":
            raise InputError(
                f"{name}: root element <{root.tag}> is not <PubmedArticleSet>; "
                "give MEDLINE/PubMed XML here (JATS full text goes to the JATS reader)"
            )
    report.files += 1
