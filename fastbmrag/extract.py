"""Stage 1: draft a paper's relations from its title and abstract (one chat call)."""

from __future__ import annotations

import re
from typing import Any

from fastbmrag.llm.base import KIND_EXTRACT, ChatResult, LLMClient
from fastbmrag.papers.model import Paper
from fastbmrag.prompts import Draft, DraftRelation, extract_messages

# Completion cap for the draft: 20 relations of ~60 tokens each, plus slack.
DRAFT_NUM_PREDICT = 1600

_SPACE = re.compile(r"\s+")


async def draft_relations(
    paper: Paper, llm: LLMClient, *, options: dict[str, Any] | None = None
) -> ChatResult[Draft]:
    """One structured chat call over title + abstract (no call for an empty abstract)."""
    if not paper.abstract.strip() and not paper.title.strip():
        return ChatResult(value=Draft(r=[]))
    opts = {"temperature": 0, "num_predict": DRAFT_NUM_PREDICT}
    opts.update(options or {})
    return await llm.chat(
        extract_messages(paper.title, paper.abstract), Draft, kind=KIND_EXTRACT, options=opts
    )


def squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def verbatim(quote: str, *texts: str) -> str:
    """``quote`` when it occurs in one of ``texts`` (ignoring case and spacing), else "".

    Models paraphrase when asked to quote; an evidence field must be a real quote.
    """
    q = squash(quote).strip(" \"'“”.").casefold()
    if len(q) < 8:
        return ""
    for text in texts:
        if q in squash(text).casefold():
            return squash(quote).strip(" \"'“”")
    return ""


def clean_draft(draft: Draft) -> list[DraftRelation]:
    """Strip names and drop relations whose ends are blank or identical."""
    out: list[DraftRelation] = []
    for rel in draft.r:
        src, tgt = squash(rel.src), squash(rel.tgt)
        if not src or not tgt or src.casefold() == tgt.casefold():
            continue
        out.append(rel.model_copy(update={"src": src, "tgt": tgt, "desc": squash(rel.desc)}))
    return out
