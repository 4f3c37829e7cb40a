"""The question ranks the search: every edge that passes the flags' filters scores its similarity
to the question plus the largest boost it earns for what the question names
(:func:`ranked_evidence`), and ``kept_by`` says why each is evidence (:func:`kept_by`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import Entity
from fastbmrag.query.related import related, uncommon_words
from fastbmrag.query.result import EdgeResult
from fastbmrag.query.retrieve import as_evidence, ranked, retrieve
from fastbmrag.query.spec import FilterSpec, named
from fastbmrag.store.base import Boost, Filter, HasId, Match, Words
from fastbmrag.store.weights import ENDS

if TYPE_CHECKING:
    from fastbmrag.query.options import QueryOptions
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


# What an edge earns for what the question names, added to its similarity to the question
# (cosine): an edge about every linked entity, about one by its id, by a concept below it or by
# a name, about the broader concept of an absent one, or writing an uncommon word of the
# question; the similar rest earns nothing. An edge earning several takes the largest. Small
# against the spread of a question's similarities (a real sentence embedding model puts its
# 50th most similar edge about 0.35 below its first), so that among the edges about what the
# question names the most similar still come first, and an entity's many edges do not bury
# the evidence most like the question. Tuned on PubMedQA's questions of even PMIDs with a real
# sentence embedding model and with the fake's hashed words, judged on the odd
# (docs/benchmarks.md, "Retrieval").
BOOSTS = {
    "all": 0.15, "id": 0.08, "below": 0.04, "name": 0.08, "broader": 0.03, "word": 0.03,
    "similar": 0.0,
}  # fmt: skip


def ranked_evidence(
    question: str,
    collection: Collection,
    vector: Any,
    used: FilterSpec,
    broader: list[Entity],
    opts: QueryOptions,
    normalizer: Normalizer | None,
) -> tuple[list[EdgeResult], bool]:
    """The question ranks the search: every edge passing the flags' filters scores its
    similarity to the question plus the largest of the :data:`BOOSTS` it earns, in one query of
    the store; an edge that earns none is kept only at ``min_score`` or more and where one of
    its entities shares a content word with the question. ``kept_by`` says why each is kept;
    also whether an edge joins every entity of the question."""
    base = replace(used, entities=[]).to_filter()
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
    if used.by_name and (words := uncommon_words(question, normalizer)):
        reasons.append(("word", Filter(should=tuple(Words("names", w) for w in words))))
    limit = collection.count(base or None) if opts.all else opts.top_k
    # the similar rest: the most similar edges, at least min_score, that share a word with it
    similar = related(question, as_evidence(collection, retrieve(
        collection, vector, base or None, limit=limit, min_score=opts.min_score)), normalizer)
    if similar:  # fmt: skip
        reasons.append(("similar", Filter(must=(HasId(tuple(e.id for e in similar)),))))
    boosts = [Boost(name, BOOSTS[name], flt) for name, flt in reasons if flt]
    found = ranked(collection, vector, base or None, boosts, limit=limit) if limit else []
    edges = [
        replace(e, kept_by=kept_by(next((b.name for b in boosts if b.name in why), "similar"),
                                    e, used.entities))
        for e, (_, why) in zip(as_evidence(collection, [h for h, _ in found]), found, strict=True)
    ]
    joined = any("all" in why for _, why in found) or (
        len(used.entities) > 1 and collection.holds(base.and_(boosts[0].flt))
    )
    return edges, joined


def kept_by(reason: str, edge: EdgeResult, linked: list[Entity]) -> str:
    """Why an edge of a ranked search is evidence: an entity's ``id``, a concept ``below`` it, a
    ``name`` of it, a ``broader`` concept of an absent one, or a shared ``word`` (an uncommon
    one of the question, or one the similar rest shares); an edge about every entity says which
    of the first three holds."""
    if reason != "all":
        return "word" if reason == "similar" else reason
    p = edge.payload
    keys = {p.get("source_key"), p.get("target_key")}
    above = {*(p.get("source_ancestors") or ()), *(p.get("target_ancestors") or ())}
    if any(k in keys for e in linked for k in e.node_keys()):
        return "id"
    if any(e.id in above for e in linked if e.id):
        return "below"
    return "name"
