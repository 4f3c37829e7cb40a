"""Numbered sentences with character offsets: what the model cites and the program quotes.

The model never copies text: it cites sentence numbers, and every stored description or evidence
quote is cut from the paper here, so it is verbatim by construction. Sentences come from
BlingFire's sentence breaker, chosen over pysbd and syntok on the real abstracts and PMC papers
in tests/data (docs/benchmarks.md, "Sentence splitting"): it made none of the errors the others
made after "et al.", "sp.", enumerations like "(a)" or decimals, and runs 5-25 times faster.

Two conventions of fastbmrag's own readers are handled before splitting, since they are layout,
not language: a line break separates sections (structured abstracts put each section on its own
line), and a main-text paragraph may start with its section title in brackets (``"[Results] "``),
which becomes the sentence's ``section`` rather than part of its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import blingfire

TITLE = "title"
ABSTRACT = "abstract"
PASSAGE = "passage"

_SECTION_PREFIX = re.compile(r"\[([^\]\n]{1,200})\] ")
# "BACKGROUND: ", "Methods and Results: " at the start of a structured-abstract line.
_LINE_LABEL = re.compile(r"([A-Z][A-Za-z]*(?:[ /&-]+[A-Za-z]+){0,4}): (?=\S)")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a paper: ``source_text[start:end] == text``.

    ``where`` is ``title``, ``abstract`` or ``passage``; for a passage, ``passage`` is its number
    (1-based: ``paper.paragraphs[passage - 1]``); ``section`` is the passage's section title or
    the structured-abstract label of an abstract sentence, if any.
    """

    text: str
    where: str
    start: int
    end: int
    passage: int | None = None
    section: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "where": self.where,
            "passage": self.passage,
            "section": self.section,
            "start": self.start,
            "end": self.end,
        }


def split_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) of every sentence of ``text``. Each line is split on its own; a
    structured-abstract label at the start of a line ("RESULTS: ") is left out of the line's
    sentences and returned as their label ("" where there is none)."""
    spans: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.split("\n"):
        offset = pos
        pos += len(line) + 1
        body, label = line, ""
        if m := _LINE_LABEL.match(line):
            offset += m.end()
            body, label = line[m.end() :], m.group(1)
        if not body.strip():
            continue
        _, offsets = blingfire.text_to_sentences_and_offsets(body)
        for start, end in offsets:
            # trim stray whitespace so that text[start:end] is the sentence itself
            while start < end and body[start].isspace():
                start += 1
            while end > start and body[end - 1].isspace():
                end -= 1
            if end > start:
                spans.append((offset + start, offset + end, label))
    return spans


def abstract_sentences(title: str, abstract: str) -> list[Sentence]:
    """The title (one sentence) then the abstract's sentences: S1..Sn in the draft prompt."""
    out: list[Sentence] = []
    stripped = title.strip()
    if stripped:
        start = title.index(stripped)
        out.append(Sentence(stripped, TITLE, start, start + len(stripped)))
    out += [
        Sentence(abstract[a:b], ABSTRACT, a, b, section=label)
        for a, b, label in split_spans(abstract)
    ]
    return out


# What the draft reads of a paper without an abstract: its opening passages, up to the size of a
# long structured abstract (PubMed's run to about 3,000 characters).
OPENING_CHARS = 3000


def opening_sentences(paragraphs: list[str], limit: int = OPENING_CHARS) -> list[Sentence]:
    """The main text's first sentences, passage after passage, while they fit in ``limit``
    characters (at least one): a paper without an abstract is drafted from them."""
    out: list[Sentence] = []
    used = 0
    for number, paragraph in enumerate(paragraphs, 1):
        for sentence in passage_sentences(number, paragraph):
            used += len(sentence.text) + 1
            if out and used > limit:
                return out
            out.append(sentence)
    return out


def passage_sentences(number: int, paragraph: str) -> list[Sentence]:
    """The sentences of main-text passage ``number`` (1-based), offsets into ``paragraph``."""
    section = ""
    offset = 0
    if m := _SECTION_PREFIX.match(paragraph):
        section, offset = m.group(1).strip(), m.end()
    body = paragraph[offset:]
    return [
        Sentence(body[a:b], PASSAGE, offset + a, offset + b, number, section)
        for a, b, _ in split_spans(body)
    ]
