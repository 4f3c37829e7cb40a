"""Genes, diseases and chemicals named in free text (a question, a title): every span of up to
``max_words`` words goes through the normaliser, with its abstention; the longest span that
grounds wins over the spans inside it ("type 2 diabetes" over "diabetes"), then the higher score.

A span links only where its id names the whole span: a match found for a part of it ("partial",
"head" of a longer name, one "conjunct") is left to the shorter span that is that part. Guards,
from how language works:

* a common English word (a word frequency of :data:`COMMON_ZIPF` or more in ``wordfreq``'s
  English lists) is read in its everyday sense on its own ("lead", "death", "drugs",
  "syndrome"): it links only inside a longer name;
* a single word links as a gene only when it is written as symbols are (a digit, or a capital
  after the first letter: "IL1B", "p53", "MyD88"), never as a gene's ordinary-word name;
* an all-capital short form that HGNC lists as another symbol of a gene (an alias, a previous
  symbol, NCBI Gene's synonym) rather than its approved symbol is also an acronym of methods,
  procedures and instruments ("IVF", "MRI", "CPAP"): it links only with a gene cue, a word of
  :data:`GENE_CUES` next to it, or where ``known`` (the ids of the collection asked) holds
  that gene and the form carries a number ("PS1"; a form of letters alone, "IVF", is an
  acronym as often, whatever the collection holds); a short form the text defines is read
  through its long form by the normaliser;
* a form whose case carries its meaning, a lower-case letter before capitals ("pH", "mM",
  "eNOS"), is a notation as often as a gene: as another symbol of a gene it links only with a
  gene cue next to it ("eNOS expression") or where ``known`` holds that gene;
* a MeSH protein or enzyme is a gene product, which the graph keys on its HGNC gene: the span's
  gene wins over the chemical ("tumor necrosis factor alpha" -> TNF);
* the name of a biological process in several words is one name ("single nucleotide
  polymorphism", "programmed cell death"): a word inside it links to nothing on its own.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from typing import Protocol

from fastbmrag.vocab.base import CHEMICAL, GENE, PATHWAY, Normalized
from fastbmrag.vocab.context import ALL_TYPES, TYPE_ALIASES
from fastbmrag.vocab.rules.keys import BAG_STOP, GENE_WORDS, ROMAN_NUMBER


class Grounding(Protocol):
    """What the finder asks of the normaliser
    (:class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`)."""

    @property
    def common_words(self) -> dict[str, float]: ...

    def normalize(self, name: str, type_hint: str = "auto", context: str = "") -> Normalized: ...

    def ancestors(self, ontology_id: str) -> tuple[str, ...]: ...


# Words at or above this frequency (articles, prepositions, auxiliaries, question words), and the
# words MeSH's order-free keys leave out ("of", "induced", "due"), neither begin nor end a name: a
# span that does is not looked up.
FUNCTION_ZIPF = 5.6
# The kinds of match that read the span as written: a symbol, a name or a term (in another order,
# a coordination of them, a short form through the long form the text defines). The normaliser's
# readings of a name beyond its terms (a part, a rewrite, a completion, a site, a misspelling, a
# drug-induced form of a part) guess what a name known to be an entity means; on any span of
# free text they would read ordinary phrases as diseases.
WHOLE_SPAN = frozenset(
    {
        "symbol", "name", "prev_symbol", "entry_term", "alias", "prev_name", "alias_name",
        "protein_name", "ncbi_synonym", "isoform", "respelled", "formula", "word_order",
        "abbreviation", "coordination", "gene_group", "group_member", "id",
    }
)  # fmt: skip
CONJUNCTIONS = frozenset({"and", "or"})
SECONDARY_GENE = frozenset({"alias", "prev_symbol", "ncbi_synonym"})
# Words next to a short form that say it names a gene or its product: the words that say which
# kind of molecule a gene name refers to, and what is said of genes alone.
GENE_CUES = GENE_WORDS | frozenset(
    [
        "mutation",
        "mutations",
        "mutant",
        "mutants",
        "variant",
        "variants",
        "polymorphism",
        "polymorphisms",
        "allele",
        "alleles",
        "knockout",
        "knockdown",
        "locus",
        "promoter",
    ]
)
# MeSH's gene products: Proteins, Enzymes, Nucleic Acids and what is below them. The graph types a
# gene product as a gene (prompts.ENTITY_TYPES: "gene or gene product (protein, mRNA, miRNA)").
GENE_PRODUCTS = frozenset({"D011506", "D004798", "D009696"})
# Words, split at hyphens and slashes too ("Fluoxetine-induced akathisia" holds a chemical and
# a disease); a span runs from a word's start to a word's end, so "IL-1β" is one span still.
_WORD_RE = re.compile(r"\w+(?:[.'’]\w+)*\+?")


def function_word(word: str, common: dict[str, float]) -> bool:
    """Whether a word as written is a function word: an article, a preposition, a question word
    ("What", "Does" at the start too), and not a letter or symbol ("vitamin A", "IS")."""
    if not (word.islower() or (word[:1].isupper() and word[1:].islower())):
        return False
    low = word.lower()
    return low in BAG_STOP or common.get(low, 0.0) >= FUNCTION_ZIPF


def _gene_written(word: str) -> bool:
    """A single word written as gene symbols are: a digit, or a capital after the first letter."""
    return len(word) >= 2 and (any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]))


def find_mention_spans(
    v: Grounding,
    text: str,
    types: Iterable[str] = ALL_TYPES,
    *,
    max_words: int = 6,
    known: Container[str] = (),
) -> list[tuple[int, int, Normalized]]:
    """Genes, diseases and chemicals named in ``text``, left to right, each with its character
    span; ``name`` of each result is the span as written. ``known``: ids the collection asked
    holds (a short form that is also an acronym links when it names one)."""
    wanted = tuple(dict.fromkeys(TYPE_ALIASES.get(t.lower(), t.lower()) for t in types))
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(text)]
    lows = [w.lower() for _s, _e, w in words]
    common = v.common_words
    function = [function_word(w, common) for _s, _e, w in words]
    defines = "(" in text  # a short form defined in the text
    found: list[tuple[int, int, Normalized]] = []
    for i in range(len(words)):
        if function[i]:
            continue
        for n in range(1, min(max_words, len(words) - i) + 1):
            j = i + n - 1
            if function[j]:
                continue
            start, end = words[i][0], words[j][1]
            span = text[start:end]
            best = _reading(v, span, wanted, text, defines)
            if best is None and n > 1 and PATHWAY not in wanted:
                best = _process(v, span)  # a name of its own, hiding the words inside it
            if best is None:
                continue
            if n == 1 and lows[i] in common:
                continue
            if best.type == GENE and best.matched_by in SECONDARY_GENE:
                if (
                    span.isupper()
                    and not _cued(lows, i, j)
                    and not (best.ontology_id in known and not span.isalpha())
                ):
                    continue
                if _notation(span) and not _cued(lows, i, j, 1) and best.ontology_id not in known:
                    continue
            found.append((start, end, best))
    return [f for f in _longest(found) if f[2].type in wanted]


def _process(v: Grounding, span: str) -> Normalized | None:
    """A biological process's name of several words ("single nucleotide polymorphism",
    "programmed cell death"): one name, none of whose words is a disease or chemical of its
    own; dropped from the mentions unless processes are asked for."""
    m = v.normalize(span, PATHWAY)
    return m if m.ontology_id is not None else None


def _grounded(span: str, m: Normalized) -> bool:
    """Whether ``m`` reads the whole span with an id. A span that opens a parenthesis and does not
    close it, or holds nothing but numbers, names nothing. A conjunction joins two names, which an
    order-free key would read as one ("cancer or renal" is no Kidney Neoplasms); a number with
    the words that say a gene's kind names no gene ("type 2", "2 gene")."""
    if m.matched_by not in WHOLE_SPAN or (
        m.ontology_id is None and not any(p.ontology_id for p in m.parts)
    ):
        return False
    words = [w.lower() for w in _WORD_RE.findall(span)]
    if span.count("(") != span.count(")") or all(w.isdigit() for w in words):
        return False  # half a parenthesis; a number alone
    if m.matched_by == "word_order" and not CONJUNCTIONS.isdisjoint(words):
        return False
    if m.type == GENE:
        named = [w for w in words if w not in GENE_WORDS and w != "type"]
        return not all(w.isdigit() or w in ROMAN_NUMBER for w in named)
    return True


def _reading(
    v: Grounding,
    span: str,
    wanted: tuple[str, ...],
    text: str,
    defines: bool,
) -> Normalized | None:
    """The span's best grounded reading among the types wanted: a gene product in MeSH is no
    chemical (its gene reads it, even as one ordinary word: "insulin" of INS is, "set" of SET
    is not); else the highest score, ties to the first type asked. The span is read in the
    whole text where that defines short forms or must decide between readings; else alone,
    which the normaliser memoises (spans repeat across questions)."""
    readings: dict[str, Normalized] = {}
    for t in wanted:
        m = v.normalize(span, t, text if defines else "")
        if not defines and m.matched_by == "ambiguous":
            m = v.normalize(span, t, text)
        if _grounded(span, m):
            readings[t] = m
    product = False
    chem = readings.get(CHEMICAL)
    if chem is not None and chem.ontology_id is not None:
        i = chem.ontology_id
        product = i in GENE_PRODUCTS or not GENE_PRODUCTS.isdisjoint(v.ancestors(i))
        if product:
            del readings[CHEMICAL]
    core = [w for w in _WORD_RE.findall(span) if w.lower() not in GENE_WORDS]
    if GENE in readings and len(core) == 1 and not product and not _gene_written(core[0]):
        del readings[GENE]  # one ordinary word, with or without "gene", "level" ("max level")
    best: Normalized | None = None
    for m in readings.values():
        if best is None or m.score > best.score:
            best = m
    return best


def _notation(span: str) -> bool:
    """A form whose case carries its meaning: a lower-case letter before capitals ("pH", "mM",
    "eNOS"), the lower-case letter a word of its own (power, milli, endothelial)."""
    return span[:1].islower() and any(c.isupper() for c in span[1:])


def _cued(lows: list[str], i: int, j: int, reach: int = 2) -> bool:
    near = lows[max(0, i - reach) : i] + lows[j + 1 : j + 1 + reach]
    return any(w in GENE_CUES for w in near)


def _longest(found: list[tuple[int, int, Normalized]]) -> list[tuple[int, int, Normalized]]:
    """The spans that overlap no longer (then higher-scored) one, left to right."""
    chosen: list[tuple[int, int, Normalized]] = []
    for s, e, m in sorted(found, key=lambda f: (f[0] - f[1], -f[2].score, f[0])):
        if all(e <= cs or ce <= s for cs, ce, _m in chosen):
            chosen.append((s, e, m))
    return sorted(chosen, key=lambda f: f[0])
