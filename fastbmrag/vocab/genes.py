"""The gene stages: HGNC lookups with the preference approved symbol > previous symbol > alias,
gene families (HGNC gene groups), and names written beyond the dictionary (isoforms,
respellings, coordinations)."""

from __future__ import annotations

from collections.abc import Sequence

from fastbmrag.vocab.base import GENE, Normalized
from fastbmrag.vocab.build import GENE_KINDS
from fastbmrag.vocab.context import (
    AMBIGUOUS_SCORE,
    AS_WRITTEN_FACTOR,
    GENE_SCORES,
    GROUP_SCORE,
    Context,
    Hit,
)
from fastbmrag.vocab.keys import BAG_STOP, ROMAN_NUMBER, gene_key_of, raw_tokens, term_key, tokens
from fastbmrag.vocab.language import unique_best
from fastbmrag.vocab.phenomena import (
    coordination_parts,
    isoform_stripped,
    respellings,
)
from fastbmrag.vocab.stages import Stages

# The least support (a share of a gene name's word weight) by which the context picks a gene.
MIN_GENE_SUPPORT = 0.2


class GeneStages(Stages):
    """Gene stages of :class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`."""

    def _gene_group(self, name: str, clean: str) -> Normalized | None:
        """A name that is an HGNC gene group's ("caspases", "interleukins", "toll-like
        receptors"), or the stem its members' names share, singular or plural ("matrix
        metalloproteinases"): the family's own node, never one of its members."""
        found = self._group_keys.get(term_key(clean))
        if found is None:
            # the stem its members' names share ("matrix metalloproteinase(s)")
            toks = raw_tokens(clean)
            singular = [*toks[:-1], toks[-1][:-1]] if toks and toks[-1].endswith("s") else toks
            found = self._stem_groups.get(gene_key_of(toks)) or self._stem_groups.get(
                gene_key_of(singular)
            )
        if found is None:
            return None
        return Normalized(name, GENE, self._group_names[found], found, "gene_group", GROUP_SCORE)

    def _gene_as_written(self, name: str, clean: str, ctx: Context | None) -> Normalized | None:
        """A gene name written beyond its dictionary forms (fastbmrag.vocab.phenomena): an
        isoform or transcript variant after an approved symbol ("TP63 gamma", "CD44v6"), a respelling ("CEBPalpha", "Toll-like
        receptor (TLR) 4"), or a coordination or range of genes
        ("SMAD2/3", "IL-4 and -13", "TGF-beta1-3"), every part of which names its own gene."""
        bare = isoform_stripped(clean)
        if bare is not None:
            # Only an approved symbol: an alias before a Greek letter often names a family.
            hit = self._direct(bare, GENE, ctx)
            if hit is not None and hit.item >= 0 and hit.matched_by == "symbol":
                score = round(hit.score * AS_WRITTEN_FACTOR, 3)
                return self._result(name, GENE, Hit(GENE, hit.item, "isoform", score))
        for spelt in respellings(clean):
            hit = self._direct(spelt, GENE, ctx)
            if hit is not None and hit.item >= 0:
                score = round(hit.score * AS_WRITTEN_FACTOR, 3)
                return self._result(name, GENE, Hit(GENE, hit.item, "respelled", score, (), spelt))
        parts = coordination_parts(clean)
        if not parts:
            return None
        resolved = tuple(self._normalize(p, GENE, ctx) for p in parts)
        ids = tuple(r.ontology_id or "" for r in resolved)
        if not all(ids) or len(set(ids)) < len(ids):
            return None  # a part names no gene, or two name the same one: not a coordination
        if len({r.matched_by for r in resolved}) > 1:
            return None  # parts named alike name genes alike: "CHL1 and 2" is no symbol + synonym
        score = min(r.score for r in resolved)
        return Normalized(name, GENE, clean, None, "coordination", score, ids, resolved)

    def _gene_lookup(self, toks: Sequence[str]) -> int | Sequence[int] | None:
        """The index entry of a gene name's tokens: roman numerals as numbers, else as written
        ("UP III" is NCBI Gene's synonym "UPIII"); then without a "type" that classifies a
        subtype's number."""
        codes = self._gene_index.get(gene_key_of(toks))
        if codes is None and not ROMAN_NUMBER.keys().isdisjoint(toks):
            codes = self._gene_index.get(gene_key_of(toks, roman=False))
        if codes is None and "type" in toks[:-1]:
            # "type" before a subtype's number classifies it: "plasminogen activator inhibitor
            # type 1" is "plasminogen activator inhibitor 1"
            i = toks.index("type")
            if toks[i + 1].isdigit() or toks[i + 1] in ROMAN_NUMBER or toks[i + 1] == "i":
                codes = self._gene_index.get(gene_key_of([*toks[:i], *toks[i + 1 :]]))
        return codes

    def _gene_codes(self, codes: int | Sequence[int] | None, ctx: Context | None) -> Hit | None:
        """An index entry as a hit: its best kind (HGNC's preference: approved symbol > previous
        symbol > alias > names > NCBI Gene's); several genes of that kind: the context picks,
        else ambiguous."""
        if codes is None:
            return None
        if isinstance(codes, int):
            if codes < 0:
                return self._gene_codes(self._gene_multi[~codes], ctx)
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
        chosen = self._pick_gene(items, ctx) if ctx is not None else None
        if chosen is not None:
            return Hit(GENE, chosen, kind, round(GENE_SCORES[kind] * 0.9, 3), items)
        return Hit(GENE, -1, "ambiguous", AMBIGUOUS_SCORE, items)

    def _pick_gene(self, items: Sequence[int], ctx: Context) -> int | None:
        """The one gene among several whose symbol the text writes, or whose name's words it uses
        most, weighed by how much each word says (MeSH's word weights: "subunit", "protein" or
        "factor" say less of which gene than "kappa" or "cointegrator"); None on a tie, or
        when the text writes less than a fifth of the best one's name: a word or two common to
        gene names is no evidence."""
        weight = self.word_weights.weight

        def support(i: int) -> float:
            _hgnc, symbol, name, _group = self._genes[i]
            s = 2.0 if gene_key_of(raw_tokens(symbol)) in ctx.gene_keys else 0.0
            words = [w for w in tokens(name) if len(w) > 2 and w not in BAG_STOP]
            if words:
                s += sum(weight(w) for w in words if w in ctx.words) / sum(map(weight, words))
            return s

        chosen = unique_best(items, support)
        return chosen if chosen is not None and support(chosen) >= MIN_GENE_SUPPORT else None
