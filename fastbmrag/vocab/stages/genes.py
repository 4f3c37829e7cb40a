"""The gene stages beyond the exact lookups (:meth:`~fastbmrag.vocab.vocabulary.Vocabulary.direct`):
gene families (HGNC gene groups, and the stems symbols share), or the one member of a family
the text writes, and names written beyond the dictionary (isoforms, respellings,
coordinations)."""

from __future__ import annotations

from collections.abc import Sequence

from fastbmrag.vocab.base import GENE, Normalized
from fastbmrag.vocab.context import (
    AS_WRITTEN_FACTOR,
    GROUP_MEMBER_SCORE,
    GROUP_SCORE,
    Context,
    Hit,
)
from fastbmrag.vocab.rules.keys import gene_key_of, raw_tokens, term_key, word_forms
from fastbmrag.vocab.rules.phenomena import coordination_parts, isoform_stripped, respellings
from fastbmrag.vocab.vocabulary import Vocabulary


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
    genes = v.stem_genes(gene_key_of(raw_tokens(clean)))
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
    said = [i for i in genes if v.gene_symbol_key(i) in ctx.gene_keys]
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
        hit = v.direct(bare, GENE, ctx)
        if hit is not None and hit.item >= 0 and hit.matched_by == "symbol":
            score = round(hit.score * AS_WRITTEN_FACTOR, 3)
            return v.result(name, GENE, Hit(GENE, hit.item, "isoform", score))
    for spelt in respellings(clean):
        hit = v.direct(spelt, GENE, ctx)
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
