"""Sentence splitting on real text: the hard cases of biomedical prose, and exact offsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastbmrag.papers import Paper, ReadReport, iter_papers
from fastbmrag.text.sentences import ABSTRACT, PASSAGE, TITLE, abstract_sentences, passage_sentences

DATA = Path(__file__).parent / "data"


def paper(name: str) -> Paper:
    return next(iter_papers([DATA / "pmc" / name], ReadReport()))


def all_papers() -> list[Paper]:
    return list(iter_papers([DATA / "pmc", DATA / "eutils", DATA / "medline"], ReadReport()))


def sentence_with(sentences: list[str], fragment: str) -> str:
    return next(s for s in sentences if fragment in s)


def test_every_sentence_is_its_text_at_its_offsets() -> None:
    papers = all_papers()
    assert len(papers) > 40
    for p in papers:
        for s in abstract_sentences(p.title, p.abstract):
            source = p.title if s.where == TITLE else p.abstract
            assert source[s.start : s.end] == s.text and s.text == s.text.strip()
        for n, para in enumerate(p.paragraphs, 1):
            for s in passage_sentences(n, para):
                assert s.where == PASSAGE and s.passage == n
                assert para[s.start : s.end] == s.text and s.text.strip() == s.text


def test_abbreviations_numbers_and_figures_do_not_end_a_sentence() -> None:
    p = paper("PMC3339580.nxml")
    text = [s.text for n, para in enumerate(p.paragraphs, 1) for s in passage_sentences(n, para)]
    # "et al." followed by a year, "Fig. 4", decimals and units stay inside their sentence
    assert sentence_with(text, "Supaka et al.").startswith("Supaka et al. (2004) showed that")
    assert sentence_with(text, "TAA levels increased") == (
        "As presented in Fig. 4, TAA levels increased from 4.2 to 23.8 mg/L during the anoxic "
        "process (first 12 h) while a slow reduction in COD (7.2%) was obtained during same process."
    )
    # a name with internal dots (a Colour Index dye name) in the abstract
    abstract = [s.text for s in abstract_sentences(p.title, p.abstract)]
    assert sentence_with(abstract, "C.I. Direct red 80").startswith("The degradation of C.I.")
    assert sentence_with(abstract, "C.I. Direct red 80").endswith("in tubular polymeric gel.")


def test_p_values_and_eg_do_not_end_a_sentence() -> None:
    rao = paper("PMC2768302.nxml")
    text = [s.text for n, para in enumerate(rao.paragraphs, 1) for s in passage_sentences(n, para)]
    assert (
        "Our analysis of the data produced 1134 correct predictions, or 84% correct (P < .0005)."
        in text
    )
    rvf = paper("pntd.0002065.nxml")
    text = [s.text for n, para in enumerate(rvf.paragraphs, 1) for s in passage_sentences(n, para)]
    eg = sentence_with(text, "water-related e.g.")
    assert eg.startswith("These differences in precipitation") and eg.endswith(".")


def test_section_labels_are_kept_out_of_the_sentence() -> None:
    p = paper("ehp-116-1694.nxml")
    first, *rest = abstract_sentences(p.title, p.abstract)
    assert first.where == TITLE and first.text == p.title
    assert rest[0].where == ABSTRACT and rest[0].section == "Background"
    assert rest[0].text.startswith("Polybrominated diphenyl ether (PBDE) flame retardants")
    assert {s.section for s in rest} >= {"Background", "Objective", "Methods", "Results"}
    # a main-text passage prefixed with its section title by the JATS reader
    para = next(x for x in paper("PMC2768302.nxml").paragraphs if x.startswith("["))
    sents = passage_sentences(3, para)
    label = para[1 : para.index("]")]
    assert sents[0].section == label and not sents[0].text.startswith("[")
    assert sents[0].start == len(label) + 3


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_blank_text_has_no_sentences(text: str) -> None:
    assert abstract_sentences("", text) == []
    assert passage_sentences(1, text) == []
