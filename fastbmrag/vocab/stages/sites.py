"""The site stage: a head that only says its site is diseased, read as the site's disease
("bladder inflammation" -> Urinary Bladder Diseases)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from fastbmrag.vocab.base import DISEASE
from fastbmrag.vocab.context import (
    Context,
    Hit,
)
from fastbmrag.vocab.rules.keys import BAG_STOP
from fastbmrag.vocab.rules.language import (
    COURSE_WORDS,
    DISEASE_SYNONYMS,
    FREE_CACHE_SIZE,
    MEASURES,
    ORGAN_ADJECTIVES,
    name_forms,
    variants,
)
from fastbmrag.vocab.stages.completions import superset_hit
from fastbmrag.vocab.vocabulary import Vocabulary


def site(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """The disease of a site (:meth:`_site_disease`)."""
    toks = name_forms(clean)[1]
    return site_disease(v, toks, ctx) if len(toks) > 1 else None


def site_disease(v: Vocabulary, toks: Sequence[str], ctx: Context | None) -> Hit | None:
    """The modifiers as the site of a disease, when the head only says that the site is
    diseased ("bladder inflammation" -> bladder disease, "bone marrow necrosis" -> bone
    marrow disease, "cardiovascular toxicity" -> cardiovascular disease); not when the
    name ends in a term of two or more words ("acute myocardial infarction")."""
    if toks[-1] in DISEASE_SYNONYMS or toks[-1] in MEASURES or not site_head(v, toks[-1]):
        return None  # a measure of the site is no disease of it ("heart rate")
    for k in range(len(toks) - 1):
        if v.is_key(toks[k:]) and v.mesh_tokens(toks[k:], DISEASE, None):
            return None
    site = [w for w in toks[:-1] if w not in COURSE_WORDS and w not in BAG_STOP]
    if not site:
        return None
    organ = [x for w in site for x in ORGAN_ADJECTIVES.get(w, w).split()]
    hit = v.first_term(
        ([*site, "disease"], [*organ, "disease"], [*site, "disorder"], [*organ, "disorder"]),
        DISEASE,
        ctx,
        "site",
    )
    if hit is not None and "F" in v.descriptor(hit.item).categories and is_process(v, toks[-1]):
        return None  # a tissue's process has a body site, no mind: "reactive gliosis"
    if hit is not None:
        return hit
    if (
        len(site) > 1
        and site[0] in ORGAN_ADJECTIVES
        and not (v.is_key(site) and v.mesh_tokens(site, DISEASE, None))
    ):
        # A part of an organ or a faculty: "visual field loss" -> vision disorder (not
        # when the modifiers name a disease: "pulmonary hypertension syndrome").
        organ = ORGAN_ADJECTIVES[site[0]].split()
        hit = v.first_term(([*organ, "disease"], [*organ, "disorder"]), DISEASE, ctx, "site")
        if hit is not None:
            return hit
    key = sorted(site)
    for ends in ((*site, "disorder"), (*site, "disease")):
        # One word short of a descriptor whose name ends in it: "platelet aggregation" ->
        # platelet disorder -> Blood Platelet Disorders, "marrow suppression" -> Bone
        # Marrow Diseases.
        if " ".join(sorted([*key, ends[-1]])) not in v.superset:
            continue
        hit = superset_hit(v, ends, ctx)
        if hit is not None and name_forms(v.descriptor(hit.item).name)[1][-len(ends) :] == ends:
            return hit
    return None


# Each vocabulary's answers of site_head, kept here (and dropped with their vocabulary).
_SITE_HEADS: weakref.WeakKeyDictionary[Vocabulary, dict[str, bool]] = weakref.WeakKeyDictionary()


def site_head(v: Vocabulary, word: str) -> bool:
    """Whether a head word says only that its site is diseased: a pathologic process
    (MeSH C23.550: inflammation, necrosis, sclerosis), or no disease term at all."""
    heads = _SITE_HEADS.setdefault(v, {})
    known = heads.get(word)
    if known is None:
        known = site_head_uncached(v, word)
        if len(heads) >= FREE_CACHE_SIZE:
            heads.clear()
        heads[word] = known
    return known


def is_process(v: Vocabulary, word: str) -> bool:
    """Whether the word names a pathologic process (MeSH C23.550: gliosis, necrosis)."""
    hit = v.mesh_tokens([word], DISEASE, None)
    return hit is not None and hit.item in v.processes


def site_head_uncached(v: Vocabulary, word: str) -> bool:
    hit = v.mesh_tokens([word], DISEASE, None)
    if hit is None:
        hit = next(
            (h for f in variants(word) if (h := v.mesh_tokens([f], DISEASE, None))),
            None,
        )
    return hit is None or hit.item in v.processes
