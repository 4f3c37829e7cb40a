"""The answer: retrieved edges as numbered evidence items, one answer call (or a map-reduce over
groups of items), citations checked, references and the papers' agreement per entity pair."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastbmrag.errors import LLMError
from fastbmrag.graph.consensus import consensus, stating
from fastbmrag.llm.base import KIND_QUERY, LLMClient
from fastbmrag.papers.design import by_design
from fastbmrag.prompts import (
    Answer,
    PartialAnswer,
    answer_messages,
    merge_messages,
    partial_messages,
)
from fastbmrag.query.options import QueryOptions
from fastbmrag.query.result import REFERENCE_FIELDS, EdgeResult, study_of
from fastbmrag.store.payload import evidence_of
from fastbmrag.text import citations
from fastbmrag.text.citations import unreferenced
from fastbmrag.text.findings import BACKGROUND
from fastbmrag.util.wording import counted, option_named

MERGE_FANIN = 12  # partial answers merged per call
DESCRIPTION_CHARS = 700  # per evidence item in a prompt
UNCITED = "[uncited]"  # after an answer sentence that cites no evidence item


def evidence_line(item: EdgeResult) -> str:
    edge = item.edge
    desc = unreferenced(str(edge.description or ""))[:DESCRIPTION_CHARS]
    marks = "".join(
        f"({mark}) "
        for mark, on in (("from a RETRACTED paper", edge.retracted),
                         ("BACKGROUND: the paper cites this as known, not its own result",
                          edge.finding == BACKGROUND))
        if on
    )  # fmt: skip
    line = f"[{item.n}] {marks}{item.statement}: {desc}"
    quotes = [unreferenced(str(e["text"])) for e in evidence_of(item.payload)]
    if quotes and " ".join(quotes) != desc:  # a cited description is its own evidence
        line += f' Quote: "{" ".join(quotes)[:DESCRIPTION_CHARS]}"'
    paper = [str(edge.title or edge.paper_id or "")]
    paper += [str(v) for v in (edge.journal, edge.year) if v]
    if edge.pmid:
        paper.append(f"PMID {edge.pmid}")
    study = study_of(edge)
    paper.append(f"Design: {study}" if study else "Design: unknown")
    return line + f" (Paper: {'; '.join(x for x in paper if x)})"


def _pairs(edges: list[EdgeResult], item: str) -> list[dict[str, Any]]:
    """Consensus of the edges per (source, target) pair; items are evidence numbers ("n") or
    paper ids ("paper")."""
    names = {}
    rows = []
    for e in edges:
        edge = e.edge
        s, t = str(edge.source_key or edge.source), str(edge.target_key or edge.target)
        names[s], names[t] = edge.source, edge.target
        rows.append((s, str(edge.relationship_type), t,
                     e.n if item == "n" else edge.paper_id, edge.finding == BACKGROUND))  # fmt: skip
    out = consensus(rows)
    for pair in out:
        pair["source_name"], pair["target_name"] = names[pair["source"]], names[pair["target"]]
    return out


def agreement_lines(edges: list[EdgeResult]) -> list[str]:
    """For the answer prompt: each pair stated by more than one item, with its relationship
    types, the items that found each and those that cite it as known (counted apart), and
    whether papers disagree."""
    lines = []
    for pair in _pairs(edges, "n"):
        sides = stating(pair)
        if sum(len(v) for v in sides.values()) < 2:
            continue
        parts = []
        for rel, found in pair["relations"].items():
            cited = pair["cited"].get(rel, [])
            said = [f"in {counted(len(ns), 'item')} " + "".join(f"[{n}]" for n in ns)
                    for ns in (found, cited) if ns]  # fmt: skip
            said[-1] = "cited as known " + said[-1] if cited else said[-1]
            parts.append(f"{rel.replace('_', ' ')} {', '.join(said)}")
        verdict = "papers disagree" if pair["conflict"] else "papers agree"
        lines.append(
            f"{pair['source_name']} -> {pair['target_name']}: {'; '.join(parts)} ({verdict})"
        )
    return lines


def consensus_of(edges: list[EdgeResult]) -> list[dict[str, Any]]:
    """For the JSON: per pair, the relationship types with the papers that found them and those
    that cite them (``cited``), ``conflict``, and the papers counted by study design
    ("unknown": no label)."""
    design = {str(e.edge.paper_id): str(e.edge.design or "") for e in edges}
    out = []
    for p in _pairs(edges, "paper"):
        papers = {pid for ps in stating(p).values() for pid in ps}
        counts = by_design(design.get(pid, "") for pid in papers)
        out.append(
            {"source": p["source_name"], "source_key": p["source"], "target": p["target_name"],
             "target_key": p["target"], "relations": p["relations"], "cited": p["cited"],
             "conflict": p["conflict"], "papers_by_design": counts}
        )  # fmt: skip
    return out


def references_for(edges: list[EdgeResult], cited: list[int]) -> list[dict[str, Any]]:
    """One reference per cited paper, in order of first citation, listing its evidence numbers."""
    by_n = {e.n: e for e in edges}
    refs: dict[str, dict[str, Any]] = {}
    for k in cited:
        item = by_n[k]
        item.cited = True
        edge = item.edge
        pid = str(edge.paper_id)
        ref = refs.get(pid)
        if ref is None:
            ref = {f: getattr(edge, f) or None for f in REFERENCE_FIELDS}
            ref["paper_id"] = pid
            ref["retracted"] = bool(edge.retracted)
            ref["design"] = edge.design or None
            ref["organisms"] = list(edge.organisms or [])
            ref["study"] = study_of(edge)
            ref["citations"] = []
            refs[pid] = ref
        ref["citations"].append(k)
    for ref in refs.values():
        ref["citations"].sort()
    return list(refs.values())


@dataclass
class Calls:
    chat: int = 0
    failed: int = 0


async def synthesize(
    question: str,
    edges: list[EdgeResult],
    llm: LLMClient,
    options: QueryOptions,
    calls: Calls,
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
    calls: Calls,
    *,
    final: bool = False,
) -> str:
    result = await llm.chat(messages, schema, kind=KIND_QUERY, model=model)
    calls.chat += result.calls
    if result.value is None:
        calls.failed += 1
        what = "answer" if final else "summarising"
        raise LLMError(
            f"The {what} call failed: {result.error}; retry, or use {option_named('no_answer')}"
        )
    return result.value.answer


def check_answer(text: str) -> tuple[str, list[str]]:
    """Mark every sentence of an answer that cites no evidence; returns (text, those sentences)."""
    from fastbmrag.text.sentences import split_spans

    uncited: list[str] = []
    out: list[str] = []
    pos = 0
    for start, end, _ in split_spans(text):
        sentence = text[start:end]
        out.append(text[pos:end])
        pos = end
        if not citations.has_citation(sentence):
            uncited.append(sentence)
            out.append(" " + UNCITED)
    out.append(text[pos:])
    return "".join(out), uncited
