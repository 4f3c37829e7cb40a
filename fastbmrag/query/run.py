"""One query from question to result: the steps of the other modules of this package, in order,
each timed (:func:`aquery`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fastbmrag.errors import InputError
from fastbmrag.llm.base import LLMClient
from fastbmrag.query.answer import Calls, check_answer, consensus_of, references_for, synthesize
from fastbmrag.query.entities import Parse, parse_question
from fastbmrag.query.options import QueryOptions
from fastbmrag.query.related import related, unrelated_evidence
from fastbmrag.query.result import EdgeResult, QueryResult
from fastbmrag.query.retrieve import retrieve
from fastbmrag.query.spec import (
    RETRACTED,
    FilterSpec,
    absent_evidence,
    build_spec,
    collection_name,
    describe,
    no_evidence,
    relaxations,
)
from fastbmrag.query.understand import Mention, understand, with_presence
from fastbmrag.store.base import Hit
from fastbmrag.text import citations

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
    steps = _Steps()
    empty = collection.count() == 0  # nothing to answer from: no model call either
    parse, vector = (Parse(), None) if empty else await _parse_and_embed(question, llm, opts, steps)
    if vector is not None:
        collection.check_vector_size(len(vector))
    with steps.timed("link_s"):
        mentions = [] if empty else _understood(question, collection, normalizer, parse, opts)
    linked = [m.entity for m in mentions if m.used_as == "filter"]
    spec = _hierarchical(build_spec(opts, linked, parse, normalizer), collection, steps.warnings)
    hide = not opts.include_retracted and bool(collection.ledger.retracted())
    spec = replace(spec, hide_retracted=hide)
    absent = [m for m in mentions if m.used_as == "absent"]
    if absent and not linked:  # all the question names is absent: nothing to search
        edges: list[EdgeResult] = []
        missing: dict[str, Any] | None = absent_evidence(collection, absent)
        used, matched, relaxed = spec, 0, list[str]()
    else:
        if absent:
            steps.warnings.append(
                f"the collection '{collection_name(collection)}' holds no edge about "
                f"{' or '.join(m.label for m in absent)}; searched with "
                f"{', '.join(m.label for m in mentions if m.used_as == 'filter')}"
            )
        with steps.timed("filter_s"):
            used, matched, relaxed = _first_matching(spec, collection, opts.fallback)
            if hide and (left_out := _retracted_left_out(collection, used)):
                steps.warnings.append(
                    f"{len(left_out)} retracted paper{'s' if len(left_out) > 1 else ''} left "
                    f"out ({', '.join(sorted(left_out)[:5])}{' ...' if len(left_out) > 5 else ''}"
                    "); --include-retracted shows their edges, marked"
                )
        with steps.timed("search_s"):
            flt = used.to_filter() or None
            hits = (
                retrieve(collection, vector, flt, matched=matched, options=opts) if matched else []
            )
        edges = _edges(collection, hits)
        missing = None if edges else no_evidence(collection, spec, used, matched, opts.min_score)
        if edges and not spec.entities and not _flag_filters(spec):
            edges = related(question, edges, normalizer)
            if not edges:
                missing = unrelated_evidence(collection, question, normalizer)
        else:
            edges = [replace(e, kept_by="entity" if spec.entities else "filter") for e in edges]

    answer: str | None = None
    references: list[dict[str, Any]] = []
    removed: list[int] = []
    uncited: list[str] = []
    if not opts.no_answer and llm is not None and edges:
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
    if relaxed:  # a relaxed search is a warning whether or not it found an answer
        fallback = (
            f"no edge matched the filters ({describe(spec)}); searched with {describe(used)} "
            f"({'; '.join(relaxed)})"
        )
        steps.warnings.append(fallback)
    follow = _follow_ups(collection, spec, edges, normalizer) if answer is not None else []
    steps.timings["total_s"] = time.perf_counter() - started

    return QueryResult(
        question=question,
        collection=collection_name(collection),
        answer=answer,
        references=references,
        edges=edges,
        understood=[m.to_dict() for m in mentions],
        filters={
            **spec.to_dict(),
            "matched": matched,
            "fallback": fallback,
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


async def _parse_and_embed(
    question: str, llm: LLMClient | None, opts: QueryOptions, steps: _Steps
) -> tuple[Parse, Any]:
    """The parse call (unless the flags say everything it would) and the question's embedding,
    at once; a failed parse is a warning."""
    want_parse = (
        llm is not None
        and not opts.no_answer
        and not opts.no_llm_parse
        and not (opts.relationship_types and opts.entity_types)
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


def _understood(
    question: str,
    collection: Collection,
    normalizer: Normalizer | None,
    parse: Parse,
    opts: QueryOptions,
) -> list[Mention]:
    """The question's mentions, each a filter if the collection has an edge about it, else
    absent; none used where entity flags were given."""
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
    # a node of the graph is there (the ledger says so at once); a broader concept is there if
    # an edge is about a concept below it (a count in the store)
    degrees = collection.ledger.degrees(k for e in entities for k in e.node_keys())
    present = [
        any(degrees.get(k, 0) > 0 for k in e.node_keys())
        or (
            e.expanded_to > 1
            and not exact
            and collection.count(FilterSpec(entities=[e], match="any").to_filter()) > 0
        )
        for e in entities
    ]
    return with_presence(mentions, present, used=not flagged)


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
            "itself only (`fastbmrag update --force` on its input adds them)"
        )
    return replace(spec, exact=True)


def _first_matching(
    spec: FilterSpec, collection: Collection, fallback: bool
) -> tuple[FilterSpec, int, list[str]]:
    """The first of ``spec``'s relaxations that matches an edge (else the last), how many edges
    it matches, and what was relaxed."""
    used, matched, relaxed = spec, 0, []
    for note, candidate in relaxations(spec, fallback):
        used = candidate.resolve_weight(collection)
        matched = collection.count(used.to_filter() or None)
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


def _edges(collection: Collection, hits: list[Hit]) -> list[EdgeResult]:
    """The hits as numbered evidence items, with current degrees and weights."""
    if not hits:
        return []
    payloads = collection.with_degrees([h.payload for h in hits])
    return [
        EdgeResult(i, h.id, h.score, p.pop("weight"), p)
        for i, (h, p) in enumerate(zip(hits, payloads, strict=True), 1)
    ]


def _uncited_answer(spec: FilterSpec, retrieved: int) -> dict[str, Any]:
    return {
        "reason": f"the answer cited none of the {retrieved} evidence items, so it is not shown "
        "(--no-answer lists the edges)",
        "searched": [f"{e.name} ({e.id})" if e.id else e.name for e in spec.entities],
        "closest": [],
    }


def _follow_ups(
    collection: Collection,
    spec: FilterSpec,
    edges: list[EdgeResult],
    normalizer: Normalizer | None,
) -> list[str]:
    from fastbmrag.explore import follow_ups

    asked = [k for e in spec.entities for k in e.node_keys()]
    covered = {
        str(e.payload.get(side)) for e in edges if e.cited for side in ("source_key", "target_key")
    }
    ancestors = normalizer.ancestors if normalizer is not None else None
    return follow_ups(collection, asked, covered, ancestors=ancestors)


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
