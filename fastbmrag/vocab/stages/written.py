"""The steps of a name as written: the name itself (unless the text disowns it), a biological
process's term, a chemical formula written as its names, a formula's parts, a misspelling."""

from __future__ import annotations

from fastbmrag.vocab.base import PATHWAY
from fastbmrag.vocab.context import (
    ABBREVIATION_FACTOR,
    AMBIGUOUS_SCORE,
    FORMULA_SCORE,
    MESH_MATCHED,
    MESH_SCORES,
    NO_ID,
    Context,
    Hit,
)
from fastbmrag.vocab.rules.chemistry import formula_names, is_formula
from fastbmrag.vocab.rules.keys import term_key
from fastbmrag.vocab.stages.abbreviations import disowned
from fastbmrag.vocab.stages.exact import direct
from fastbmrag.vocab.stages.parts import spelling
from fastbmrag.vocab.vocabulary import Vocabulary


def formula(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A chemical formula, written as its names ("Ca2+", "NaHCO3")."""
    for name in formula_names(clean):
        hit = direct(v, name, t, None)
        if hit is not None and hit.item >= 0:
            return Hit(hit.type, hit.item, "formula", FORMULA_SCORE)
    return None


def as_written(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """The name as written (:func:`~fastbmrag.vocab.stages.exact.direct`), unless the text defines it as a short
    form whose long form shares no word with the gene found
    (:func:`~fastbmrag.vocab.stages.abbreviations.disowned`): no id then."""
    hit = direct(v, clean, t, ctx)
    if hit is not None and ctx is not None and disowned(v, clean, hit, ctx):
        v.tried(t, "the name as written", hit)
        v.tried(t, "the long form the text defines shares no word with it", None, "dropped")
        return NO_ID
    return hit


def formula_parts(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A formula not found whole: its parts ("2 O3" of Fe2O3) name no other compound."""
    return NO_ID if is_formula(clean) else None


def misspelling(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A misspelt term (:class:`~fastbmrag.vocab.rules.candidates.Spellings`)."""
    return spelling(v, clean, t)


def process_term(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A biological process's MeSH term as written, or the long form the text defines for it
    (``item``: a row of the process table)."""
    names = [clean]
    if ctx is not None and clean in ctx.abbreviations:
        names.append(ctx.abbreviations[clean])
    for n, name in enumerate(names):
        codes = v.process_index.get(term_key(name))
        if codes is None:
            continue
        if isinstance(codes, int):
            codes = v.mesh_multi[~codes] if codes < 0 else (codes,)
        kind = codes[0] % 2
        items = tuple(c // 2 for c in codes if c % 2 == kind)
        if len(items) > 1:
            return Hit(PATHWAY, -1, "ambiguous", AMBIGUOUS_SCORE, items)
        if n:
            score = round(MESH_SCORES[kind] * ABBREVIATION_FACTOR, 3)
            return Hit(PATHWAY, items[0], "abbreviation", score, (), name)
        return Hit(PATHWAY, items[0], MESH_MATCHED[kind], MESH_SCORES[kind])
    return None
