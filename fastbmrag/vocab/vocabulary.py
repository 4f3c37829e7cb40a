"""The vocabularies as the stages see them: HGNC's and MeSH's tables, loaded from the compact
files :mod:`fastbmrag.vocab.building.compile` writes, and the lookups every stage makes in them (a name's
MeSH keys, a code list read as a hit, the context picking among several descriptors), plus
what the vocabularies say of an id (label, broader concepts, facts). A gene's names are looked
up in :mod:`~fastbmrag.vocab.stages.genes`.

The stages are plain functions of a :class:`Vocabulary` (``stage(v, name, type, context) -> Hit
| None``); two lookups run stages themselves and are the normaliser's
(:class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`): :meth:`Vocabulary.fallback` (the
stages for a name that is no term as written) and :meth:`Vocabulary.resolve` (a whole name).
"""

from __future__ import annotations

import abc
import functools
import gzip
import json
import pickle
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from fastbmrag.errors import VocabError
from fastbmrag.vocab.base import GENE, PATHWAY, Normalized
from fastbmrag.vocab.context import (
    ABBREVIATION_FACTOR,
    AMBIGUOUS_SCORE,
    CATEGORY,
    MESH_MATCHED,
    MESH_SCORES,
    REWRITE_SCORE,
    TRACE,
    WORD_ORDER_SCORE,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.layout import (
    FORMAT_VERSION,
    GROUP_PREFIX,
    MANIFEST,
    Descriptor,
    Gene,
)
from fastbmrag.vocab.rules.candidates import Spellings, WordWeights
from fastbmrag.vocab.rules.keys import (
    BAG_STOP,
    term_key,
    tokens,
)
from fastbmrag.vocab.rules.language import (
    DISEASE_HEADS,
    bag_key_of,
    greek_initials,
    name_forms,
    tokens_key,
    unique_best,
)

# Contexts whose facts are kept (a document's names are normalised together).
CONTEXTS_KEPT = 256

V = TypeVar("V", bound="Vocabulary")


def read_data(path: Path) -> Any:
    """A vocabulary data file: a gzipped pickle."""
    return pickle.loads(gzip.decompress(path.read_bytes()))  # noqa: S301 - written by the build into the package or the user's own cache


class Vocabulary(abc.ABC):
    """HGNC and MeSH, loaded, with the lookups the stages share. Thread-safe after loading."""

    def __init__(self, genes: dict[str, Any], mesh: dict[str, Any], manifest: dict[str, Any]):
        self.manifest = manifest
        # Code tables: a code, or ~p for the code list at position p of "multi".
        self.gene_multi: Sequence[Sequence[int]] = genes["multi"]
        self.mesh_multi: Sequence[Sequence[int]] = mesh["multi"]
        # the tables' rows as stored (sequences); read them as named rows with gene_row(i),
        # descriptor(i), process_row(i) (layout.Gene, layout.Descriptor)
        self.genes: list[Sequence[str]] = genes["genes"]
        self.gene_index: dict[str, int | Sequence[int]] = genes["index"]
        self.desc: list[Sequence[str]] = mesh["descriptors"]
        self.mesh_index: dict[str, int | Sequence[int]] = mesh["index"]
        self.mesh_bag: dict[str, int | Sequence[int]] = mesh["bag"]
        # Every word of a bag key (and the stop words bag keys leave out): a phrase with any
        # other word cannot be a bag key, so its key need not be built.
        self.bag_words: frozenset[str] = frozenset(mesh["bag_words"]) | BAG_STOP
        self.completions: dict[str, int] = mesh["completions"]
        self.bag_completions: dict[str, int] = mesh["bag_completions"]
        self.mesh_exact: dict[str, int | Sequence[int]] = mesh["exact"]
        self.mesh_extend: dict[str, int | Sequence[int]] = mesh["extend"]
        self.mesh_head: dict[str, int] = mesh["head"]
        self.head_partners: dict[str, list[list[Any]]] = mesh["head_partners"]
        self.drug_induced: dict[str, int] = mesh["drug_induced"]
        self.induced_child: dict[int, int] = mesh["induced_child"]
        self.superset: dict[str, int | Sequence[int]] = mesh["superset"]
        self.processes: frozenset[int] = frozenset(mesh["processes"])
        self.mesh_ancestors: dict[int, list[str]] = mesh["ancestors"]
        self.common_words: dict[str, float] = mesh["common_words"]
        self.word_weight_table: dict[str, Any] = mesh["word_weights"]
        # biological processes (the "pathway" type), apart from the tables the stages read
        self.processes_desc: list[Sequence[str]] = mesh["process_descriptors"]
        self.process_index: dict[str, int | Sequence[int]] = mesh["process_index"]
        self.process_above: dict[int, list[str]] = mesh["process_ancestors"]
        self.entrez: dict[str, int] = genes["entrez"]
        # MeSH supplementary concepts (C id -> [name, heading descriptors]), where a vocab update
        # read NLM's supp20XX.xml; the bundled copy has none
        self.supplementary: dict[str, list[Any]] = mesh.get("supplementary", {})
        self.gene_groups: dict[int, list[str]] = genes["groups"]
        self.group_names: dict[str, str] = genes["group_names"]
        keys: dict[str, list[str]] = {}
        for group_id, group_name in self.group_names.items():
            keys.setdefault(term_key(group_name), []).append(group_id)
        # a gene group's name as a key, where it names one group only
        self.group_keys: dict[str, str] = {k: v[0] for k, v in keys.items() if len(v) == 1}
        self.stem_groups: dict[str, str] = genes["stem_groups"]
        # the spelling index (15 ms): part of loading, as nearly every batch has a misspelling
        self.spellings = Spellings(self.mesh_index)
        # built as names need them
        self._labels: dict[str, str] | None = None
        self._ids: dict[str, int] | None = None
        self._process_rows: dict[str, int] | None = None
        self._covered: dict[str, int] | None = None
        self._members: dict[str, tuple[int, ...]] | None = None
        self._contexts: dict[str, Context] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_dir(cls: type[V], path: Path) -> V:
        """Load manifest.json and the two data files it names from ``path``."""
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            built = int(manifest.get("format", 1))
            if built != FORMAT_VERSION:
                which = "a newer" if built > FORMAT_VERSION else "an older"
                raise VocabError(
                    f"The vocabularies in {path} were built by {which} fastbmrag (format "
                    f"{built}, this one reads {FORMAT_VERSION}); run `fastbmrag vocab update` to "
                    "rebuild them" + (", or upgrade fastbmrag." if built > FORMAT_VERSION else ".")
                )
            files = manifest["files"]
            genes = read_data(path / files["genes"])
            mesh = read_data(path / files["mesh"])
        except (OSError, ValueError, KeyError, EOFError, pickle.UnpicklingError) as err:
            raise VocabError(
                f"Cannot load the vocabularies in {path} ({err}); "
                "run `fastbmrag vocab update` to rebuild them, or reinstall fastbmrag."
            ) from err
        return cls(genes, mesh, manifest)

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

    def process(self, clean: str, ctx: Context | None) -> Hit | None:
        """A biological process's term as written, or the long form the text defines for it
        (``item``: a row of :attr:`processes_desc`)."""
        names = [clean]
        if ctx is not None and clean in ctx.abbreviations:
            names.append(ctx.abbreviations[clean])
        for n, name in enumerate(names):
            codes = self.process_index.get(term_key(name))
            if codes is None:
                continue
            if isinstance(codes, int):
                codes = self.mesh_multi[~codes] if codes < 0 else (codes,)
            kind = codes[0] % 2
            items = tuple(c // 2 for c in codes if c % 2 == kind)
            if len(items) > 1:
                return Hit(PATHWAY, -1, "ambiguous", AMBIGUOUS_SCORE, items)
            if n:
                return Hit(PATHWAY, items[0], "abbreviation",
                           round(MESH_SCORES[kind] * ABBREVIATION_FACTOR, 3), (), name)  # fmt: skip
            return Hit(PATHWAY, items[0], MESH_MATCHED[kind], MESH_SCORES[kind])
        return None

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
        score = fixed or MESH_SCORES[best_kind]
        if len(items) == 1:
            return Hit(t, items[0], MESH_MATCHED[best_kind], score)
        chosen = self.pick_descriptor(items, ctx) if ctx is not None else None
        if chosen is not None:
            return Hit(t, chosen, MESH_MATCHED[best_kind], round(score * 0.9, 3), items)
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
        return max(
            max(map(len, self.mesh_index), default=0), max(map(len, self.mesh_bag), default=0)
        )

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

    def gene_row(self, i: int) -> Gene:
        return Gene(*self.genes[i])

    def descriptor(self, i: int) -> Descriptor:
        return Descriptor(*self.desc[i])

    def process_row(self, i: int) -> Descriptor:
        return Descriptor(*self.processes_desc[i])

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

    # ---- what the vocabularies say of an id ------------------------------------------------

    def label(self, ontology_id: str) -> str | None:
        """A readable name for an HGNC or MeSH id: "IL1B (interleukin 1 beta)", "Endometriosis"."""
        if self._labels is None:
            labels = {hgnc: f"{symbol} ({name})" for hgnc, symbol, name, _ in self.genes}
            labels.update((ui, name) for ui, name, _categories in self.desc)
            labels.update((ui, name) for ui, name in self.processes_desc)
            labels.update(self.group_names)
            self._labels = labels
        found = self._labels.get(ontology_id)
        if found is None and ontology_id in self.supplementary:
            return str(self.supplementary[ontology_id][0])
        return found

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        """What a concept belongs to: a MeSH descriptor's ancestors in its trees, an HGNC gene's
        gene groups (families). Edges carry them, so a filter on a broad concept finds its
        narrower ones."""
        i = self._id_index().get(ontology_id)
        if i is None and ontology_id in self.supplementary:  # its headings, and theirs
            heads = self.supplementary[ontology_id][1]
            return tuple(dict.fromkeys(a for h in heads for a in (h, *self.ancestors(h))))
        if i is None:
            p = self._process_ids().get(ontology_id)
            return () if p is None else tuple(self.process_above.get(p, ()))
        if ontology_id.startswith("HGNC:"):
            return tuple(self.gene_groups.get(i, ()))
        return tuple(self.mesh_ancestors.get(i, ()))

    def covers(self, ontology_id: str) -> int:
        """How many concepts a filter on ``ontology_id`` covers: itself and every descriptor
        below it, or every gene of a gene group."""
        if self._covered is None:
            counts: dict[str, int] = {}
            above = (*self.mesh_ancestors.values(), *self.gene_groups.values())
            for ids in (*above, *self.process_above.values()):
                for a in ids:
                    counts[a] = counts.get(a, 0) + 1
            self._covered = counts
        if ontology_id.startswith(GROUP_PREFIX):
            return self._covered.get(ontology_id, 0)
        return 1 + self._covered.get(ontology_id, 0)

    def group_name(self, group_id: str) -> str | None:
        return self.group_names.get(group_id)

    def group_members(self, group_id: str) -> tuple[int, ...]:
        """The genes of an HGNC gene group, those of the groups below it included."""
        if self._members is None:
            members: dict[str, list[int]] = {}
            for i, groups in self.gene_groups.items():
                for g in groups:
                    members.setdefault(g, []).append(i)
            self._members = {g: tuple(m) for g, m in members.items()}
        return self._members.get(group_id, ())

    def _process_ids(self) -> dict[str, int]:
        if self._process_rows is None:
            self._process_rows = {ui: i for i, (ui, _name) in enumerate(self.processes_desc)}
        return self._process_rows

    def _id_index(self) -> dict[str, int]:
        if self._ids is None:
            ids = {hgnc_id: i for i, (hgnc_id, *_) in enumerate(self.genes)}
            ids.update((ui, i) for i, (ui, *_) in enumerate(self.desc))
            self._ids = ids
        return self._ids

    def facts(self, ontology_id: str) -> dict[str, str]:
        """What the vocabulary says of an id: an HGNC gene's symbol, name, locus group and gene
        groups; a MeSH descriptor's name, categories (disease, chemical) and broader
        descriptors."""
        if ontology_id in self.group_names:
            return {"source": "HGNC gene group", "name": self.group_names[ontology_id],
                    "genes": str(self.covers(ontology_id))}  # fmt: skip
        i = self._id_index().get(ontology_id)
        above = [self.label(a) or a for a in self.ancestors(ontology_id)]
        if i is None:
            p = self._process_ids().get(ontology_id)
            if p is None:
                return {}
            return {"source": "MeSH", "name": self.process_row(p).name,
                    "categories": "biological process", "broader": "; ".join(sorted(above))}  # fmt: skip
        if ontology_id.startswith("HGNC:"):
            g = self.gene_row(i)
            return {"source": "HGNC", "symbol": g.symbol, "name": g.name, "locus_group": g.locus_group,
                    "groups": "; ".join(above)}  # fmt: skip
        d = self.descriptor(i)
        kinds = {"C": "disease", "F": "mental disorder", "D": "chemical"}
        return {"source": "MeSH", "name": d.name,
                "categories": ", ".join(kinds[c] for c in d.categories if c in kinds),
                "broader": "; ".join(sorted(above))}  # fmt: skip

    def gene_of_ncbi(self, ncbi_id: str) -> str | None:
        """The HGNC id of a human NCBI Gene id, by HGNC's cross-reference ("7124" -> "HGNC:11892")."""
        i = self.entrez.get(ncbi_id)
        return None if i is None else self.gene_row(i).id

    def name_of(self, ontology_id: str) -> str | None:
        """The name an edge carries for an id: an HGNC gene's symbol, a MeSH descriptor's name."""
        i = self._id_index().get(ontology_id)
        if i is not None:
            row = self.gene_row(i) if ontology_id.startswith("HGNC:") else self.descriptor(i)
            return row.canonical
        if ontology_id in self.supplementary:
            return str(self.supplementary[ontology_id][0])
        p = self._process_ids().get(ontology_id)
        return None if p is None else self.process_row(p).name

    def gene(self, hgnc_id: str) -> tuple[str, str] | None:
        """(symbol, name) of an HGNC id, e.g. "HGNC:5992" -> ("IL1B", "interleukin 1 beta")."""
        i = self._id_index().get(hgnc_id) if hgnc_id.startswith("HGNC:") else None
        return None if i is None else (self.gene_row(i).symbol, self.gene_row(i).name)
