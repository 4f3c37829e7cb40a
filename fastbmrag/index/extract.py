"""Stage 1: draft a paper's relations from its title and abstract (one chat call).

The model lists entities and relations and cites sentence numbers (a sentence that restates what
was known as its negative number); :func:`resolve_draft` turns the answer into :class:`Relation`
records whose cited sentences are cut from the paper, each a finding of the paper or background
(:mod:`fastbmrag.text.findings`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fastbmrag import config
from fastbmrag.llm.base import KIND_EXTRACT, ChatResult, LLMClient
from fastbmrag.prompts import Draft, extract_messages
from fastbmrag.text.findings import (
    BACKGROUND,
    CLASSIFIER,
    FINDING,
    UNMARKED,
    named_as_known,
    relation_role,
    sentence_roles,
)
from fastbmrag.text.novelty import Pair, load_model
from fastbmrag.text.sentences import Sentence

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Relation:
    """One drafted relation: names as the model wrote them, and the sentences that state it."""

    src: str
    src_type: str
    rel: str
    tgt: str
    tgt_type: str
    cited: tuple[Sentence, ...]
    finding: str = FINDING  # or "background": the paper restates it (text.findings)
    finding_from: str = UNMARKED  # "text", "model", or "" (neither said: taken as a finding)
    said: tuple[str, ...] = ()  # the role each sentence stating it gives it (text.findings)
    marked: bool | None = None  # the model's mark: True restated, False its own, None neither
    background_p: float | None = None  # the findings model's probability (text.novelty)

    @property
    def cited_text(self) -> str:
        """The cited sentences, verbatim, in paper order: an abstract-only description."""
        return " ".join(s.text for s in self.cited)

    def stated_in(self, sentences: Sequence[Sentence]) -> Relation:
        """This relation, also stated in ``sentences`` (stage 2's evidence from the main text,
        with its sections and citations): its role decided again from all of them."""
        more = _said(sentences, sentence_roles(sentences), self.src, self.tgt)
        said = self.said + more
        if self.finding_from == CLASSIFIER and FINDING not in more:
            return replace(self, said=said)  # the abstract's call stands: the main text agrees
        finding, finding_from = relation_role(said, self.marked)
        return replace(self, said=said, finding=finding, finding_from=finding_from)


def _said(
    sentences: Sequence[Sentence], roles: Sequence[str], src: str, tgt: str
) -> tuple[str, ...]:
    """The role each of ``sentences`` gives the relation of ``src`` and ``tgt``: its own, or
    background where it names the relation inside a noun phrase."""
    return tuple(
        BACKGROUND if named_as_known(s.text, src, tgt) else role
        for s, role in zip(sentences, roles, strict=True)
    )


async def draft_relations(
    sentences: list[Sentence], llm: LLMClient, *, options: dict[str, Any] | None = None
) -> ChatResult[Draft]:
    """One structured chat call over the numbered title + abstract (none for an empty one)."""
    if not sentences:
        return ChatResult(value=Draft())
    opts: dict[str, Any] = {"temperature": 0, "num_predict": config.DEFAULT_DRAFT_NUM_PREDICT}
    opts.update(options or {})
    return await llm.chat(
        extract_messages([s.text for s in sentences]), Draft, kind=KIND_EXTRACT, options=opts
    )


def squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def resolve_draft(
    draft: Draft,
    sentences: list[Sentence],
    background_threshold: float | None = None,
    *,
    findings_model: bool = True,
) -> tuple[list[Relation], int]:
    """The draft's relations with their names cleaned and their citations resolved, each a
    finding or background: by the findings model where it is installed (``finding_from``
    "classifier"; at or above ``background_threshold``, else the model's own threshold,
    background), else (or without ``findings_model``) by the text's cues and the model's mark.

    Returns (relations, dropped): a relation is dropped, and counted with those the schema
    validation already dropped, when none of its sentence numbers is one of ``sentences``.
    Relations whose ends are blank or the same name are left out silently (not an error).
    """
    entities = {e.i: e for e in draft.e}
    dropped = draft.dropped
    roles = sentence_roles(sentences)
    out: list[Relation] = []
    for rel in draft.r:
        src, tgt = entities[rel.s], entities[rel.o]
        cited = sorted({abs(n) for n in rel.c if 1 <= abs(n) <= len(sentences)})
        if not cited:
            dropped += 1
            continue
        src_name, tgt_name = squash(src.n), squash(tgt.n)
        if not src_name or not tgt_name or src_name.casefold() == tgt_name.casefold():
            continue
        signs = {n < 0 for n in rel.c if 1 <= abs(n) <= len(sentences)}
        marked = next(iter(signs)) if len(signs) == 1 else None  # all negative: restated
        stating = tuple(sentences[n - 1] for n in cited)
        said = _said(stating, [roles[n - 1] for n in cited], src_name, tgt_name)
        finding, finding_from = relation_role(said, marked)
        out.append(
            Relation(
                src_name, src.t, rel.r, tgt_name, tgt.t, stating, finding, finding_from, said,
                marked,
            )
        )  # fmt: skip
    return (classified(out, sentences, background_threshold) if findings_model else out), dropped


def classified(
    relations: list[Relation], sentences: Sequence[Sentence], threshold: float | None = None
) -> list[Relation]:
    """``relations`` with the findings model's call (:mod:`fastbmrag.text.novelty`), where it is
    installed; as they are where it is not."""
    model = load_model()
    if model is None or not relations:
        return relations
    at = {id(s): i for i, s in enumerate(sentences)}
    pairs = [Pair((r.src,), (r.tgt,), r.src_type, r.tgt_type,
                  tuple(at[id(s)] for s in r.cited if id(s) in at)) for r in relations]  # fmt: skip
    cut = model.threshold if threshold is None else threshold
    return [
        replace(r, finding=BACKGROUND if p >= cut else FINDING, finding_from=CLASSIFIER,
                background_p=round(p, 4))  # fmt: skip
        for r, p in zip(relations, model.probabilities(sentences, pairs), strict=True)
    ]
