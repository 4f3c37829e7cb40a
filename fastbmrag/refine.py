"""Stage 2: refine every relation of a paper from its most similar main-text chunks.

The main text is split into sentences (fastbmrag.sentences) and packed into chunks of whole
sentences. One embedding request (all chunks + one query per relation), numpy cosine
similarity, then ONE chat call for all relations of the paper: the chosen chunks are sent as
numbered sentences grouped by passage, and the model writes each refined description citing
those numbers inline ("... [12][14]"). The cited sentences become the evidence, cut from the
paper; the markers are stripped from the stored description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastbmrag.llm.base import KIND_EMBED, KIND_REFINE, ChatResult, LLMClient
from fastbmrag.prompts import Refinement, refine_messages
from fastbmrag.sentences import Sentence, passage_sentences

# Defaults, documented in README ("Indexing"): ~300 tokens per chunk keeps the refine prompt of
# a 10-relation paper (<= 30 chunks, most shared) well inside an 8k context.
CHUNK_CHARS = 1200
CHUNK_OVERLAP = 150
TOP_K = 3
MIN_SIMILARITY = 0.35
# Completion cap for the refine call: ~80 tokens per relation for 20 relations.
REFINE_NUM_PREDICT = 2400

# One or more inline citations: "[12]", "[12][14]", "[12, 14]", "[12-14]".
_CITATIONS = re.compile(r"\s*(?:\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\])+")
_NUMBER_RANGE = re.compile(r"(\d+)\s*[\u2013-]\s*(\d+)|(\d+)")


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive sentences of the main text, embedded and retrieved together."""

    sentences: tuple[Sentence, ...]

    @property
    def text(self) -> str:
        return " ".join(" ".join(s.text.split()) for s in self.sentences)


def chunk_paragraphs(
    paragraphs: list[str], max_chars: int = CHUNK_CHARS, overlap: int = CHUNK_OVERLAP
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
    top_k: int = TOP_K,
    min_similarity: float = MIN_SIMILARITY,
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


def split_citations(text: str) -> tuple[str, list[int]]:
    """A description without its inline [n] markers, and the cited numbers in order of use."""
    cited: dict[int, None] = {}
    for group in _CITATIONS.finditer(text):
        for m in _NUMBER_RANGE.finditer(group.group(0)):
            if m.group(3):
                cited[int(m.group(3))] = None
            else:
                lo, hi = int(m.group(1)), int(m.group(2))
                for n in range(lo, min(hi, lo + 20) + 1):
                    cited[n] = None
    clean = _CITATIONS.sub("", text)
    clean = re.sub(r"\s+([.,;:)])", r"\1", clean)
    return " ".join(clean.split()), list(cited)


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


def _heading(sent: Sentence) -> str:
    return f"P{sent.passage} ({sent.section})" if sent.section else f"P{sent.passage}"


async def refine_relations(
    title: str,
    paragraphs: list[str],
    statements: list[str],
    llm: LLMClient,
    *,
    chunk_chars: int = CHUNK_CHARS,
    chunk_overlap: int = CHUNK_OVERLAP,
    top_k: int = TOP_K,
    min_similarity: float = MIN_SIMILARITY,
    options: dict[str, Any] | None = None,
) -> RefineOutcome:
    """``statements[i]`` is relation i as text: "src rel tgt", then its cited abstract sentences."""
    out = RefineOutcome(chunks=chunk_paragraphs(paragraphs, chunk_chars, chunk_overlap))
    if not out.chunks or not statements:
        return out
    vectors = await llm.embed([c.text for c in out.chunks] + statements, kind=KIND_EMBED)
    out.embed_requests = 1
    chunk_vecs, query_vecs = vectors[: len(out.chunks)], vectors[len(out.chunks) :]
    selection = select_chunks(chunk_vecs, query_vecs, top_k, min_similarity)

    # Every sentence of a chosen chunk is sent once, in paper order, grouped by passage, and
    # numbered 1..n across the prompt; a relation lists the passages of its own chunks.
    chosen: dict[tuple[int | None, int], Sentence] = {}
    asked: dict[int, list[str]] = {}
    for i, picks in enumerate(selection):
        if not picks:
            continue  # nothing similar enough: the cited description stays
        heads: dict[str, None] = {}
        for c, _ in picks:
            for sent in out.chunks[c].sentences:
                chosen[(sent.passage, sent.start)] = sent
                heads[f"P{sent.passage}"] = None
        asked[i] = sorted(heads, key=lambda h: int(h[1:]))
    if not asked:
        return out

    numbered: dict[int, Sentence] = {}
    passages: list[tuple[str, list[tuple[int, str]]]] = []
    for key in sorted(chosen, key=lambda k: (k[0] or 0, k[1])):
        sent = chosen[key]
        heading = _heading(sent)
        if not passages or passages[-1][0] != heading:
            passages.append((heading, []))
        numbered[len(numbered) + 1] = sent
        passages[-1][1].append((len(numbered), sent.text))
    rel_lines = [(i + 1, statements[i], heads) for i, heads in asked.items()]
    opts = {"temperature": 0, "num_predict": REFINE_NUM_PREDICT}
    opts.update(options or {})
    out.chat = await llm.chat(
        refine_messages(title, passages, rel_lines), Refinement, kind=KIND_REFINE, options=opts
    )
    if out.chat.value is None:
        return out
    for item in out.chat.value.r:
        i = item.i - 1
        if i not in asked or i in out.descriptions:  # a number the prompt did not ask about
            continue
        text, cited = split_citations(item.d)
        evidence = [numbered[n] for n in cited if n in numbered]
        if not text or not evidence:
            out.uncited += 1  # an unsupported description is worse than the cited sentences
            continue
        out.descriptions[i] = text
        out.evidence[i] = sorted(evidence, key=lambda s: (s.passage or 0, s.start))
    return out
