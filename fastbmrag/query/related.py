"""No answer from unrelated evidence: where no entity of the question is a filter (nothing was
recognised, and no flag narrowed the search), an edge reaches the answer only if one of its
entities shares a content word with the question (:func:`related`); where none does, the result
is "no evidence", naming the entities of the collection whose names come closest
(:func:`unrelated_evidence`).

Content words are the question's words that are no function words (:func:`content_words`),
compared stemmed (Snowball's English stemmer). A common English word (``wordfreq``) says little
on its own: it relates an edge only where it is the whole name of one of its entities ("pain"
and Pain; not "drugs" and "anti-inflammatory drugs").
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import closest_entities
from fastbmrag.query.result import EdgeResult
from fastbmrag.query.spec import collection_name
from fastbmrag.vocab.mentions import function_word

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer

NAME_FIELDS = ("source", "target", "source_raw", "target_raw")
_WORD_RE = re.compile(r"\w+")


@functools.lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A lower-case word's Snowball stem (names repeat from question to question)."""
    return str(_stemmer().stemWord(word))


def _common(normalizer: Normalizer | None) -> dict[str, float]:
    common = getattr(normalizer, "common_words", None)
    return _english() if common is None else common  # no vocabularies: the table they carry


@functools.lru_cache(maxsize=1)
def _english() -> dict[str, float]:
    from fastbmrag.vocab.layout import common_words

    return common_words()


def content_words(text: str, common: dict[str, float]) -> dict[str, bool]:
    """The stems of the content words of ``text``, each with whether the word is common."""
    return {
        _stem(w.lower()): w.lower() in common
        for w in _WORD_RE.findall(text)
        if not function_word(w, common) and not w.isdigit()
    }


def _relation_stems(common: dict[str, float]) -> set[str]:
    """The stems of the words that name the graph's relationship types ("biomarker" of
    biomarker_of, "risk" and "factor" of risk_factor_for)."""
    from fastbmrag.prompts import RELATIONSHIP_TYPES

    words = (w for r in RELATIONSHIP_TYPES for w in r.split("_"))
    return {_stem(w) for w in words if not function_word(w, common)}


def related(
    question: str, edges: list[EdgeResult], normalizer: Normalizer | None
) -> list[EdgeResult]:
    """The edges one of whose entities shares a content word with ``question`` (renumbered,
    ``kept_by`` "word"). A word that names a relationship type ("Is IL6 a biomarker of ...")
    asks for the relation, not for an entity of that name: it relates no edge."""
    common = _common(normalizer)
    relations = _relation_stems(common)
    asked = {s: c for s, c in content_words(question, common).items() if s not in relations}
    kept = []
    for e in edges:
        for name in {str(e.payload.get(f) or "") for f in NAME_FIELDS}:
            stems = [_stem(w.lower()) for w in _WORD_RE.findall(name)]
            whole = stems[0] if len(stems) == 1 else None
            shared = {s for s in stems if s in asked}
            if len(shared) > 1 or any(not asked[s] or s == whole for s in shared):
                kept.append(e)
                break
    return [replace(e, n=i, kept_by="word") for i, e in enumerate(kept, 1)]


def uncommon_words(question: str, normalizer: Normalizer | None) -> list[str]:
    """The question's content words that are no common English word, as written, once each:
    the words a name of the collection can be searched by ("fluoridation", "INR")."""
    common = _common(normalizer)
    return list(
        dict.fromkeys(
            w for w in _WORD_RE.findall(question)
            if not function_word(w, common) and w.lower() not in common and not w.isdigit()
        )
    )  # fmt: skip


def unrelated_evidence(
    collection: Collection, question: str, normalizer: Normalizer | None
) -> dict[str, Any]:
    """Why nothing answers a question none of whose names was recognised, and the entities whose
    names come closest to its uncommon content words."""
    closest: list[dict[str, Any]] = []
    for w in uncommon_words(question, normalizer):
        closest += closest_entities(collection, w)
    closest = list({(c["name"], c["type"]): c for c in closest}.values())[:8]
    return {
        "reason": "no entity of the question was recognised, and no edge of the collection "
        f"'{collection_name(collection)}' that the search found shares a word with it",
        "searched": [],
        "closest": closest,
    }
