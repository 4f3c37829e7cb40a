"""Dictionary normaliser: genes -> HGNC, diseases -> MeSH (C tree, F03), chemicals -> MeSH (D tree).

No model, no network: lookups in the compact files built by :mod:`fastbmrag.vocab.build`.
The stages of each type and their order are two tables: :data:`STAGES` (here) and, for a name
that is no term as written, :data:`~fastbmrag.vocab.fallback.FALLBACKS`; ``normalize --explain``
prints them as tried.

The stages, by module: :mod:`~fastbmrag.vocab.keys` (text keys shared with the build),
:mod:`~fastbmrag.vocab.context` (what a text defines, a stage's hit, the scores), this module
(exact lookups, the decision), :mod:`~fastbmrag.vocab.abbreviations` (short forms),
:mod:`~fastbmrag.vocab.genes` (HGNC, gene families, isoforms, coordinations),
:mod:`~fastbmrag.vocab.phenomena` (names written beyond the dictionary),
:mod:`~fastbmrag.vocab.fallback` (MeSH stages for names that are no term as written, the
drug-induced forms) with :mod:`~fastbmrag.vocab.language` (the word tables and rewrites they
use) and :mod:`~fastbmrag.vocab.chemistry` (formulae, codes, locants, salts),
:mod:`~fastbmrag.vocab.candidate_stages` (parts and misspellings) with
:mod:`~fastbmrag.vocab.candidates` (word weights, spellings and abstention),
:mod:`~fastbmrag.vocab.mentions` (names in free text) and :mod:`~fastbmrag.vocab.facts` (what
the vocabularies say of an id). The build: :mod:`~fastbmrag.vocab.sources` (readers),
:mod:`~fastbmrag.vocab.build`, :mod:`~fastbmrag.vocab.mesh_tables`,
:mod:`~fastbmrag.vocab.gene_families`, :mod:`~fastbmrag.vocab.download`;
:mod:`~fastbmrag.vocab.loading` finds and loads them.

``matched_by`` values (how the returned id was found), with their scores:

===============  =====  ===============================================================
matched_by       score  meaning
===============  =====  ===============================================================
``symbol``       1.00   HGNC approved symbol (case, punctuation, Greek letters folded)
``name``         0.95   HGNC approved name, or the MeSH descriptor's own name
``prev_symbol``  0.90   HGNC previous symbol
``entry_term``   0.90   a MeSH entry term (synonym, permuted form, spelling variant)
``alias``        0.85   HGNC alias symbol
``prev_name``    0.85   HGNC previous name
``alias_name``   0.80   HGNC alias name
``word_order``   0.80   the same words as a MeSH term in another order
``abbreviation`` x0.95  a short form defined in the context ("... (HNF-6) ...") whose long
                        form matched; score is the long form's score times 0.95 (x0.9 for
                        a defined short form inside a longer name, "HBV infection"; x0.7
                        for an undefined one spelt out by words of the text, "acute liver
                        failure ... ALF patients"); a defined short form is no gene whose
                        name shares no word with its long form ("analysis of variance
                        (ANOVA)" is no NOVA2)
``drug_induced`` x0.95  the drug-induced descriptor of the condition found, when the name
                        says "X-induced" or the sentence of the context that names it
                        speaks of a drug's effects ("X-induced", "toxicity", "adverse
                        effects", "overdose" ...; a cue in another sentence does not count):
                        "hepatitis" -> Chemical and Drug Induced Liver Injury (MeSH's own
                        entry term "Hepatitis, Drug-Induced"); also the drug-induced
                        form of the descriptor found ("dyskinetic" -> Dyskinesias ->
                        Dyskinesia, Drug-Induced); never when the name states another
                        cause ("viral hepatitis", "radiation-induced"); see ``compile_mesh``
``derived``      0.70   a derived form of the last word: "hypotensive" -> hypotension,
                        "psychotic" -> psychosis, "contrast medium" -> contrast media
``rewrite``      0.70   a rewrite towards MeSH's wording: "extrapyramidal symptoms" ->
                        extrapyramidal disorder, "liver tumors" -> liver neoplasm, "gastric"
                        -> stomach, "D-glucarates" -> glucaric acid, "decreased renal
                        function" -> renal insufficiency; the name without a parenthesised
                        aside; a combining form split ("myonecrosis" -> muscular necrosis)
``completion``   0.70   a disease name one word short of a term: a word for disease added
                        ("bipolar" -> bipolar disorder, "sickle cell" -> sickle cell
                        disease), or the word the term has besides ("variant angina" ->
                        Angina Pectoris, Variant)
``organ``        0.70   an organ's damage as the organ's disease: "nephrotoxicity",
                        "renal damage" -> Kidney Diseases
``site``         0.70   a head that only says its site is diseased as the site's disease:
                        "bladder inflammation" -> Urinary Bladder Diseases
``conjunct``     0.70   one conjunct of a coordination whose parts are not all terms:
                        "pulmonary and renal insufficiency" -> Renal Insufficiency
``head``         0.60   one disease word completed to the most general descriptor with a
                        two-word term holding it (largest MeSH subtree): "diabetes" ->
                        Diabetes Mellitus, "overdosage" -> Drug Overdose; a tree sibling
                        instead when the context uses its other term word
                        ("hyperactivity" + "locomotor" -> Hyperkinesis); ambiguous when
                        another disease not below it completes the word too and the context
                        picks none ("rigidity": Muscle Rigidity, Decerebrate State); 0.55 for
                        the head word of a longer name no part of which is a term, to a
                        name that adds only a word for disease ("impaired overnight memory"
                        -> Memory Disorders; "axonal degeneration" is no Retinal
                        Degeneration)
``partial``      0.50+  the longest part of the name that is a MeSH term ("severe
                        hypotension" -> Hypotension); 0.5 + 0.3 x the share of the name's
                        word weight the part carries (:mod:`fastbmrag.vocab.candidates`)
``coordination`` min    several genes or diseases, each part its own result in ``parts``
                        ("SMAD2/3", "breast and ovarian cancer": the shared head restored);
                        a disease coordination only when every part is a term as written
``ambiguous``    0.50   the name fits several entries equally well and the context does not
                        decide, or joins two chemicals ("iron dextran": a complex of both);
                        ``ontology_id`` is None and ``candidates`` lists the ids
``spelling``     0.65   the one descriptor of the type whose term the name misspells, by a
                        letter or two ("epirubicine", "dysguesia"): one edit per ten letters,
                        six letters or more, the first two as written
                        (:class:`~fastbmrag.vocab.candidates.Spellings`)
``extend``       0.60   a one-word chemical name completed to the only two-word chemical term
                        holding it, one that names its form or kind ("Ecstasy (Drug)")
``abstained``    <0.71  a name whose only term is a part carrying less of its word weight
                        than 70 % for a disease ("forestomach tumors" is not Neoplasms), 40 %
                        for a chemical ("sodium 3-sulfanylpropanesulfonate" is not Sodium);
                        a code's letters without its number ("PBDE-47"); or, for a disease,
                        the only two-word term holding its one word ("weakness"): no id,
                        ``candidates`` lists the descriptor
``none``         0.00   unknown, or a type with no vocabulary: the cleaned name, no id
===============  =====  ===============================================================

Before the lookup, "gene", "protein", "mRNA", "expression", "levels" words are dropped from
gene names, and plural, British spellings (anaemia, tumour, sulphate), possessives and
accents are folded on both sides. An alias or term that names several entries is resolved
from the context when exactly one candidate's symbol or name words appear in it; the
candidates are listed in ``candidates`` either way.

Context-free results are memoised per normaliser (LRU, 65,536 entries): ``normalize(name,
type)`` without context returns the same :class:`Normalized` object for a repeated name, and
calls with a context reuse the context-free lookup unless the context can change it (an
abbreviation it defines, an ambiguous or fallback match, a drug-induced form).

Types: ``gene`` (also ``protein``, ``rna``), ``disease`` (also ``disorder``, ``phenotype``,
``symptom``), ``chemical`` (also ``drug``, ``compound``, ``metabolite``) and ``auto`` (all
three, best score wins; a tie prefers an HGNC symbol, then a disease, then a chemical).
Any other type (``variant``, ``pathway``, ``cell``, ``other`` ...) passes through cleaned,
with no id.
"""

from __future__ import annotations

import functools
import gzip
import json
import pickle
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from fastbmrag.errors import VocabError
from fastbmrag.vocab.abbreviations import AbbreviationStages
from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, Normalized
from fastbmrag.vocab.build import (
    FORMAT_VERSION,
    MANIFEST,
    completion_tables,
)
from fastbmrag.vocab.candidates import Spellings, WordWeights, withheld
from fastbmrag.vocab.chemistry import formula_names, is_formula
from fastbmrag.vocab.context import (
    ALL_TYPES,
    AMBIGUOUS_SCORE,
    AUTO,
    CATEGORY,
    CONTEXT_SENSITIVE,
    DRUG_INDUCED_FACTOR,
    FORMULA_SCORE,
    MESH_MATCHED,
    MESH_SCORES,
    TRACE,
    TYPE_ALIASES,
    WORD_ORDER_SCORE,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.facts import VocabularyFacts
from fastbmrag.vocab.fallback import MeshFallbacks
from fastbmrag.vocab.genes import GeneStages
from fastbmrag.vocab.keys import (
    BAG_STOP,
    raw_tokens,
    term_key,
    tokens,
    word_forms,
)
from fastbmrag.vocab.language import (
    AND_OR_CAPITALS,
    AND_OR_RE,
    CONJ_RE,
    DISEASE_HEADS,
    FREE_CACHE_SIZE,
    bag_key_of,
    condition_key,
    greek_initials,
    name_forms,
    organ_phrases_of,
    strip_gene_words,
    suffix_variants,
    tokens_key,
    unique_best,
)
from fastbmrag.vocab.mentions import MentionFinder


def _read_data(path: Path) -> Any:
    """A vocabulary data file: gzipped pickle (current) or gzipped JSON (older builds)."""
    raw = gzip.decompress(path.read_bytes())
    if path.name.endswith(".pickle.gz"):
        return pickle.loads(raw)  # noqa: S301 - written by build.py into the package or the user's own cache
    return json.loads(raw)


class DictionaryNormalizer(
    GeneStages, AbbreviationStages, MeshFallbacks, MentionFinder, VocabularyFacts
):
    """Normalises entity names with the HGNC and MeSH dictionaries. Thread-safe after loading."""

    def __init__(self, genes: dict[str, Any], mesh: dict[str, Any], manifest: dict[str, Any]):
        self.manifest = manifest
        # Code tables: a code, or ~p for the code list at position p of "multi" (files
        # written since the lists were packed; older ones hold the lists themselves).
        self._gene_multi: Sequence[Sequence[int]] = genes.get("multi", ())
        self._mesh_multi: Sequence[Sequence[int]] = mesh.get("multi", ())
        self._genes: list[list[str]] = genes["genes"]
        self._gene_index: dict[str, int | Sequence[int]] = genes["index"]
        self._desc: list[list[str]] = mesh["descriptors"]
        self._mesh_index: dict[str, int | Sequence[int]] = mesh["index"]
        self._mesh_bag: dict[str, int | Sequence[int]] = mesh["bag"]
        # Every word of a bag key (and the stop words bag keys leave out): a phrase with any
        # other word cannot be a bag key, so its key need not be built.
        bag_words = mesh.get("bag_words")
        if bag_words is None:  # built before the table was added
            bag_words = " ".join(self._mesh_bag).split()
        self._bag_words: frozenset[str] = frozenset(bag_words) | BAG_STOP
        if tuple(mesh.get("completion_heads", ())) != DISEASE_HEADS:  # an older build
            mesh = {**mesh, **completion_tables(self._mesh_index, self._mesh_bag)}
        self._completions: dict[str, int] = mesh["completions"]
        self._bag_completions: dict[str, int] = mesh["bag_completions"]
        self._mesh_exact: dict[str, int | Sequence[int]] = mesh.get("exact", {})
        self._mesh_extend: dict[str, int | Sequence[int]] = mesh.get("extend", {})
        self._mesh_head: dict[str, int] = mesh.get("head", {})
        self._head_partners: dict[str, list[list[Any]]] = mesh.get("head_partners", {})
        self._drug_induced: dict[str, int] = mesh.get("drug_induced", {})
        self._induced_child: dict[int, int] = mesh.get("induced_child", {})
        self._superset: dict[str, int | Sequence[int]] = mesh.get("superset", {})
        self._processes: frozenset[int] = frozenset(mesh.get("processes", ()))
        # Context-free results, memoised: names repeat a lot when a corpus is indexed. The
        # memos reach the normaliser through a weak reference, so that they form no cycle
        # with it: a dropped normaliser (~100 MB) is freed at once, not by a later full
        # collection of the garbage collector in the middle of someone's work.
        ref = weakref.ref(self)

        def free(name: str, type_hint: str) -> Normalized:
            return _alive(ref)._normalize(name, type_hint, None)

        def match_free(clean: str, t: str) -> Hit | None:
            return _alive(ref)._match_uncached(clean, t)

        self._free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(free)
        self._match_free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(match_free)
        self._contexts: dict[str, Context] = {}
        self._site_heads: dict[str, bool] = {}
        self._labels: dict[str, str] | None = None
        self._ids: dict[str, int] | None = None
        self._word_weights: WordWeights | None = None
        # the spelling index (15 ms): part of loading, as nearly every batch has a misspelling
        self._spellings = Spellings(self._mesh_index)
        self._word_weight_table: dict[str, Any] | None = mesh.get("word_weights")
        self._covered: dict[str, int] | None = None
        self._gene_groups: dict[int, list[str]] = genes.get("groups", {})
        self._group_names: dict[str, str] = genes.get("group_names", {})
        keys: dict[str, list[str]] = {}
        for group_id, group_name in self._group_names.items():
            keys.setdefault(term_key(group_name), []).append(group_id)
        # a gene group's name as a key, where it names one group only
        self._group_keys: dict[str, str] = {k: v[0] for k, v in keys.items() if len(v) == 1}
        self._stem_groups: dict[str, str] = genes.get("stem_groups", {})
        self._mesh_ancestors: dict[int, list[str]] = mesh.get("ancestors", {})
        self._lock = threading.Lock()

    @classmethod
    def from_dir(cls, path: Path) -> DictionaryNormalizer:
        """Load manifest.json and the two data files it names from ``path``."""
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            if int(manifest.get("format", 1)) > FORMAT_VERSION:
                raise VocabError(
                    f"The vocabularies in {path} were built by a newer fastbmrag (format "
                    f"{manifest['format']}, this one reads up to {FORMAT_VERSION}); run "
                    "`fastbmrag vocab update` to rebuild them, or upgrade fastbmrag."
                )
            files = manifest["files"]
            genes = _read_data(path / files["genes"])
            mesh = _read_data(path / files["mesh"])
        except (OSError, ValueError, KeyError, EOFError, pickle.UnpicklingError) as err:
            raise VocabError(
                f"Cannot load the vocabularies in {path} ({err}); "
                "run `fastbmrag vocab update` to rebuild them, or reinstall fastbmrag."
            ) from err
        return cls(genes, mesh, manifest)

    # ---- public API ------------------------------------------------------------------------

    def normalize(self, name: str, type_hint: str = AUTO, context: str = "") -> Normalized:
        """Normalise one name. ``type_hint``: gene, disease, chemical, auto, or any other type."""
        if not context:
            return self._free(name, type_hint)
        return self._normalize(name, type_hint, self._context(context))

    def _normalize(self, name: str, type_hint: str, ctx: Context | None) -> Normalized:
        """The decision: each type's match (``auto``: the best score of the three), then, for a gene
        with none, the name as written (isoform, coordination) or a family; a disease's
        weak part or one-word completion is offered, not given."""
        clean = clean_name(name)
        kind = TYPE_ALIASES.get(type_hint)  # as written, most often
        hint = type_hint if kind is not None else (type_hint or AUTO).strip().lower()
        if kind is None:
            kind = TYPE_ALIASES.get(hint)
        if not clean:
            return Normalized(name, hint, clean, None, "none", 0.0)
        if kind is None and hint != AUTO:
            return Normalized(name, hint, clean, None, "none", 0.0)
        types = ALL_TYPES if kind is None else (kind,)
        if (
            DISEASE in types
            and CONJ_RE.search(clean)
            and self._direct(clean, DISEASE, ctx) is None
            and (coordination := self._coordination(name, clean, ctx)) is not None
        ):
            self._tried(
                DISEASE, "a coordination", None, f"one id per part ({len(coordination.parts)})"
            )
            return coordination
        best: Hit | None = None
        for t in types:
            hit = self._match(clean, t, ctx)
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        if best is None and GENE in types:
            written = self._gene_as_written(name, clean, ctx) or self._gene_group(name, clean)
            if written is not None:
                return written
        if best is None:
            return Normalized(name, hint, clean, None, "none", 0.0)
        if withheld(best, clean):
            offered = tuple(dict.fromkeys((best.item, *best.candidates)))
            best = Hit(best.type, -1, "abstained", best.score, offered, best.via)
        return self._result(name, hint if kind is not None else best.type, best)

    def normalize_many(self, items: Iterable[tuple[str, ...] | Sequence[str]]) -> list[Normalized]:
        """Normalise ``(name,)``, ``(name, type)`` or ``(name, type, context)`` rows, in order."""
        out = []
        for row in items:
            name = row[0]
            type_hint = row[1] if len(row) > 1 and row[1] else AUTO
            context = row[2] if len(row) > 2 and row[2] else ""
            out.append(self.normalize(name, type_hint, context))
        return out

    # ---- matching --------------------------------------------------------------------------

    def _match(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        if TRACE.get() is not None:  # explaining: every stage runs, none from the memo
            hit = self._match_uncached(clean, t, ctx)
        else:
            hit = self._match_free(_free_key(clean, t), t)
            if ctx is not None and (
                hit is None
                or hit.item < 0
                or hit.matched_by in CONTEXT_SENSITIVE
                or clean in ctx.windows
            ):
                hit = self._match_uncached(clean, t, ctx)
        if t == DISEASE and hit is not None and hit.item >= 0:
            induced = self._induced_form(clean, ctx, hit.item)
            if induced is not None and induced != hit.item:
                score = round(hit.score * DRUG_INDUCED_FACTOR, 3)
                return Hit(t, induced, "drug_induced", score, (), self._desc[hit.item][1])
        return hit

    def _match_uncached(self, clean: str, t: str, ctx: Context | None = None) -> Hit | None:
        """The stages of :data:`STAGES` for one type, in order: the first hit wins, and a stage
        may end the search with no id (:data:`_NO_ID`). Stages that read the text are skipped
        without one."""
        for name, stage, reads_text in STAGES[t]:
            if reads_text and ctx is None:
                continue
            hit = stage(self, clean, t, ctx)
            if hit is _NO_ID:
                return None
            if self._tried(t, name, hit) is not None:
                return hit
        return None

    def _formula(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """A chemical formula, written as its names ("Ca2+", "NaHCO3")."""
        for formula in formula_names(clean):
            hit = self._direct(formula, t, None)
            if hit is not None and hit.item >= 0:
                return Hit(hit.type, hit.item, "formula", FORMULA_SCORE)
        return None

    def _as_written(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """The name as written (:meth:`_direct`), unless the text defines it as a short form
        whose long form shares no word with the gene found (:meth:`_disowned`): no id then."""
        hit = self._direct(clean, t, ctx)
        if hit is not None and ctx is not None and self._disowned(clean, hit, ctx):
            self._tried(t, "the name as written", hit)
            self._tried(t, "the long form the text defines shares no word with it", None, "dropped")
            return _NO_ID
        return hit

    def _formula_parts(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """A formula not found whole: its parts ("2 O3" of Fe2O3) name no other compound."""
        return _NO_ID if is_formula(clean) else None

    def _misspelling(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """A misspelt term (:class:`~fastbmrag.vocab.candidates.Spellings`)."""
        return self._spelling(clean, t)

    def _tried(self, t: str, stage: str, hit: Hit | None, none: str = "nothing") -> Hit | None:
        """``hit``, noted in the trace of :meth:`explain` when one is being kept."""
        trace = TRACE.get()
        if trace is not None:
            if hit is None:
                trace.append(f"{t}: {stage}: {none}")
            elif hit.item < 0:
                trace.append(f"{t}: {stage}: {hit.matched_by}, no id")
            else:
                row = self._genes[hit.item] if hit.type == GENE else self._desc[hit.item]
                via = f" by way of {hit.via!r}" if hit.via else ""
                trace.append(f"{t}: {stage}: {row[0]} {row[1]} ({hit.matched_by}{via})")
        return hit

    def explain(self, name: str, type_hint: str = AUTO, context: str = "") -> list[str]:
        """The stages tried for ``name``, in order, each with what it found (no memo used)."""
        trace: list[str] = []
        token = TRACE.set(trace)
        try:
            self._normalize(name, type_hint, self._context(context) if context else None)
        finally:
            TRACE.reset(token)
        return trace

    def _direct(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """Exact lookups: a gene's key (symbol > previous symbol > alias > names), without the words
        that say which kind of molecule; a MeSH term's key, its Greek initials written out, its
        words in another order, its hyphenated word joined."""
        if t == GENE:
            raw = raw_tokens(clean)
            hit = self._gene_codes(self._gene_lookup(raw), ctx)
            if hit is None:
                core = strip_gene_words(raw)
                if core and core != raw:
                    hit = self._gene_codes(self._gene_lookup(core), ctx)
            return hit
        plain, toks = name_forms(clean)
        codes = self._mesh_index.get("".join(toks))
        # The unfolded key only tells apart several descriptors under one key.
        several = codes is not None and (not isinstance(codes, int) or codes < 0)
        exact = "".join(plain) if several else ""
        hit = self._mesh_codes(codes, t, ctx, 0, exact)
        greek = greek_initials(clean) if hit is None and "-" in clean else None
        if greek is not None:  # before word order, which would drop "a-" as an article
            hit = self._direct(greek, t, ctx)
        if hit is None and self._bag_words.issuperset(toks):
            hit = self._mesh_codes(self._mesh_bag.get(bag_key_of(toks)), t, ctx, WORD_ORDER_SCORE)
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
                    hit = self._mesh_codes(self._mesh_index.get(joined), t, ctx, 0)
        return hit

    def _mesh_codes(
        self,
        codes: int | Sequence[int] | None,
        t: str,
        ctx: Context | None,
        fixed: float,
        exact_key: str = "",
    ) -> Hit | None:
        if codes is None:
            return None
        cat = CATEGORY[t]
        if isinstance(codes, int) and codes < 0:
            codes = self._mesh_multi[~codes]
        if isinstance(codes, int):
            if cat not in self._desc[codes // 2][2]:
                return None
            return Hit(t, codes // 2, MESH_MATCHED[codes % 2], fixed or MESH_SCORES[codes % 2])
        fitting = [c for c in codes if cat in self._desc[c // 2][2]]
        if not fitting:
            return None
        if exact_key and len(fitting) > 1:
            # "Alcohol" is an entry term of Ethanol, "Alcohols" a descriptor: the number decides.
            exact = self._mesh_exact.get(exact_key)
            if isinstance(exact, int) and exact in fitting:
                fitting = [exact]
        best_kind = fitting[0] % 2
        items = tuple(c // 2 for c in fitting if c % 2 == best_kind)
        score = fixed or MESH_SCORES[best_kind]
        if len(items) == 1:
            return Hit(t, items[0], MESH_MATCHED[best_kind], score)
        chosen = self._pick_descriptor(items, ctx) if ctx is not None else None
        if chosen is not None:
            return Hit(t, chosen, MESH_MATCHED[best_kind], round(score * 0.9, 3), items)
        return Hit(t, -1, "ambiguous", AMBIGUOUS_SCORE, items)

    # ---- context ---------------------------------------------------------------------------

    def _context(self, text: str) -> Context:
        ctx = self._contexts.get(text)
        if ctx is None:
            ctx = Context(text)
            with self._lock:
                if len(self._contexts) >= 256:
                    self._contexts.clear()
                self._contexts[text] = ctx
        return ctx

    def _pick_descriptor(self, items: Sequence[int], ctx: Context) -> int | None:
        """The one descriptor among several whose name's words the text uses most (a text names the
        concept it means); None on a tie."""

        def support(i: int) -> float:
            words = [w for w in tokens(self._desc[i][1]) if len(w) > 2 and w not in BAG_STOP]
            return sum(w in ctx.words for w in words) / len(words) if words else 0.0

        return unique_best(items, support)

    # ---- output ----------------------------------------------------------------------------

    def _result(self, name: str, type_: str, hit: Hit) -> Normalized:
        if not hit.candidates:
            ids: tuple[str, ...] = ()
        elif hit.type == GENE:
            ids = tuple(self._genes[i][0] for i in hit.candidates)
        else:
            ids = tuple(self._desc[i][0] for i in hit.candidates)
        if hit.item < 0:  # ambiguous, or abstained
            return Normalized(
                name, type_, clean_name(name), None, hit.matched_by, hit.score, ids, via=hit.via
            )
        row = self._genes[hit.item] if hit.type == GENE else self._desc[hit.item]
        return Normalized(name, type_, row[1], row[0], hit.matched_by, hit.score, ids, via=hit.via)


# A stage's answer that ends the search with no id.
_NO_ID = Hit("", -1, "none", 0.0)

# (normaliser, cleaned name, type, context or None) -> a hit, None, or _NO_ID
_Stage = Callable[..., "Hit | None"]
_D = DictionaryNormalizer

# The stages of each type, in order: (the name `normalize --explain` gives it, the stage, whether
# it reads the text). A short form's long form defined in the text comes first: a definition in
# the text beats the dictionary's reading of the short form, and a formula's ("warfarin (W)").
STAGES: dict[str, tuple[tuple[str, _Stage, bool], ...]] = {
    GENE: (
        ("a long form the text defines", _D._defined_long_form, True),
        ("the name as written", _D._as_written, False),
        ("short forms inside it spelt out", _D._expanded, True),
    ),
    DISEASE: (
        ("a long form the text defines", _D._defined_long_form, True),
        ("the name as written", _D._as_written, False),
        ("a short form of the text", _D._short_form, True),
        ("the fallbacks", _D._fallback, False),
        ("misspelling", _D._misspelling, False),
    ),
    CHEMICAL: (
        ("a long form the text defines", _D._defined_long_form, True),
        ("formula", _D._formula, False),
        ("the name as written", _D._as_written, False),
        ("a short form of the text", _D._short_form, True),
        ("the parts of a formula", _D._formula_parts, False),
        ("the fallbacks", _D._fallback, False),
        ("misspelling", _D._misspelling, False),
    ),
}


def _free_key(clean: str, t: str) -> str:
    """The key of the context-free memo: the name in lower case where case cannot change the
    context-free match ("Renal failure" = "renal failure"): ASCII, no formula ("Ca2+", "Ca(2+)
    channel blockers") for a chemical, and "and"/"or" already in lower case where written as words
    (coordination is split on the lower-case words only)."""
    if not clean.isascii():
        return clean
    low = clean.lower()
    if low == clean:
        return clean
    if t == CHEMICAL and formula_names(clean):
        return clean
    if not AND_OR_CAPITALS.isdisjoint(clean) and any(
        not m.islower() for m in AND_OR_RE.findall(clean)
    ):
        return clean
    return low


def _alive(ref: weakref.ReferenceType[DictionaryNormalizer]) -> DictionaryNormalizer:
    norm = ref()
    if norm is None:  # only a memo kept past its normaliser could get here
        raise ReferenceError("the normaliser of this memo is gone")
    return norm


def clear_caches() -> None:
    """Empty the per-process word and name memos (for benchmarks that start cold)."""
    for cached in (word_forms, condition_key, suffix_variants, name_forms, organ_phrases_of):
        cached.cache_clear()
