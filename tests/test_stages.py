"""The pure parts of the two indexing stages: chunking, chunk selection, citations, salvage,
and the fake's answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fastbmrag.index.extract import resolve_draft
from fastbmrag.index.refine import chunk_paragraphs, select_chunks
from fastbmrag.prompts import Draft, Refinement, extract_messages, refine_messages
from fastbmrag.testing.responders import draft_answer, refine_answer
from fastbmrag.text.citations import strip as split_citations
from fastbmrag.text.sentences import abstract_sentences

SENTENCES = (
    "Endometriosis is an estrogen-dependent inflammatory disease. "
    "Interleukin-1 beta is elevated in peritoneal fluid of affected women. "
    "Macrophages secrete IL1B in response to retrograde menstruation. "
)
LONG = SENTENCES * 12


def test_short_paragraphs_are_packed_up_to_the_limit() -> None:
    word = "Lesions grow. "
    paras = ["First one. " + word * 20, word * 21, word * 21, word * 21]
    chunks = chunk_paragraphs(paras, max_chars=1000, overlap=100)
    assert [sorted({s.passage for s in c.sentences}) for c in chunks] == [[1, 2, 3], [4]]
    assert all(len(c.text) <= 1000 for c in chunks)


def test_long_paragraph_is_cut_between_sentences_with_overlap() -> None:
    chunks = chunk_paragraphs([LONG], max_chars=500, overlap=120)
    assert len(chunks) > 3
    assert all(len(c.text) <= 500 for c in chunks)
    # a chunk never cuts a sentence, and each one after the first repeats the previous one's end
    assert all(s.text.endswith(".") for c in chunks for s in c.sentences)
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        assert cur.sentences[0] in prev.sentences
    assert len({s.start for c in chunks for s in c.sentences}) == 36  # nothing lost


def test_a_sentence_longer_than_the_chunk_is_a_chunk_of_its_own() -> None:
    chunks = chunk_paragraphs(
        ["Short one. The " + "x" * 900 + " one. Last one."], max_chars=300, overlap=0
    )
    assert [len(c.sentences) for c in chunks] == [1, 1, 1]


def test_overlap_must_be_smaller_than_chunk() -> None:
    with pytest.raises(ValueError):
        chunk_paragraphs(["x"], max_chars=100, overlap=100)


def test_select_chunks_top_k_and_floor() -> None:
    chunks = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    queries = np.array([[1, 0, 0], [0, 0, -1]], dtype=np.float32)
    picked = select_chunks(chunks, queries, top_k=2, min_similarity=0.5)
    assert [c for c, _ in picked[0]] == [0, 1]
    assert picked[0][0][1] == pytest.approx(1.0)
    assert picked[1] == []  # nothing similar enough: the cited description stays


def test_inline_citations_are_split_from_the_description() -> None:
    text, cited = split_citations(
        "IL1B rose in lesions [12][14], more in deep disease [3, 5] and with stage [7-9] ."
    )
    assert text == "IL1B rose in lesions, more in deep disease and with stage."
    assert cited == [12, 14, 3, 5, 7, 8, 9]
    assert split_citations("No citation here.") == ("No citation here.", [])


def test_draft_salvage_drops_invalid_relations_and_counts_them() -> None:
    answer = {
        "e": [
            [1, "IL1B", "gene"],
            [2, "x" * 500, "gene"],  # over-long name
            [3, "endometriosis", "disease"],
            [4, "ESR2", "protein"],  # unknown type code
        ],
        "r": [
            [1, "upregulated_in", 3, [2]],
            [2, "binds", 1, [2]],  # refers to the over-long name
            [4, "binds", 1, [2]],  # refers to the unknown type
            [1, "cures", 3, [2]],  # unknown relation code
            [1, "binds", 9, [2]],  # no entity 9
        ],
    }
    draft = Draft.model_validate_json(json.dumps(answer))
    assert [(r.s, r.r, r.o) for r in draft.r] == [(1, "upregulated_in", 3)]
    assert draft.dropped == 4
    with pytest.raises(ValueError):
        Draft.model_validate_json('{"e": 3, "r": []}')  # not the shape at all: repair, then fail


def test_resolve_draft_cuts_cited_sentences_and_drops_uncited_relations() -> None:
    title = "IL1B in endometriosis"
    abstract = "We studied 40 women. IL1B was higher in lesions. ESR2 rose too."
    sentences = abstract_sentences(title, abstract)
    draft = Draft.model_validate(
        {
            "e": [
                [1, " IL1B ", "gene"],
                [2, "endometriosis", "disease"],
                [3, "ESR2", "gene"],
                [4, "il1b", "gene"],
            ],
            "r": [
                [1, "upregulated_in", 2, [3, 1, 3]],
                [3, "upregulated_in", 2, [7]],  # no sentence 7
                [1, "regulates", 4, [3]],  # the same name twice: skipped
            ],
        }
    )
    relations, dropped = resolve_draft(draft, sentences)
    assert dropped == 1
    [rel] = relations
    assert (rel.src, rel.rel, rel.tgt) == ("IL1B", "upregulated_in", "endometriosis")
    assert rel.cited_text == "IL1B in endometriosis IL1B was higher in lesions."
    assert [(s.where, s.start, s.end) for s in rel.cited] == [
        ("title", 0, 21),
        ("abstract", 21, 48),
    ]


def test_fake_draft_answer_is_schema_valid_and_cites_the_naming_sentence() -> None:
    abstract = (
        "Endometriosis affects 10% of women. Expression of VEGFA and MMP9 was higher in "
        "ectopic lesions. IL1B levels correlated with pain."
    )
    sentences = abstract_sentences("", abstract)
    prompt = extract_messages([s.text for s in sentences])[1]["content"]
    assert prompt.splitlines()[1].startswith("[2] Expression of VEGFA")
    answer = draft_answer(prompt)
    # every item a JSON array, as the schema's tuples ask: no keys to write
    assert answer["e"][0] == [1, "VEGFA", "gene"] and answer["r"][0][::2] == [1, 2]
    relations, dropped = resolve_draft(Draft.model_validate(answer), sentences)
    assert dropped == 0
    assert [(r.src, r.tgt) for r in relations] == [
        ("VEGFA", "Endometriosis"),
        ("MMP9", "Endometriosis"),
        ("IL1B", "Endometriosis"),
    ]
    for r in relations:
        assert any(r.src in s.text for s in r.cited)


def test_fake_refine_answer_follows_the_prompt() -> None:
    messages = refine_messages(
        "A paper",
        [
            (
                "P2 (Results)",
                [(1, "Lesions showed high VEGFA staining in stromal cells."), (2, "B.")],
            ),
            ("P5", [(3, "Other.")]),
        ],
        [(1, 'VEGFA upregulated in Endometriosis. Abstract: "x"', ["P2", "P5"]), (3, "X", ["P5"])],
    )
    user = messages[1]["content"]
    assert "P2 (Results)\n[1] Lesions showed" in user
    raw = refine_answer(user)
    assert [item[0] for item in raw["r"]] == [1, 3]  # [relation number, description]
    answer = Refinement.model_validate(raw)
    assert [i.i for i in answer.r] == [1, 3]
    text, cited = split_citations(answer.r[0].d)
    assert cited == [1] and "Lesions showed high VEGFA staining" in text
    assert split_citations(answer.r[1].d)[1] == [3]
