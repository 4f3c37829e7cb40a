"""Stage 2: refine every relation of a paper from its most similar main-text chunks.

The main text is split into sentences (fastbmrag.text.sentences) and packed into chunks of whole
sentences. One embedding request (all chunks + one query per relation), numpy cosine
similarity, then ONE chat call for all relations of the paper: the chosen chunks are sent as
numbered sentences grouped by passage, and the model writes each refined description citing
those numbers inline ("... [12][14]"). The cited sentences become the evidence, cut from the
paper; the markers are stripped from the stored description.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastbmrag import config
from fastbmrag.llm.base import KIND_EMBED, KIND_REFINE, ChatResult, LLMClient
from fastbmrag.prompts import Refinement, refine_messages
from fastbmrag.text import citations
from fastbmrag.text.sentences import Sentence, passage_sentences


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive sentences of the main text, embedded and retrieved together."""

    sentences: tuple[Sentence, ...]

    @property
    def text(self) -> str:
        return " ".join(" ".join(s.text.split()) for s in self.sentences)


def chunk_paragraphs(
    paragraphs: list[str],
    max_chars: int = config.DEFAULT_CHUNK_CHARS,
    overlap: int = config.DEFAULT_CHUNK_OVERLAP,
) -> list[Chunk]:
    """Pack consecutive paragraphs into chunks of at most ``max_chars``, cutting only a
    paragraph longer than that, and only between sentences (a single longer sentence is a chunk
    of its own). Where a paragraph continues into the next chunk, its last sentences up to ``overlap`` characters
    are repeated, so a statement that spans the cut is found from either side.
    """
    if overlap >= max_chars:
        raise ValueError("chunk overlap must be smaller than the chunk size")
    chunks: list[Chunk] = []
    current: list[Sentence] = []
    size = 0
    for number, paragraph in enumerate(paragraphs, 1):
        sentences = passage_sentences(number, paragraph)
        whole = sum(len(" ".join(s.text.split())) + 1 for s in sentences) - 1
        if current and whole <= max_chars and size + 1 + whole > max_chars:
            chunks.append(Chunk(tuple(current)))  # a paragraph that fits a chunk is not cut
            current, size = [], 0
        for sent in sentences:
            length = len(" ".join(sent.text.split()))
            if current and size + 1 + length > max_chars:
                chunks.append(Chunk(tuple(current)))
                carried: list[Sentence] = []
                kept = 0
                for prev in reversed(current):
                    if prev.passage != number or kept + len(prev.text) > overlap:
                        break
                    carried.insert(0, prev)
                    kept += len(prev.text) + 1
                current, size = carried, max(kept - 1, 0)
            current.append(sent)
            size += length + (1 if size else 0)
    if current:
        chunks.append(Chunk(tuple(current)))
    return chunks


def select_chunks(
    chunk_vectors: np.ndarray,
    query_vectors: np.ndarray,
    top_k: int = config.DEFAULT_REFINE_TOP_K,
    min_similarity: float = config.DEFAULT_MIN_SIMILARITY,
) -> list[list[tuple[int, float]]]:
    """For each query, the ``top_k`` chunks by cosine similarity that reach ``min_similarity``."""
    if len(chunk_vectors) == 0 or len(query_vectors) == 0:
        return [[] for _ in range(len(query_vectors))]
    c = chunk_vectors / np.maximum(np.linalg.norm(chunk_vectors, axis=1, keepdims=True), 1e-12)
    q = query_vectors / np.maximum(np.linalg.norm(query_vectors, axis=1, keepdims=True), 1e-12)
    sims = q @ c.T
    k = min(top_k, sims.shape[1])
    picked: list[list[tuple[int, float]]] = []
    for row in sims:
        idx = np.argpartition(-row, k - 1)[:k]
        idx = idx[np.argsort(-row[idx], kind="stable")]
        picked.append([(int(i), float(row[i])) for i in idx if row[i] >= min_similarity])
    return picked


@dataclass
class RefineOutcome:
    """What stage 2 produced for a paper."""

    descriptions: dict[int, str] = field(default_factory=dict)  # relation index -> refined text
    evidence: dict[int, list[Sentence]] = field(default_factory=dict)  # ... -> cited sentences
    uncited: int = 0  # refined descriptions dropped because they cited no listed sentence
    chunks: list[Chunk] = field(default_factory=list)
    chat: ChatResult[Refinement] | None = None
    embed_requests: int = 0

    @property
    def error(self) -> str | None:
        return self.chat.error if self.chat is not None and not self.chat.ok else None


def refine_query(statement: str, cited_text: str) -> str:
    """A relation as stage 2 sees it: the text that finds its chunks and heads its prompt line."""
    return f'{statement}. Abstract: "{cited_text}"'


@dataclass
class RefinePrompt:
    messages: list[dict[str, str]]
    numbered: dict[int, Sentence]  # sentence number in the prompt -> the sentence
    asked: list[int]  # relation indexes the prompt asks about (relation number = index + 1)


def refine_prompt(
    title: str,
    chunks: list[Chunk],
    selection: list[list[tuple[int, float]]],
    queries: list[str],
) -> RefinePrompt | None:
    """The stage-2 prompt for the relations that found chunks (None when none did).

    Every sentence of a chosen chunk is sent once, in paper order, grouped by passage, and
    numbered 1..n across the prompt; a relation lists the passages of its own chunks.
    """
    chosen: dict[tuple[int, int], Sentence] = {}
    asked: dict[int, list[str]] = {}
    for i, picks in enumerate(selection):
        if not picks:
            continue  # nothing similar enough: the cited description stays
        heads: dict[int, None] = {}
        for c, _ in picks:
            for sent in chunks[c].sentences:
                chosen[(sent.passage or 0, sent.start)] = sent
                heads[sent.passage or 0] = None
        asked[i] = [f"P{n}" for n in sorted(heads)]
    if not asked:
        return None
    numbered: dict[int, Sentence] = {}
    passages: list[tuple[str, list[tuple[int, str]]]] = []
    for key in sorted(chosen):
        sent = chosen[key]
        heading = f"P{sent.passage} ({sent.section})" if sent.section else f"P{sent.passage}"
        if not passages or passages[-1][0] != heading:
            passages.append((heading, []))
        numbered[len(numbered) + 1] = sent
        passages[-1][1].append((len(numbered), sent.text))
    rel_lines = [(i + 1, queries[i], heads) for i, heads in asked.items()]
    return RefinePrompt(refine_messages(title, passages, rel_lines), numbered, list(asked))


async def refine_relations(
    title: str,
    paragraphs: list[str],
    queries: list[str],
    llm: LLMClient,
    *,
    chunk_chars: int = config.DEFAULT_CHUNK_CHARS,
    chunk_overlap: int = config.DEFAULT_CHUNK_OVERLAP,
    top_k: int = config.DEFAULT_REFINE_TOP_K,
    min_similarity: float = config.DEFAULT_MIN_SIMILARITY,
    options: dict[str, Any] | None = None,
) -> RefineOutcome:
    """``queries[i]`` is relation i as :func:`refine_query` writes it."""
    out = RefineOutcome(chunks=chunk_paragraphs(paragraphs, chunk_chars, chunk_overlap))
    if not out.chunks or not queries:
        return out
    vectors = await llm.embed([c.text for c in out.chunks] + queries, kind=KIND_EMBED)
    out.embed_requests = 1
    chunk_vecs, query_vecs = vectors[: len(out.chunks)], vectors[len(out.chunks) :]
    selection = select_chunks(chunk_vecs, query_vecs, top_k, min_similarity)
    prompt = refine_prompt(title, out.chunks, selection, queries)
    if prompt is None:
        return out
    opts = {"temperature": 0, "num_predict": config.DEFAULT_REFINE_NUM_PREDICT}
    opts.update(options or {})
    out.chat = await llm.chat(prompt.messages, Refinement, kind=KIND_REFINE, options=opts)
    if out.chat.value is None:
        return out
    for item in out.chat.value.r:
        i = item.i - 1
        if i not in prompt.asked or i in out.descriptions:  # a number the prompt did not ask
            continue
        text, cited = citations.strip(item.d)
        evidence = [prompt.numbered[n] for n in cited if n in prompt.numbered]
        if not text or not evidence:
            out.uncited += 1  # an unsupported description is worse than the cited sentences
            continue
        out.descriptions[i] = text
        out.evidence[i] = sorted(evidence, key=lambda s: (s.passage or 0, s.start))
    return out
