"""The words a question and an edge meet by: the Snowball stems of their content words.

An edge stores the stems of its ends' names (``words``, :func:`edge_words`); the store scores a
question's stems (:func:`stems`) against them by BM25 with the collection's own IDF, so a word
weighs what it weighs in the collection: "stroke" much in a collection where two papers name
it, nothing where every edge does. Both sides are stemmed here, the same way for every
backend, and the store's index only splits on spaces and lower-cases.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from fastbmrag.vocab.mentions import function_word

# a word: letters and digits (an underscore or a hyphen splits, as the store's tokenizer does)
WORD_RE = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: Snowball's C stemmers

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A lower-case word's Snowball stem (names repeat from question to question)."""
    return str(_stemmer().stemWord(word))


@functools.lru_cache(maxsize=1)
def english() -> dict[str, float]:
    """The common English words and their frequency (what tells a function word): the table
    the vocabularies carry (loading ``wordfreq`` itself takes 0.3 s)."""
    from fastbmrag.vocab.loading import load_normalizer

    return load_normalizer().common_words


def content_words(text: str, common: dict[str, float]) -> dict[str, bool]:
    """The stems of the content words of ``text`` (no function word, no bare number), each with
    whether the word is a common English one."""
    return {
        stem(w.lower()): w.lower() in common
        for w in WORD_RE.findall(text)
        if not function_word(w, common) and not w.isdigit()
    }


def stems(text: str, common: dict[str, float] | None = None) -> list[str]:
    """The stems of the content words of ``text``, once each, in order."""
    return list(content_words(text, english() if common is None else common))


@functools.lru_cache(maxsize=1 << 16)
def _name_stems(name: str) -> tuple[str, ...]:
    return tuple(stems(name))  # an entity's name recurs on many edges


def edge_words(names: Iterable[str]) -> str:
    """What an edge's ``words`` field holds: the stems of its ends' names, once each."""
    return " ".join(dict.fromkeys(s for n in names for s in _name_stems(n)))
