"""Dictionary normaliser: genes -> HGNC, diseases -> MeSH (C tree, F03), chemicals -> MeSH (D tree).

No model, no network: lookups in the compact files built by :mod:`fastbmrag.vocab.building.compile`.
The steps of each type and their order are one table, :data:`~fastbmrag.vocab.pipeline.PIPELINE`;
``normalize --explain`` prints them as tried.

Each step is a plain function of the vocabulary with one signature (``step(v, name, type,
context) -> Hit | None``), in a module of its own kind: :mod:`~fastbmrag.vocab.tables` (the
loaded tables), :mod:`~fastbmrag.vocab.facts` (what the vocabularies say of an id),
:mod:`~fastbmrag.vocab.vocabulary` (the MeSH lookups every step makes, the context's picks),
this module (the decision), :mod:`~fastbmrag.vocab.stages.exact` (a name's exact lookups),
:mod:`~fastbmrag.vocab.stages.written` (the name as written, a biological process, formulae, a
misspelling), :mod:`~fastbmrag.vocab.stages.abbreviations` (short
forms), :mod:`~fastbmrag.vocab.stages.genes` (a gene's names: symbol, aliases, synonyms; gene
families, isoforms, coordinations of genes),
:mod:`~fastbmrag.vocab.stages.fallback` (the stages for a name that is no term as written, and the
rewrites), :mod:`~fastbmrag.vocab.stages.completions` (a name one word short of a term, a word
completed), :mod:`~fastbmrag.vocab.stages.sites` (the disease of a site),
:mod:`~fastbmrag.vocab.stages.coordinations` (several diseases in one name),
:mod:`~fastbmrag.vocab.stages.drug_induced` (drug-induced forms), :mod:`~fastbmrag.vocab.stages.parts` (a
part of the name, a misspelling) and :mod:`~fastbmrag.vocab.mentions` (names in free text).
What they share: :mod:`~fastbmrag.vocab.context` (what a text defines, a stage's hit, the
scores), :mod:`~fastbmrag.vocab.rules.keys` (text keys shared with the build),
:mod:`~fastbmrag.vocab.rules.language` (the word tables and rewrites),
:mod:`~fastbmrag.vocab.rules.chemistry` (formulae, codes, locants, salts),
:mod:`~fastbmrag.vocab.rules.phenomena` (gene names written beyond the dictionary) and
:mod:`~fastbmrag.vocab.rules.candidates` (word weights, spellings and abstention). The build:
:mod:`~fastbmrag.vocab.building.sources` (readers), :mod:`~fastbmrag.vocab.building.compile`,
:mod:`~fastbmrag.vocab.building.mesh_tables`, :mod:`~fastbmrag.vocab.building.gene_families`,
:mod:`~fastbmrag.vocab.building.download`; :mod:`~fastbmrag.vocab.loading` finds and loads them.

``matched_by`` values (how the returned id was found), with their scores, meanings and an example
each that a test normalises: :data:`~fastbmrag.vocab.context.MATCHED_BY`. A rewrite, a completion
or a part of the name is context-sensitive there: a call with a context does not reuse its
context-free result.

Before the lookup, "gene", "protein", "mRNA", "expression", "levels" words are dropped from
gene names, and plural, British spellings (anaemia, tumour, sulphate), possessives and
accents are folded on both sides. An alias or term that names several entries is resolved
from the context when exactly one candidate's symbol or name words appear in it; the
candidates are listed in ``candidates`` either way.

Context-free results are memoised per normaliser (LRU, 65,536 entries): ``normalize(name,
type)`` without context returns the same :class:`Normalized` object for a repeated name, and
calls with a context reuse the context-free lookup unless the context can change it (an
abbreviation it defines, an ambiguous or fallback match, a drug-induced form).

Types: ``gene`` (also ``protein``, ``rna``), ``disease`` (also ``disorder``, ``phenotype``,
``symptom``), ``chemical`` (also ``drug``, ``compound``, ``metabolite``), ``pathway`` (also
``process``: a biological process, MeSH's term as written or the long form the text defines for
it, "programmed cell death" -> Apoptosis; no other stage) and ``auto`` (gene, disease and
chemical, best score wins; a tie prefers an HGNC symbol, then a disease, then a chemical; a
name none of them knows is tried as a process last).
Any other type (``variant``, ``cell``, ``other`` ...) passes through cleaned, with no id.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Container, Iterable, Sequence
from typing import Any

from fastbmrag.vocab.base import CHEMICAL, DISEASE, PATHWAY, Normalized
from fastbmrag.vocab.context import (
    ALL_TYPES,
    AUTO,
    CONTEXT_SENSITIVE,
    DRUG_INDUCED_FACTOR,
    ID_FORM,
    NO_ID,
    TRACE,
    TYPE_ALIASES,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.mentions import find_mention_spans
from fastbmrag.vocab.pipeline import AFTER, BEFORE, FALLBACK, MAIN, decisions, steps
from fastbmrag.vocab.rules.candidates import withheld
from fastbmrag.vocab.rules.chemistry import formula_names
from fastbmrag.vocab.rules.keys import word_forms
from fastbmrag.vocab.rules.language import (
    AND_OR_CAPITALS,
    AND_OR_RE,
    FREE_CACHE_SIZE,
    condition_key,
    name_forms,
    organ_phrases_of,
    suffix_variants,
)
from fastbmrag.vocab.stages.drug_induced import induced_form
from fastbmrag.vocab.vocabulary import Vocabulary


class DictionaryNormalizer(Vocabulary):
    """Normalises entity names with the HGNC and MeSH dictionaries. Thread-safe after loading."""

    def __init__(self, genes: dict[str, Any], mesh: dict[str, Any], manifest: dict[str, Any]):
        super().__init__(genes, mesh, manifest)
        # Context-free results, memoised: names repeat a lot when a corpus is indexed. The
        # memos reach the normaliser through a weak reference, so that they form no cycle
        # with it: a dropped normaliser (~100 MB) is freed at once, not by a later full
        # collection of the garbage collector in the middle of someone's work.
        ref = weakref.ref(self)

        def free(name: str, type_hint: str) -> Normalized:
            return _alive(ref).resolve(name, type_hint, None)

        def match_free(clean: str, t: str) -> Hit | None:
            return _alive(ref).match_uncached(clean, t)

        self._free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(free)
        self._match_free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(match_free)

    # ---- public API ------------------------------------------------------------------------

    def normalize(self, name: str, type_hint: str = AUTO, context: str = "") -> Normalized:
        """Normalise one name. ``type_hint``: gene, disease, chemical, auto, or any other type."""
        if not context:
            return self._free(name, type_hint)
        return self.resolve(name, type_hint, self.context(context))

    def normalize_many(self, items: Iterable[tuple[str, ...] | Sequence[str]]) -> list[Normalized]:
        """Normalise ``(name,)``, ``(name, type)`` or ``(name, type, context)`` rows, in order."""
        out = []
        for row in items:
            name = row[0]
            type_hint = row[1] if len(row) > 1 and row[1] else AUTO
            context = row[2] if len(row) > 2 and row[2] else ""
            out.append(self.normalize(name, type_hint, context))
        return out

    def explain(self, name: str, type_hint: str = AUTO, context: str = "") -> list[str]:
        """The stages tried for ``name``, in order, each with what it found (no memo used)."""
        trace: list[str] = []
        token = TRACE.set(trace)
        try:
            self.resolve(name, type_hint, self.context(context) if context else None)
        finally:
            TRACE.reset(token)
        return trace

    def find_mentions(
        self, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 6,
        known: Container[str] = (),
    ) -> list[Normalized]:
        """Genes, diseases and chemicals named in free text (a question), left to right
        (:mod:`fastbmrag.vocab.mentions`); ``name`` of each result is the text as written."""
        return [n for _s, _e, n in self.find_mention_spans(text, types, max_words=max_words,
                                                           known=known)]

    def find_mention_spans(
        self, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 6,
        known: Container[str] = (),
    ) -> list[tuple[int, int, Normalized]]:
        """Like :meth:`find_mentions`, with the character span of each mention."""
        return find_mention_spans(self, text, types, max_words=max_words, known=known)

    # ---- the decision ----------------------------------------------------------------------

    def resolve(self, name: str, type_hint: str, ctx: Context | None) -> Normalized:
        """The decision: the whole-name decisions before the steps (:data:`~fastbmrag.vocab.pipeline.DECISIONS`),
        each type's match (``auto``: the best score of the three), where none matched the
        decisions after them (a gene's name as written, a family); a disease's weak part or
        one-word completion is offered, not given."""
        clean = clean_name(name)
        kind = TYPE_ALIASES.get(type_hint)  # as written, most often
        hint = type_hint if kind is not None else (type_hint or AUTO).strip().lower()
        if kind is None:
            kind = TYPE_ALIASES.get(hint)
        if not clean:
            return Normalized(name, hint, clean, None, "none", 0.0)
        if kind is None and hint != AUTO:
            return Normalized(name, hint, clean, None, "none", 0.0)
        if ID_FORM.fullmatch(clean):  # an id is looked up as one, never read as words
            hit = self.id_hit(clean.upper(), kind)
            if hit is None:
                return Normalized(name, hint, clean, None, "none", 0.0)
            return self.result(name, hit.type, hit)
        types = ALL_TYPES if kind is None else (kind,)
        for decision in decisions(types, BEFORE):
            if (whole := decision.run(self, name, clean, ctx)) is not None:
                return whole
        best: Hit | None = None
        for t in types:
            hit = self._match(clean, t, ctx)
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        if best is None:
            for decision in decisions(types, AFTER):
                if (whole := decision.run(self, name, clean, ctx)) is not None:
                    return whole
            if kind is None and (process := self._match(clean, PATHWAY, ctx)) is not None:
                return self.result(name, PATHWAY, process)  # untyped: a process as the last
            return Normalized(name, hint, clean, None, "none", 0.0)
        if withheld(best, clean):
            offered = tuple(dict.fromkeys((best.item, *best.candidates)))
            best = Hit(best.type, -1, "abstained", best.score, offered, best.via)
        return self.result(name, hint if kind is not None else best.type, best)

    def fallback(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """The fallback steps of :data:`~fastbmrag.vocab.pipeline.PIPELINE` for a name that is no
        term as written, in order: the first that finds something decides; with no word to
        work on (a word of two letters or more: "C04", "C3" are codes, whose letter names
        nothing a completion could finish), only the first."""
        fallback = steps(t, FALLBACK)
        trace = TRACE.get()
        worded = any(sum(c.isalpha() for c in w) > 1 for w in name_forms(clean)[1])
        for step in fallback if worded else fallback[:1]:
            if trace is None:
                hit = step.run(self, clean, t, ctx)
            else:  # explaining: each step of this name, not those of the names it tries
                token = TRACE.set(None)
                try:
                    hit = step.run(self, clean, t, ctx)
                finally:
                    TRACE.reset(token)
                self.tried(t, step.name, hit)
            if hit is not None:
                return hit
        return None

    def _match(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        if TRACE.get() is not None:  # explaining: every stage runs, none from the memo
            hit = self.match_uncached(clean, t, ctx)
        else:
            hit = self._match_free(_free_key(clean, t), t)
            if ctx is not None and (
                hit is None
                or hit.item < 0
                or hit.matched_by in CONTEXT_SENSITIVE
                or clean in ctx.windows
            ):
                hit = self.match_uncached(clean, t, ctx)
        if t == DISEASE and hit is not None and hit.item >= 0:
            induced = induced_form(self, clean, ctx, hit.item)
            if induced is not None and induced != hit.item:
                score = round(hit.score * DRUG_INDUCED_FACTOR, 3)
                return Hit(t, induced, "drug_induced", score, (), self.descriptor(hit.item).name)
        return hit

    def match_uncached(self, clean: str, t: str, ctx: Context | None = None) -> Hit | None:
        """The main steps of :data:`~fastbmrag.vocab.pipeline.PIPELINE` for one type, in order:
        the first hit wins, and a step may end the search with no id (:data:`NO_ID`). Steps
        that read the text are skipped without one."""
        for step in steps(t, MAIN):
            if step.reads_text and ctx is None:
                continue
            hit = step.run(self, clean, t, ctx)
            if hit is NO_ID:
                return None
            if self.tried(t, step.name, hit) is not None:
                return hit
        return None


def _free_key(clean: str, t: str) -> str:
    """The key of the context-free memo: the name in lower case where case cannot change the
    context-free match ("Renal failure" = "renal failure"): ASCII, no formula ("Ca2+", "Ca(2+)
    channel blockers") for a chemical, and "and"/"or" already in lower case where written as words
    (coordination is split on the lower-case words only)."""
    if not clean.isascii():
        return clean
    low = clean.lower()
    if low == clean:
        return clean
    if t == CHEMICAL and formula_names(clean):
        return clean
    if not AND_OR_CAPITALS.isdisjoint(clean) and any(
        not m.islower() for m in AND_OR_RE.findall(clean)
    ):
        return clean
    return low


def _alive(ref: weakref.ReferenceType[DictionaryNormalizer]) -> DictionaryNormalizer:
    norm = ref()
    if norm is None:  # only a memo kept past its normaliser could get here
        raise ReferenceError("the normaliser of this memo is gone")
    return norm


def clear_caches() -> None:
    """Empty the per-process word and name memos (for benchmarks that start cold)."""
    for cached in (word_forms, condition_key, suffix_variants, name_forms, organ_phrases_of):
        cached.cache_clear()
