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

Around the steps, :meth:`~fastbmrag.vocab.normalizer.DictionaryNormalizer.resolve` decides: a
coordination of diseases before them, a gene's name as written or its family after, a
drug-induced form and the abstention from a weak part last.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY
from fastbmrag.vocab.context import Context, Hit
from fastbmrag.vocab.stages.abbreviations import defined_long_form, expanded, short_form
from fastbmrag.vocab.stages.completions import completed, head_of_longer, head_word, one_word_short
from fastbmrag.vocab.stages.coordinations import one_conjunct
from fastbmrag.vocab.stages.fallback import (
    a_part,
    adjective_as_noun,
    aside,
    combining,
    fallbacks,
    rewritten,
)
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

StepFunction = Callable[[Vocabulary, str, str, "Context | None"], "Hit | None"]


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


@functools.cache
def steps(t: str, phase: str) -> tuple[Step, ...]:
    """The steps of type ``t`` in ``phase``, in order."""
    return tuple(s for s in PIPELINE.get(t, ()) if s.phase == phase)
