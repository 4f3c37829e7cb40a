"""The vocabularies as the stages see them: the loaded tables (:mod:`~fastbmrag.vocab.tables`)
and what they say of an id (:mod:`~fastbmrag.vocab.facts`), with the lookups every stage makes
in them: a MeSH term's keys, a code list read as a hit, the context picking among several
descriptors, the trace of ``--explain`` and a hit as the answer. A gene's names are looked up in
:mod:`~fastbmrag.vocab.stages.genes`.

The stages are plain functions of a :class:`Vocabulary` (``stage(v, name, type, context) -> Hit
| None``); two lookups run stages themselves and are the normaliser's
(:class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`): :meth:`Vocabulary.fallback` (the
stages for a name that is no term as written) and :meth:`Vocabulary.resolve` (a whole name).
"""

from __future__ import annotations

import abc
import functools
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY, Normalized
from fastbmrag.vocab.context import (
    AMBIGUOUS_SCORE,
    CATEGORY,
    MESH_MATCHED,
    MESH_SCORES,
    REWRITE_SCORE,
    SUPPLEMENTARY_MATCHED,
    SUPPLEMENTARY_SCORES,
    TRACE,
    WORD_ORDER_SCORE,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.facts import Facts
from fastbmrag.vocab.layout import Descriptor, Gene
from fastbmrag.vocab.rules.candidates import WordWeights
from fastbmrag.vocab.rules.keys import BAG_STOP, tokens
from fastbmrag.vocab.rules.language import (
    DISEASE_HEADS,
    bag_key_of,
    greek_initials,
    name_forms,
    tokens_key,
    unique_best,
)

# The type of a MeSH concept by its trees' letters, in order of preference.
ID_CATEGORIES = ((DISEASE, "C"), (DISEASE, "F"), (CHEMICAL, "D"))
# Contexts whose facts are kept (a document's names are normalised together).
CONTEXTS_KEPT = 256


class Vocabulary(Facts, abc.ABC):
    """HGNC and MeSH, loaded, with the lookups the stages share. Thread-safe after loading."""

    def __init__(self, genes: dict[str, Any], mesh: dict[str, Any], manifest: dict[str, Any]):
        super().__init__(genes, mesh, manifest)
        self._contexts: dict[str, Context] = {}  # the facts of the texts last normalised in
        self._lock = threading.Lock()

    # ---- the normaliser's own stages, which some stages run on a rewritten name ------------

    @abc.abstractmethod
    def fallback(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """The fallback steps for a name that is no term as written (the pipeline's fallback
        phase, :data:`~fastbmrag.vocab.pipeline.PIPELINE`)."""

    @abc.abstractmethod
    def resolve(self, name: str, type_hint: str, ctx: Context | None) -> Normalized:
        """A whole name normalised, memo aside (a coordination's parts)."""

    # ---- exact lookups ---------------------------------------------------------------------

    def mesh_term(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """Exact lookups of a disease or chemical: a MeSH term's key, its Greek initials written
        out, its words in another order, its hyphenated word joined (a gene's are in
        :mod:`~fastbmrag.vocab.stages.genes`; either: :mod:`~fastbmrag.vocab.stages.exact`)."""
        plain, toks = name_forms(clean)
        codes = self.mesh_index.get("".join(toks))
        # The unfolded key only tells apart several descriptors under one key.
        several = codes is not None and (not isinstance(codes, int) or codes < 0)
        exact = "".join(plain) if several else ""
        hit = self.mesh_codes(codes, t, ctx, 0, exact)
        greek = greek_initials(clean) if hit is None and "-" in clean else None
        if greek is not None:  # before word order, which would drop "a-" as an article
            hit = self.mesh_term(greek, t, ctx)
        if hit is None and self.bag_words.issuperset(toks):
            hit = self.mesh_codes(self.mesh_bag.get(bag_key_of(toks)), t, ctx, WORD_ORDER_SCORE)
            if hit is not None and hit.item >= 0:
                hit = Hit(hit.type, hit.item, "word_order", WORD_ORDER_SCORE, hit.candidates)
        if hit is None and "-" in clean:
            # A hyphen inside a word ("thrombo-embolism"): the joined word, whose spelling
            # folds as MeSH's does (thromboembolism).
            # The folded words joined and folded again as well: a spelling folded in one part
            # ("angio-oedema" -> angio edema) folds with the whole word too (Angioedema).
            for joined in dict.fromkeys(
                (tokens_key(clean.replace("-", "")), tokens_key("".join(toks)))
            ):
                if hit is None and joined != "".join(toks):
                    hit = self.mesh_codes(self.mesh_index.get(joined), t, ctx, 0)
        return hit

    def supplementary_term(self, key: str, t: str, ctx: Context | None) -> Hit | None:
        """The supplementary concept one of whose own terms has ``key`` (its name before an
        entry term), where its headings' trees make it of type ``t``; several: the context
        picks one, else ambiguous (no id). Its row number follows the descriptors'."""
        cat = CATEGORY.get(t)
        if cat is None:
            return None
        supp = self.supplementary
        fitting = [c for c in supp.codes_of(key) if cat in supp.categories(c // 2)]
        if not fitting:
            return None
        kind = min(c % 2 for c in fitting)
        items = tuple(dict.fromkeys(len(self.desc) + c // 2 for c in fitting if c % 2 == kind))
        return self.one_of(items, t, SUPPLEMENTARY_MATCHED[kind], SUPPLEMENTARY_SCORES[kind], ctx)

    def mesh_codes(
        self,
        codes: int | Sequence[int] | None,
        t: str,
        ctx: Context | None,
        fixed: float,
        exact_key: str = "",
    ) -> Hit | None:
        """A MeSH index entry as a hit of type ``t`` (``fixed``: its score, else the kind's):
        the descriptor's name before an entry term; several descriptors: the exact spelling,
        then the context, picks one, else ambiguous."""
        if codes is None:
            return None
        cat = CATEGORY[t]
        if isinstance(codes, int) and codes < 0:
            codes = self.mesh_multi[~codes]
        if isinstance(codes, int):
            if cat not in self.descriptor(codes // 2).categories:
                return None
            return Hit(t, codes // 2, MESH_MATCHED[codes % 2], fixed or MESH_SCORES[codes % 2])
        fitting = [c for c in codes if cat in self.descriptor(c // 2).categories]
        if not fitting:
            return None
        if exact_key and len(fitting) > 1:
            # "Alcohol" is an entry term of Ethanol, "Alcohols" a descriptor: the number decides.
            exact = self.mesh_exact.get(exact_key)
            if isinstance(exact, int) and exact in fitting:
                fitting = [exact]
        best_kind = fitting[0] % 2
        items = tuple(c // 2 for c in fitting if c % 2 == best_kind)
        return self.one_of(items, t, MESH_MATCHED[best_kind], fixed or MESH_SCORES[best_kind], ctx)

    def one_of(
        self, items: tuple[int, ...], t: str, matched_by: str, score: float, ctx: Context | None
    ) -> Hit:
        """The hit of the concepts one key names: the one; several: the one the context picks
        (its score a tenth lower, the others its candidates), else ambiguous (no id)."""
        if len(items) == 1:
            return Hit(t, items[0], matched_by, score)
        chosen = self.pick_descriptor(items, ctx) if ctx is not None else None
        if chosen is not None:
            return Hit(t, chosen, matched_by, round(score * 0.9, 3), items)
        return Hit(t, -1, "ambiguous", AMBIGUOUS_SCORE, items)

    def mesh_tokens(self, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None:
        """A name's folded tokens as a MeSH term: its index key, else its bag key."""
        codes = self.mesh_index.get("".join(toks))
        if codes is not None:
            hit = self.mesh_codes(codes, t, ctx, 0)
            if hit is not None:
                return hit
        if len(toks) == 1 or not self.bag_words.issuperset(toks):
            return None  # a one-word bag key is the index key
        codes = self.mesh_bag.get(bag_key_of(toks))
        return None if codes is None else self.mesh_codes(codes, t, ctx, 0)

    def is_key(self, phrase: Sequence[str]) -> bool:
        """Whether the phrase is an index or a bag key (of any category): else
        :meth:`mesh_tokens` finds nothing for it."""
        return "".join(phrase) in self.mesh_index or (
            len(phrase) > 1
            and self.bag_words.issuperset(phrase)
            and bag_key_of(phrase) in self.mesh_bag
        )

    def first_term(
        self, tries: Iterable[Sequence[str]], t: str, ctx: Context | None, stage: str
    ) -> Hit | None:
        """The first phrase of ``tries`` that is a term of the type, as a hit of ``stage``. Most
        tries name no term: both keys are looked up inline first (as :meth:`mesh_tokens`
        does), and only a phrase with a key goes through :meth:`mesh_tokens`. A phrase
        tried twice is looked up twice: cheaper than removing the few repeats."""
        index, bag, bag_words = self.mesh_index, self.mesh_bag, self.bag_words
        for phrase in tries:
            if "".join(phrase) not in index and (
                len(phrase) == 1
                or not bag_words.issuperset(phrase)
                or bag_key_of(phrase) not in bag
            ):
                continue
            hit = self.mesh_tokens(phrase, t, ctx)
            if hit is not None and hit.item >= 0:
                return Hit(
                    hit.type, hit.item, stage, REWRITE_SCORE, hit.candidates, " ".join(phrase)
                )
        return None

    def head_completions(self, stems: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """``(*stem, head)`` for each stem and each of :data:`DISEASE_HEADS` (in that order),
        kept only where it is an index or a bag key (see
        :func:`~fastbmrag.vocab.building.compile.completion_tables`): the others cannot match."""
        out: list[tuple[str, ...]] = []
        for stem in stems:
            mask = self.completions.get("".join(stem), 0)
            if self.bag_words.issuperset(stem):
                mask |= self.bag_completions.get(bag_key_of(stem), 0)
            if mask:
                out += [(*stem, h) for bit, h in enumerate(DISEASE_HEADS) if mask >> bit & 1]
        return out

    def concepts(self, codes: object) -> set[int]:
        """The descriptors of an index or bag entry."""
        if isinstance(codes, int):
            return {codes // 2} if codes >= 0 else {c // 2 for c in self.mesh_multi[~codes]}
        return {c // 2 for c in codes}  # type: ignore[attr-defined]

    def superset_codes(self, words: Sequence[str]) -> int | list[int] | None:
        """The descriptors with a term one word longer than ``words`` (a bag key)."""
        codes = self.superset.get(bag_key_of(words))
        if isinstance(codes, int) and codes < 0:
            return list(self.mesh_multi[~codes])
        return codes if codes is None or isinstance(codes, int) else list(codes)

    # ---- the context -----------------------------------------------------------------------

    def context(self, text: str) -> Context:
        """The facts of one context text, computed once for all the names normalised in it."""
        ctx = self._contexts.get(text)
        if ctx is None:
            ctx = Context(text)
            with self._lock:
                if len(self._contexts) >= CONTEXTS_KEPT:
                    self._contexts.clear()
                self._contexts[text] = ctx
        return ctx

    def pick_descriptor(self, items: Sequence[int], ctx: Context) -> int | None:
        """The one descriptor among several whose name's words the text uses most (a text names the
        concept it means); None on a tie."""

        def support(i: int) -> float:
            name = self.descriptor(i).name
            words = [w for w in tokens(name) if len(w) > 2 and w not in BAG_STOP]
            return sum(w in ctx.words for w in words) / len(words) if words else 0.0

        return unique_best(items, support)

    @functools.cached_property
    def word_weights(self) -> WordWeights:
        """How much of a disease or chemical name each word carries."""
        return WordWeights(self.word_weight_table)

    @functools.cached_property
    def longest_key(self) -> int:
        """The length of the longest index or bag key of MeSH: no longer phrase is a term."""
        if self.longest_mesh_key is not None:
            return self.longest_mesh_key
        return max(
            max(map(len, self.mesh_index), default=0), max(map(len, self.mesh_bag), default=0)
        )

    def id_hit(self, ontology_id: str, kind: str | None = None) -> Hit | None:
        """The concept an id names, as a hit of its own type (a MeSH concept of several trees:
        the type asked where it is one of them), None for an id not bundled."""
        if ontology_id.startswith("HGNC:"):
            i = self._ids.get(ontology_id)
            return None if i is None else Hit(GENE, i, "id", 1.0)
        i = self._ids.get(ontology_id)
        if i is None and (row := self.supplementary.find(ontology_id)) is not None:
            i = len(self.desc) + row
        if i is None:
            p = self._process_ids.get(ontology_id)
            return None if p is None else Hit(PATHWAY, p, "id", 1.0)
        types = [t for t, c in ID_CATEGORIES if c in self.descriptor(i).categories]
        if not types:
            return None
        return Hit(kind if kind in types else types[0], i, "id", 1.0)

    # ---- results ---------------------------------------------------------------------------

    def tried(self, t: str, stage: str, hit: Hit | None, none: str = "nothing") -> Hit | None:
        """``hit``, noted in the trace of ``explain`` when one is being kept."""
        trace = TRACE.get()
        if trace is not None:
            if hit is None:
                trace.append(f"{t}: {stage}: {none}")
            elif hit.item < 0:
                trace.append(f"{t}: {stage}: {hit.matched_by}, no id")
            else:
                row = self.row(hit)
                via = f" by way of {hit.via!r}" if hit.via else ""
                trace.append(f"{t}: {stage}: {row.id} {row.canonical} ({hit.matched_by}{via})")
        return hit

    def row(self, hit: Hit) -> Gene | Descriptor:
        """The table row a hit names."""
        if hit.type == GENE:
            return self.gene_row(hit.item)
        return self.process_row(hit.item) if hit.type == PATHWAY else self.descriptor(hit.item)

    def result(self, name: str, type_: str, hit: Hit) -> Normalized:
        """A hit as the normaliser's answer for ``name``."""
        if not hit.candidates:
            ids: tuple[str, ...] = ()
        else:
            ids = tuple(self.row(hit._replace(item=i)).id for i in hit.candidates)
        if hit.item < 0:  # ambiguous, or abstained
            return Normalized(
                name, type_, clean_name(name), None, hit.matched_by, hit.score, ids, via=hit.via
            )
        row = self.row(hit)
        return Normalized(
            name, type_, row.canonical, row.id, hit.matched_by, hit.score, ids, via=hit.via
        )
