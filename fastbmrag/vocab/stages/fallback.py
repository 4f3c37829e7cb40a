"""The steps for a disease or chemical name that is no term as written (the pipeline's fallback
phase, :data:`~fastbmrag.vocab.pipeline.PIPELINE`), and the rewrites among them: the name without its aside, derived
forms of its last word and rewrites towards MeSH's wording, an adjective as its noun, a
combining form split, a part of the name. Each stage abstains (None) where it does not apply;
the first that finds something decides."""

from __future__ import annotations

from collections.abc import Sequence

from fastbmrag.vocab.base import CHEMICAL, DISEASE
from fastbmrag.vocab.context import (
    CONTEXT_SENSITIVE,
    PARENS_RE,
    REWRITE_SCORE,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.rules.chemistry import DRUG_WORDS, acid_forms
from fastbmrag.vocab.rules.language import (
    LOSS_HEADS,
    combining_split,
    more_rewrites,
    name_forms,
    organ_phrases,
    rewrites,
    suffix_variants,
    variants,
)
from fastbmrag.vocab.stages.exact import direct
from fastbmrag.vocab.stages.parts import LIST_RE, partial
from fastbmrag.vocab.stages.sites import site_disease
from fastbmrag.vocab.vocabulary import Vocabulary


def fallbacks(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """The fallback phase of the pipeline for a name that is no term as written
    (:meth:`Vocabulary.fallback`)."""
    return v.fallback(clean, t, ctx)


def aside(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """The name without a parenthesised aside: "central nervous system (CNS)
    complications"."""
    if "(" not in clean:
        return None
    bare = clean_name(PARENS_RE.sub("", clean))
    if not bare or bare == clean:
        return None
    hit = direct(v, bare, t, ctx) or v.fallback(bare, t, ctx)
    if hit is None or hit.item < 0:
        return None
    if hit.matched_by in CONTEXT_SENSITIVE:
        return hit
    return Hit(hit.type, hit.item, "rewrite", REWRITE_SCORE, hit.candidates, hit.via or bare)


def rewritten(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """Derived forms of the last word and rewrites towards MeSH's wording, most literal
    first (adjective to noun, organ adjective to organ, tumour to neoplasm ...:
    :mod:`fastbmrag.vocab.rules.language`; for chemicals, an anion as its acid, a class of drugs
    and an agent as MeSH names them: :mod:`fastbmrag.vocab.rules.chemistry`); for diseases, a word
    for disease added, an organ's damage; the head word as its descriptor's own name."""
    toks = name_forms(clean)[1]
    body = toks[:-1]
    derived = [(*body, form) for form in suffix_variants(toks[-1], 2)]
    tries: list[tuple[str, Sequence[str]]] = [("derived", d) for d in derived]
    if t == CHEMICAL:
        tries += [("rewrite", (*body, *acid)) for acid in acid_forms(toks[-1])]
        if toks[-1] in DRUG_WORDS and body:
            tries += [("rewrite", (*body, w)) for w in ("agent", "drug") if w != toks[-1]]
    if t == DISEASE:
        tries += [("rewrite", r) for r in rewrites(toks)]
        tries += [("completion", c) for c in v.head_completions((*derived, toks))]
        tries += [("organ", o) for o in organ_phrases(toks)]
        if len(toks) == 1 and toks[0].endswith("toxicity") and len(toks[0]) > 9:
            # "cytotoxicity": the compound's head
            tries.append(("organ", ("drug", "toxicity")))
        tries += [("rewrite", r) for r in more_rewrites(toks)]
    if len(toks) > 1:
        # The head word as its descriptor's own name: "supraventricular
        # tachyarrhythmia" -> supraventricular tachycardia.
        head = v.mesh_tokens(toks[-1:], t, None)
        if head is not None and head.item >= 0:
            name = name_forms(v.descriptor(head.item).name)[1]
            if name != toks[-1:]:
                tries.append(("rewrite", (*toks[:-1], *name)))
    for label, phrase in tries:
        hit = v.first_term((phrase,), t, ctx, label)
        if hit is not None:
            return hit
    return None


def adjective_as_noun(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """An adjective before a head as its noun ("neuronal degeneration" -> neuron
    degeneration, "olfactory disorder" -> olfaction disorder), only where the noun is a
    word of some term; the loss of a tissue as its degeneration ("neuronal loss" -> Nerve
    Degeneration). Tried late, as few names get this far."""
    toks = name_forms(clean)[1]
    if len(toks) != 2:
        return None
    first, last = toks
    late: list[tuple[str, ...]] = [(f, last) for f in variants(first) if f in v.bag_words]
    if last in LOSS_HEADS:
        late += [(f, "degeneration") for f in (first, *variants(first))]
    return v.first_term(late, t, ctx, "rewrite")


def combining(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A combining form and a disease word: "myonecrosis" -> muscular necrosis,
    "immunodeficiency" -> immunologic deficiency (syndrome), or a disease of the site
    ("muscular necrosis" -> muscular disease); the rest must be a word of some term."""
    toks = name_forms(clean)[1]
    split = combining_split(toks[0]) if len(toks) == 1 else None
    if not split or split.rsplit(" ", 1)[1] not in v.bag_words:
        return None
    parts = name_forms(split)[1]
    hit = (
        direct(v, split, t, ctx)
        or v.first_term(v.head_completions((parts,)), t, ctx, "rewrite")
        or site_disease(v, parts, ctx)
    )
    if hit is None or hit.item < 0:
        return None
    return Hit(hit.type, hit.item, "rewrite", REWRITE_SCORE, hit.candidates)


def a_part(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A part of the name (:meth:`_partial`)."""
    toks = name_forms(clean)[1]
    return partial(v, toks, t, ctx, listed=LIST_RE.search(clean) is not None)
