"""No answer from unrelated evidence: where no entity of the question is a filter (nothing was
recognised, and no flag narrowed the search), an edge reaches the answer only if its names
share the question's words, weighed by the collection (BM25 over the names' stems, the
collection's own IDF: :func:`question_words`, :data:`fastbmrag.query.rank.WORDS_FLOOR`); where
none does, the result is "no evidence", naming the entities of the collection whose names come
closest (:func:`unrelated_evidence`).

A word that names a relationship type asks for the relation, not for an entity of that name
("Is IL6 a biomarker of ..."): it relates no edge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbmrag.query.spec import closest_entities, collection_name
from fastbmrag.text.stems import WORD_RE, english, stem, stems
from fastbmrag.vocab.mentions import function_word

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


def _common(normalizer: Normalizer | None) -> dict[str, float]:
    common = getattr(normalizer, "common_words", None)
    return english() if common is None else common  # no vocabularies: the table they carry


def _relation_stems(common: dict[str, float]) -> set[str]:
    """The stems of the words that name the graph's relationship types ("biomarker" of
    biomarker_of, "risk" and "factor" of risk_factor_for)."""
    from fastbmrag.prompts import RELATIONSHIP_TYPES

    words = (w for r in RELATIONSHIP_TYPES for w in r.split("_"))
    return {stem(w) for w in words if not function_word(w, common)}


def question_words(question: str, normalizer: Normalizer | None) -> list[str]:
    """The stems the question's words meet an edge's names by (:mod:`fastbmrag.text.stems`),
    but those naming a relationship type."""
    common = _common(normalizer)
    relations = _relation_stems(common)
    return [s for s in stems(question, common) if s not in relations]


def uncommon_words(question: str, normalizer: Normalizer | None) -> list[str]:
    """The question's content words that are no common English word, as written, once each:
    the words a name of the collection can be searched by ("fluoridation", "INR")."""
    common = _common(normalizer)
    return list(
        dict.fromkeys(
            w for w in WORD_RE.findall(question)
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
        f"'{collection_name(collection)}' shares a word with it that sets its edges apart",
        "searched": [],
        "closest": closest,
    }
