"""One paper's model work: draft from the abstract (or the opening of the main text), normalise
the ends, refine from the main text, embed; the points to commit come back, nothing is written
here (:func:`index_paper`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from fastbmrag.index.edges import build_edges, edge_point
from fastbmrag.index.extract import draft_relations, resolve_draft
from fastbmrag.index.grounding import PaperGrounding
from fastbmrag.index.options import UpdateOptions
from fastbmrag.index.refine import refine_query, refine_relations
from fastbmrag.llm.base import ChatResult, LLMClient
from fastbmrag.papers.model import Paper
from fastbmrag.papers.pubtator import Document
from fastbmrag.store.base import EdgeRef, Point
from fastbmrag.store.payload import CITED, REFINED
from fastbmrag.text.sentences import abstract_sentences, opening_sentences
from fastbmrag.vocab.base import Normalizer


@dataclass
class PaperOutcome:
    paper_id: str
    status: str  # "done" | "failed" | "unchanged" | "would_index"
    edges: int = 0
    error: str | None = None
    chat_calls: int = 0
    embed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refined: int = 0
    dropped: int = 0  # drafted relations that did not validate or cited no valid sentence
    uncited: int = 0  # refined descriptions that cited no listed sentence (the cited one stays)
    from_main_text: bool = False  # no abstract: drafted from the opening of the main text
    self_loops: int = 0  # drafted relations whose two ends normalised to one entity (dropped)


_DOCS_LINK = re.compile(r"\s*For further information visit https?://\S+")


def one_line(error: str) -> str:
    """A paper's error as one line for the summary and the ledger: no line breaks, no links to
    a library's documentation (pydantic's)."""
    return " ".join(_DOCS_LINK.sub("", error).split())


def _add_chat(out: PaperOutcome, chat: ChatResult[Any]) -> None:
    out.chat_calls += chat.calls
    out.prompt_tokens += chat.prompt_tokens
    out.completion_tokens += chat.completion_tokens


async def index_paper(
    paper: Paper,
    llm: LLMClient,
    normalizer: Normalizer,
    opts: UpdateOptions,
    annotations: Document | None = None,
) -> tuple[PaperOutcome, list[Point], list[EdgeRef]]:
    """All LLM work for one paper; returns the points to commit (nothing is written here).
    ``annotations``: PubTator3's of this paper, which ground its names before the dictionaries.

    The model points, the program quotes: a relation's description is its cited abstract
    sentences unless stage 2 refines it, and its evidence is always sentences cut from the
    paper with their place (title, abstract or passage n) and offsets.
    """
    out = PaperOutcome(paper.paper_id, "failed")
    sentences = abstract_sentences(paper.title, paper.abstract)
    if not paper.abstract.strip() and paper.has_main_text:
        sentences += opening_sentences(paper.paragraphs)
        out.from_main_text = True
    cap = {"num_predict": opts.num_predict} if opts.num_predict else None
    draft = await draft_relations(sentences, llm, options=cap)
    _add_chat(out, draft)
    if draft.value is None:
        out.error = f"draft: {draft.error}"
        return out, [], []

    paper.study(draft.value.k)  # the design and organisms the record does not say
    relations, out.dropped = resolve_draft(
        draft.value, sentences, opts.background_threshold, findings_model=opts.findings_model
    )
    grounding = None if annotations is None else PaperGrounding(annotations, normalizer)
    edges, out.self_loops = build_edges(paper, relations, normalizer, sentences, grounding)
    if not edges:
        out.status = "done"
        return out, [], []

    descriptions = {i: e.relation.cited_text for i, e in enumerate(edges)}
    evidence = {i: list(e.relation.cited) for i, e in enumerate(edges)}
    refined: set[int] = set()

    if opts.refine and paper.has_main_text:
        # Stage 2 reads the passages, so it sees each relation named as the paper writes it
        # ("IL-8 (CXCL8) upregulated in Endometriosis"), the normalised name only where it differs.
        ref = await refine_relations(
            paper.title,
            paper.paragraphs,
            [refine_query(e.as_written, descriptions[i]) for i, e in enumerate(edges)],
            llm,
            chunk_chars=opts.chunk_chars,
            chunk_overlap=opts.chunk_overlap,
            top_k=opts.top_k,
            min_similarity=opts.min_similarity,
            options=cap,
        )
        out.embed_requests += ref.embed_requests
        if ref.chat is not None:
            _add_chat(out, ref.chat)
        if ref.error:
            out.error = f"refine: {ref.error}"
            return out, [], []
        out.uncited = ref.uncited
        descriptions.update(ref.descriptions)
        evidence.update(ref.evidence)
        refined = set(ref.descriptions)
        for i in refined:  # stated in the main text too: its sections and citations say more
            edges[i] = replace(edges[i], relation=edges[i].relation.stated_in(ref.evidence[i]))

    vectors = await llm.embed([f"{e.statement}. {descriptions[i]}" for i, e in enumerate(edges)])
    out.embed_requests += 1

    points: list[Point] = []
    refs: list[EdgeRef] = []
    for i, edge in enumerate(edges):
        point, edge_ref = edge_point(
            paper,
            edge,
            vectors[i],
            normalizer.ancestors,
            description=descriptions[i],
            description_source=REFINED if i in refined else CITED,
            evidence=[s.to_dict() for s in evidence[i]],
        )
        points.append(point)
        refs.append(edge_ref)
    out.status = "done"
    out.edges = len(points)
    out.refined = len(refined)
    return out, points, refs
