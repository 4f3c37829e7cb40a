"""The completion stages: a name one word short of a disease term ("variant angina" -> Angina
Pectoris, Variant), a one-word name completed to its only two-word term ("ecstasy" ->
"Ecstasy (Drug)"), and a disease word completed to its most general disease ("diabetes" ->
Diabetes Mellitus), alone or as the head of a longer name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastbmrag.vocab.base import DISEASE
from fastbmrag.vocab.context import (
    AMBIGUOUS_SCORE,
    CATEGORY,
    EXTEND_SCORE,
    HEAD_SCORE,
    REWRITE_SCORE,
    Context,
    Hit,
)
from fastbmrag.vocab.rules.keys import BAG_STOP
from fastbmrag.vocab.rules.language import (
    COURSE_WORDS,
    DISEASE_HEADS,
    SITE_SPELLINGS,
    VAGUE_HEADS,
    name_forms,
    variants,
)
from fastbmrag.vocab.vocabulary import Vocabulary


def one_word_short(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A name one word short of a disease term (:meth:`_superset_hit`)."""
    toks = name_forms(clean)[1]
    return superset_hit(v, toks, ctx) if len(toks) > 1 else None


def completed(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A one-word name completed (:meth:`_extend`)."""
    toks = name_forms(clean)[1]
    return extend(v, toks[0], t) if len(toks) == 1 else None


def head_word(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A one-word disease name completed to its most general disease (:meth:`_head`)."""
    toks = name_forms(clean)[1]
    return head(v, toks, ctx) if len(toks) == 1 else None


def head_of_longer(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """No part is a term: the head word completed ("impaired overnight memory" -> Memory
    Disorders), unless it is a word any condition can have ("lesion", "failure"), only to a
    descriptor whose name has it as its head ("Vision Disorders"; not "Pressure Ulcer" for
    "intraocular pressure") and adds no other word than one for disease ("axonal
    degeneration" is no Retinal Degeneration)."""
    toks = name_forms(clean)[1]
    if len(toks) < 2 or toks[-1] in VAGUE_HEADS:
        return None
    hit = head(v, toks, ctx)
    if hit is None:
        return None
    # an ambiguous completion's first candidate is the most general one
    item = hit.item if hit.item >= 0 else hit.candidates[0]
    if names_head(v, item, toks[-1]) and not adds_modifier(v, item, toks):
        return hit
    return None


def names_head(v: Vocabulary, item: int, word: str) -> bool:
    """Whether the descriptor's name ends in ``word`` (or a derived form of it), or in it
    and a word for disease ("Vision Disorders")."""
    name = name_forms(v.descriptor(item).name)[1]
    forms = (word, *variants(word))
    return name[-1] in forms or (len(name) > 1 and name[-2] in forms and name[-1] in DISEASE_HEADS)


def adds_modifier(v: Vocabulary, item: int, toks: Sequence[str]) -> bool:
    """Whether the descriptor's name has a word the name lacks besides its head and a word
    for disease: "axonal degeneration" is no Retinal Degeneration, "ureteric obstruction"
    no Intestinal Obstruction; "impaired memory" may be Memory Disorders."""
    written = {f for w in toks for f in (w, *variants(w))}
    name = name_forms(v.descriptor(item).name)[1]
    return any(w not in written and w not in DISEASE_HEADS for w in name)


def superset_hit(v: Vocabulary, toks: Sequence[str], ctx: Context | None) -> Hit | None:
    """A name one word short of a disease term ("variant angina" -> Angina Pectoris,
    Variant); several such terms: the one above the others in the tree, else the one the
    context names."""
    words = [x for x in toks if x not in BAG_STOP]
    codes = v.superset_codes(words)
    if codes is None:
        return None
    if isinstance(codes, int):
        # The site as MeSH may also write it: "lung nodule" is one word short of Solitary
        # Lung Nodule, and "pulmonary nodule" of Multiple Pulmonary Nodules too.
        found = [codes]
        for site in (w for w in words if w in SITE_SPELLINGS):
            for spelling in SITE_SPELLINGS[site]:
                other = v.superset_codes([spelling if w == site else w for w in words])
                found += [other] if isinstance(other, int) else other or []
        if len(set(found)) > 1:
            codes = list(dict.fromkeys(found))
    core = [x for x in toks if x not in COURSE_WORDS]
    if len(core) < len(toks) and core and v.mesh_tokens(core, DISEASE, None) is not None:
        return None  # "acute myocardial infarction": a course word on a term of its own
    if isinstance(codes, int):
        return Hit(DISEASE, codes, "completion", REWRITE_SCORE)
    chosen = v.pick_descriptor(codes, ctx) if ctx is not None else None
    if chosen is None:
        return None
    return Hit(DISEASE, chosen, "completion", REWRITE_SCORE, tuple(codes))


def head(v: Vocabulary, toks: Sequence[str], ctx: Context | None = None) -> Hit | None:
    """ "diabetes" -> Diabetes Mellitus: the most general disease with a two-word term
    holding the word (see :func:`fastbmrag.vocab.building.compile.compile_mesh`); also for the last
    word of a longer name whose modifiers matched nothing ("impaired overnight memory").
    Where other diseases have such a term too ("glomerulosclerosis": Diabetic
    Nephropathies, Glomerulosclerosis, Focal Segmental) and the context picks none, the
    vocabulary gives no one completion: ambiguous."""
    for word in (*variants(toks[-1]), toks[-1]):
        item = v.mesh_head.get(word)
        if item is not None and "C" in v.descriptor(item).categories:
            score = HEAD_SCORE if len(toks) == 1 else 0.55
            chosen = head_from_context(v, word, ctx) if ctx is not None else None
            if chosen is not None and chosen != item:
                return Hit(DISEASE, chosen, "head", score, (item, chosen))
            codes = v.mesh_extend.get(word)
            others = set() if codes is None else v.concepts(codes) - {item}
            top = v.descriptor(item).id
            others = {
                i
                for i in others
                if "C" in v.descriptor(i).categories and top not in v.mesh_ancestors.get(i, ())
            }  # a completion to a concept above the others is no guess
            if others and chosen is None:
                return Hit(DISEASE, -1, "ambiguous", AMBIGUOUS_SCORE, (item, *sorted(others)))
            return Hit(DISEASE, item, "head", score)
    return None


def head_from_context(v: Vocabulary, word: str, ctx: Context) -> int | None:
    """The candidate completion of ``word`` whose other term word the context uses:
    "hyperactivity" in a text on locomotor activity -> Hyperkinesis ("Motor
    Hyperactivity"), not Psychomotor Agitation ("Psychomotor Hyperactivity"). A context
    word counts fully when it is the partner, half when it is a compound ending in it
    ("locomotor" is a kind of "motor")."""
    partners = v.head_partners.get(word)
    if not partners:
        return None
    words = ctx.words

    def support(entry: list[Any]) -> float:
        best = 0.0
        for other in entry[1]:
            if other in words:
                return 1.0
            if len(other) >= 4 and any(
                len(w) > len(other) + 2 and w.endswith(other) for w in words
            ):
                best = 0.5
        return best

    scored = sorted(((support(e), e[0]) for e in partners), reverse=True)
    best, item = scored[0]
    if (
        best > 0
        and "C" in v.descriptor(item).categories
        and (len(scored) == 1 or best > scored[1][0])
    ):
        return int(item)
    return None


def extend(v: Vocabulary, word: str, t: str) -> Hit | None:
    """A one-word name completed to the only two-word term of its type that contains it
    ("ecstasy" -> "Ecstasy (Drug)"). For a chemical, the build keeps only terms where the
    added word names the word's form or kind (``mesh_tables.completes_word``). The completion adds a
    word the name lacks: for a disease, :meth:`_normalize` gives no id ("weakness" is not
    only Muscle Weakness)."""
    codes = v.mesh_extend.get(word)
    if codes is None:
        return None
    if isinstance(codes, int) and codes < 0:
        codes = v.mesh_multi[~codes]
    cat = CATEGORY[t]
    items = {c // 2 for c in ([codes] if isinstance(codes, int) else codes)}
    fitting = [i for i in items if cat in v.descriptor(i).categories]
    if len(fitting) != 1:
        return None
    return Hit(t, fitting[0], "extend", EXTEND_SCORE)
