"""The entities a query is about: understood in the question (:mod:`fastbmrag.query.understand`),
or named by a flag (a name through the normaliser, an id as it is); and what the one parse call
says of the question (the entities it names, relationship types, the answer's entity type)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastbmrag.errors import InputError
from fastbmrag.llm.base import KIND_QUERY, LLMClient
from fastbmrag.papers.model import without_controls
from fastbmrag.prompts import ENTITY_TYPES, MAX_NAME_CHARS, QuestionParse, parse_messages

if TYPE_CHECKING:
    from fastbmrag.vocab.base import Normalizer

LINK_TYPES = ("gene", "disease", "chemical")
_ID = re.compile(r"^(?:HGNC:\d+|HGNC-GROUP:\d+|[CD]\d{6,9})$", re.I)
_NODE_KEY = re.compile(rf"^({'|'.join(ENTITY_TYPES)}):(.+)$", re.I)


@dataclass(frozen=True)
class Entity:
    """An entity a filter is about: linked in the question or given as a flag."""

    text: str  # as written
    name: str  # normalised name
    id: str | None  # HGNC / MeSH id
    type: str  # entity type ("auto" when a flag named an unknown entity)
    origin: str  # "question" | "flag"
    role: str = "either"  # "either" | "source" | "target"
    expanded_to: int = 1  # concepts the filter covers: itself and those below it (or members)
    # the names it also selects edges by, in their ends' names as written or normalised (a
    # question's entity: its wording and its concept's name; a flag selects by id alone)
    names: tuple[str, ...] = ()

    def node_keys(self) -> tuple[str, ...]:
        """Node keys this entity can have in the store (see store.base.node_key)."""
        if self.id:
            return (self.id,)
        names = dict.fromkeys(n.casefold() for n in (self.text, self.name) if n)
        types = ENTITY_TYPES if self.type not in ENTITY_TYPES else (self.type,)
        return tuple(f"{t}:{n}" for t in types for n in names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "name": self.name,
            "id": self.id,
            "type": self.type,
            "origin": self.origin,
            "role": self.role,
            "expanded_to": self.expanded_to,
            "names": list(self.names),
        }


def resolve_entity(value: str, normalizer: Normalizer | None, role: str = "either") -> Entity:
    """A name or id given as a flag: an id is used as is; a name goes through the normaliser."""
    value = " ".join(without_controls(value).split())
    if not value:
        raise InputError("An empty entity was given: pass a name (IL1B) or an id (HGNC:5992)")
    if len(value) > MAX_NAME_CHARS:
        raise InputError(
            f"An entity name of {len(value):,} characters is no entity name: names are at most "
            f"{MAX_NAME_CHARS} characters (IL1B, endometriosis, HGNC:5992)"
        )
    key = _NODE_KEY.match(value)
    if key is not None:  # a node with no id, as the commands print it: "gene:covid-19"
        return Entity(value, key.group(2), None, key.group(1).lower(), "flag", role)
    if _ID.match(value):  # an id as it is, named by the vocabulary where it knows it
        ident = value.upper()
        name = (normalizer.name_of(ident) if normalizer is not None else None) or value
        return Entity(
            value, name, ident, "gene" if ident.startswith("HGNC") else "auto", "flag", role
        )
    if normalizer is not None:
        n = normalizer.normalize(value, "auto")
        if n.ontology_id:
            return Entity(value, n.normalized_name, n.ontology_id, n.type, "flag", role)
        return Entity(value, n.normalized_name, None, "auto", "flag", role)
    return Entity(value, value, None, "auto", "flag", role)


@dataclass
class Parse:
    """What the question asks for beyond its entities (from the one parse call)."""

    used_llm: bool = False
    entities: tuple[tuple[str, str], ...] = ()  # (name as written, type)
    relationship_types: tuple[str, ...] = ()
    answer_type: str | None = None
    error: str | None = None
    calls: int = 0
    timed_out: bool = False  # the model server did not answer within the bound

    def to_dict(self) -> dict[str, Any]:
        return {
            "llm": self.used_llm,
            "entities": [list(e) for e in self.entities],
            "relationship_types": list(self.relationship_types),
            "answer_type": self.answer_type,
            "error": self.error,
        }


async def parse_question(question: str, llm: LLMClient, model: str | None = None) -> Parse:
    """One structured call, bounded as a preflight request is (a server that does not answer in
    that time is left for the next one of a pool); a failure is reported and the query goes on
    without it."""
    result = await llm.chat(
        parse_messages(question), QuestionParse, kind=KIND_QUERY, model=model,
        timeout=llm.preflight_timeout,
    )  # fmt: skip
    if result.value is None:
        return Parse(True, error=result.error, calls=result.calls, timed_out=result.timed_out)
    ans = result.value.ans
    return Parse(
        True,
        tuple(dict.fromkeys((e.n, e.t) for e in result.value.ents)),
        tuple(dict.fromkeys(result.value.rels)),
        None if ans == "any" else ans,
        calls=result.calls,
    )
