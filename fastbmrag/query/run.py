"""One query from question to result: the steps of the other modules of this package, in order,
each timed (:func:`aquery`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from fastbmrag.errors import InputError
from fastbmrag.llm.base import LLMClient
from fastbmrag.papers.design import rank as design_rank
from fastbmrag.query.answer import Calls, check_answer, consensus_of, references_for, synthesize
from fastbmrag.query.entities import Entity, Parse, parse_question
from fastbmrag.query.options import QueryOptions
from fastbmrag.query.rank import ranked_evidence
from fastbmrag.query.related import unrelated_evidence
from fastbmrag.query.result import EdgeResult, QueryResult
from fastbmrag.query.retrieve import as_evidence, retrieve
from fastbmrag.query.spec import (
    RETRACTED,
    FilterSpec,
    absent_evidence,
    build_spec,
    collection_name,
    describe,
    named,
    no_evidence,
    relaxations,
)
from fastbmrag.query.understand import Mention, understand, with_presence
from fastbmrag.store.payload import BM25_FIELDS, TEXT_FIELDS
from fastbmrag.text import citations
from fastbmrag.util.wording import counted, option_named

MAX_LEFT_OUT_EDGES = 10_000  # edges of retracted papers looked at to name them

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


@dataclass
class _Steps:
    """What the steps of one query share: their timings, warnings and chat calls."""

    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    calls: Calls = field(default_factory=Calls)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = time.perf_counter() - t


@runtime_checkable
class Reading(Protocol):
    """How a query opens its collection: the store (with the ledger) for the reads, the ledger
    alone before and after them. Each is held only while the query reads, never across a model
    call, so that an update waiting for the store is not kept out by a question in flight."""

    def open_store(self) -> AbstractContextManager[Collection]: ...

    def open_ledger(self) -> AbstractContextManager[Collection]: ...


@dataclass
class Opened:
    """A collection the caller holds open: both readings are it."""

    collection: Collection

    def open_store(self) -> AbstractContextManager[Collection]:
        return nullcontext(self.collection)

    def open_ledger(self) -> AbstractContextManager[Collection]:
        return nullcontext(self.collection)


async def aquery(
    question: str,
    collection: Collection | Reading,
    llm: LLMClient | None,
    normalizer: Normalizer | None,
    *,
    options: QueryOptions | None = None,
) -> QueryResult:
    """Answer ``question`` from ``collection`` (an open collection, or a :class:`Reading` that
    opens it only while the query reads). Does not close ``llm``.

    ``llm`` None: no parse, no embedding (edges in filter order, score None), no answer.
    """
    reading = collection if isinstance(collection, Reading) else Opened(collection)
    opts = options or QueryOptions()
    question = " ".join(question.split())
    if not question:
        raise InputError(
            'The question is empty: fastbmrag query "What is the role of IL1B in endometriosis?"'
        )
    started = time.perf_counter()
    steps = _Steps()
    with reading.open_ledger() as led:  # nothing to answer from: no model call either
        empty = not led.ledger.has_edges()
    parse, vector = (Parse(), None) if empty else await _parse_and_embed(question, llm, opts, steps)
    with reading.open_store() as coll:
        name = collection_name(coll)
        found = _gather(question, coll, normalizer, parse, vector, opts, steps, empty)
    mentions, spec, used, edges, missing = (
        found.mentions, found.spec, found.used, found.edges, found.missing
    )  # fmt: skip

    answer: str | None = None
    references: list[dict[str, Any]] = []
    removed: list[int] = []
    uncited: list[str] = []
    if parse.timed_out and not opts.no_answer and edges:  # the answer would wait as long
        steps.warnings.append(
            "the model server did not answer the question's parse in time: it hangs, so the "
            f"evidence is listed with no answer (restart it, or {option_named('no_answer')})"
        )
    elif not opts.no_answer and llm is not None and edges:
        with steps.timed("answer_s"):
            raw = await synthesize(question, edges, llm, opts, steps.calls, steps.warnings)
            answer, cited, removed = citations.keep(raw, len(edges))
            if removed:
                steps.warnings.append(
                    f"removed {len(removed)} citation(s) to evidence that does not exist: "
                    + ", ".join(f"[{k}]" for k in removed)
                )
            if cited:
                references = references_for(edges, cited)
                answer, uncited = check_answer(answer)
            else:
                answer, missing = None, _uncited_answer(spec, len(edges))
    fallback = None
    if found.relaxed:  # a relaxed search is a warning whether or not it found an answer
        fallback = (
            f"no edge matched the filters ({describe(spec)}); searched with {describe(used)} "
            f"({'; '.join(found.relaxed)})"
        )
        steps.warnings.append(fallback)
    follow: list[str] = []
    if answer is not None:
        with reading.open_ledger() as led:
            follow = _follow_ups(led, spec, edges, normalizer)
    steps.timings["total_s"] = time.perf_counter() - started

    return QueryResult(
        question=question,
        collection=name,
        answer=answer,
        references=references,
        edges=edges,
        understood=[m.to_dict() for m in mentions],
        filters={
            **spec.to_dict(),
            # edges passing the filters used; none counted where the question ranked the search
            # (with --all: the edges returned)
            "matched": (len(edges) if opts.all else None) if found.asked else found.matched,
            "fallback": fallback,
            "used": used.to_dict() if found.relaxed else None,
        },
        parse=parse.to_dict(),
        retrieval={
            "top_k": None if opts.all else opts.top_k,
            "all": opts.all,
            "min_score": opts.min_score,
            "retrieved": len(edges),
            "removed_citations": removed,
        },
        timings={k: round(v, 4) for k, v in steps.timings.items()},
        llm={
            "chat_calls": steps.calls.chat,
            "embed_requests": 0 if llm is None else 1,
            "usage": llm.accounting.to_dict() if llm is not None else {},
        },
        warnings=steps.warnings,
        no_evidence=missing,
        uncited_sentences=uncited,
        consensus=consensus_of(edges),
        follow_ups=follow,
    )


@dataclass
class _Found:
    """What a query read from the collection: the question's mentions, the filters, the evidence
    (payloads copied: they outlive the reader), or why there is none."""

    mentions: list[Mention]
    spec: FilterSpec
    used: FilterSpec
    matched: int
    relaxed: list[str]
    asked: bool
    edges: list[EdgeResult]
    missing: dict[str, Any] | None


def _gather(
    question: str,
    collection: Collection,
    normalizer: Normalizer | None,
    parse: Parse,
    vector: Any,
    opts: QueryOptions,
    steps: _Steps,
    empty: bool,
) -> _Found:
    """The reads of one query: the question understood against the collection, the evidence
    ranked (or filtered, with flags), and why there is none. No model call."""
    if vector is not None:
        collection.check_vector_size(len(vector))
    with steps.timed("link_s"):
        by_name = not empty and _names_indexed(collection, steps.warnings)
        mentions = (
            [] if empty else understood(question, collection, normalizer, parse, opts, by_name)
        )
    linked = [m.entity for m in mentions if m.used_as == "filter"]
    broader = [m.broader for m in mentions if m.used_as == "broader" and m.broader is not None]
    spec = build_spec(opts, linked, parse, normalizer)
    by_words = not empty and _words_indexed(collection, steps.warnings)
    spec = replace(spec, by_name=by_name, by_words=by_words)
    spec = _hierarchical(spec, collection, steps.warnings)
    hide = not opts.include_retracted and bool(collection.ledger.retracted())
    spec = replace(spec, hide_retracted=hide)
    absent = [m for m in mentions if m.used_as == "absent"]
    # the question ranks the search (its entities, then its words), unless entity flags or, in
    # a question that names no entity, other flags say what to search: those are hard filters
    asked = all(e.origin == "question" for e in spec.entities) and (
        bool(linked or broader) or not _flag_filters(spec)
    )
    if absent and not (linked or broader or asked):  # all it names is absent, flags narrow it
        edges: list[EdgeResult] = []
        missing: dict[str, Any] | None = absent_evidence(collection, absent)
        used, matched, relaxed = spec, 0, list[str]()
    else:
        for m in mentions:
            if m.used_as == "broader" and m.broader is not None:
                steps.warnings.append(
                    f"the collection '{collection_name(collection)}' holds no edge about "
                    f"{m.label}; {counted(m.broader_edges, 'edge')} about {m.broader.name} "
                    f"({m.broader.id}), the broader concept, answer after the others"
                )
        used_names = [m.label for m in mentions if m.used_as in ("filter", "broader")]
        if absent:
            steps.warnings.append(
                f"the collection '{collection_name(collection)}' holds no edge about "
                f"{' or '.join(m.label for m in absent)}; searched with "
                f"{', '.join(used_names) or 'the words of the question'}"
            )
        with steps.timed("filter_s"):
            first = (
                replace(spec, match="any", entities=[*spec.entities, *broader]) if asked else spec
            )
            used, matched, relaxed = _first_matching(first, collection, opts.fallback, exists=asked)
            if hide and (left_out := _retracted_left_out(collection, used)):
                steps.warnings.append(
                    f"{len(left_out)} retracted paper{'s' if len(left_out) > 1 else ''} left "
                    f"out ({', '.join(sorted(left_out)[:5])}{' ...' if len(left_out) > 5 else ''}"
                    f"); {option_named('include_retracted')} shows their edges, marked"
                )
        with steps.timed("search_s"):
            if asked:
                used = replace(used, entities=used.entities[: len(spec.entities)])
                edges, joined = ranked_evidence(
                    question, collection, vector, used, broader, opts, normalizer
                )
                if len(linked) > 1 and edges and not joined:
                    steps.warnings.append(
                        f"no edge joins {' and '.join(e.name for e in linked)}: answered from "
                        "the edges of each"
                    )
            else:
                flt = used.to_filter() or None
                hits = (
                    retrieve(collection, vector, flt, limit=None if opts.all else opts.top_k,
                             min_score=opts.min_score)
                    if matched else []
                )  # fmt: skip
                edges = as_evidence(collection, hits)
        if not edges and asked and matched:  # how many passed, for the reason below
            matched = collection.count(used.to_filter() or None)
        missing = None if edges else no_evidence(collection, spec, used, matched, opts.min_score)
        if not edges and asked and absent and not (linked or broader):
            missing = absent_evidence(collection, absent)  # the warning above says it again
            steps.warnings.pop()
        elif not edges and asked and not (linked or broader) and matched:
            # nothing the question names, and none of its words weighs in the collection
            missing = unrelated_evidence(collection, question, normalizer)
        elif not asked:
            edges = [replace(e, kept_by="entity" if spec.entities else "filter") for e in edges]
    if opts.rank == "design":  # stronger designs first, similarity within each
        edges = sorted(edges, key=lambda e: design_rank(str(e.edge.design or "")))
        edges = [replace(e, n=i) for i, e in enumerate(edges, 1)]
    return _Found(mentions, spec, used, matched, relaxed, asked, edges, missing)


async def _parse_and_embed(
    question: str, llm: LLMClient | None, opts: QueryOptions, steps: _Steps
) -> tuple[Parse, Any]:
    """The parse call (unless the flags say everything it would) and the question's embedding,
    at once; a failed parse is a warning."""
    want_parse = (
        llm is not None
        and not opts.no_answer
        and not opts.no_llm_parse
        and not (opts.filtered("relationship_types") and opts.filtered("entity_types"))
    )

    async def do_parse() -> Parse:
        if not want_parse or llm is None:
            return Parse()
        with steps.timed("parse_s"):
            return await parse_question(question, llm, opts.answer_model)

    async def do_embed() -> Any:
        if llm is None:
            return None
        with steps.timed("embed_s"):
            return (await llm.embed([question]))[0]

    parse, vector = await asyncio.gather(do_parse(), do_embed())
    steps.calls.chat += parse.calls
    if parse.error:
        steps.warnings.append(
            f"the question could not be parsed ({parse.error}); no relation/answer-type filter"
        )
    return parse, vector


def understood(
    question: str,
    collection: Collection,
    normalizer: Normalizer | None,
    parse: Parse,
    opts: QueryOptions,
    by_name: bool = True,
) -> list[Mention]:
    """The question's mentions, each a filter if an edge of the collection is about it (its id,
    a concept below it, or one of its names), else answered from the nearest broader concept the
    collection holds, else absent; none used where entity flags were given."""
    if not opts.link:
        return []
    mentions = understand(question, normalizer, collection.ledger, parse.entities)
    flagged = bool(opts.entities or opts.sources or opts.targets)
    entities = [m.entity for m in mentions]
    if normalizer is not None and not opts.exact:
        entities = [
            replace(e, expanded_to=normalizer.covers(e.id)) if e.id else e for e in entities
        ]
    indexed = collection.indexed_fields()
    exact = opts.exact or (indexed is not None and "source_ancestors" not in indexed)
    # a node of the graph is there (the ledger says so at once); else an edge about a concept
    # below it, else one that writes one of its names (each asked of the store apart: one
    # condition of ids and names together is slower to answer than the two)
    degrees = collection.ledger.degrees(k for e in entities for k in e.node_keys())
    present = [
        any(degrees.get(k, 0) > 0 for k in e.node_keys())
        or (
            e.expanded_to > 1
            and not exact
            and collection.holds(FilterSpec(entities=[e], match="any", by_name=False).to_filter())
        )
        or (by_name and bool(e.names) and collection.holds(named([e])))
        for e in entities
    ]
    broader = [
        None if p or e.id is None or normalizer is None else _broader(e, collection, normalizer)
        for e, p in zip(entities, present, strict=True)
    ]
    return with_presence(mentions, present, used=not flagged, broader=broader)


def _broader(
    entity: Entity, collection: Collection, normalizer: Normalizer
) -> tuple[Entity, int] | None:
    """The concept just above ``entity`` (in one of its MeSH trees, its gene group) that the
    collection holds edges about, and how many; the smallest where several are."""
    above = [a for a in normalizer.ancestors(entity.id or "") if a != entity.id]
    parents = [a for a in above if not any(a in normalizer.ancestors(b) for b in above)]
    degrees = collection.ledger.degrees(parents)
    held = [a for a in parents if degrees.get(a, 0) > 0]
    if not held:
        return None
    nearest = min(held, key=lambda a: (normalizer.covers(a), parents.index(a)))
    name = normalizer.name_of(nearest) or nearest
    found = Entity(name, name, nearest, entity.type, "question", names=(name,))
    return found, collection.count(FilterSpec(entities=[found], exact=True).to_filter())


def _names_indexed(collection: Collection, warnings: list[str]) -> bool:
    """Whether the collection's edges carry their ends' names with a full-text index: edges
    stored by an earlier version are selected by id alone until re-indexed."""
    indexed = collection.indexed_fields()
    if indexed is not None and not all(f in indexed for f in TEXT_FIELDS):
        warnings.append(
            "this collection was indexed before entity names were searchable: a question's "
            f"entities select edges by id only (an update of its input with {option_named('force')} "
            "adds them)"
        )
        return False
    if older := collection.ledger.outdated_papers():
        warnings.append(
            f"{counted(older, 'paper')} of this collection {'was' if older == 1 else 'were'} "
            "indexed before entity names were searchable: their edges are selected by id only "
            f"(an update of their input with {option_named('force')} adds the names)"
        )
    return True


def _words_indexed(collection: Collection, warnings: list[str]) -> bool:
    """Whether the collection's edges carry their names' stems with a BM25 index: a collection
    stored before gets them when next opened for writing, with no model call."""
    indexed = collection.indexed_fields()
    if indexed is None or all(f in indexed for f in BM25_FIELDS):
        return True
    warnings.append(
        f"the collection '{collection_name(collection)}' was indexed before a question's words "
        "were weighed by the collection: only what the question names relates an edge (an "
        f"update of it, {option_named('collection')} {collection_name(collection)} with its "
        "input, adds them without a model call)"
    )
    return False


def _flag_filters(spec: FilterSpec) -> bool:
    """Whether a flag narrowed the search beyond entities (a paper, a journal, years ...)."""
    return any(
        v not in (None, ()) for k, v in spec.payload_values().items()
        if not k.endswith("_types") or getattr(spec, f"{k}_from") == "flag"
    ) or spec.min_weight is not None  # fmt: skip


def _hierarchical(spec: FilterSpec, collection: Collection, warnings: list[str]) -> FilterSpec:
    """``spec``, exact where the collection was indexed before hierarchical filters: its edges
    carry no ancestors, and an unindexed condition would slow every search."""
    indexed = collection.indexed_fields()
    if spec.exact or indexed is None or "source_ancestors" in indexed:
        return spec
    if any(e.id for e in spec.entities):
        warnings.append(
            "this collection was indexed before hierarchical filters: an entity matches "
            f"itself only (an update of its input with {option_named('force')} adds them)"
        )
    return replace(spec, exact=True)


def _first_matching(
    spec: FilterSpec, collection: Collection, fallback: bool, *, exists: bool = False
) -> tuple[FilterSpec, int, list[str]]:
    """The first of ``spec``'s relaxations that matches an edge (else the last), how many edges
    it matches (``exists``: 1 if any, which a ranked search needs, at no count of them all),
    and what was relaxed."""
    used, matched, relaxed = spec, 0, []
    for note, candidate in relaxations(spec, fallback):
        used = candidate.resolve_weight(collection)
        flt = used.to_filter() or None
        matched = collection.count(flt) if not exists else int(collection.holds(flt))
        if note is not None:
            relaxed.append(note)
        if matched > 0:
            break
    return used, matched, relaxed


def _retracted_left_out(collection: Collection, used: FilterSpec) -> set[str]:
    """The retracted papers with an edge that ``used`` would match if they were kept."""
    flt = replace(used, hide_retracted=False).to_filter().and_(RETRACTED)
    papers: set[str] = set()
    for n, hit in enumerate(collection.scroll(flt)):
        papers.add(str(hit.payload.get("paper_id")))
        if n >= MAX_LEFT_OUT_EDGES:
            break
    return papers


def _uncited_answer(spec: FilterSpec, retrieved: int) -> dict[str, Any]:
    return {
        "reason": f"the answer cited none of the {retrieved} evidence items, so it is not shown "
        f"({option_named('no_answer')} lists the edges)",
        "searched": [f"{e.name} ({e.id})" if e.id else e.name for e in spec.entities],
        "closest": [],
    }


def _follow_ups(
    collection: Collection,
    spec: FilterSpec,
    edges: list[EdgeResult],
    normalizer: Normalizer | None,
) -> list[str]:
    from fastbmrag.graph.follow_ups import follow_ups

    asked = [k for e in spec.entities for k in e.node_keys()]
    covered = {str(k) for e in edges if e.cited for k in (e.edge.source_key, e.edge.target_key)}
    ancestors = normalizer.ancestors if normalizer is not None else None
    return follow_ups(collection, asked, covered, ancestors=ancestors)


def query(
    question: str,
    collection: Collection | Reading,
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
