"""A name's exact lookups, for any type: a gene's keys (:func:`~fastbmrag.vocab.stages.genes.gene_term`)
or a MeSH term's (:meth:`~fastbmrag.vocab.vocabulary.Vocabulary.mesh_term`)."""

from __future__ import annotations

from fastbmrag.vocab.base import GENE
from fastbmrag.vocab.context import Context, Hit
from fastbmrag.vocab.rules.keys import term_key
from fastbmrag.vocab.stages.genes import gene_term
from fastbmrag.vocab.vocabulary import Vocabulary


def direct(v: Vocabulary, clean: str, t: str, ctx: Context | None) -> Hit | None:
    """The exact lookups of ``clean`` as a name of type ``t``: a gene's; a MeSH descriptor's
    term, else a supplementary concept's own name or entry term (a descriptor's own term
    keeps the descriptor)."""
    if t == GENE:
        return gene_term(v, clean, ctx)
    return v.mesh_term(clean, t, ctx) or v.supplementary_term(term_key(clean), t, ctx)
