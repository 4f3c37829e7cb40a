"""JATS reader over real PMC open-access articles (tests/data/pmc)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from fastbmrag.errors import InputError
from fastbmrag.papers import parse_jats, parse_jats_all, read_jats

PMC = Path(__file__).parent / "data" / "pmc"
BAD = Path(__file__).parent / "data" / "bad"


@pytest.mark.parametrize(
    ("name", "paper_id", "pmid", "doi", "year", "n_paragraphs", "n_captions", "title"),
    [
        (
            "PMC2768302.nxml",
            "PMC2768302",
            "19865592",
            "10.1155/2008/369830",
            2008,
            34,
            10,
            "Genomic Promoter Analysis Predicts Functional Transcription Factor Binding",
        ),
        (
            "PMC3339580.nxml",
            "PMC3339580",
            "22582158",
            "10.1007/s13205-011-0035-3",
            2012,  # print date (ppub 2012), not the 2011 epub
            33,
            9,
            "Decolorization and partial mineralization of a polyazo dye by Bacillus firmus "
            "immobilized within tubular polymeric gel",
        ),
        (
            "pntd.0002065.nxml",
            "PMC3585041",
            "23469300",
            "10.1371/journal.pntd.0002065",
            2013,
            33,
            6,
            "Serological Evidence of Rift Valley Fever Virus Circulation in Sheep and Goats "
            "in Zambézia Province, Mozambique",
        ),
        (
            "ehp-116-1694.nxml",
            "PMC2599765",
            "19079722",
            "10.1289/ehp.11570",
            2008,
            36,
            3,
            "Dietary Exposure to 2,2′,4,4′-Tetrabromodiphenyl Ether (PBDE-47) Alters Thyroid "
            "Status and Thyroid Hormone–Regulated Gene Transcription in the Pituitary and Brain",
        ),
    ],
)
def test_known_articles(
    name: str,
    paper_id: str,
    pmid: str,
    doi: str,
    year: int,
    n_paragraphs: int,
    n_captions: int,
    title: str,
) -> None:
    paper = read_jats(PMC / name)
    assert paper.paper_id == paper_id
    assert paper.pmcid == paper_id
    assert paper.pmid == pmid
    assert paper.doi == doi
    assert paper.year == year
    assert paper.title == title
    assert len(paper.paragraphs) == n_paragraphs
    captions = [p for p in paper.paragraphs if p.startswith(("[Fig", "[Table", "[Supplementary"))]
    assert len(captions) == n_captions
    assert paper.extra == {}


def test_metadata_and_section_prefixes() -> None:
    paper = read_jats(PMC / "PMC2768302.nxml")
    assert paper.journal == "Advances in Bioinformatics"
    assert paper.authors == "J. Sunil Rao; Suresh Karanam; Colleen D. McCabe; Carlos S. Moreno"
    assert paper.abstract.startswith(
        "Background. The computational identification of functional transcription factor"
    )
    assert paper.paragraphs[0].startswith(
        "[1. Background] One of the important challenges in computational biology"
    )
    # the innermost section names the paragraph
    assert any(p.startswith("[2.1. In Vivo Occupancy Predictions] ") for p in paper.paragraphs)


def test_captions_are_their_own_paragraphs() -> None:
    paper = read_jats(PMC / "PMC2768302.nxml")
    figure = [p for p in paper.paragraphs if p.startswith("[Figure 1] ")]
    assert len(figure) == 1
    assert figure[0].startswith("[Figure 1] %GC content of the conserved promoter sequences")
    body = [p for p in paper.paragraphs if not p.startswith(("[Figure", "[Table", "[Supp"))]
    assert not any("no statistically significant GC bias was observed" in p for p in body)
    # a figure inside a <p> (3 Biotech layout) comes out after that paragraph, not inside it
    dye = read_jats(PMC / "PMC3339580.nxml")
    i = next(i for i, p in enumerate(dye.paragraphs) if p.startswith("[Fig. 1] "))
    assert dye.paragraphs[i].startswith("[Fig. 1] Chemical structure of C.I. Direct red 80")
    assert not dye.paragraphs[i - 1].startswith("[Fig.")
    assert "Chemical structure of C.I. Direct red 80" not in dye.paragraphs[i - 1]


def test_references_excluded() -> None:
    paper = read_jats(PMC / "PMC2768302.nxml")
    text = "\n".join(paper.paragraphs)
    # the title of reference 1 of this article
    assert "CONFAC: automated application of comparative genomic promoter analysis" not in text


def test_structured_abstract_keeps_section_labels() -> None:
    paper = read_jats(PMC / "ehp-116-1694.nxml")
    labels = [line.split(":", 1)[0] for line in paper.abstract.split("\n")]
    assert labels == ["Background", "Objective", "Methods", "Results", "Conclusions"]
    assert paper.abstract.startswith(
        "Background: Polybrominated diphenyl ether (PBDE) flame retardants have been implicated"
    )


def test_author_summary_is_not_the_abstract() -> None:
    paper = read_jats(PMC / "pntd.0002065.nxml")
    assert paper.abstract.startswith("Rift Valley fever (RVF) is endemic in most parts of Africa")
    assert "Author Summary" not in paper.abstract


def test_bytes_and_text_give_the_same_paper() -> None:
    data = (PMC / "PMC2768302.nxml").read_bytes()
    from_path = read_jats(PMC / "PMC2768302.nxml")
    assert parse_jats(data) == from_path
    assert parse_jats(data.decode("utf-8")) == from_path
    assert parse_jats(str(PMC / "PMC2768302.nxml")) == from_path


def _without_ids(data: bytes, *kinds: str) -> bytes:
    root = etree.fromstring(data)
    for node in root.iter("{*}article-id"):
        if node.get("pub-id-type") in kinds:
            node.getparent().remove(node)
    return etree.tostring(root)


def test_paper_id_falls_back_to_pmid_doi_then_stem(tmp_path: Path) -> None:
    data = (PMC / "PMC2768302.nxml").read_bytes()
    assert parse_jats(_without_ids(data, "pmc")).paper_id == "19865592"
    assert parse_jats(_without_ids(data, "pmc", "pmid")).paper_id == "10.1155/2008/369830"
    bare = tmp_path / "promoter-analysis.nxml"
    bare.write_bytes(_without_ids(data, "pmc", "pmid", "doi"))
    assert read_jats(bare).paper_id == "promoter-analysis"


def test_pmc_articleset_holds_several_articles() -> None:
    a = (PMC / "PMC2768302.nxml").read_bytes()
    b = (PMC / "ehp-116-1694.nxml").read_bytes()
    a = a[a.index(b"<article ") :]
    b = b[b.index(b"<article ") :]
    papers = parse_jats_all(b"<pmc-articleset>" + a + b + b"</pmc-articleset>")
    assert [p.paper_id for p in papers] == ["PMC2768302", "PMC2599765"]
    assert parse_jats(b"<pmc-articleset>" + b + b"</pmc-articleset>").pmid == "19079722"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.nxml", "truncated.nxml: not well-formed XML (Premature end of data"),
        ("empty.nxml", "empty.nxml: the file is empty"),
        ("junk.xml", "junk.xml: not well-formed XML"),
        ("not_papers.xml", "not_papers.xml: no <article> element (root is <catalog>)"),
    ],
)
def test_bad_files_raise_input_error(name: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        read_jats(BAD / name)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.nxml: cannot open .*check the path"):
        read_jats(tmp_path / "missing.nxml")
