"""The steps of a name as written: the name itself (unless the text disowns it), a chemical
formula written as its names, a formula's parts, a misspelling."""

from __future__ import annotations

from fastbmrag.vocab.context import FORMULA_SCORE, NO_ID, Context, Hit
from fastbmrag.vocab.rules.chemistry import formula_names, is_formula
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
