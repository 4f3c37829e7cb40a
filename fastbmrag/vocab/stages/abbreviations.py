"""Short forms: the long form the text defines for one ("hepatitis B virus (HBV)"), the words
before one whose letters do not align ("zidovudine (AZT)"), an acronym the text spells out
without defining it, and short forms inside a longer name ("HBV infection")."""

from __future__ import annotations

import re

from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE
from fastbmrag.vocab.context import ABBREVIATION_FACTOR, Context, Hit, best_long_form
from fastbmrag.vocab.rules.candidates import withheld
from fastbmrag.vocab.rules.chemistry import LOCANT_RE
from fastbmrag.vocab.rules.keys import FUNCTION_WORDS, GENE_WORDS, tokens
from fastbmrag.vocab.rules.language import GENERIC, abbreviation_like, acronym_like
from fastbmrag.vocab.stages.exact import direct
from fastbmrag.vocab.stages.parts import spelling
from fastbmrag.vocab.vocabulary import Vocabulary


def abbreviation_hit(hit: Hit, factor: float, long: str) -> Hit:
    """A long form's hit as the short form's: ``abbreviation``, the score times ``factor``,
    by way of the long form (and the long form's own rewrite or part, if any)."""
    if hit.item < 0:
        return hit  # the long form is ambiguous, or abstained: so is the short one
    via = long if not hit.via or hit.via == long else f"{long} -> {hit.via}"
    score = round(hit.score * factor, 3)
    return Hit(hit.type, hit.item, "abbreviation", score, hit.candidates, via)


def defined_long_form(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """A short form the text defines: its long form as a term, before the short form
    itself is looked up (the short one is often ambiguous; a definition in the text beats
    the dictionary's reading of it)."""
    if ctx is None:
        return None
    window = ctx.windows.get(clean)
    long = ctx.abbreviations.get(clean) if window else None
    if not (window and long):
        return None
    words = window.split()
    aligned = len(long.split())
    for n in range(len(words), aligned - 1, -1):
        if not FUNCTION_WORDS.isdisjoint(w.lower() for w in words[-n : len(words) - aligned]):
            continue  # "from cyclosporin A", "antagonist at the gamma-aminobutyric acid
            # (GABA)": a function word parts what comes before it from the long form
        phrase = " ".join(words[-n:])
        hit = direct(v, phrase, t, ctx)
        if hit is not None and hit.item >= 0:
            return abbreviation_hit(hit, ABBREVIATION_FACTOR, phrase)
    return None


def disowned(v: Vocabulary, clean: str, hit: Hit, ctx: Context) -> bool:
    """Whether the text's definition of a short form rules out the gene the short form
    names in the dictionary: a defined short form names what its long form names, so a
    gene whose approved name shares no word with the long form is another reading of the
    letters ("analysis of variance (ANOVA)" is no NOVA2, "thyroxine (T4)" no CD4). Words
    every gene name may hold ("protein", "gene") and function words do not count."""
    if hit.type != GENE or hit.item < 0:
        return False
    gene = v.gene_row(hit.item)
    return defined_apart(v, clean, f"{gene.symbol} {gene.name}", ctx)


def defined_apart(v: Vocabulary, clean: str, named: str, ctx: Context) -> bool:
    """Whether the text defines the short form ``clean`` by a long form that shares no word
    with ``named`` (a gene's symbol and name, a gene group's name): see :func:`disowned`."""
    if not ctx.windows.get(clean):
        return False
    long = ctx.abbreviations.get(clean)
    if long is None:
        # Letters that do not align: the word before them, when a MeSH descriptor names it a
        # disease or a chemical ("thyroxine (T4)"; a supplementary concept's name is often a
        # gene product's: "matriptase-2 (TMPRSS6)")
        long = ctx.windows[clean].rsplit(" ", 1)[-1]
        if not any(v.mesh_term(long, t, None) for t in (DISEASE, CHEMICAL)):
            return False
    words = set(tokens(named))
    said = {
        w
        for w in tokens(long)
        if (len(w) > 1 or w.isdigit()) and w not in FUNCTION_WORDS | GENE_WORDS
    }
    return bool(said) and words.isdisjoint(said)


def short_form(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """For a name that is no term as written: the defined long form through the fallbacks;
    the words before an unaligned short form, longest first; an acronym the text spells
    out; short forms inside the name spelt out."""
    if ctx is None:
        return None
    window = ctx.windows.get(clean)
    if window:
        long = ctx.abbreviations.get(clean)
        if long:
            hit = v.fallback(long, t, ctx) or spelling(v, long, t)
            if hit is not None and not withheld(hit, clean, coverage=False):
                return abbreviation_hit(hit, 0.8, long)
        elif abbreviation_like(clean):
            words = window.split()
            for n in range(len(words), 0, -1):
                if n < len(words) and LOCANT_RE.match(words[-n - 1]):
                    break  # "2,2',4,4'-tetrabromodiphenyl ether": "ether" is the parent
                if n < len(words) and words[-n - 1].lower() == "without":
                    break  # "major depression without panic attacks (MD)": absent
                if n == 1 and (words[-1].lower() in GENERIC or abbreviation_like(words[-1])):
                    continue  # a short form is no long form: "IL-13 (LpA)" qualifies it
                phrase = " ".join(words[-n:])
                hit = direct(v, phrase, t, ctx)
                if hit is not None and hit.item >= 0:
                    return abbreviation_hit(hit, 0.8, phrase)
    elif acronym_like(clean):
        hit = acronym_in_text(v, clean, t, ctx)
        if hit is not None:
            return hit
    return expanded(v, clean, t, ctx)


def expanded(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """Short forms inside the name spelt out: "HBV infection" -> "hepatitis B virus
    infection" where the text defines "hepatitis B virus (HBV)"; "VEGF receptor 2" ->
    "vascular endothelial growth factor receptor 2"."""
    if ctx is None or not ctx.abbreviations or (" " not in clean and "-" not in clean):
        return None
    expanded = expand_short_forms(clean, ctx)
    if expanded is None:
        return None
    hit = direct(v, expanded, t, ctx)
    if hit is None and t != GENE:
        hit = v.fallback(expanded, t, ctx)
    if hit is not None and hit.item >= 0 and not withheld(hit, clean, False):
        return abbreviation_hit(hit, 0.9, expanded)
    return None


def expand_short_forms(clean: str, ctx: Context) -> str | None:
    parts = re.split(r"([\s/-]+)", clean)
    out = [ctx.abbreviations.get(p, p) if len(p) > 1 else p for p in parts]
    if out == parts:
        return None
    return "".join(" " if i % 2 else w for i, w in enumerate(out))


def acronym_in_text(v: Vocabulary, short: str, t: str, ctx: Context) -> Hit | None:
    """An abbreviation the text uses without defining it in parentheses: the words of
    the text that spell it (Schwartz-Hearst alignment, first letter on a word start) and
    name a term of the type, the most frequent such phrase first ("... acute liver
    failure ... 1223 consecutive ALF patients" -> Liver Failure, Acute). The phrase
    starts with no function word nor the short form, ends with a word that holds the
    last letter, and is no short form itself."""
    key = (short, t)
    if key in ctx.acronyms:
        return ctx.acronyms[key]
    letters = [c.lower() for c in short if c.isalnum()]
    words = ctx.plain_words
    counts: dict[str, int] = {}
    for i, first in enumerate(words):
        if first[:1].lower() != letters[0] or first.lower() in FUNCTION_WORDS or first == short:
            continue  # nor with the short form itself ("HIV infection" for "HIV")
        for n in range(1, min(len(letters), len(words) - i) + 1):
            span = " ".join(words[i : i + n])
            if best_long_form(short, span) != span or len(span) <= len(short):
                continue
            if n == 1 and acronym_like(span):
                continue  # a short form spells out no other ("DA" is no "DOPAC")
            if n > 1 and letters[-1] not in words[i + n - 1].lower():
                continue  # its last word spells nothing ("kainate receptor" for "KA")
            counts[span] = counts.get(span, 0) + 1
    found: Hit | None = None
    for span in sorted(counts, key=lambda x: (-counts[x], -len(x))):
        hit = direct(v, span, t, None)
        if hit is not None and hit.item >= 0:
            found = abbreviation_hit(hit, 0.7, span)
            break
    ctx.acronyms[key] = found
    return found
