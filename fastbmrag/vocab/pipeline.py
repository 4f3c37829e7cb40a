"""The normaliser's pipeline, declared once: for each type, the steps a name goes through, in
order, each with the name ``normalize --explain`` gives it (:data:`PIPELINE`).

Every step has one signature, ``step(vocabulary, cleaned name, type, context or None)``, and
answers a hit, None (it does not apply: the next step is tried) or :data:`~fastbmrag.vocab.context.NO_ID`
(the search ends with no id). A step that reads the text is skipped without one. Two phases:

* ``main``: a definition in the text first (it beats the dictionary's reading of a short form,
  and a formula's, "warfarin (W)"), then the name as written, then what reads it otherwise;
* ``fallback``: for a disease or chemical name that is no term as written, run in order by the
  main step "the fallbacks" (and by the steps that try a rewritten name, through
  ``Vocabulary.fallback``); with no word to work on, only the first.

Around the steps, the whole name is decided (:data:`DECISIONS`, one signature
``decision(vocabulary, name as given, cleaned name, context or None) -> Normalized | None``):
``before`` the steps of any type (a coordination of diseases, one id per part), and ``after``
them where no type's steps found anything (a gene's name as written beyond the dictionary, a
gene family). :meth:`~fastbmrag.vocab.normalizer.DictionaryNormalizer.resolve` runs both, and
then gives a disease's drug-induced form and abstains from a weak part.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY, Normalized
from fastbmrag.vocab.context import Context, Hit
from fastbmrag.vocab.stages.abbreviations import (
    defined_apart,
    defined_long_form,
    expanded,
    short_form,
)
from fastbmrag.vocab.stages.completions import completed, head_of_longer, head_word, one_word_short
from fastbmrag.vocab.stages.coordinations import coordination, one_conjunct
from fastbmrag.vocab.stages.fallback import (
    a_part,
    adjective_as_noun,
    aside,
    combining,
    fallbacks,
    rewritten,
)
from fastbmrag.vocab.stages.genes import gene_as_written, gene_group
from fastbmrag.vocab.stages.sites import site
from fastbmrag.vocab.stages.written import (
    as_written,
    formula,
    formula_parts,
    misspelling,
    process_term,
)
from fastbmrag.vocab.vocabulary import Vocabulary

MAIN = "main"
FALLBACK = "fallback"
BEFORE = "before"  # whole-name decisions, before the steps of any type
AFTER = "after"  # ... and after them, where no type's steps found anything

StepFunction = Callable[[Vocabulary, str, str, "Context | None"], "Hit | None"]
DecisionFunction = Callable[[Vocabulary, str, str, "Context | None"], "Normalized | None"]


@dataclass(frozen=True, slots=True)
class Step:
    name: str  # as `normalize --explain` says it
    run: StepFunction
    phase: str = MAIN
    reads_text: bool = False  # skipped without a context text


_LONG_FORM = Step("a long form the text defines", defined_long_form, reads_text=True)
_AS_WRITTEN = Step("the name as written", as_written)
_SHORT_FORM = Step("a short form of the text", short_form, reads_text=True)
_FALLBACKS = Step("the fallbacks", fallbacks)
_MISSPELLING = Step("misspelling", misspelling)
_ASIDE = Step("the name without its aside", aside, FALLBACK)
_REWRITTEN = Step("derived forms and rewrites", rewritten, FALLBACK)
_COMPLETED = Step("a one-word completion", completed, FALLBACK)
_PART = Step("a part of the name", a_part, FALLBACK)

PIPELINE: dict[str, tuple[Step, ...]] = {
    GENE: (
        _LONG_FORM,
        _AS_WRITTEN,
        Step("short forms inside it spelt out", expanded, reads_text=True),
    ),
    DISEASE: (
        _LONG_FORM,
        _AS_WRITTEN,
        _SHORT_FORM,
        _FALLBACKS,
        _MISSPELLING,
        _ASIDE,
        _REWRITTEN,
        Step("an adjective as its noun", adjective_as_noun, FALLBACK),
        Step("one word short of a term", one_word_short, FALLBACK),
        Step("one conjunct", one_conjunct, FALLBACK),
        Step("the disease of its site", site, FALLBACK),
        _COMPLETED,
        Step("the word's most general disease", head_word, FALLBACK),
        Step("a combining form split", combining, FALLBACK),
        _PART,
        Step("the head word completed", head_of_longer, FALLBACK),
    ),
    CHEMICAL: (
        _LONG_FORM,
        Step("formula", formula),
        _AS_WRITTEN,
        _SHORT_FORM,
        Step("the parts of a formula", formula_parts),
        _FALLBACKS,
        _MISSPELLING,
        _ASIDE,
        _REWRITTEN,
        _COMPLETED,
        _PART,
    ),
    PATHWAY: (Step("the name as written", process_term),),  # a biological process: MeSH's term
}


@dataclass(frozen=True, slots=True)
class Decision:
    name: str
    run: DecisionFunction
    type: str  # run when this type is asked for (or auto)
    phase: str  # BEFORE or AFTER


def gene_family(v: Vocabulary, name: str, clean: str, ctx: Context | None) -> Normalized | None:
    """An HGNC gene group (:func:`~fastbmrag.vocab.stages.genes.gene_group`), unless the text
    defines the name as a short form whose long form shares no word with the group's name
    (a short form names what its long form names)."""
    found = gene_group(v, name, clean, ctx)
    if found is None or found.matched_by != "gene_group" or ctx is None:
        return found
    return None if defined_apart(v, clean, found.normalized_name, ctx) else found


DECISIONS: tuple[Decision, ...] = (
    Decision("a coordination of diseases", coordination, DISEASE, BEFORE),
    Decision("a gene's name as written", gene_as_written, GENE, AFTER),
    Decision("a gene family", gene_family, GENE, AFTER),
)


@functools.cache
def decisions(types: tuple[str, ...], phase: str) -> tuple[Decision, ...]:
    """The whole-name decisions of ``phase`` for a name of one of ``types``, in order."""
    return tuple(d for d in DECISIONS if d.phase == phase and d.type in types)


@functools.cache
def steps(t: str, phase: str) -> tuple[Step, ...]:
    """The steps of type ``t`` in ``phase``, in order."""
    return tuple(s for s in PIPELINE.get(t, ()) if s.phase == phase)
