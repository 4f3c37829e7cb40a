"""Candidates for a name that is no term as written: a part of it, or a term it misspells.

**Parts.** Whether a part of a name can stand for the whole name, or the normaliser abstains.

A name such as "severe hypotension" or "forestomach tumors" is no MeSH term, but a part of it
is. The part stands for the name only when the words it leaves out carry little of the name's
meaning. Each word is weighed with the vocabulary's own evidence:

* how rare it is among the terms (inverse document frequency: "hypotension" names few
  concepts, "disease" many);
* how often adding it to a term keeps the concept the same (MeSH lists "Bupropion
  Hydrochloride" under Bupropion and "Familial X" under X, but "Hepatic X" and "Lung X" under
  concepts of their own): the share of the vocabulary's term pairs "X" / "X w" that name
  different concepts.

A part's score is the share of the name's weight its words carry. Below
:data:`MIN_COVERAGE` (of a disease's name; lower for a chemical's) the name gets no id: a wrong id merges unrelated nodes of the graph,
where no id leaves the entity a node of its own, under its cleaned name.

**Spellings.** A name a letter or two away from one term ("epirubicine", "methothexate",
"dysguesia"): at most one edit (a letter added, dropped, changed, or two swapped) per ten
letters, names of six letters or more, the first two letters as written (the most reliable
part of a typed word), and one concept at the least distance, else no id.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import OSA

from fastbmrag.vocab.base import DISEASE
from fastbmrag.vocab.rules.chemistry import names_one_coded_compound

# The share of a name's word weight a part must carry to stand for the whole name: a disease's,
# and a chemical's, whose name adds salts, forms and formulations to its substance's (MeSH files
# "Bupropion Hydrochloride" under Bupropion), so that a part stands for it at a lower share.
MIN_COVERAGE = {"disease": 0.7, "chemical": 0.4}


def word_weights(terms: Mapping[str, Collection[int]]) -> dict[str, Any]:
    """The table :class:`WordWeights` reads, from ``terms``: each term's content words joined
    by spaces (a MeSH bag key) -> the concepts it names. Built with the vocabularies."""
    df: Counter[str] = Counter()
    for term in terms:
        df.update(set(term.split()))
    same: Counter[str] = Counter()
    differs: Counter[str] = Counter()
    for term, concepts in terms.items():
        words = term.split()
        for i, word in enumerate(words if len(words) > 1 else ()):
            shorter = terms.get(" ".join(words[:i] + words[i + 1 :]))
            if shorter is not None:
                (same if set(concepts) & set(shorter) else differs)[word] += 1
    n = len(terms) + 1
    weights = {
        w: round((math.log(n / (k + 1)) + 1.0) * (differs[w] + 1) / (same[w] + differs[w] + 1), 3)
        for w, k in df.items()
    }
    return {"weights": weights, "unseen": round(math.log(n) + 1.0, 3)}


class WordWeights:
    """How much of a name's meaning each word carries: its inverse document frequency over
    the vocabulary's terms, times the share of the term pairs "X" / "X word" that name
    different concepts (1 where the vocabulary has no such pair)."""

    __slots__ = ("_unseen", "_weights")

    def __init__(self, table: Mapping[str, Any]) -> None:
        self._weights: Mapping[str, float] = table["weights"]
        self._unseen: float = table["unseen"]

    def weight(self, word: str) -> float:
        return self._weights.get(word, self._unseen)

    def coverage(self, words: Sequence[str], part: Iterable[str]) -> float:
        """The share of the weight of ``words`` that the words of ``part`` carry."""
        total = sum(self.weight(w) for w in words)
        if not total:
            return 0.0
        covered = frozenset(part)
        return sum(self.weight(w) for w in words if w in covered) / total


def partial_score(share: float) -> float:
    """The score of a part of a name that carries ``share`` of its word weight."""
    return round(0.5 + 0.3 * share, 3)


def too_partial(score: float, t: str) -> bool:
    """Whether a part with this :func:`partial_score` carries too little of its name of type
    ``t`` to stand for it."""
    return score < partial_score(MIN_COVERAGE[t])


def withheld(hit: Any, clean: str, coverage: bool = True) -> bool:
    """Whether a match (a ``Hit``) for ``clean`` is offered, not given: a part that leaves out
    the number that says which compound a code names ("PBDE-47"), or (``coverage``) carries
    too little of the name; a disease's one-word completion that adds a word the name lacks.
    A chemical's one-word completion is given: the one word names the substance, and
    abstaining there cost more right ids than wrong ones. The long form of a short form the
    text defines is not held to the coverage: the text says what the short form means
    (abstaining there cost more right ids than wrong ones on every set)."""
    if hit.matched_by == "partial":
        return names_one_coded_compound(clean) or (coverage and too_partial(hit.score, hit.type))
    return bool(hit.matched_by == "extend" and hit.type == DISEASE)


def abstention(name: str, type_: str) -> str:
    """Why a name was given no id though a term stood close (``matched_by`` "abstained"), in
    words that end "the closest term ...": what ``normalize --explain`` says."""
    if names_one_coded_compound(name):
        return "leaves out the number that says which compound the code names"
    needed = partial_score(MIN_COVERAGE.get(type_, MIN_COVERAGE[DISEASE]))
    return f"is too small a part of the name (a part needs {needed:.2f}), or adds a word it lacks"


# The shortest key a misspelling is looked for in, and the letters per edit allowed.
MIN_SPELLING_LENGTH = 6
LETTERS_PER_EDIT = 10


class Spellings:
    """Terms near a key in spelling (optimal string alignment distance: an insertion, a
    deletion, a substitution or a transposition of neighbours counts one)."""

    __slots__ = ("_sorted",)

    def __init__(self, keys: Iterable[str]) -> None:
        """``keys``: the terms' keys (letters and digits, no separators)."""
        by_start: dict[str, list[str]] = {}
        for key in keys:
            by_start.setdefault(key[:2], []).append(key)
        # per first two letters: the keys by length, and their lengths
        self._sorted: dict[str, tuple[list[str], list[int]]] = {}
        for start, found in by_start.items():
            found.sort(key=len)
            self._sorted[start] = (found, list(map(len, found)))

    @classmethod
    def indexed(cls, by_start: Mapping[str, tuple[list[str], list[int]]]) -> Spellings:
        """Spellings over an index the build made (:attr:`by_start` of one), read where
        looked up."""
        made = cls.__new__(cls)
        made._sorted = by_start  # type: ignore[assignment]
        return made

    @property
    def by_start(self) -> Mapping[str, tuple[list[str], list[int]]]:
        """Per first two letters: the keys by length, and their lengths."""
        return self._sorted

    def nearest(self, key: str) -> list[str]:
        """The keys at the least distance from ``key`` within the allowance, or none."""
        if len(key) < MIN_SPELLING_LENGTH:
            return []
        allowed = max(1, len(key) // LETTERS_PER_EDIT)
        ranked = self._sorted.get(key[:2])
        if ranked is None:
            return []
        keys, lengths = ranked
        lo = bisect.bisect_left(lengths, len(key) - allowed)
        hi = bisect.bisect_right(lengths, len(key) + allowed)
        hits = process.extract(
            key, keys[lo:hi], scorer=OSA.distance, score_cutoff=allowed, limit=None
        )
        found = [(int(d), k) for k, d, _ in hits if k != key]
        if not found:
            return []
        least = min(d for d, _ in found)
        return [k for d, k in found if d == least]
