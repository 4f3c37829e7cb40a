"""The question ranks the search, as one value turned into one store request
(:func:`ranking`): every edge that passes the flags' filters and is related to the question
(it earns a boost for what the question names, or its names share the question's words by BM25)
scores its similarity to the question plus the largest boost it earns; ``kept_by`` says why each
is evidence, read from the returned payloads (:func:`ranked_evidence`)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import Entity
from fastbmrag.query.related import question_words
from fastbmrag.query.result import EdgeResult
from fastbmrag.query.retrieve import as_evidence
from fastbmrag.query.spec import FilterSpec, named
from fastbmrag.store.base import Boost, Filter, Match, Ranking
from fastbmrag.store.weights import ENDS

if TYPE_CHECKING:
    from fastbmrag.query.options import QueryOptions
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


# What an edge earns for what the question names, added to its similarity to the question
# (cosine): an edge about every linked entity, about one by its id, by a concept below it or by
# a name, or about the broader concept of an absent one; an edge related by its words alone
# earns nothing. An edge earning several takes the largest. Small against the spread of a
# question's similarities (a real sentence embedding model puts its 50th most similar edge
# about 0.35 below its first), so that among the edges about what the question names the most
# similar still come first, and an entity's many edges do not bury the evidence most like the
# question. Tuned on PubMedQA's questions of even PMIDs with a real sentence embedding model and
# with the fake's hashed words, judged on the odd (docs/benchmarks.md, "Retrieval").
BOOSTS = {"all": 0.15, "id": 0.08, "below": 0.04, "name": 0.08, "broader": 0.03}

# The BM25 score of the question's words against an edge's names (the collection's own IDF)
# from which they relate the edge to the question: a word fewer than half the edges hold (its
# IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), passes ln 2 there), or two held more widely; in a
# collection too small for that, a word one edge alone holds (:func:`words_floor`). A word most
# edges hold sets nothing apart and relates nothing. Floors from 0.5 to 3 rank PubMedQA's
# questions of even PMIDs alike (docs/benchmarks.md, "Retrieval"): the floor says what
# relates, not how it ranks.
WORDS_FLOOR = math.log(2)
# What an edge related by its words earns, as a boost (the largest it earns counts): this much
# in the proportion its BM25 bears to WORDS_FULL, all of it from there (two words each held by
# a few edges in a thousand). Tuned with the floor.
WORDS_WEIGHT = 0.4
WORDS_FULL = 16.0


def words_floor(edges: int) -> float:
    """:data:`WORDS_FLOOR`, or in a collection of fewer ``edges`` than it takes, the IDF of a
    word one edge alone holds (BM25's, a hair below)."""
    single = math.log(1 + (edges - 0.5) / 1.5) if edges > 0 else 0.0
    return min(WORDS_FLOOR, single * 0.999)


def ranking(
    question: str,
    edges: int,
    used: FilterSpec,
    broader: list[Entity],
    normalizer: Normalizer | None,
) -> Ranking:
    """How ``question`` ranks the edges that pass ``used``'s flags in a collection of ``edges``:
    the boosts it earns for what it names (:data:`BOOSTS`), its words (where the edges carry
    them) and their floor."""
    reasons: list[tuple[str, Filter]] = []
    if len(used.entities) > 1:
        reasons.append(("all", Filter(must=tuple(used.about([e]) for e in used.entities))))
    if used.entities:
        keys = tuple(dict.fromkeys(k for e in used.entities for k in e.node_keys()))
        reasons.append(("id", Filter(should=tuple(Match(f"{end}_key", any_of=keys)
                                                  for end in ENDS))))  # fmt: skip
        below = tuple(dict.fromkeys(e.id for e in used.entities if e.id and e.expanded_to > 1))
        if below and not used.exact:
            reasons.append(("below", Filter(should=tuple(Match(f"{end}_ancestors", any_of=below)
                                                         for end in ENDS))))  # fmt: skip
        if used.by_name:
            reasons.append(("name", named(used.entities)))
    if broader:
        reasons.append(("broader", replace(used, exact=True).about(broader)))
    return Ranking(
        boosts=tuple(Boost(name, BOOSTS[name], flt) for name, flt in reasons if flt),
        words=" ".join(question_words(question, normalizer)) if used.by_words else "",
        words_floor=words_floor(edges),
        words_weight=WORDS_WEIGHT,
        words_full=WORDS_FULL,
    )


def ranked_evidence(
    question: str,
    collection: Collection,
    vector: Any,
    used: FilterSpec,
    broader: list[Entity],
    opts: QueryOptions,
    normalizer: Normalizer | None,
) -> tuple[list[EdgeResult], bool]:
    """The evidence for ``question``, ranked in one request of the store (:func:`ranking`),
    each with why it is kept (its similarity as its score); also whether an edge joins every
    entity of the question."""
    base = replace(used, entities=[]).to_filter() or None
    rank = ranking(question, collection.count(), used, broader, normalizer)
    limit = collection.count(base) if opts.all else opts.top_k
    hits = collection.store.ranked(vector, base, rank, limit) if limit else []
    earned = [rank.earned(h) for h in hits]
    edges = [
        replace(e, kept_by=kept_by(b.name if b else "word", e, used.entities))
        for e, b in zip(as_evidence(collection, hits), earned, strict=True)
    ]
    joined = any(b is not None and b.name == "all" for b in earned) or (
        len(used.entities) > 1 and collection.holds((base or Filter()).and_(rank.boosts[0].flt))
    )
    return edges, joined


def kept_by(reason: str, edge: EdgeResult, linked: list[Entity]) -> str:
    r"""Why an edge of a ranked search is evidence: an entity's ``id``, a concept ``below`` it, a
    ``name`` of it, a ``broader`` concept of an absent one, or the ``word``\ s its names share
    with the question; an edge about every entity says which of the first three holds."""
    if reason != "all":
        return reason
    stored = edge.edge
    keys = {stored.source_key, stored.target_key}
    above = {*(stored.source_ancestors or ()), *(stored.target_ancestors or ())}
    if any(k in keys for e in linked for k in e.node_keys()):
        return "id"
    if any(e.id in above for e in linked if e.id):
        return "below"
    return "name"
