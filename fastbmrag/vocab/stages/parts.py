"""The last stages for a disease or chemical name no rewrite matched: the part of it that is a
term, weighed by how much of the name it carries (abstaining below a share:
:mod:`fastbmrag.vocab.rules.candidates`), and a term it misspells."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fastbmrag.vocab.base import DISEASE
from fastbmrag.vocab.context import AMBIGUOUS_SCORE, CATEGORY, SPELLING_SCORE, Context, Hit
from fastbmrag.vocab.rules.candidates import partial_score
from fastbmrag.vocab.rules.chemistry import ACTING_ON, COUNTER_IONS, SUBSTITUENTS
from fastbmrag.vocab.rules.keys import BAG_STOP, term_key
from fastbmrag.vocab.rules.language import GENERIC, bag_key_of
from fastbmrag.vocab.vocabulary import Vocabulary

# A list of names ("alcohol/nicotine", "A, B and C"): each name one of the things it names. A
# comma before a digit separates locants ("1,3-bis(2-chloroethyl)").
LIST_RE = re.compile(r",(?!\d)|/|\b(?:and|or)\b", re.IGNORECASE)


def partial(
    v: Vocabulary, toks: Sequence[str], t: str, ctx: Context | None, listed: bool = False
) -> Hit | None:
    """The longest part of the name (a run of its words) that is a term of the type, the
    parts ending at the last word (the head noun in English) first. Its score is 0.5 +
    0.3 x the share of the name's word weight the part covers
    (:mod:`fastbmrag.vocab.rules.candidates`); :func:`~fastbmrag.vocab.rules.candidates.withheld` abstains below
    :data:`~fastbmrag.vocab.rules.candidates.MIN_COVERAGE`.

    Two chemicals written together, not ``listed`` ("and", "or", a comma or a slash), name
    a compound, complex or combination of the two, neither alone ("iron dextran",
    "simvastatin-ezetimibe", "blood urea nitrogen"): ambiguous. Only a salt's counter-ion
    is no other substance there ("hydrogen cyanamide"; :data:`COUNTER_IONS`).

    Never a part: what follows "without"; the target before "inhibitors", "antagonist" ...
    (:data:`~fastbmrag.vocab.rules.chemistry.ACTING_ON`); a chemical's parent after a substituent
    word, or the substituent itself (:data:`~fastbmrag.vocab.rules.chemistry.SUBSTITUENTS`)."""
    index, bag, bag_words = v.mesh_index, v.mesh_bag, v.bag_words
    n_all = len(toks)
    # what follows "without" is said to be absent ("major depression without panic
    # attacks"): no part of the name
    free = toks.index("without", 1) if "without" in toks[1:] else n_all
    found: list[tuple[Sequence[str], Hit]] = []
    # a part whose content words alone are longer than the longest key names no term: both its
    # keys are at least that long (the index key joins every word, the bag key drops only
    # BAG_STOP); checked first, it keeps a long name linear in the parts it can match
    weight = [0]
    for tok in toks:
        weight.append(weight[-1] + (0 if tok in BAG_STOP else len(tok)))
    longest = v.longest_key
    # whether an acting word follows position k, a substituent precedes it (each once)
    acting_after = [False] * (n_all + 1)
    for k in range(n_all - 1, -1, -1):
        acting_after[k] = acting_after[k + 1] or toks[k] in ACTING_ON
    substituted_before = [False] * (n_all + 1)
    for k in range(n_all):
        substituted_before[k + 1] = substituted_before[k] or toks[k] in SUBSTITUENTS
    for n in range(n_all - 1, 0, -1):
        for start in range(n_all - n, -1, -1):
            if start + n > free or weight[start + n] - weight[start] > longest:
                continue
            part = toks[start : start + n]
            if n == 1 and (part[0] in GENERIC or len(part[0]) < 4):
                continue
            if part[0] in BAG_STOP or part[-1] in BAG_STOP:
                continue
            if acting_after[start + n]:
                continue  # the target of an agent named after it ("CYP3A4 inhibitors")
            if t != DISEASE and substituted_before[start]:
                continue  # another compound: "methyl scopolamine" is no scopolamine
            if part[0] in SUBSTITUENTS and (n == 1 or start + n < n_all):
                continue  # a group, or a substituted compound's start ("nitro-L-arginine")
            if "".join(part) not in index and (
                n == 1 or not bag_words.issuperset(part) or bag_key_of(part) not in bag
            ):
                continue
            hit = v.mesh_tokens(part, t, ctx)
            if hit is not None and hit.item >= 0:
                found.append((part, hit))
    if not found:
        return None
    part, hit = found[0]
    joined = [h.item for p, h in found[1:] if set(p).isdisjoint(part) and p[0] not in COUNTER_IONS]
    if t != DISEASE and joined and not listed:
        items = tuple(dict.fromkeys((hit.item, *joined)))
        return Hit(t, -1, "ambiguous", AMBIGUOUS_SCORE, items, " ".join(part))
    share = v.word_weights.coverage([w for w in toks if w not in BAG_STOP], part)
    # the other parts that are terms: runners-up, for the record
    others = (h.item for _, h in found[1:])
    ranked = tuple(dict.fromkeys((*(hit.candidates or (hit.item,)), *others)))
    return Hit(hit.type, hit.item, "partial", partial_score(share), ranked, " ".join(part))


def spelling(v: Vocabulary, clean: str, t: str) -> Hit | None:
    """The one concept of the type whose term the name misspells
    (:class:`~fastbmrag.vocab.rules.candidates.Spellings`)."""
    if LIST_RE.search(clean):
        return None  # a list of names is no misspelling of one
    items: set[int] = set()
    for key in v.spellings.nearest(term_key(clean)):
        items |= {
            i for i in v.concepts(v.mesh_index[key]) if CATEGORY[t] in v.descriptor(i).categories
        }
    if len(items) != 1:
        return None
    return Hit(t, items.pop(), "spelling", SPELLING_SCORE)
