"""Genes, diseases and chemicals named in free text (a question): longest match over word
n-grams, exact terms only."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fastbmrag.vocab.base import GENE, Normalized
from fastbmrag.vocab.context import ALL_TYPES, CATEGORY, TYPE_ALIASES, Context, Hit
from fastbmrag.vocab.keys import gene_key_of, raw_tokens, tokens, word_set
from fastbmrag.vocab.vocabulary import Vocabulary

# Words never linked on their own in free text (find_mentions).
STOP_WORDS = word_set(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not now of off on once only or other our out over own same she should
    so some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    role roles effect effects gene genes protein proteins disease diseases level levels patient
    patients study studies cell cells type types role function functions expression involved
    associated association treatment therapy risk case cases use used using show shown find
    found new high low increased decreased via among known related"""
)
_WORD_RE = re.compile(r"\w+(?:[-/.'’]\w+)*")


def _gene_like(word: str) -> bool:
    """A single word that may be a gene symbol in running text: IL1B, TP53, p53, MYC, IL-1β."""
    if word.lower() in STOP_WORDS or len(word) < 2:
        return False
    if any(c.isdigit() for c in word):
        return True
    return sum(c.isupper() for c in word[1:]) >= 1 and len(word) >= 3


def find_mentions(
    v: Vocabulary, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 8
) -> list[Normalized]:
    """Genes, diseases and chemicals named in free text (a question), left to right.

    Longest match over word n-grams; stop words and short or lower-case single words are
    not linked as genes. ``name`` of each result is the text as written.
    """
    return [n for _start, _end, n in find_mention_spans(v, text, types, max_words=max_words)]


def find_mention_spans(
    v: Vocabulary, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 8
) -> list[tuple[int, int, Normalized]]:
    """Like :meth:`find_mentions`, with the character span of each mention."""
    wanted = tuple(dict.fromkeys(TYPE_ALIASES.get(t.lower(), t.lower()) for t in types))
    ctx = v.context(text)
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(text)]
    gtoks = [raw_tokens(w) for _, _, w in words]
    ttoks = [tokens(w) for _, _, w in words]
    out: list[tuple[int, int, Normalized]] = []
    i = 0
    while i < len(words):
        found = None
        if words[i][2].lower() not in STOP_WORDS:
            for n in range(min(max_words, len(words) - i), 0, -1):
                last = words[i + n - 1][2].lower()
                if last in STOP_WORDS:
                    continue
                hit = span_hit(v, words[i : i + n], gtoks[i : i + n], ttoks[i : i + n], wanted, ctx)
                if hit is not None:
                    found = (n, hit)
                    break
        if found is None:
            i += 1
            continue
        n, hit = found
        start, end = words[i][0], words[i + n - 1][1]
        out.append((start, end, v.result(text[start:end], hit.type, hit)))
        i += n
    return out


def span_hit(
    v: Vocabulary,
    words: Sequence[tuple[int, int, str]],
    gtoks: Sequence[list[str]],
    ttoks: Sequence[list[str]],
    wanted: Sequence[str],
    ctx: Context,
) -> Hit | None:
    single = len(words) == 1
    surface = words[0][2]
    best: Hit | None = None
    for t in wanted:
        hit: Hit | None
        if t == GENE:
            if single and not _gene_like(surface):
                continue
            key = gene_key_of([x for toks in gtoks for x in toks])
            hit = v.gene_codes(v.gene_index.get(key), ctx)
            if hit is not None and single and hit.matched_by.endswith("name"):
                hit = None  # one ordinary word that is a gene's name ("insulin") is too loose
        elif t in CATEGORY:
            if single and (len(surface) < 3 or (surface.islower() and len(surface) < 4)):
                continue
            key = "".join(x for toks in ttoks for x in toks)
            hit = v.mesh_codes(v.mesh_index.get(key), t, ctx, 0)
        else:
            continue
        if hit is not None and (best is None or hit.score > best.score):
            best = hit
    return best
