"""PMC open-access full text in JATS XML (``.nxml``), the tidyPMC equivalent.

Metadata comes through ``pubmed_parser``'s JATS helpers (article ids, publication dates,
affiliation-free author names). The text is walked here, because ``pubmed_parser``'s
paragraph reader keeps only the direct children's text of a paragraph (losing words inside
``<italic><sub>``), knows only the immediate section and mixes figure captions into the
paragraphs:

* abstract: every section of the main ``<abstract>`` (not teasers or author summaries);
  a sectioned abstract becomes ``"Title: text"`` lines;
* main text: every ``<p>`` of ``<body>`` in document order, prefixed with the title of the
  innermost section holding it: ``"[Results] ..."``; references and back matter excluded;
* figure, table and supplementary captions are their own paragraphs, in place:
  ``"[Figure 1] caption"``; figures kept in ``<floats-group>`` come after the body.

``paper_id`` is the PMCID (``PMC`` prefix), else the PMID, else the DOI, else the file stem.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from lxml import etree

from fastbmrag.errors import InputError
from fastbmrag.papers.design import ARTICLE_TYPES, METADATA
from fastbmrag.papers.model import Paper

# Elements that hold no running text of the article.
_SKIP = frozenset(
    {
        "title",
        "label",
        "ref-list",
        "table",
        "graphic",
        "media",
        "alternatives",
        "table-wrap-foot",
        "fn-group",
        "object-id",
        "inline-graphic",
    }
)
_FLOATS = {
    "fig": "Figure",
    "table-wrap": "Table",
    "supplementary-material": "Supplementary material",
}
# Block elements: their text is kept apart from the neighbours' (inline ones are not).
_BLOCK = frozenset(
    {"p", "title", "label", "list-item", "caption", "def-item", "term", "def", "disp-quote", "sec"}
)
# Never text, even inside a paragraph.
_SKIP_INLINE = frozenset({"graphic", "inline-graphic", "media", "object-id", "table"})
_SECONDARY_ABSTRACTS = frozenset({"teaser", "graphical", "toc", "web-summary", "summary"})
_GZIP_MAGIC = b"\x1f\x8b"


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=True,
        remove_comments=True,
    )


def _strip_namespaces(root: etree._Element) -> None:
    for node in root.iter():
        tag = node.tag
        if isinstance(tag, str) and tag.startswith("{"):
            node.tag = tag.split("}", 1)[1]


def _collect(el: etree._Element, parts: list[str], floats: list[etree._Element] | None) -> None:
    """Text under ``el`` into ``parts``; nested figures/tables go to ``floats`` (or are skipped)."""
    if el.text:
        parts.append(el.text)
    for child in el:
        tag = child.tag
        if isinstance(tag, str):
            if tag in _FLOATS:
                if floats is not None:
                    floats.append(child)
            elif tag not in _SKIP_INLINE:
                block = tag in _BLOCK
                if block:
                    parts.append(" ")
                _collect(child, parts, floats)
                if block:
                    parts.append(" ")
        if child.tail:
            parts.append(child.tail)


def _text(el: etree._Element | None, floats: list[etree._Element] | None = None) -> str:
    """All text under ``el``, whitespace collapsed, block elements kept apart."""
    if el is None:
        return ""
    parts: list[str] = []
    _collect(el, parts, floats)
    return " ".join("".join(parts).split())


def load_xml(source: str | Path | bytes) -> tuple[etree._Element, str]:
    """The root element of an XML source (path, ``.gz`` path, XML text or bytes) and a name.

    A ``str`` that starts with ``<`` is XML text; any other ``str`` is a path.
    Raises :class:`InputError` for an unreadable, empty or malformed source.
    """
    if isinstance(source, str) and source.lstrip().startswith("<"):
        source = source.encode("utf-8")
    if isinstance(source, bytes):
        data, name = source, "<bytes>"
    else:
        path = Path(source)
        name = path.name
        try:
            data = path.read_bytes()
        except OSError as err:
            raise InputError(
                f"{path}: cannot open ({err.strerror or err}); check the path"
            ) from err
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:
            raise InputError(f"{name}: damaged or truncated gzip file ({err})") from err
    if not data.strip():
        raise InputError(f"{name}: the file is empty")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as err:
        raise InputError(f"{name}: not well-formed XML ({err.msg or err})") from err
    if root is None:
        raise InputError(f"{name}: no XML element found")
    _strip_namespaces(root)
    return root, name


def articles(root: etree._Element) -> list[etree._Element]:
    """The ``<article>`` elements of a JATS document or a ``<pmc-articleset>``."""
    if root.tag == "article":
        return [root]
    return list(root.iter("article"))


def _abstract(meta: etree._Element | None) -> str:
    if meta is None:
        return ""
    abstracts = meta.findall("abstract")
    main = [a for a in abstracts if a.get("abstract-type") not in _SECONDARY_ABSTRACTS]
    lines: list[str] = []
    for abstract in main or abstracts[:1]:
        for child in abstract:
            if child.tag == "sec":
                title = _text(child.find("title")).rstrip(":")
                body = " ".join(
                    t for c in child if c.tag not in ("title", "label") and (t := _text(c))
                )
                if body:
                    lines.append(f"{title}: {body}" if title else body)
            elif child.tag not in ("title", "label") and (text := _text(child)):
                lines.append(text)
    return "\n".join(lines)


def _caption(el: etree._Element) -> str:
    kind = _FLOATS[el.tag]
    label = _text(el.find("label")).rstrip(".:") or kind
    caption = el.find("caption")
    text = _text(caption)
    return f"[{label}] {text}" if text else ""


def _walk(el: etree._Element, section: str, out: list[str]) -> None:
    for child in el:
        tag = child.tag
        if not isinstance(tag, str) or tag in _SKIP:
            continue
        if tag == "sec":
            _walk(child, _text(child.find("title")) or section, out)
        elif tag == "p":
            nested: list[etree._Element] = []
            text = _text(child, nested)
            if text:
                out.append(f"[{section}] {text}" if section else text)
            out.extend(c for f in nested if (c := _caption(f)))
        elif tag in _FLOATS:
            caption = _caption(child)
            if caption:
                out.append(caption)
        else:
            _walk(child, section, out)


def _year(tree: etree._Element) -> int | None:
    from pubmed_parser.pubmed_oa_parser import parse_date  # 0.2 s to import: only when used

    meta = tree.find("front/article-meta")
    for kind in ("ppub", "collection", "epub", "epub-ppub"):
        value = parse_date(tree, kind).get("year", "")
        if value.strip().isdigit():
            return int(value.strip())
    if meta is not None:
        for date in meta.iterfind("pub-date"):  # JATS 1.1+: date-type/publication-format
            value = (date.findtext("year") or "").strip()
            if value.isdigit():
                return int(value)
    return None


def _authors(meta: etree._Element | None) -> str:
    if meta is None:
        return ""
    names = []
    for contrib in meta.iterfind("contrib-group/contrib"):
        if contrib.get("contrib-type", "author") != "author":
            continue
        collab = contrib.find("collab")
        if collab is not None:
            names.append(_text(collab))
            continue
        name = contrib.find("name")
        if name is None:
            name = contrib.find("name-alternatives/name")
        if name is not None:
            full = " ".join(
                p for p in (_text(name.find("given-names")), _text(name.find("surname"))) if p
            )
            if full:
                names.append(full)
    return "; ".join(names)


def paper_from_article(article: etree._Element, stem: str = "") -> Paper:
    """The Paper of one (namespace-stripped) ``<article>`` element."""
    from pubmed_parser.pubmed_oa_parser import parse_article_meta  # 0.2 s to import: lazily

    ids = parse_article_meta(article)
    meta = article.find("front/article-meta")
    pmcid = (ids["pmc"] or "").strip()
    if not pmcid and meta is not None:
        for aid in meta.iterfind("article-id"):
            if aid.get("pub-id-type") == "pmcid":
                pmcid = (aid.text or "").strip()
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = "PMC" + pmcid
    pmid = (ids["pmid"] or "").strip()
    doi = (ids["doi"] or "").strip()

    paragraphs: list[str] = []
    body = article.find("body")
    if body is not None:
        _walk(body, "", paragraphs)
    floats = article.find("floats-group")
    if floats is not None:
        _walk(floats, "", paragraphs)

    title = _text(meta.find("title-group/article-title")) if meta is not None else ""
    subtitle = _text(meta.find("title-group/subtitle")) if meta is not None else ""
    journal = _text(article.find("front/journal-meta//journal-title"))
    related = {r.get("related-article-type") for r in article.iter("related-article")}
    retraction = ""
    if article.get("article-type") == "retraction" or "retracted-article" in related:
        retraction = "notice"  # a notice points at the article it retracts
    elif "retraction-forward" in related:
        retraction = "retracted"  # the retracted article points at its notice
    design = ARTICLE_TYPES.get(article.get("article-type") or "", "")
    return Paper(
        design=design,
        design_from=METADATA if design else "",
        paper_id=pmcid or pmid or doi or stem,
        abstract=_abstract(meta),
        paragraphs=paragraphs,
        title=f"{title}: {subtitle}" if subtitle else title,
        year=_year(article),
        authors=_authors(meta),
        journal=journal,
        pmid=pmid,
        pmcid=pmcid,
        doi=doi,
        retraction=retraction,
    )


def _stem(name: str) -> str:
    for suffix in (".gz", ".nxml", ".xml"):
        name = name.removesuffix(suffix)
    return name


def parse_jats_all(source: str | Path | bytes) -> list[Paper]:
    """Every article of a JATS file or ``<pmc-articleset>`` (efetch ``db=pmc`` output)."""
    root, name = load_xml(source)
    found = articles(root)
    if not found:
        raise InputError(
            f"{name}: no <article> element (root is <{root.tag}>); give a JATS (.nxml) file here"
        )
    stem = "" if name == "<bytes>" else _stem(name)
    return [paper_from_article(a, stem if len(found) == 1 else "") for a in found]


def parse_jats(source: str | Path | bytes) -> Paper:
    """The paper of a JATS article: a path (``.nxml``, ``.xml``, ``.gz``), XML text or bytes.

    For a ``<pmc-articleset>`` the first article is returned (see :func:`parse_jats_all`).
    Raises :class:`InputError` when the source is unreadable, malformed or not JATS.
    """
    return parse_jats_all(source)[0]


def read_jats(path: str | Path) -> Paper:
    """The paper of one JATS file."""
    return parse_jats(Path(path))
