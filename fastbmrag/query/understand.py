"""What a question names, understood: the genes, diseases and chemicals it writes, each found by
the collection's own names, the model's parse or the mention finder, and grounded
(:func:`understand`, :class:`Mention`); :func:`fastbmrag.query.run.understood` then uses each as
a filter or reports it absent.

Three sources, merged by span:

* **collection**: the names the collection's papers wrote for its grounded nodes ("NSCLC" for
  D002289): a question that writes a name the way the papers write it finds it;
* **model**: the entities the one parse call names, each normalised with the type the model
  gave; the model's type decides between readings of a span (IVF the procedure, not a gene);
* **finder**: :meth:`~fastbmrag.vocab.normalizer.DictionaryNormalizer.find_mention_spans`, for
  genes, diseases, chemicals and the biological processes MeSH names, a process only where one
  of its words is no common English word ("apoptosis", "programmed cell death"; not "gene
  expression", "growth", which questions use in their everyday sense).

Overlapping spans: the longest wins, then collection > model > finder, then the higher score;
one mention per node.

A mention selects edges by its id, a concept below it, or one of its names (its wording, its
concept's name) in an edge's entity names; it is used as a filter where an edge is so selected,
else where the collection holds a broader concept of its MeSH tree or gene group it is answered
from that one (``used_as`` "broader"), else it is absent. That decision is
:func:`fastbmrag.query.run.understood`'s: it asks the collection.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from fastbmrag.query.entities import LINK_TYPES, Entity
from fastbmrag.store.base import name_form

if TYPE_CHECKING:
    from fastbmrag.store.ledger import Ledger
    from fastbmrag.vocab.base import Normalizer

ORIGINS = ("collection", "model", "finder")  # which reading of one span wins
# The types a name of the question is grounded as: genes, diseases, chemicals, and the
# biological processes MeSH names ("programmed cell death" -> Apoptosis).
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
    # "filter" | "broader" (absent, answered from a broader concept) | "absent" | None (entity
    # flags were given instead)
    used_as: str | None = None
    broader: Entity | None = None  # the broader concept the collection holds, when absent
    broader_edges: int = 0

    @property
    def entity(self) -> Entity:
        names = tuple(dict.fromkeys(n for n in (self.text, self.name) if _names_something(n)))
        return Entity(self.text, self.name, self.id, self.type, "question", names=names)

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
            "broader": None if self.broader is None else {
                "id": self.broader.id, "name": self.broader.name, "edges": self.broader_edges
            },
        }  # fmt: skip


def _names_something(name: str) -> bool:
    """Whether a name can select edges by its words: one of them is no function word (a name
    of function words alone would select every edge that writes them)."""
    from fastbmrag.vocab.mentions import function_word

    return any(not function_word(w, {}) and not w.isdigit() for w in _WORD_RE.findall(name))


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
        for s, e, m in found_in(question, normalizer, GROUNDED_TYPES, _Holds(ledger)):
            if any(vs <= s and e <= ve and vt != m.type for vs, ve, vt in vetoes):
                continue  # the model reads this span as another type
            for part in m.parts or (m,):
                if part.ontology_id:
                    found.append(
                        Mention(question[s:e], s, e, part.type, part.ontology_id,
                                part.normalized_name, "finder", m.score)
                    )  # fmt: skip
    return _merge([m for m in found if not _names_a_relation(m.text)])  # the model's too


def found_in(
    text: str, normalizer: Normalizer, types: Sequence[str] = GROUNDED_TYPES,
    known: Container[str] = (),
) -> list[tuple[int, int, Any]]:
    """The mention finder's spans of ``text`` as a question's are read (``normalize --find``
    shows them): a process only where one of its words is no common English word, no span
    that names a relationship type. ``known``: the ids the collection holds, which a finder's
    choice between readings prefers."""
    common: dict[str, float] = getattr(normalizer, "common_words", {})
    return [
        (s, e, m)
        for s, e, m in normalizer.find_mention_spans(text, types, known=known)
        if not (m.type == "pathway" and all(w.lower() in common for w in
                                            _WORD_RE.findall(text[s:e])))  # everyday sense
        and not _names_a_relation(text[s:e])
    ]  # fmt: skip


@functools.lru_cache(maxsize=1)
def _relation_keys() -> frozenset[str]:
    """The relationship types' own names, as :func:`term_key` reads a span ("biomarker" of
    biomarker_of, "risk factor" of risk_factor_for, "positive correlation")."""
    from fastbmrag.prompts import RELATIONSHIP_TYPES
    from fastbmrag.vocab.rules.keys import term_key

    ends = ("_of", "_for", "_in", "_with", "_against")
    return frozenset(
        term_key(next((r[: -len(e)] for e in ends if r.endswith(e)), r).replace("_", " "))
        for r in RELATIONSHIP_TYPES
    )


def _names_a_relation(text: str) -> bool:
    """Whether a span of the question is the name of one of the graph's relationship types
    ("Which biomarkers predict ...": the relation biomarker_of, not the concept Biomarkers):
    the parse reads it as the relation asked for, and as an entity it would select nothing the
    question means."""
    from fastbmrag.vocab.rules.keys import term_key

    return term_key(text) in _relation_keys()


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
            if type_ == "gene" and _bare_short_form(question, s, e, name):
                continue
            out.append(Mention(question[s:e], s, e, type_, oid, name, "collection"))
    return out


def _bare_short_form(question: str, start: int, end: int, symbol: str) -> bool:
    """Whether a gene's name as the papers wrote it is, here, a short form of capitals that is
    not the gene's approved symbol, with no gene word beside it: as the finder, which reads such
    a form as a method's or a procedure's acronym ("IVF"), a name of the collection is no gene
    there."""
    written = question[start:end]
    if not written.isupper() or written.replace("-", "") == symbol.replace("-", ""):
        return False
    from fastbmrag.vocab.mentions import GENE_CUES

    before = _WORD_RE.findall(question[:start])[-2:]
    after = _WORD_RE.findall(question[end:])[:2]
    return not any(w.lower() in GENE_CUES for w in (*before, *after))


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


def with_presence(
    mentions: list[Mention],
    present: list[bool],
    used: bool,
    broader: Sequence[tuple[Entity, int] | None] = (),
) -> list[Mention]:
    """The mentions with ``in_collection`` and ``used_as`` set: a filter if present, else
    answered from the broader concept found for it (``broader``), else absent; none used
    (``used`` False) where entity flags were given instead."""
    above = list(broader) or [None] * len(mentions)
    out = []
    for m, p, b in zip(mentions, present, above, strict=True):
        use = "filter" if p else "broader" if b is not None else "absent"
        m = replace(m, in_collection=p, used_as=use if used else None)
        out.append(m if b is None else replace(m, broader=b[0], broader_edges=b[1]))
    return out
