"""A gene's names: the exact lookups of its key (approved symbol > previous symbol > alias >
names > NCBI Gene's synonyms and protein names, :data:`~fastbmrag.vocab.layout.GENE_KINDS`), the
context picking among several genes, gene families (HGNC gene groups, and the stems symbols
share) or the one member of a family the text writes, and names written beyond the dictionary
(isoforms, respellings, coordinations)."""

from __future__ import annotations

import string
from collections.abc import Sequence

from fastbmrag.vocab.base import GENE, Normalized
from fastbmrag.vocab.context import (
    AMBIGUOUS_SCORE,
    AS_WRITTEN_FACTOR,
    GENE_SCORES,
    GROUP_MEMBER_SCORE,
    GROUP_SCORE,
    Context,
    Hit,
)
from fastbmrag.vocab.layout import GENE_KINDS
from fastbmrag.vocab.rules.keys import (
    BAG_STOP,
    ROMAN_NUMBER,
    gene_key_of,
    raw_tokens,
    term_key,
    tokens,
    word_forms,
)
from fastbmrag.vocab.rules.language import strip_gene_words, unique_best
from fastbmrag.vocab.rules.phenomena import coordination_parts, isoform_stripped, respellings
from fastbmrag.vocab.vocabulary import Vocabulary

# The least support (a share of a gene name's word weight) by which the context picks a gene.
MIN_GENE_SUPPORT = 0.2


def gene_term(v: Vocabulary, clean: str, ctx: Context | None) -> Hit | None:
    """A gene's key, as written, then without the words that say which kind of molecule it is
    ("IL-6 protein", "BRCA1 gene"); then each with its words in American spelling, as gene
    names are written ("tumour necrosis factor", "oestrogen receptor 1"; symbols, short or
    not all letters, are never respelled)."""
    raw = raw_tokens(clean)
    spelled = [word_forms(t)[0] for t in raw]
    for toks in (raw, spelled) if spelled != raw else (raw,):
        hit = gene_codes(v, gene_lookup(v, toks), ctx)
        if hit is None:
            core = strip_gene_words(toks)
            if core and core != toks:
                hit = gene_codes(v, gene_lookup(v, core), ctx)
        if hit is not None:
            return hit
    return None


def gene_lookup(v: Vocabulary, toks: Sequence[str]) -> int | Sequence[int] | None:
    """The index entry of a gene name's tokens: roman numerals as numbers, else as written
    ("UP III" is NCBI Gene's synonym "UPIII"); then without a "type" that classifies a
    subtype's number."""
    codes = v.gene_index.get(gene_key_of(toks))
    if codes is None and not ROMAN_NUMBER.keys().isdisjoint(toks):
        codes = v.gene_index.get(gene_key_of(toks, roman=False))
    if codes is None and "type" in toks[:-1]:
        # "type" before a subtype's number classifies it: "plasminogen activator inhibitor
        # type 1" is "plasminogen activator inhibitor 1"
        i = toks.index("type")
        if toks[i + 1].isdigit() or toks[i + 1] in ROMAN_NUMBER or toks[i + 1] == "i":
            codes = v.gene_index.get(gene_key_of([*toks[:i], *toks[i + 1 :]]))
    return codes


def gene_codes(v: Vocabulary, codes: int | Sequence[int] | None, ctx: Context | None) -> Hit | None:
    """An index entry as a hit: its best kind (HGNC's preference: approved symbol > previous
    symbol > alias > names > NCBI Gene's); several genes of that kind: the context picks,
    else ambiguous."""
    if codes is None:
        return None
    if isinstance(codes, int):
        if codes < 0:
            return gene_codes(v, v.gene_multi[~codes], ctx)
        kind = GENE_KINDS[codes % 8]
        return Hit(GENE, codes // 8, kind, GENE_SCORES[kind])
    best_kind = codes[0] % 8
    items = tuple(c // 8 for c in codes if c % 8 == best_kind)
    kind = GENE_KINDS[best_kind]
    if len(items) == 1 and kind == "prev_symbol":
        # A symbol HGNC withdrew from its gene that another gene still goes by (an alias,
        # an NCBI Gene synonym: "ERK") names no one gene: the context picks, or no id.
        items = tuple(dict.fromkeys(c // 8 for c in codes))
    if len(items) == 1:
        return Hit(GENE, items[0], kind, GENE_SCORES[kind], tuple(c // 8 for c in codes))
    chosen = pick_gene(v, items, ctx) if ctx is not None else None
    if chosen is not None:
        return Hit(GENE, chosen, kind, round(GENE_SCORES[kind] * 0.9, 3), items)
    return Hit(GENE, -1, "ambiguous", AMBIGUOUS_SCORE, items)


def pick_gene(v: Vocabulary, items: Sequence[int], ctx: Context) -> int | None:
    """The one gene among several whose symbol the text writes, or whose name's words it uses
    most, weighed by how much each word says (MeSH's word weights: "subunit", "protein" or
    "factor" say less of which gene than "kappa" or "cointegrator"); None on a tie, or
    when the text writes less than a fifth of the best one's name: a word or two common to
    gene names is no evidence."""
    weight = v.word_weights.weight

    def support(i: int) -> float:
        name = v.gene_row(i).name
        s = 2.0 if symbol_key(v, i) in ctx.gene_keys else 0.0
        words = [w for w in tokens(name) if len(w) > 2 and w not in BAG_STOP]
        if words:
            s += sum(weight(w) for w in words if w in ctx.words) / sum(map(weight, words))
        return s

    chosen = unique_best(items, support)
    return chosen if chosen is not None and support(chosen) >= MIN_GENE_SUPPORT else None


def symbol_key(v: Vocabulary, i: int) -> str:
    """The key of a gene's approved symbol, as :attr:`Context.gene_keys` holds the text's
    words."""
    return gene_key_of(raw_tokens(v.gene_row(i).symbol))


def stem_genes(v: Vocabulary, stem: str) -> tuple[int, ...]:
    """The genes whose approved symbol is ``stem`` (a gene key of three letters or more)
    after one letter ("ras": HRAS, KRAS, NRAS ...) or before a number up to 40 ("dock":
    DOCK1 ... DOCK11): the family the stem names."""
    if len(stem) < 3:
        return ()
    keys = [*(c + stem for c in string.ascii_lowercase), *(f"{stem}{n}" for n in range(1, 41))]
    found: list[int] = []
    for key in keys:
        codes = v.gene_index.get(key)
        if codes is None:
            continue
        if isinstance(codes, int):
            codes = v.gene_multi[~codes] if codes < 0 else (codes,)
        found += [c // 8 for c in codes if c % 8 == 0]  # approved symbols only
    return tuple(dict.fromkeys(found))


def gene_group(
    v: Vocabulary, name: str, clean: str, ctx: Context | None = None
) -> Normalized | None:
    """A name that is an HGNC gene group's ("caspases", "interleukins", "toll-like
    receptors"), or the stem its members' names share, singular or plural ("matrix
    metalloproteinases"): the family's own node, never one of its members.

    Except where the text says which: a family's name in the singular ("the estrogen
    receptor", "claudin") in a text that writes the symbol of exactly one of the family's
    genes ("ESR1") names that gene, as a definite noun names what the text introduced
    (``group_member``); a plural ("MAPKs") names the family whatever the text says."""
    found = v.group_keys.get(term_key(clean))
    if found is None:
        # the stem its members' names share ("matrix metalloproteinase(s)")
        toks = raw_tokens(clean)
        singular = [*toks[:-1], toks[-1][:-1]] if toks and toks[-1].endswith("s") else toks
        found = v.stem_groups.get(gene_key_of(toks)) or v.stem_groups.get(gene_key_of(singular))
    if found is None:
        return symbol_family(v, name, clean, ctx)
    member = written_member(v, v.group_members(found), clean, ctx)
    if member is not None:
        return v.result(name, GENE, Hit(GENE, member, "group_member", GROUP_MEMBER_SCORE))
    return Normalized(name, GENE, v.group_names[found], found, "gene_group", GROUP_SCORE)


def symbol_family(v: Vocabulary, name: str, clean: str, ctx: Context | None) -> Normalized | None:
    """The stem HGNC's symbols of a family share, a letter before it ("Ras": HRAS, KRAS, NRAS)
    or a number after it ("DOCK": DOCK1 ... DOCK11), names no gene by itself; in the singular,
    in a text that writes exactly one of those symbols, it names that gene
    (``group_member``)."""
    if ctx is None or clean in ctx.abbreviations:
        return None  # a short form the text defines is read through its long form only
    genes = stem_genes(v, gene_key_of(raw_tokens(clean)))
    member = written_member(v, genes, clean, ctx) if len(genes) > 1 else None
    if member is None:
        return None
    return v.result(name, GENE, Hit(GENE, member, "group_member", GROUP_MEMBER_SCORE))


def written_member(
    v: Vocabulary, genes: Sequence[int], clean: str, ctx: Context | None
) -> int | None:
    """The one gene of ``genes`` whose symbol the text writes, for a family's name in the
    singular; None for a plural, or where the text writes none or several."""
    if ctx is None or plural(clean.split()[-1]):
        return None
    said = [i for i in genes if symbol_key(v, i) in ctx.gene_keys]
    return said[0] if len(said) == 1 else None


def plural(word: str) -> bool:
    """Whether a word is a plural: English's ("receptors", "kinases"), or an "s" after
    capitals ("MAPKs", "MMPs")."""
    spelled, singular = word_forms(word.lower())
    return spelled != singular or (len(word) > 2 and word[-1] == "s" and word[:-1].isupper())


def gene_as_written(v: Vocabulary, name: str, clean: str, ctx: Context | None) -> Normalized | None:
    """A gene name written beyond its dictionary forms (fastbmrag.vocab.rules.phenomena): an
    isoform or transcript variant after an approved symbol ("TP63 gamma", "CD44v6"), a respelling ("CEBPalpha", "Toll-like
    receptor (TLR) 4"), or a coordination or range of genes
    ("SMAD2/3", "IL-4 and -13", "TGF-beta1-3"), every part of which names its own gene."""
    bare = isoform_stripped(clean)
    if bare is not None:
        # Only an approved symbol: an alias before a Greek letter often names a family.
        hit = gene_term(v, bare, ctx)
        if hit is not None and hit.item >= 0 and hit.matched_by == "symbol":
            score = round(hit.score * AS_WRITTEN_FACTOR, 3)
            return v.result(name, GENE, Hit(GENE, hit.item, "isoform", score))
    for spelt in respellings(clean):
        hit = gene_term(v, spelt, ctx)
        if hit is not None and hit.item >= 0:
            score = round(hit.score * AS_WRITTEN_FACTOR, 3)
            return v.result(name, GENE, Hit(GENE, hit.item, "respelled", score, (), spelt))
    parts = coordination_parts(clean)
    if not parts:
        return None
    resolved = tuple(v.resolve(p, GENE, ctx) for p in parts)
    ids = tuple(r.ontology_id or "" for r in resolved)
    if not all(ids) or len(set(ids)) < len(ids):
        return None  # a part names no gene, or two name the same one: not a coordination
    if len({r.matched_by for r in resolved}) > 1:
        return None  # parts named alike name genes alike: "CHL1 and 2" is no symbol + synonym
    score = min(r.score for r in resolved)
    return Normalized(name, GENE, clean, None, "coordination", score, ids, resolved)
