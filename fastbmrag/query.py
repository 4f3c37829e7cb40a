"""Answer a question from a collection: link, filter, search, answer with citations.

Steps, and what each may cost::

    question --dictionaries--> linked entities (genes, diseases, chemicals; no LLM)
             --1 chat call--> wanted relationship types + answer entity type (--no-llm-parse: 0)
             --1 embed--> question vector
    filters (entities on either end, types, relations, years, papers, journals, min weight)
             --Qdrant--> count, then vector search (top_k, or every match with --all)
    edges --1 chat call (<= answer_batch edges) | map-reduce--> answer citing [n]
          --> citations checked --> references (paper_id, PMID/PMCID, title, journal, year)

A question that retrieves <= ``answer_batch`` (50) edges costs at most 3 chat calls (in
practice 2). ``--no-answer`` costs 0 chat calls.

Several linked entities: with ``match="all"`` (default) and exactly two entities, an edge
must connect both (IL1B -> endometriosis); with more, or ``match="any"``, an edge must
touch at least one. When the filters match no edge the search relaxes only what was
inferred, and says so first in the answer: two entities "all" -> "any", then without the
LLM-parsed relationship and answer types (``fallback=False``: neither). The question's
entities and the flags are never dropped: with no edge about them the result is "no
evidence" (:func:`no_evidence`), with no answer call, never an answer from unrelated edges.

``--all`` searches with ``limit`` = the number of edges that pass the filters, so every
matching edge above the score threshold comes back ranked by similarity; when no score
threshold is set and the index returned fewer, the rest are added from a scroll of the
filter (score None, at the end).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from fastbmrag.errors import InputError, LLMError
from fastbmrag.filters import PAYLOAD_FILTERS, payload_conditions
from fastbmrag.llm.base import KIND_QUERY, LLMClient
from fastbmrag.prompts import (
    ENTITY_TYPES,
    RELATIONSHIP_TYPES,
    Answer,
    PartialAnswer,
    QuestionParse,
    answer_messages,
    merge_messages,
    parse_messages,
    partial_messages,
)
from fastbmrag.store.base import Filter, Hit, Match, Range
from fastbmrag.store.payload import evidence_of

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer

DEFAULT_TOP_K = 50
DEFAULT_MIN_SCORE = 0.3  # cosine; mxbai-embed-large puts on-topic statements at 0.5-0.8
ANSWER_BATCH = 50  # evidence items per answer call; more are map-reduced
MERGE_FANIN = 12  # partial answers merged per call
MAP_CONCURRENCY = 4
DESCRIPTION_CHARS = 700  # per evidence item in a prompt
UNCITED = "[uncited]"  # after an answer sentence that cites no evidence item
LINK_TYPES = ("gene", "disease", "chemical")
MATCH_MODES = ("all", "any")
FORMATS = ("text", "json", "markdown")

_ID = re.compile(r"^(?:HGNC:\d+|HGNC-GROUP:\d+|[CD]\d{6,9})$", re.I)
_CITATION = re.compile(r"\[(\d+(?:\s*(?:[,;]|-|\u2013)\s*\d+)*)\]")


# --- options ------------------------------------------------------------------------------------


def _tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


@dataclass
class QueryOptions:
    """Everything a query can be told. Filter fields given here override the question's parse."""

    top_k: int = DEFAULT_TOP_K
    all: bool = False  # every edge passing filters + threshold
    min_score: float | None = DEFAULT_MIN_SCORE
    no_answer: bool = False  # retrieved edges only, 0 chat calls
    no_llm_parse: bool = False  # skip the parse call (relations / answer type)
    link: bool = True  # link genes/diseases/chemicals in the question with the dictionaries
    match: str = "all"  # how several entities combine: "all" (an edge joins two) | "any"
    entities: tuple[str, ...] = ()  # names or ids, on either end
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    entity_types: tuple[str, ...] = ()  # either end has one of these types
    relationship_types: tuple[str, ...] = ()
    since: int | None = None
    until: int | None = None
    paper_ids: tuple[str, ...] = ()
    journals: tuple[str, ...] = ()
    pmids: tuple[str, ...] = ()
    min_weight: float | None = None
    exact: bool = False  # entity filters match the entity itself, not what is below it
    fallback: bool = True  # relax filters that match nothing, down to no filter
    answer_model: str | None = None
    answer_batch: int = ANSWER_BATCH
    concurrency: int = MAP_CONCURRENCY

    def __post_init__(self) -> None:
        multiple = [f.name for f in PAYLOAD_FILTERS if f.multiple]
        for name in ("entities", "sources", "targets", *multiple):
            setattr(self, name, _tuple(getattr(self, name)))
        self.entity_types = tuple(t.lower() for t in self.entity_types)
        self.relationship_types = tuple(
            r.lower().replace("-", "_").replace(" ", "_") for r in self.relationship_types
        )
        if self.top_k < 1:
            raise InputError(f"--top-k must be at least 1, got {self.top_k}")
        if self.answer_batch < 1 or self.concurrency < 1:
            raise InputError("answer_batch and concurrency must be at least 1")
        if self.match not in MATCH_MODES:
            raise InputError(f"--match must be one of {', '.join(MATCH_MODES)}, got '{self.match}'")
        bad = [t for t in self.entity_types if t not in ENTITY_TYPES]
        if bad:
            raise InputError(
                f"Unknown entity type '{bad[0]}': use one of {', '.join(ENTITY_TYPES)}"
            )
        bad = [r for r in self.relationship_types if r not in RELATIONSHIP_TYPES]
        if bad:
            raise InputError(
                f"Unknown relationship type '{bad[0]}': use one of {', '.join(RELATIONSHIP_TYPES)}"
            )
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InputError(f"--since {self.since} is after --until {self.until}: swap them")
        if self.min_weight is not None and not 0.0 <= self.min_weight <= 1.0:
            raise InputError(f"--min-weight must be between 0 and 1, got {self.min_weight}")
        if self.min_score is not None and not -1.0 <= self.min_score <= 1.0:
            raise InputError(
                f"--min-score must be a cosine similarity between -1 and 1, got {self.min_score}"
            )

    @classmethod
    def field_names(cls) -> set[str]:
        return {f.name for f in fields(cls)}


# --- question analysis --------------------------------------------------------------------------


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
        }


def link_question(question: str, normalizer: Normalizer | None) -> list[Entity]:
    """Genes, diseases and chemicals the dictionaries find in ``question`` (ids only, deduped)."""
    find = getattr(normalizer, "find_mentions", None)
    if find is None:
        return []
    out: dict[str, Entity] = {}
    for m in find(question, types=LINK_TYPES):
        if m.ontology_id and m.ontology_id not in out:
            out[m.ontology_id] = Entity(
                m.name, m.normalized_name, m.ontology_id, m.type, "question"
            )
    return list(out.values())


def resolve_entity(value: str, normalizer: Normalizer | None, role: str = "either") -> Entity:
    """A name or id given as a flag: an id is used as is; a name goes through the normaliser."""
    value = " ".join(value.split())
    if not value:
        raise InputError("An empty entity was given: pass a name (IL1B) or an id (HGNC:5992)")
    if _ID.match(value):
        ident = value.upper()
        return Entity(
            value, value, ident, "gene" if ident.startswith("HGNC") else "auto", "flag", role
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
    relationship_types: tuple[str, ...] = ()
    answer_type: str | None = None
    error: str | None = None
    calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "llm": self.used_llm,
            "relationship_types": list(self.relationship_types),
            "answer_type": self.answer_type,
            "error": self.error,
        }


async def parse_question(question: str, llm: LLMClient, model: str | None = None) -> Parse:
    """One structured call; a failure is reported and the query goes on without it."""
    result = await llm.chat(parse_messages(question), QuestionParse, kind=KIND_QUERY, model=model)
    if result.value is None:
        return Parse(True, error=result.error, calls=result.calls)
    ans = result.value.ans
    return Parse(
        True,
        tuple(dict.fromkeys(result.value.rels)),
        None if ans == "any" else ans,
        calls=result.calls,
    )


# --- filters ------------------------------------------------------------------------------------


@dataclass
class FilterSpec:
    """The filters of one query, before they become a store :class:`Filter`."""

    entities: list[Entity] = field(default_factory=list)
    match: str = "all"
    relationship_types: tuple[str, ...] = ()
    relationship_types_from: str = "none"  # "flag" | "parse" | "none"
    entity_types: tuple[str, ...] = ()
    entity_types_from: str = "none"
    since: int | None = None
    until: int | None = None
    paper_ids: tuple[str, ...] = ()
    journals: tuple[str, ...] = ()
    pmids: tuple[str, ...] = ()
    min_weight: float | None = None
    exact: bool = False

    @property
    def effective_match(self) -> str:
        either = [e for e in self.entities if e.role == "either"]
        return "all" if self.match == "all" and len(either) == 2 else "any"

    # the store condition of min_weight, resolved from the collection's degrees beforehand
    weight_filter: Filter | None = None

    def payload_values(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in PAYLOAD_FILTERS}

    def is_empty(self) -> bool:
        given = [v for v in self.payload_values().values() if v not in (None, ())]
        return not (self.entities or given or self.min_weight is not None)

    def resolve_weight(self, collection: Collection) -> FilterSpec:
        """This spec with ``min_weight`` turned into conditions on the stored degrees."""
        if self.min_weight is None:
            return self
        return FilterSpec(
            **{**self.__dict__, "weight_filter": collection.min_weight_filter(self.min_weight)}
        )

    def to_filter(self) -> Filter:
        if self.min_weight is not None and self.weight_filter is None:
            raise ValueError("min_weight needs resolve_weight(collection) before to_filter()")
        must: list[Match | Range | Filter] = []
        either = [e for e in self.entities if e.role == "either"]
        if either and self.effective_match == "all":
            must += [self._about([e], ("source", "target")) for e in either]
        elif either:
            must.append(self._about(either, ("source", "target")))
        for role in ("source", "target"):
            chosen = [e for e in self.entities if e.role == role]
            if chosen:
                must.append(self._about(chosen, (role,)))
        must += payload_conditions(self.payload_values())
        if self.weight_filter:
            must.append(self.weight_filter)
        return Filter(must=tuple(must))

    def _about(self, entities: list[Entity], ends: tuple[str, ...]) -> Filter:
        """Edges with one of ``entities`` at one of ``ends``: the entity itself, or (unless
        ``exact``) a concept below it in MeSH or a gene of its HGNC gene group."""
        keys = tuple(dict.fromkeys(k for e in entities for k in e.node_keys()))
        # only a concept with others below it needs the ancestors: a leaf costs no condition
        ids = tuple(dict.fromkeys(e.id for e in entities if e.id and e.expanded_to > 1))
        should: list[Match | Range | Filter] = [Match(f"{end}_key", any_of=keys) for end in ends]
        if ids and not self.exact:
            should += [Match(f"{end}_ancestors", any_of=ids) for end in ends]
        return Filter(should=tuple(should))

    def to_dict(self) -> dict[str, Any]:
        values = {
            k: list(v) if isinstance(v, tuple) else v for k, v in self.payload_values().items()
        }
        return {
            "entities": [e.to_dict() for e in self.entities],
            "match": self.effective_match if self.entities else None,
            **values,
            "relationship_types_from": self.relationship_types_from,
            "entity_types_from": self.entity_types_from,
            "min_weight": self.min_weight,
            "exact": self.exact,
        }


def build_spec(
    options: QueryOptions, linked: list[Entity], parse: Parse, normalizer: Normalizer | None
) -> FilterSpec:
    """Flags override the parse: entities, relationship types and entity types each come from
    the flags when given, else from the question."""
    flagged = [resolve_entity(v, normalizer) for v in options.entities]
    flagged += [resolve_entity(v, normalizer, "source") for v in options.sources]
    flagged += [resolve_entity(v, normalizer, "target") for v in options.targets]
    covers = getattr(normalizer, "covers", None)
    entities = flagged or (linked if options.link else [])
    if covers is not None and not options.exact:
        entities = [replace(e, expanded_to=covers(e.id)) if e.id else e for e in entities]
    spec = FilterSpec(
        entities=entities,
        match=options.match,
        exact=options.exact,
        min_weight=options.min_weight,
        **{f.name: getattr(options, f.name) for f in PAYLOAD_FILTERS},
    )
    spec.relationship_types, spec.entity_types = (), ()  # from the flags or the parse, below
    if options.relationship_types:
        spec.relationship_types, spec.relationship_types_from = options.relationship_types, "flag"
    elif parse.relationship_types:
        spec.relationship_types, spec.relationship_types_from = parse.relationship_types, "parse"
    if options.entity_types:
        spec.entity_types, spec.entity_types_from = options.entity_types, "flag"
    elif parse.answer_type:
        spec.entity_types, spec.entity_types_from = (parse.answer_type,), "parse"
    return spec


def relaxations(spec: FilterSpec, fallback: bool) -> list[tuple[str | None, FilterSpec]]:
    """The specs to try in order, each with a note on what was relaxed (None for the first).

    Only what was inferred is relaxed: two entities of the question joined by an edge become
    edges touching either, then the relationship and answer types parsed from the question are
    dropped. Entities and flags never are: a search without them would answer another question.
    ``fallback`` False tries ``spec`` alone.
    """
    out: list[tuple[str | None, FilterSpec]] = [(None, spec)]
    if not fallback:
        return out
    cur = spec
    if cur.effective_match == "all" and any(e.origin == "question" for e in cur.entities):
        cur = FilterSpec(**{**cur.__dict__, "match": "any"})
        out.append(("edges touching any of the question's entities instead of joining them", cur))
    if cur.relationship_types_from == "parse" or cur.entity_types_from == "parse":
        changes: dict[str, Any] = {}
        if cur.relationship_types_from == "parse":
            changes.update(relationship_types=(), relationship_types_from="none")
        if cur.entity_types_from == "parse":
            changes.update(entity_types=(), entity_types_from="none")
        cur = FilterSpec(**{**cur.__dict__, **changes})
        out.append(("without the relationship/answer types parsed from the question", cur))
    return out


def no_evidence(
    collection: Collection,
    spec: FilterSpec,
    used: FilterSpec,
    matched: int,
    min_score: float | None,
) -> dict[str, Any]:
    """Why the collection has nothing to answer from, what was searched, and the entities of the
    collection closest to a searched one that has no edge."""
    name = collection_name(collection)
    searched = [f"{e.name} ({e.id})" if e.id else e.name for e in spec.entities]
    closest: list[dict[str, Any]] = []
    if matched:
        reason = (
            f"{matched:,} edges passed the filters ({_describe(used)}) but none is similar enough "
            f"to the question (--min-score {min_score}; -1 keeps every edge)"
        )
    else:
        missing = [
            e for e in spec.entities
            if collection.store.count(
                FilterSpec(entities=[e], match="any", exact=spec.exact).to_filter()
            )
            == 0
        ]  # fmt: skip
        for e in missing:
            closest += collection.similar_entities(e.name, e.type)
            if e.name != e.text:
                closest += collection.similar_entities(e.text, e.type)
        closest = list({(c["name"], c["type"]): c for c in closest}.values())[:8]
        if missing:
            about = " or ".join(f"{e.name} ({e.id})" if e.id else e.name for e in missing)
            reason = f"the collection '{name}' holds no evidence about {about}"
        elif spec.entities:
            reason = f"no edge of the collection '{name}' matches {_describe(used)}"
        elif used.is_empty():
            reason = f"the collection '{name}' holds no edges"
        else:
            reason = f"no edge of the collection '{name}' matches the filters ({_describe(used)})"
    return {"reason": reason, "searched": searched, "closest": closest}


def check_answer(text: str) -> tuple[str, list[str]]:
    """Mark every sentence of an answer that cites no evidence; returns (text, those sentences)."""
    from fastbmrag.sentences import split_spans

    uncited: list[str] = []
    out: list[str] = []
    pos = 0
    for start, end, _ in split_spans(text):
        sentence = text[start:end]
        out.append(text[pos:end])
        pos = end
        if not _CITATION.search(sentence):
            uncited.append(sentence)
            out.append(" " + UNCITED)
    out.append(text[pos:])
    return "".join(out), uncited


# --- result -------------------------------------------------------------------------------------


@dataclass
class EdgeResult:
    n: int
    id: str
    score: float | None
    weight: float | None
    payload: dict[str, Any]
    cited: bool = False

    @property
    def statement(self) -> str:
        p = self.payload
        rel = str(p.get("relationship_type", "")).replace("_", " ")
        return f"{p.get('source', '?')} {rel} {p.get('target', '?')}"

    def to_dict(self) -> dict[str, Any]:
        p = self.payload
        return {
            "n": self.n,
            "id": self.id,
            "score": self.score,
            "weight": self.weight,
            "cited": self.cited,
            "source": p.get("source"),
            "source_id": p.get("source_id") or None,
            "relationship_type": p.get("relationship_type"),
            "target": p.get("target"),
            "target_id": p.get("target_id") or None,
            "paper_id": p.get("paper_id"),
            "payload": p,
        }


REFERENCE_FIELDS = ("paper_id", "pmid", "pmcid", "doi", "title", "journal", "year")


@dataclass
class QueryResult:
    """What a query returns; :meth:`to_dict` is the documented JSON layout (README, "Query")."""

    question: str
    collection: str
    answer: str | None
    references: list[dict[str, Any]]
    edges: list[EdgeResult]
    filters: dict[str, Any]
    parse: dict[str, Any]
    retrieval: dict[str, Any]
    timings: dict[str, float]
    llm: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    no_evidence: dict[str, Any] | None = None  # why nothing answers the question (answer None)
    uncited_sentences: list[str] = field(default_factory=list)
    consensus: list[dict[str, Any]] = field(default_factory=list)  # per entity pair retrieved
    follow_ups: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "collection": self.collection,
            "answer": self.answer,
            "no_evidence": self.no_evidence,
            "uncited_sentences": self.uncited_sentences,
            "consensus": self.consensus,
            "follow_ups": self.follow_ups,
            "references": self.references,
            "edges": [e.to_dict() for e in self.edges],
            "filters": self.filters,
            "parse": self.parse,
            "retrieval": self.retrieval,
            "timings": self.timings,
            "llm": self.llm,
            "warnings": self.warnings,
        }


# --- retrieval ----------------------------------------------------------------------------------


def _edge_weight(nodes: int, payload: dict[str, Any]) -> float | None:
    """min(source, target) degree / number of nodes (Collection.edge_weight, counted once), of
    a payload with current degrees (Collection.current_payload)."""
    try:
        degree = min(int(payload["source_degree"]), int(payload["target_degree"]))
    except (KeyError, TypeError, ValueError):
        return None
    return degree / nodes if nodes else 0.0


def retrieve(
    collection: Collection,
    vector: Any,
    flt: Filter | None,
    *,
    matched: int,
    options: QueryOptions,
) -> list[Hit]:
    """Vector search (``vector`` None: filter order via scroll, no score)."""
    store = collection.store
    if vector is None:
        hits: list[Hit] = []
        for hit in store.scroll(flt):
            hits.append(hit)
            if not options.all and len(hits) >= options.top_k:
                break
        return hits
    limit = max(matched, 1) if options.all else options.top_k
    hits = store.search(vector, flt, limit=limit, score_threshold=options.min_score)
    if options.all and options.min_score is None and len(hits) < matched:
        seen = {h.id for h in hits}
        hits += [h for h in store.scroll(flt) if h.id not in seen]
    return hits


# --- answer -------------------------------------------------------------------------------------


def evidence_line(edge: EdgeResult) -> str:
    p = edge.payload
    desc = " ".join(str(p.get("description") or "").split())[:DESCRIPTION_CHARS]
    line = f"[{edge.n}] {edge.statement}: {desc}"
    quotes = [" ".join(str(e["text"]).split()) for e in evidence_of(p)]
    if quotes and " ".join(quotes) != desc:  # a cited description is its own evidence
        line += f' Quote: "{" ".join(quotes)[:DESCRIPTION_CHARS]}"'
    paper = [str(p.get("title") or p.get("paper_id") or "")]
    paper += [str(v) for v in (p.get("journal"), p.get("year")) if v]
    if p.get("pmid"):
        paper.append(f"PMID {p['pmid']}")
    return line + f" (Paper: {'; '.join(x for x in paper if x)})"


def _pairs(edges: list[EdgeResult], item: str) -> list[dict[str, Any]]:
    """Consensus of the edges per (source, target) pair; items are evidence numbers ("n") or
    paper ids ("paper")."""
    from fastbmrag.graph import consensus

    names = {}
    rows = []
    for e in edges:
        p = e.payload
        s, t = (
            str(p.get("source_key") or p.get("source")),
            str(p.get("target_key") or p.get("target")),
        )
        names[s], names[t] = p.get("source"), p.get("target")
        rows.append(
            (s, str(p.get("relationship_type")), t, e.n if item == "n" else p.get("paper_id"))
        )
    out = consensus(rows)
    for pair in out:
        pair["source_name"], pair["target_name"] = names[pair["source"]], names[pair["target"]]
    return out


def agreement_lines(edges: list[EdgeResult]) -> list[str]:
    """For the answer prompt: each pair stated by more than one item, with its relationship
    types, their items and whether papers disagree."""
    lines = []
    for pair in _pairs(edges, "n"):
        stated = sum(len(v) for v in pair["relations"].values())
        if stated < 2:
            continue
        parts = [
            f"{rel.replace('_', ' ')} in {len(ns)} {'item' if len(ns) == 1 else 'items'} "
            + "".join(f"[{n}]" for n in ns)
            for rel, ns in pair["relations"].items()
        ]
        verdict = "papers disagree" if pair["conflict"] else "papers agree"
        lines.append(
            f"{pair['source_name']} -> {pair['target_name']}: {'; '.join(parts)} ({verdict})"
        )
    return lines


def consensus_of(edges: list[EdgeResult]) -> list[dict[str, Any]]:
    """For the JSON: per pair, the relationship types with their papers, and ``conflict``."""
    return [
        {"source": p["source_name"], "source_key": p["source"], "target": p["target_name"],
         "target_key": p["target"], "relations": p["relations"], "conflict": p["conflict"]}
        for p in _pairs(edges, "paper")
    ]  # fmt: skip


def check_citations(text: str, n: int) -> tuple[str, list[int], list[int]]:
    """Keep citations 1..n (``[3, 5]`` and ``[3-5]`` become ``[3][5]`` / ``[3][4][5]``).

    Returns (text, valid numbers in order of first use, removed numbers).
    """
    valid: dict[int, None] = {}
    removed: list[int] = []

    def repl(m: re.Match[str]) -> str:
        nums: list[int] = []
        for part in re.split(r"\s*[,;]\s*", m.group(1)):
            bounds = re.split(r"\s*[-\u2013]\s*", part)
            if len(bounds) == 2 and int(bounds[1]) - int(bounds[0]) in range(0, 50):
                nums += list(range(int(bounds[0]), int(bounds[1]) + 1))
            else:
                nums += [int(b) for b in bounds]
        keep = []
        for k in nums:
            if 1 <= k <= n:
                keep.append(k)
                valid.setdefault(k)
            else:
                removed.append(k)
        return "".join(f"[{k}]" for k in keep)

    out = _CITATION.sub(repl, text)
    out = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", out)).strip()
    return out, list(valid), removed


def references_for(edges: list[EdgeResult], cited: list[int]) -> list[dict[str, Any]]:
    """One reference per cited paper, in order of first citation, listing its evidence numbers."""
    by_n = {e.n: e for e in edges}
    refs: dict[str, dict[str, Any]] = {}
    for k in cited:
        edge = by_n[k]
        edge.cited = True
        pid = str(edge.payload.get("paper_id", ""))
        ref = refs.get(pid)
        if ref is None:
            ref = {f: edge.payload.get(f) or None for f in REFERENCE_FIELDS}
            ref["paper_id"] = pid
            ref["citations"] = []
            refs[pid] = ref
        ref["citations"].append(k)
    for ref in refs.values():
        ref["citations"].sort()
    return list(refs.values())


@dataclass
class _Calls:
    chat: int = 0
    failed: int = 0


async def synthesize(
    question: str,
    edges: list[EdgeResult],
    llm: LLMClient,
    options: QueryOptions,
    calls: _Calls,
    warnings: list[str],
) -> str:
    """One answer call for <= answer_batch edges; else map (bounded concurrency) and merge."""
    lines = [evidence_line(e) for e in edges]
    model = options.answer_model
    if len(lines) <= options.answer_batch:
        messages = answer_messages(question, lines, agreement_lines(edges))
        return await _ask(messages, Answer, llm, model, calls, final=True)

    sem = asyncio.Semaphore(options.concurrency)
    size = options.answer_batch
    groups = [lines[i : i + size] for i in range(0, len(lines), size)]
    agreements = [agreement_lines(edges[i : i + size]) for i in range(0, len(edges), size)]

    async def summarise(group: list[str], agreement: list[str]) -> str | None:
        async with sem:
            try:
                return await _ask(
                    partial_messages(question, group, agreement), PartialAnswer, llm, model, calls
                )
            except LLMError as err:
                warnings.append(
                    f"one group of {len(group)} evidence items was not summarised: {err}"
                )
                return None

    summaries = [summarise(g, a) for g, a in zip(groups, agreements, strict=True)]
    partials = [p for p in await asyncio.gather(*summaries) if p]
    if not partials:
        raise LLMError("Every summarising call failed; check the model server and retry")
    while len(partials) > MERGE_FANIN:
        chunks = [partials[i : i + MERGE_FANIN] for i in range(0, len(partials), MERGE_FANIN)]

        async def merge(chunk: list[str]) -> str:
            async with sem:
                return await _ask(merge_messages(question, chunk), PartialAnswer, llm, model, calls)

        partials = list(await asyncio.gather(*(merge(c) for c in chunks)))
    return await _ask(merge_messages(question, partials), Answer, llm, model, calls, final=True)


async def _ask(
    messages: list[dict[str, str]],
    schema: type[Answer] | type[PartialAnswer],
    llm: LLMClient,
    model: str | None,
    calls: _Calls,
    *,
    final: bool = False,
) -> str:
    result = await llm.chat(messages, schema, kind=KIND_QUERY, model=model)
    calls.chat += result.calls
    if result.value is None:
        calls.failed += 1
        what = "answer" if final else "summarising"
        raise LLMError(f"The {what} call failed: {result.error}; retry, or use --no-answer")
    return result.value.answer


# --- the query ----------------------------------------------------------------------------------


def collection_name(collection: Collection) -> str:
    return str(getattr(collection, "name", "") or "")


async def aquery(
    question: str,
    collection: Collection,
    llm: LLMClient | None,
    normalizer: Normalizer | None,
    *,
    options: QueryOptions | None = None,
) -> QueryResult:
    """Answer ``question`` from ``collection``. Does not close ``llm``.

    ``llm`` None: no parse, no embedding (edges in filter order, score None), no answer.
    """
    opts = options or QueryOptions()
    question = " ".join(question.split())
    if not question:
        raise InputError(
            'The question is empty: fastbmrag query "What is the role of IL1B in endometriosis?"'
        )
    started = time.perf_counter()
    timings: dict[str, float] = {}
    warnings: list[str] = []
    calls = _Calls()
    embed_requests = 0

    t = time.perf_counter()
    linked = link_question(question, normalizer) if opts.link else []
    timings["link_s"] = time.perf_counter() - t

    want_parse = (
        llm is not None
        and not opts.no_answer
        and not opts.no_llm_parse
        and not (opts.relationship_types and opts.entity_types)
    )

    async def do_parse() -> Parse:
        if not want_parse or llm is None:
            return Parse()
        t0 = time.perf_counter()
        try:
            return await parse_question(question, llm, opts.answer_model)
        finally:
            timings["parse_s"] = time.perf_counter() - t0

    async def do_embed() -> Any:
        if llm is None:
            return None
        t0 = time.perf_counter()
        vec = (await llm.embed([question]))[0]
        timings["embed_s"] = time.perf_counter() - t0
        return vec

    parse, vector = await asyncio.gather(do_parse(), do_embed())
    if vector is not None:
        collection.check_vector_size(len(vector))
    calls.chat += parse.calls
    if llm is not None:
        embed_requests += 1
    if parse.error:
        warnings.append(
            f"the question could not be parsed ({parse.error}); no relation/answer-type filter"
        )

    spec = build_spec(opts, linked, parse, normalizer)
    fields_indexed = collection.indexed_fields()
    if not spec.exact and fields_indexed is not None and "source_ancestors" not in fields_indexed:
        # a collection indexed before hierarchical filters: its edges carry no ancestors, and an
        # unindexed condition would slow every search
        spec = replace(spec, exact=True)
        if any(e.id for e in spec.entities):
            warnings.append(
                "this collection was indexed before hierarchical filters: an entity matches "
                "itself only (`fastbmrag update --force` on its input adds them)"
            )
    t = time.perf_counter()
    store = collection.store
    used, relaxed, matched = spec, [], 0
    for note, candidate in relaxations(spec, opts.fallback):
        candidate = candidate.resolve_weight(collection)
        flt = candidate.to_filter()
        matched = store.count(flt or None)
        if note is not None:
            relaxed.append(note)
        used = candidate
        if matched > 0:
            break
    fallback_msg = None
    if relaxed:
        fallback_msg = (
            f"no edge matched the filters ({_describe(spec)}); searched with {_describe(used)} "
            f"({'; '.join(relaxed)})"
        )
    flt = used.to_filter()
    timings["filter_s"] = time.perf_counter() - t

    t = time.perf_counter()
    hits = (
        retrieve(collection, vector, flt or None, matched=matched, options=opts) if matched else []
    )
    timings["search_s"] = time.perf_counter() - t
    nodes = collection.node_count() if hits else 0
    stale = collection.stale_nodes() if hits else {}
    payloads = [collection.current_payload(h.payload, stale) for h in hits]
    edges = [
        EdgeResult(i, h.id, h.score, _edge_weight(nodes, p), p)
        for i, (h, p) in enumerate(zip(hits, payloads, strict=True), 1)
    ]
    missing = None if edges else no_evidence(collection, spec, used, matched, opts.min_score)

    answer: str | None = None
    references: list[dict[str, Any]] = []
    removed: list[int] = []
    uncited: list[str] = []
    if not opts.no_answer and llm is not None and edges:
        t = time.perf_counter()
        raw = await synthesize(question, edges, llm, opts, calls, warnings)
        answer, cited, removed = check_citations(raw, len(edges))
        if removed:
            warnings.append(
                f"removed {len(removed)} citation(s) to evidence that does not exist: "
                + ", ".join(f"[{k}]" for k in removed)
            )
        if cited:
            references = references_for(edges, cited)
            answer, uncited = check_answer(answer)
        else:
            answer = None
            missing = {
                "reason": f"the answer cited none of the {len(edges)} evidence items, so it is "
                "not shown (--no-answer lists the edges)",
                "searched": [f"{e.name} ({e.id})" if e.id else e.name for e in spec.entities],
                "closest": [],
            }
        timings["answer_s"] = time.perf_counter() - t
    if fallback_msg:  # a relaxed search is a warning whether or not it found an answer
        warnings.append(fallback_msg)
    follow: list[str] = []
    if answer is not None:
        from fastbmrag.graph import follow_ups

        asked = [k for e in spec.entities for k in e.node_keys()]
        covered = {
            str(e.payload.get(side))
            for e in edges
            if e.cited
            for side in ("source_key", "target_key")
        }
        follow = follow_ups(
            collection, asked, covered, ancestors=getattr(normalizer, "ancestors", None)
        )
    timings["total_s"] = time.perf_counter() - started
    timings = {k: round(v, 4) for k, v in timings.items()}

    return QueryResult(
        question=question,
        collection=collection_name(collection),
        answer=answer,
        references=references,
        edges=edges,
        filters={
            **spec.to_dict(),
            "matched": matched,
            "fallback": fallback_msg,
            "used": used.to_dict() if relaxed else None,
        },
        parse=parse.to_dict(),
        retrieval={
            "top_k": None if opts.all else opts.top_k,
            "all": opts.all,
            "min_score": opts.min_score,
            "retrieved": len(edges),
            "removed_citations": removed,
        },
        timings=timings,
        llm={
            "chat_calls": calls.chat,
            "embed_requests": embed_requests,
            "usage": llm.accounting.to_dict() if llm is not None else {},
        },
        warnings=warnings,
        no_evidence=missing,
        uncited_sentences=uncited,
        consensus=consensus_of(edges),
        follow_ups=follow,
    )


def _describe(spec: FilterSpec) -> str:
    parts = []
    if spec.entities:
        joined = " and " if spec.effective_match == "all" else " or "
        parts.append(joined.join(e.id or e.name for e in spec.entities))
    for f in PAYLOAD_FILTERS:
        value = getattr(spec, f.name)
        if value not in (None, ()):
            parts.append(f"{f.label} " + ("/".join(value) if f.multiple else str(value)))
    if spec.min_weight is not None:
        parts.append(f"weight >= {spec.min_weight}")
    return ", ".join(parts) or "none"


def query(
    question: str,
    collection: Collection,
    llm: LLMClient | None,
    normalizer: Normalizer | None,
    *,
    options: QueryOptions | None = None,
) -> QueryResult:
    """:func:`aquery` in its own event loop; closes ``llm`` at the end."""

    async def run() -> QueryResult:
        try:
            return await aquery(question, collection, llm, normalizer, options=options)
        finally:
            if llm is not None:
                await llm.aclose()

    return asyncio.run(run())


run_query = query


# --- rendering ----------------------------------------------------------------------------------


def _ref_line(ref: dict[str, Any]) -> str:
    ids = []
    if ref.get("pmid"):
        ids.append(f"PMID {ref['pmid']}")
    if ref.get("pmcid"):
        ids.append(str(ref["pmcid"]))
    if ref.get("doi"):
        ids.append(f"doi:{ref['doi']}")
    where = ", ".join(str(v) for v in (ref.get("journal"), ref.get("year")) if v)
    title = str(ref.get("title") or ref["paper_id"]).rstrip(".")  # joined with ". " below
    parts = [str(title)] + ([where] if where else []) + ([", ".join(ids)] if ids else [])
    return ". ".join(parts)


def _score(edge: EdgeResult) -> str:
    return "  -  " if edge.score is None else f"{edge.score:.3f}"


def _no_evidence_lines(result: QueryResult) -> list[str]:
    if result.no_evidence is None:
        return []
    out = [f"No evidence: {result.no_evidence['reason']}."]
    if result.no_evidence["closest"]:
        near = ", ".join(
            f"{c['name']} ({c['id'] or c['type']}, {c['degree']} edges)"
            for c in result.no_evidence["closest"]
        )
        out.append(f"Closest entities in the collection: {near}.")
    return out + [""]


def render_text(result: QueryResult) -> str:
    # "No evidence" first; then notes, before the answer they qualify (a relaxed search)
    out: list[str] = _no_evidence_lines(result) + [f"Note: {w}." for w in result.warnings]
    out += [""] if result.warnings else []
    if result.answer is not None:
        out += [result.answer, ""]
        if result.references:
            out.append("References:")
            for ref in result.references:
                nums = "".join(f"[{k}]" for k in ref["citations"])
                out.append(f"  {nums} {_ref_line(ref)}")
            out.append("")
        if result.follow_ups:
            out += ["Follow-up questions:", *(f"  - {q}" for q in result.follow_ups), ""]
    elif result.no_evidence is None:
        out.append(
            f"{len(result.edges):,} edges ({result.filters['matched']:,} passed the filters):"
        )
        for e in result.edges:
            p = e.payload
            out.append(
                f"  [{e.n}] {_score(e)}  {e.statement}  "
                f"({p.get('paper_id')}{', ' + str(p['year']) if p.get('year') else ''})"
            )
            if p.get("description"):
                out.append(f"        {' '.join(str(p['description']).split())[:200]}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_markdown(result: QueryResult) -> str:
    out = [f"## {result.question}", "", *_no_evidence_lines(result)]
    out += [f"> Note: {w}." for w in result.warnings] + ([""] if result.warnings else [])
    if result.answer is not None:
        out += [result.answer, ""]
        if result.references:
            out += ["### References", ""]
            for ref in result.references:
                nums = ", ".join(str(k) for k in ref["citations"])
                out.append(f"- [{nums}] {_ref_line(ref)}")
            out.append("")
    out += ["### Evidence", "", "| n | score | relation | paper | year |", "|---|---|---|---|---|"]
    for e in result.edges:
        p = e.payload
        statement = e.statement.replace("|", "\\|")
        out.append(
            f"| {e.n} | {_score(e).strip()} | {statement} | {p.get('paper_id', '')} | {p.get('year') or ''} |"
        )
    out.append("")
    return "\n".join(out).rstrip() + "\n"


def render(result: QueryResult, fmt: str) -> str:
    if fmt == "json":
        import json

        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
    if fmt == "markdown":
        return render_markdown(result)
    return render_text(result)


def options_from(values: dict[str, Any], keys: Iterable[str] | None = None) -> QueryOptions:
    """QueryOptions from a dict, ignoring keys it does not know (CLI kwargs, API kwargs)."""
    names = QueryOptions.field_names() if keys is None else set(keys)
    return QueryOptions(**{k: v for k, v in values.items() if k in names})
