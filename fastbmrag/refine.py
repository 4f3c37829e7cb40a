"""Stage 2: refine every relation of a paper from its most similar main-text chunks.

One embedding request (all chunks + one query per relation, batched), numpy
cosine similarity, then ONE chat call for all relations of the paper.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastbmrag.llm.base import KIND_EMBED, KIND_REFINE, ChatResult, LLMClient
from fastbmrag.prompts import Refinement, refine_messages

# Defaults, documented in README ("Indexing"): ~300 tokens per chunk keeps the refine prompt of
# a 10-relation paper (<= 30 chunks, most shared) well inside an 8k context.
CHUNK_CHARS = 1200
CHUNK_OVERLAP = 150
TOP_K = 3
MIN_SIMILARITY = 0.35
# Completion cap for the refine call: ~80 tokens per relation for 20 relations.
REFINE_NUM_PREDICT = 2400

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def _split_long(text: str, max_chars: int, overlap: int) -> list[str]:
    """Split one long paragraph at sentence ends where possible, with ``overlap`` chars repeated."""
    pieces: list[str] = []
    start = 0
    n = len(text)
    while start < n:
        end = min(start + max_chars, n)
        if end < n:
            window = text[start:end]
            cut = max((m.end() for m in _SENTENCE_END.finditer(window)), default=0)
            if cut > max_chars // 2:
                end = start + cut
            else:  # no sentence end in the second half: cut at a space
                space = window.rfind(" ")
                if space > max_chars // 2:
                    end = start + space
        pieces.append(text[start:end].strip())
        if end >= n:
            break
        start = max(end - overlap, start + 1)
        # begin the overlap at a word boundary
        space = text.find(" ", start, end)
        if 0 <= space < end - 1:
            start = space + 1
    return [p for p in pieces if p]


def chunk_paragraphs(
    paragraphs: list[str], max_chars: int = CHUNK_CHARS, overlap: int = CHUNK_OVERLAP
) -> list[str]:
    """Pack consecutive short paragraphs into chunks of at most ``max_chars``;
    split a longer paragraph into overlapping pieces."""
    if overlap >= max_chars:
        raise ValueError("chunk overlap must be smaller than the chunk size")
    chunks: list[str] = []
    current = ""
    for para in paragraphs:
        para = " ".join(para.split())
        if not para:
            continue
        if len(para) > max_chars:
            if current:
                chunks.append(current)
                current = ""
            chunks.extend(_split_long(para, max_chars, overlap))
        elif current and len(current) + 1 + len(para) > max_chars:
            chunks.append(current)
            current = para
        else:
            current = f"{current}\n{para}" if current else para
    if current:
        chunks.append(current)
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


@dataclass
class RefineOutcome:
    """What stage 2 produced for a paper."""

    descriptions: dict[int, str] = field(default_factory=dict)  # relation index -> refined text
    evidence: dict[int, str] = field(default_factory=dict)  # relation index -> quote from a chunk
    chunks_used: dict[int, list[int]] = field(default_factory=dict)  # relation index -> chunk ids
    chunks: list[str] = field(default_factory=list)
    chat: ChatResult[Refinement] | None = None
    embed_requests: int = 0

    @property
    def error(self) -> str | None:
        return self.chat.error if self.chat is not None and not self.chat.ok else None


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
    """``statements[i]`` is relation i as text ("src rel tgt: draft description")."""
    out = RefineOutcome(chunks=chunk_paragraphs(paragraphs, chunk_chars, chunk_overlap))
    if not out.chunks or not statements:
        return out
    vectors = await llm.embed(out.chunks + statements, kind=KIND_EMBED)
    out.embed_requests = 1
    chunk_vecs, query_vecs = vectors[: len(out.chunks)], vectors[len(out.chunks) :]
    selection = select_chunks(chunk_vecs, query_vecs, top_k, min_similarity)

    # Passages are numbered in order of first use; a chunk shared by relations is sent once.
    passage_no: dict[int, int] = {}
    rel_lines: list[tuple[int, str, list[int]]] = []
    for i, picks in enumerate(selection):
        if not picks:
            continue  # nothing similar enough: the draft description stays
        ids = [c for c, _ in picks]
        out.chunks_used[i] = ids
        for c in ids:
            passage_no.setdefault(c, len(passage_no) + 1)
        rel_lines.append((i + 1, statements[i], [passage_no[c] for c in ids]))
    if not rel_lines:
        return out

    passages = [(n, out.chunks[c]) for c, n in passage_no.items()]
    opts = {"temperature": 0, "num_predict": REFINE_NUM_PREDICT}
    opts.update(options or {})
    out.chat = await llm.chat(
        refine_messages(title, passages, rel_lines), Refinement, kind=KIND_REFINE, options=opts
    )
    if out.chat.value is None:
        return out
    for item in out.chat.value.r:
        i = item.i - 1
        if i in out.chunks_used:  # ignore numbers the prompt did not ask about
            out.descriptions[i] = " ".join(item.desc.split())
            if item.ev:
                out.evidence[i] = item.ev
    return out
