"""The pure parts of the two indexing stages: chunking, chunk selection, quotes, the fake's answers."""

from __future__ import annotations

import numpy as np
import pytest

from fastbmrag.extract import clean_draft, verbatim
from fastbmrag.prompts import Draft, Refinement, refine_messages
from fastbmrag.refine import chunk_paragraphs, select_chunks
from fastbmrag.testing.responders import draft_answer, refine_answer

LONG = (
    "Endometriosis is an estrogen-dependent inflammatory disease. "
    "Interleukin-1 beta is elevated in peritoneal fluid of affected women. "
    "Macrophages secrete IL1B in response to retrograde menstruation. "
) * 12


def test_short_paragraphs_are_packed_up_to_the_limit() -> None:
    paras = ["a" * 300, "b" * 300, "c" * 300, "d" * 300, "e" * 300]
    chunks = chunk_paragraphs(paras, max_chars=1000, overlap=100)
    assert [len(c) for c in chunks] == [300 * 3 + 2, 300 * 2 + 1]  # paragraphs + newlines
    assert chunks[0].split("\n") == paras[:3]


def test_long_paragraph_is_split_at_sentences_with_overlap() -> None:
    chunks = chunk_paragraphs([LONG], max_chars=500, overlap=120)
    assert len(chunks) > 3
    assert all(len(c) <= 500 for c in chunks)
    # every piece after the first starts with text repeated from the end of the previous one
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        head = cur.split()[0:3]
        assert " ".join(head) in prev
    # nothing is lost: every sentence of the paragraph occurs in some chunk
    for sentence in LONG.split(". "):
        assert any(sentence.strip(". ") in c for c in chunks)


def test_overlap_must_be_smaller_than_chunk() -> None:
    with pytest.raises(ValueError):
        chunk_paragraphs(["x"], max_chars=100, overlap=100)


def test_select_chunks_top_k_and_floor() -> None:
    chunks = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    queries = np.array([[1, 0, 0], [0, 0, -1]], dtype=np.float32)
    picked = select_chunks(chunks, queries, top_k=2, min_similarity=0.5)
    assert [c for c, _ in picked[0]] == [0, 1]
    assert picked[0][0][1] == pytest.approx(1.0)
    assert picked[1] == []  # nothing similar enough: the draft description stays


def test_verbatim_accepts_real_quotes_only() -> None:
    text = "Macrophages  secrete IL1B in response to\nretrograde menstruation."
    assert verbatim('"macrophages secrete IL1B in response"', text) == (
        "macrophages secrete IL1B in response"
    )
    assert verbatim("macrophages produce IL1B", text) == ""
    assert verbatim("IL1B", text) == ""  # too short to be evidence


def test_clean_draft_drops_blank_and_self_relations() -> None:
    draft = Draft.model_validate(
        {
            "r": [
                {"src": " IL1B ", "src_type": "gene", "rel": "upregulated_in", "tgt": "endometriosis",
                 "tgt_type": "disease", "desc": "up  in disease", "ev": ""},
                {"src": "TNF", "src_type": "gene", "rel": "regulates", "tgt": "tnf",
                 "tgt_type": "gene", "desc": "x", "ev": ""},
            ]
        }
    )  # fmt: skip
    rels = clean_draft(draft)
    assert [(r.src, r.tgt, r.desc) for r in rels] == [("IL1B", "endometriosis", "up in disease")]


def test_fake_draft_answer_is_schema_valid_and_grounded() -> None:
    abstract = (
        "Endometriosis affects 10% of women. Expression of VEGFA and MMP9 was higher in "
        "ectopic lesions. IL1B levels correlated with pain."
    )
    answer = Draft.model_validate(draft_answer(abstract))
    assert [(r.src, r.tgt) for r in answer.r] == [
        ("VEGFA", "Endometriosis"),
        ("MMP9", "Endometriosis"),
        ("IL1B", "Endometriosis"),
    ]
    assert all(verbatim(r.ev, abstract) for r in answer.r)


def test_fake_refine_answer_follows_the_prompt() -> None:
    messages = refine_messages(
        "A paper",
        [
            (1, "Lesions showed high VEGFA staining in stromal cells of all patients."),
            (2, "Other."),
        ],
        [(1, "VEGFA upregulated in Endometriosis: draft", [1, 2]), (3, "X: y", [2])],
    )
    answer = Refinement.model_validate(refine_answer(messages[1]["content"]))
    assert [i.i for i in answer.r] == [1, 3]
    assert answer.r[0].ev == "Lesions showed high VEGFA staining in stromal cells of all patients."
