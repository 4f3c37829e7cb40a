"""MEDLINE records for the fake E-utilities: the dates a record holds (publication, history,
Entrez date) and a MEDLINE record derived from a JATS article's front matter."""

from __future__ import annotations

import re
from datetime import date, timedelta

from lxml import etree

MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}


def element_text(el: etree._Element | None) -> str:
    if el is None:
        return ""
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def ymd(el: etree._Element | None) -> date | None:
    if el is None:
        return None
    year = el.findtext("Year") or el.findtext("year")
    if not year:
        medline = el.findtext("MedlineDate") or ""
        m = re.match(r"\d{4}", medline)
        return date(int(m.group()), 1, 1) if m else None
    month_s = (el.findtext("Month") or el.findtext("month") or "1").strip()
    month = int(month_s) if month_s.isdigit() else MONTHS.get(month_s[:3].lower(), 1)
    day_s = (el.findtext("Day") or el.findtext("day") or "1").strip()
    return date(int(year), month, int(day_s) if day_s.isdigit() else 1)


def history_date(article: etree._Element, status: str) -> date | None:
    return ymd(article.find(f"PubmedData/History/PubMedPubDate[@PubStatus='{status}']"))


def pub_date(article: etree._Element) -> date | None:
    return ymd(article.find("MedlineCitation/Article/Journal/JournalIssue/PubDate"))


def set_entrez_date(article: etree._Element, when: date) -> None:
    data = article.find("PubmedData")
    if data is None:
        data = etree.SubElement(article, "PubmedData")
    history = data.find("History")
    if history is None:
        history = etree.Element("History")
        data.insert(0, history)
    for status in ("pubmed", "medline", "entrez"):
        el = history.find(f"PubMedPubDate[@PubStatus='{status}']")
        if el is None:
            el = etree.SubElement(history, "PubMedPubDate", PubStatus=status)
        for child in list(el):
            el.remove(child)
        for tag, value in (("Year", when.year), ("Month", when.month), ("Day", when.day)):
            etree.SubElement(el, tag).text = str(value)


def parse_date(value: str) -> date:
    m = re.fullmatch(r"(\d{4})(?:[/-](\d{1,2})(?:[/-](\d{1,2}))?)?", value.strip())
    if not m:
        raise ValueError(f"Invalid date {value!r}: use YYYY/MM/DD")
    y, mo, d = m.group(1), m.group(2), m.group(3)
    return date(int(y), int(mo or 1), int(d or 1))


def date_end(value: str) -> date:
    """The last day a YYYY or YYYY/MM maxdate covers."""
    start = parse_date(value)
    parts = re.split(r"[/-]", value.strip())
    if len(parts) == 1:
        return date(start.year, 12, 31)
    if len(parts) == 2:
        nxt = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
        return nxt - timedelta(days=1)
    return start


def date_window(params: dict[str, str]) -> tuple[date | None, date | None]:
    mindate, maxdate, reldate = params.get("mindate"), params.get("maxdate"), params.get("reldate")
    if reldate:
        today = date.today()
        return today - timedelta(days=int(reldate)), today
    if bool(mindate) != bool(maxdate):
        raise ValueError("mindate and maxdate must be given together")
    if not mindate or not maxdate:
        return None, None
    return parse_date(mindate), date_end(maxdate)


def medline_from_jats(jats: etree._Element) -> etree._Element:
    """A ``PubmedArticle`` built from a JATS article's front matter (the fake's stand-in record)."""
    meta = jats.find("front/article-meta")
    journal_meta = jats.find("front/journal-meta")
    assert meta is not None
    pmid = element_text(meta.find("article-id[@pub-id-type='pmid']"))
    pmcid = element_text(meta.find("article-id[@pub-id-type='pmc']"))
    pmcid = pmcid if pmcid.upper().startswith("PMC") else "PMC" + pmcid
    doi = element_text(meta.find("article-id[@pub-id-type='doi']"))
    title = element_text(meta.find("title-group/article-title"))
    journal = (
        element_text(journal_meta.find(".//journal-title")) if journal_meta is not None else ""
    )
    abbrev = (
        element_text(journal_meta.find("journal-id[@journal-id-type='nlm-ta']"))
        if journal_meta is not None
        else ""
    )
    pub = (
        ymd(meta.find("pub-date[@pub-type='epub']"))
        or ymd(meta.find("pub-date[@pub-type='ppub']"))
        or ymd(meta.find("pub-date"))
        or date(1900, 1, 1)
    )

    art = etree.Element("PubmedArticle")
    cit = etree.SubElement(art, "MedlineCitation", Status="PubMed-not-MEDLINE", Owner="NLM")
    etree.SubElement(cit, "PMID", Version="1").text = pmid
    article = etree.SubElement(cit, "Article", PubModel="Electronic")
    j = etree.SubElement(article, "Journal")
    issue = etree.SubElement(j, "JournalIssue", CitedMedium="Internet")
    pd = etree.SubElement(issue, "PubDate")
    etree.SubElement(pd, "Year").text = str(pub.year)
    etree.SubElement(pd, "Month").text = f"{pub.month:02d}"
    etree.SubElement(pd, "Day").text = f"{pub.day:02d}"
    etree.SubElement(j, "Title").text = journal
    etree.SubElement(j, "ISOAbbreviation").text = abbrev or journal
    etree.SubElement(article, "ArticleTitle").text = title
    if doi:
        etree.SubElement(article, "ELocationID", EIdType="doi", ValidYN="Y").text = doi
    abstract = meta.find("abstract")
    if abstract is not None:
        ab = etree.SubElement(article, "Abstract")
        secs = abstract.findall("sec")
        if secs:
            for sec in secs:
                label = element_text(sec.find("title"))
                paras = " ".join(element_text(p) for p in sec.findall("p"))
                at = etree.SubElement(ab, "AbstractText")
                if label:
                    at.set("Label", label.upper())
                at.text = paras
        else:
            etree.SubElement(ab, "AbstractText").text = element_text(abstract)
    authors = meta.findall("contrib-group/contrib[@contrib-type='author']")
    if authors:
        al = etree.SubElement(article, "AuthorList", CompleteYN="Y")
        for c in authors:
            a = etree.SubElement(al, "Author", ValidYN="Y")
            etree.SubElement(a, "LastName").text = element_text(c.find("name/surname"))
            etree.SubElement(a, "ForeName").text = element_text(c.find("name/given-names"))
    etree.SubElement(article, "Language").text = "eng"
    info = etree.SubElement(cit, "MedlineJournalInfo")
    etree.SubElement(info, "MedlineTA").text = abbrev or journal
    data = etree.SubElement(art, "PubmedData")
    etree.SubElement(data, "History")
    set_entrez_date(art, pub)
    etree.SubElement(data, "PublicationStatus").text = "epublish"
    ids = etree.SubElement(data, "ArticleIdList")
    etree.SubElement(ids, "ArticleId", IdType="pubmed").text = pmid
    if doi:
        etree.SubElement(ids, "ArticleId", IdType="doi").text = doi
    etree.SubElement(ids, "ArticleId", IdType="pmc").text = pmcid
    return art
