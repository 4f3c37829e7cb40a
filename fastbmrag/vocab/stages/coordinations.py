"""Coordinations of diseases: one id per part when every part names its own condition
("breast and ovarian cancer" -> Breast Neoplasms + Ovarian Neoplasms), else one conjunct
("pulmonary and renal insufficiency" -> Renal Insufficiency)."""

from __future__ import annotations

from fastbmrag.vocab.base import DISEASE, Normalized
from fastbmrag.vocab.context import (
    REWRITE_SCORE,
    Context,
    Hit,
)
from fastbmrag.vocab.rules.language import (
    CONJ_RE,
    name_forms,
)
from fastbmrag.vocab.stages.exact import direct
from fastbmrag.vocab.vocabulary import Vocabulary


def one_conjunct(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """One conjunct of a coordination (:meth:`_conjunct`)."""
    toks = name_forms(clean)[1]
    return conjunct(v, clean, t, ctx) if len(toks) > 2 else None


def conjunct(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A coordination whose parts do not all name a condition (see :meth:`_coordination`):
    one conjunct, the last written in full first ("pulmonary and renal insufficiency" ->
    renal insufficiency), then the others with the shared head restored ("cardiac and
    renal lesions" -> cardiac lesions)."""
    parts = [p for p in CONJ_RE.split(clean) if p.strip()]
    if len(parts) < 2:
        return None
    head = parts[-1].split()
    tries = []
    if len(head) == 1 and len(parts[0].split()) > 1:
        # The modifiers are shared instead: "endometrial hyperplasia or cancer",
        # "cancer of the renal pelvis, ureter or bladder".
        tries.append(parts[0])
    for part in (parts[-1], *parts[:-1]):
        words = part.split()
        if len(words) < len(head) and len(head) > 1:
            tries.append(" ".join([*words, *head[len(words) - len(head) :]]))
            tries.append(" ".join([*words, head[-1]]))
        tries.append(part)
    for phrase in dict.fromkeys(tries):
        hit = direct(v, phrase, t, ctx) or v.fallback(phrase, t, ctx)
        if hit is not None and hit.item >= 0 and hit.matched_by not in ("partial", "extend"):
            return Hit(hit.type, hit.item, "conjunct", REWRITE_SCORE, hit.candidates)
    return None


def coordination(v: Vocabulary, name: str, clean: str, ctx: Context | None) -> Normalized | None:
    """A coordination of diseases, one result per part: "breast and ovarian cancer" ->
    Breast Neoplasms + Ovarian Neoplasms, "type 1 and type 2 diabetes" -> both types. Only a
    name with a conjunction that is no term as written; every part must name its own
    condition (the shared head restored: "breast" -> "breast cancer"), each a different one;
    otherwise the name is read whole."""
    if not CONJ_RE.search(clean) or v.mesh_term(clean, DISEASE, ctx) is not None:
        return None
    resolved = []
    for phrases in conjuncts(clean):
        for phrase in phrases:
            r = v.resolve(phrase, DISEASE, ctx)
            if r.ontology_id is not None and r.matched_by in WHOLE_PART:
                resolved.append(r)
                break
        else:
            return None
    ids = tuple(r.ontology_id or "" for r in resolved)
    if len(resolved) < 2 or len(set(ids)) < len(ids):
        return None
    score = min(r.score for r in resolved)
    v.tried(DISEASE, "a coordination", None, f"one id per part ({len(resolved)})")
    return Normalized(name, DISEASE, clean, None, "coordination", score, ids, tuple(resolved))


# How each part of a coordination must match to give the coordination one id per part: as a
# term, not through a rewrite (a part's rewrite is less sure than a whole name's).
WHOLE_PART = frozenset(("name", "entry_term", "word_order", "abbreviation"))


def conjuncts(clean: str) -> list[list[str]]:
    """The parts of a coordination, each as the phrases to try, the shared words restored
    first: "breast and ovarian cancer" -> [["breast cancer", "breast"], ["ovarian cancer"]];
    "endometrial hyperplasia or cancer" (shared modifiers) -> [["endometrial hyperplasia"],
    ["endometrial cancer", "cancer"]]. Fewer than two parts: none."""
    parts = [p for p in CONJ_RE.split(clean) if p.strip()]
    if len(parts) < 2:
        return []
    head = parts[-1].split()
    first = parts[0].split()
    out = []
    for part in parts:
        words = part.split()
        tries = []
        if part is parts[-1] and len(head) == 1 and len(first) > 1:
            tries.append(" ".join([*first[:-1], *words]))  # the modifiers are shared
        elif part is not parts[-1] and len(words) < len(head):
            tries.append(" ".join([*words, *head[len(words) - len(head) :]]))
            tries.append(" ".join([*words, head[-1]]))
        tries.append(part)
        out.append(list(dict.fromkeys(tries)))
    return out
