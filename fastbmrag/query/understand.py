"""What a question names, understood: the genes, diseases and chemicals it writes, each found by
the collection's own names, the model's parse or the mention finder, grounded, and then either
used as a filter or reported absent (:func:`understand`, :class:`Mention`).

Three sources, merged by span:

* **collection**: the names the collection's papers wrote for its grounded nodes ("NSCLC" for
  D002289): a question that writes a name the way the papers write it finds it;
* **model**: the entities the one parse call names, each normalised with the type the model
  gave; the model's type decides between readings of a span (IVF the procedure, not a gene);
* **finder**: :meth:`~fastbmrag.vocab.normalizer.DictionaryNormalizer.find_mention_spans`.

Overlapping spans: the longest wins, then collection > model > finder, then the higher score;
one mention per node.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import LINK_TYPES, Entity
from fastbmrag.store.base import name_form

if TYPE_CHECKING:
    from fastbmrag.store.ledger import Ledger
    from fastbmrag.vocab.base import Normalizer

ORIGINS = ("collection", "model", "finder")  # which reading of one span wins
# The types a name of the collection or of the parse call is grounded as: the finder's, and the
# biological processes MeSH names ("programmed cell death" -> Apoptosis), which the finder
# leaves alone (a process's name is most often ordinary words: "growth", "gene expression").
GROUNDED_TYPES = (*LINK_TYPES, "pathway")
MAX_WORDS = 10  # the longest name looked up in the collection's names
_WORD_RE = re.compile(r"\w+(?:['’]\w+)?")


@dataclass(frozen=True)
class Mention:
    """A name the question writes, as understood."""

    text: str  # as written in the question
    start: int
    end: int
    type: str
    id: str | None
    name: str  # normalised name
    origin: str  # "collection" | "model" | "finder"
    score: float = 1.0
    in_collection: bool | None = None  # None until the collection was asked
    used_as: str | None = None  # "filter" | "absent" | None (entity flags were given instead)

    @property
    def entity(self) -> Entity:
        return Entity(self.text, self.name, self.id, self.type, "question")

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})" if self.id else self.name

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "origin": self.origin,
            "in_collection": self.in_collection,
            "used_as": self.used_as,
        }


def understand(
    question: str,
    normalizer: Normalizer | None,
    ledger: Ledger | None,
    named: Sequence[tuple[str, str]] = (),
) -> list[Mention]:
    """The mentions of ``question``, left to right. ``named``: the parse call's ``[name, type]``
    entities; ``ledger``: the collection's, for its names (None: none asked)."""
    found = _collection_names(question, ledger, normalizer) if ledger is not None else []
    vetoes: list[tuple[int, int, str]] = []
    if normalizer is not None:
        for text, type_ in named:
            at = _locate(question, text)
            if at is None:
                continue
            vetoes.append((*at, type_))
            if type_ in GROUNDED_TYPES:
                m = normalizer.normalize(text, type_, question)
                if m.ontology_id:
                    found.append(
                        Mention(question[at[0] : at[1]], *at, m.type, m.ontology_id,
                                m.normalized_name, "model", m.score)
                    )  # fmt: skip
        holds = _Holds(ledger)
        for s, e, m in normalizer.find_mention_spans(question, LINK_TYPES, known=holds):
            if any(vs <= s and e <= ve and vt != m.type for vs, ve, vt in vetoes):
                continue  # the model reads this span as another type
            for part in m.parts or (m,):
                if part.ontology_id:
                    found.append(
                        Mention(question[s:e], s, e, part.type, part.ontology_id,
                                part.normalized_name, "finder", m.score)
                    )  # fmt: skip
    return _merge(found)


def _collection_names(
    question: str, ledger: Ledger, normalizer: Normalizer | None
) -> list[Mention]:
    """The spans of the question that the collection's papers wrote for a grounded node; one
    common English word is no name of its own."""
    words = [(m.start(), m.end()) for m in _WORD_RE.finditer(question)]
    spans: dict[str, tuple[int, int]] = {}
    for i in range(len(words)):
        for j in range(i, min(i + MAX_WORDS, len(words))):
            s, e = words[i][0], words[j][1]
            spans.setdefault(name_form(question[s:e]), (s, e))
    common: dict[str, float] = getattr(normalizer, "common_words", {})
    out = []
    for form, _key, name, type_, oid in ledger.named(spans):
        s, e = spans[form]
        if oid and type_ in GROUNDED_TYPES and (" " in form or form not in common):
            out.append(Mention(question[s:e], s, e, type_, oid, name, "collection"))
    return out


def _locate(question: str, text: str) -> tuple[int, int] | None:
    """Where the question writes ``text`` (case and spaces aside)."""
    words = text.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(rf"(?<!\w){pattern}(?!\w)", question, re.I)
    return (m.start(), m.end()) if m else None


def _merge(found: list[Mention]) -> list[Mention]:
    """The longest span first, then collection > model > finder, then score; spans that overlap
    a chosen one are dropped, and a node is named once (a coordination's parts share a span)."""
    chosen: list[Mention] = []
    keys: set[str | None] = set()
    spans: set[tuple[int, int]] = set()
    order = sorted(
        found, key=lambda m: (m.start - m.end, ORIGINS.index(m.origin), -m.score, m.start)
    )
    for m in order:
        overlaps = any(m.start < c.end and c.start < m.end for c in chosen)
        if m.id in keys or (overlaps and (m.start, m.end) not in spans):
            continue
        chosen.append(m)
        keys.add(m.id)
        spans.add((m.start, m.end))
    return sorted(chosen, key=lambda m: (m.start, m.end))


class _Holds:
    """Whether the collection holds an id: ``id in holds``, asked of the ledger as needed."""

    def __init__(self, ledger: Ledger | None) -> None:
        self.ledger = ledger

    def __contains__(self, ontology_id: object) -> bool:
        if self.ledger is None or not isinstance(ontology_id, str):
            return False
        return self.ledger.degrees([ontology_id]).get(ontology_id, 0) > 0


def with_presence(mentions: list[Mention], present: list[bool], used: bool) -> list[Mention]:
    """The mentions with ``in_collection`` and ``used_as`` set: a filter if present, else absent;
    none used (``used`` False) where entity flags were given instead."""
    return [
        replace(m, in_collection=p, used_as=("filter" if p else "absent") if used else None)
        for m, p in zip(mentions, present, strict=True)
    ]
