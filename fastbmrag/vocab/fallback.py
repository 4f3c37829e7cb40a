"""The MeSH stages for a disease or chemical name that is no term as written: derived forms,
rewrites towards MeSH's wording, completions, and parts of the name (with abstention,
:mod:`fastbmrag.vocab.candidates`). Their order per type is the table :data:`FALLBACKS`; each
stage is a method that abstains (None) where it does not apply."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from fastbmrag.vocab.base import CHEMICAL, DISEASE, Normalized
from fastbmrag.vocab.candidate_stages import LIST_RE, CandidateStages
from fastbmrag.vocab.chemistry import DRUG_WORDS, acid_forms
from fastbmrag.vocab.context import (
    AMBIGUOUS_SCORE,
    CATEGORY,
    CONTEXT_SENSITIVE,
    EXTEND_SCORE,
    HEAD_SCORE,
    PARENS_RE,
    REWRITE_SCORE,
    TRACE,
    Context,
    Hit,
    clean_name,
)
from fastbmrag.vocab.keys import BAG_STOP
from fastbmrag.vocab.language import (
    CONJ_RE,
    COURSE_WORDS,
    DISEASE_HEADS,
    DISEASE_SYNONYMS,
    FREE_CACHE_SIZE,
    LOSS_HEADS,
    MEASURES,
    ORGAN_ADJECTIVES,
    OTHER_CAUSES,
    SITE_SPELLINGS,
    VAGUE_HEADS,
    bag_key_of,
    combining_split,
    condition_key,
    more_rewrites,
    name_forms,
    organ_phrases,
    rewrites,
    suffix_variants,
    variants,
)


class MeshFallbacks(CandidateStages):
    """The fallback stages of :class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`."""

    def _mesh_tokens(self, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None:
        codes = self._mesh_index.get("".join(toks))
        if codes is not None:
            hit = self._mesh_codes(codes, t, ctx, 0)
            if hit is not None:
                return hit
        if len(toks) == 1 or not self._bag_words.issuperset(toks):
            return None  # a one-word bag key is the index key
        codes = self._mesh_bag.get(bag_key_of(toks))
        return None if codes is None else self._mesh_codes(codes, t, ctx, 0)

    def _is_key(self, phrase: Sequence[str]) -> bool:
        """Whether the phrase is an index or a bag key (of any category): else
        :meth:`_mesh_tokens` finds nothing for it."""
        return "".join(phrase) in self._mesh_index or (
            len(phrase) > 1
            and self._bag_words.issuperset(phrase)
            and bag_key_of(phrase) in self._mesh_bag
        )

    def _head_completions(self, stems: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """``(*stem, head)`` for each stem and each of :data:`DISEASE_HEADS` (in that order),
        kept only where it is an index or a bag key (see
        :func:`~fastbmrag.vocab.build.completion_tables`): the others cannot match."""
        out: list[tuple[str, ...]] = []
        for stem in stems:
            mask = self._completions.get("".join(stem), 0)
            if self._bag_words.issuperset(stem):
                mask |= self._bag_completions.get(bag_key_of(stem), 0)
            if mask:
                out += [(*stem, h) for bit, h in enumerate(DISEASE_HEADS) if mask >> bit & 1]
        return out

    def _fallback(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """The MeSH stages for a name that is no term as written, in the order of
        :data:`FALLBACKS`; the first that finds something decides."""
        toks = name_forms(clean)[1]
        trace = TRACE.get()
        for name, stage in FALLBACKS[t] if toks else FALLBACKS[t][:1]:
            if trace is None:
                hit = stage(self, clean, toks, t, ctx)
            else:  # explaining: each stage of this name, not those of the names it tries
                token = TRACE.set(None)
                try:
                    hit = stage(self, clean, toks, t, ctx)
                finally:
                    TRACE.reset(token)
                self._tried(t, name, hit)
            if hit is not None:
                return hit
        return None

    def _aside(self, clean: str, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None:
        """The name without a parenthesised aside: "central nervous system (CNS)
        complications"."""
        if "(" not in clean:
            return None
        bare = clean_name(PARENS_RE.sub("", clean))
        if not bare or bare == clean:
            return None
        hit = self._direct(bare, t, ctx) or self._fallback(bare, t, ctx)
        if hit is None or hit.item < 0:
            return None
        if hit.matched_by in CONTEXT_SENSITIVE:
            return hit
        return Hit(hit.type, hit.item, "rewrite", REWRITE_SCORE, hit.candidates, hit.via or bare)

    def _rewritten(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """Derived forms of the last word and rewrites towards MeSH's wording, most literal
        first (adjective to noun, organ adjective to organ, tumour to neoplasm ...:
        :mod:`fastbmrag.vocab.language`; for chemicals, an anion as its acid, a class of drugs
        and an agent as MeSH names them: :mod:`fastbmrag.vocab.chemistry`); for diseases, a word
        for disease added, an organ's damage; the head word as its descriptor's own name."""
        body = toks[:-1]
        derived = [(*body, v) for v in suffix_variants(toks[-1], 2)]
        tries: list[tuple[str, Sequence[str]]] = [("derived", v) for v in derived]
        if t == CHEMICAL:
            tries += [("rewrite", (*body, *acid)) for acid in acid_forms(toks[-1])]
            if toks[-1] in DRUG_WORDS and body:
                tries += [("rewrite", (*body, w)) for w in ("agent", "drug") if w != toks[-1]]
        if t == DISEASE:
            tries += [("rewrite", r) for r in rewrites(toks)]
            tries += [("completion", c) for c in self._head_completions((*derived, toks))]
            tries += [("organ", o) for o in organ_phrases(toks)]
            if len(toks) == 1 and toks[0].endswith("toxicity") and len(toks[0]) > 9:
                # "cytotoxicity": the compound's head
                tries.append(("organ", ("drug", "toxicity")))
            tries += [("rewrite", r) for r in more_rewrites(toks)]
        if len(toks) > 1:
            # The head word as its descriptor's own name: "supraventricular
            # tachyarrhythmia" -> supraventricular tachycardia.
            head = self._mesh_tokens(toks[-1:], t, None)
            if head is not None and head.item >= 0:
                name = name_forms(self._desc[head.item][1])[1]
                if name != toks[-1:]:
                    tries.append(("rewrite", (*toks[:-1], *name)))
        for label, phrase in tries:
            hit = self._first_term((phrase,), t, ctx, label)
            if hit is not None:
                return hit
        return None

    def _adjective_as_noun(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """An adjective before a head as its noun ("neuronal degeneration" -> neuron
        degeneration, "olfactory disorder" -> olfaction disorder), only where the noun is a
        word of some term; the loss of a tissue as its degeneration ("neuronal loss" -> Nerve
        Degeneration). Tried late, as few names get this far."""
        if len(toks) != 2:
            return None
        first, last = toks
        late: list[tuple[str, ...]] = [(v, last) for v in variants(first) if v in self._bag_words]
        if last in LOSS_HEADS:
            late += [(v, "degeneration") for v in (first, *variants(first))]
        return self._first_term(late, t, ctx, "rewrite")

    def _one_word_short(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """A name one word short of a disease term (:meth:`_superset_hit`)."""
        return self._superset_hit(toks, ctx) if len(toks) > 1 else None

    def _one_conjunct(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """One conjunct of a coordination (:meth:`_conjunct`)."""
        return self._conjunct(clean, t, ctx) if len(toks) > 2 else None

    def _site(self, clean: str, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None:
        """The disease of a site (:meth:`_site_disease`)."""
        return self._site_disease(toks, ctx) if len(toks) > 1 else None

    def _completed(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """A one-word name completed (:meth:`_extend`)."""
        return self._extend(toks[0], t) if len(toks) == 1 else None

    def _head_word(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """A one-word disease name completed to its most general disease (:meth:`_head`)."""
        return self._head(toks, ctx) if len(toks) == 1 else None

    def _combining(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """A combining form and a disease word: "myonecrosis" -> muscular necrosis,
        "immunodeficiency" -> immunologic deficiency (syndrome), or a disease of the site
        ("muscular necrosis" -> muscular disease); the rest must be a word of some term."""
        split = combining_split(toks[0]) if len(toks) == 1 else None
        if not split or split.rsplit(" ", 1)[1] not in self._bag_words:
            return None
        parts = name_forms(split)[1]
        hit = (
            self._direct(split, t, ctx)
            or self._first_term(self._head_completions((parts,)), t, ctx, "rewrite")
            or self._site_disease(parts, ctx)
        )
        if hit is None or hit.item < 0:
            return None
        return Hit(hit.type, hit.item, "rewrite", REWRITE_SCORE, hit.candidates)

    def _a_part(self, clean: str, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None:
        """A part of the name (:meth:`_partial`)."""
        return self._partial(toks, t, ctx, listed=LIST_RE.search(clean) is not None)

    def _head_of_longer(
        self, clean: str, toks: Sequence[str], t: str, ctx: Context | None
    ) -> Hit | None:
        """No part is a term: the head word completed ("impaired overnight memory" -> Memory
        Disorders), unless it is a word any condition can have ("lesion", "failure"), only to a
        descriptor whose name has it as its head ("Vision Disorders"; not "Pressure Ulcer" for
        "intraocular pressure") and adds no other word than one for disease ("axonal
        degeneration" is no Retinal Degeneration)."""
        if len(toks) < 2 or toks[-1] in VAGUE_HEADS:
            return None
        hit = self._head(toks, ctx)
        if hit is None:
            return None
        # an ambiguous completion's first candidate is the most general one
        item = hit.item if hit.item >= 0 else hit.candidates[0]
        if self._names_head(item, toks[-1]) and not self._adds_modifier(item, toks):
            return hit
        return None

    def _induced_form(self, clean: str, ctx: Context | None, item: int = -1) -> int | None:
        """The drug-induced descriptor of a condition named in a sentence about a drug's effects
        ("hepatitis" -> Chemical and Drug Induced Liver Injury), or written as induced by a
        named substance ("levodopa-induced dyskinesia" -> Dyskinesia, Drug-Induced)."""
        if not self._drug_induced:
            return None
        if ctx is None and "induced" not in clean.lower():
            return None  # not said to be induced, and no sentence to say it
        written = clean
        if ctx is not None and clean in ctx.windows:
            clean = ctx.abbreviations.get(clean, clean)
        if not OTHER_CAUSES.isdisjoint(name_forms(clean)[1]):
            return None
        key, induced = condition_key(clean)
        found = self._drug_induced.get(key)
        if found is None and item >= 0:
            # The condition as found ("dyskinetic" -> Dyskinesias, "hepatic injury" -> Liver
            # Diseases): the drug-induced form of that descriptor's own name.
            found = self._drug_induced.get(condition_key(self._desc[item][1])[0])
            if found is None:
                found = self._induced_child.get(item)
        if found is None or induced or (ctx is not None and ctx.drug_cause(written, clean)):
            return found
        return None  # neither said to be induced nor in a sentence about a drug's effects

    def _names_head(self, item: int, word: str) -> bool:
        """Whether the descriptor's name ends in ``word`` (or a derived form of it), or in it
        and a word for disease ("Vision Disorders")."""
        name = name_forms(self._desc[item][1])[1]
        forms = (word, *variants(word))
        return name[-1] in forms or (
            len(name) > 1 and name[-2] in forms and name[-1] in DISEASE_HEADS
        )

    def _adds_modifier(self, item: int, toks: Sequence[str]) -> bool:
        """Whether the descriptor's name has a word the name lacks besides its head and a word
        for disease: "axonal degeneration" is no Retinal Degeneration, "ureteric obstruction"
        no Intestinal Obstruction; "impaired memory" may be Memory Disorders."""
        written = {f for w in toks for f in (w, *variants(w))}
        name = name_forms(self._desc[item][1])[1]
        return any(w not in written and w not in DISEASE_HEADS for w in name)

    def _first_term(
        self, tries: Iterable[Sequence[str]], t: str, ctx: Context | None, stage: str
    ) -> Hit | None:
        """The first phrase of ``tries`` that is a term of the type, as a hit of ``stage``. Most
        tries name no term: both keys are looked up inline first (as :meth:`_mesh_tokens`
        does), and only a phrase with a key goes through :meth:`_mesh_tokens`. A phrase
        tried twice is looked up twice: cheaper than removing the few repeats."""
        index, bag, bag_words = self._mesh_index, self._mesh_bag, self._bag_words
        for phrase in tries:
            if "".join(phrase) not in index and (
                len(phrase) == 1
                or not bag_words.issuperset(phrase)
                or bag_key_of(phrase) not in bag
            ):
                continue
            hit = self._mesh_tokens(phrase, t, ctx)
            if hit is not None and hit.item >= 0:
                return Hit(
                    hit.type, hit.item, stage, REWRITE_SCORE, hit.candidates, " ".join(phrase)
                )
        return None

    def _site_disease(self, toks: Sequence[str], ctx: Context | None) -> Hit | None:
        """The modifiers as the site of a disease, when the head only says that the site is
        diseased ("bladder inflammation" -> bladder disease, "bone marrow necrosis" -> bone
        marrow disease, "cardiovascular toxicity" -> cardiovascular disease); not when the
        name ends in a term of two or more words ("acute myocardial infarction")."""
        if toks[-1] in DISEASE_SYNONYMS or toks[-1] in MEASURES or not self._site_head(toks[-1]):
            return None  # a measure of the site is no disease of it ("heart rate")
        for k in range(len(toks) - 1):
            if self._is_key(toks[k:]) and self._mesh_tokens(toks[k:], DISEASE, None):
                return None
        site = [w for w in toks[:-1] if w not in COURSE_WORDS and w not in BAG_STOP]
        if not site:
            return None
        organ = [x for w in site for x in ORGAN_ADJECTIVES.get(w, w).split()]
        hit = self._first_term(
            ([*site, "disease"], [*organ, "disease"], [*site, "disorder"], [*organ, "disorder"]),
            DISEASE,
            ctx,
            "site",
        )
        if hit is not None and "F" in self._desc[hit.item][2] and self._is_process(toks[-1]):
            return None  # a tissue's process has a body site, no mind: "reactive gliosis"
        if hit is not None:
            return hit
        if (
            len(site) > 1
            and site[0] in ORGAN_ADJECTIVES
            and not (self._is_key(site) and self._mesh_tokens(site, DISEASE, None))
        ):
            # A part of an organ or a faculty: "visual field loss" -> vision disorder (not
            # when the modifiers name a disease: "pulmonary hypertension syndrome").
            organ = ORGAN_ADJECTIVES[site[0]].split()
            hit = self._first_term(
                ([*organ, "disease"], [*organ, "disorder"]), DISEASE, ctx, "site"
            )
            if hit is not None:
                return hit
        key = sorted(site)
        for ends in ((*site, "disorder"), (*site, "disease")):
            # One word short of a descriptor whose name ends in it: "platelet aggregation" ->
            # platelet disorder -> Blood Platelet Disorders, "marrow suppression" -> Bone
            # Marrow Diseases.
            if " ".join(sorted([*key, ends[-1]])) not in self._superset:
                continue
            hit = self._superset_hit(ends, ctx)
            if hit is not None and name_forms(self._desc[hit.item][1])[1][-len(ends) :] == ends:
                return hit
        return None

    def _site_head(self, word: str) -> bool:
        """Whether a head word says only that its site is diseased: a pathologic process
        (MeSH C23.550: inflammation, necrosis, sclerosis), or no disease term at all."""
        known = self._site_heads.get(word)
        if known is None:
            known = self._site_head_uncached(word)
            if len(self._site_heads) >= FREE_CACHE_SIZE:
                self._site_heads.clear()
            self._site_heads[word] = known
        return known

    def _is_process(self, word: str) -> bool:
        """Whether the word names a pathologic process (MeSH C23.550: gliosis, necrosis)."""
        hit = self._mesh_tokens([word], DISEASE, None)
        return hit is not None and hit.item in self._processes

    def _site_head_uncached(self, word: str) -> bool:
        hit = self._mesh_tokens([word], DISEASE, None)
        if hit is None:
            hit = next(
                (h for v in variants(word) if (h := self._mesh_tokens([v], DISEASE, None))),
                None,
            )
        return hit is None or hit.item in self._processes

    def _superset_hit(self, toks: Sequence[str], ctx: Context | None) -> Hit | None:
        """A name one word short of a disease term ("variant angina" -> Angina Pectoris,
        Variant); several such terms: the one above the others in the tree, else the one the
        context names."""
        words = [x for x in toks if x not in BAG_STOP]
        codes = self._superset_codes(words)
        if codes is None:
            return None
        if isinstance(codes, int):
            # The site as MeSH may also write it: "lung nodule" is one word short of Solitary
            # Lung Nodule, and "pulmonary nodule" of Multiple Pulmonary Nodules too.
            found = [codes]
            for site in (w for w in words if w in SITE_SPELLINGS):
                for spelling in SITE_SPELLINGS[site]:
                    other = self._superset_codes([spelling if w == site else w for w in words])
                    found += [other] if isinstance(other, int) else other or []
            if len(set(found)) > 1:
                codes = list(dict.fromkeys(found))
        core = [x for x in toks if x not in COURSE_WORDS]
        if len(core) < len(toks) and core and self._mesh_tokens(core, DISEASE, None) is not None:
            return None  # "acute myocardial infarction": a course word on a term of its own
        if isinstance(codes, int):
            return Hit(DISEASE, codes, "completion", REWRITE_SCORE)
        chosen = self._pick_descriptor(codes, ctx) if ctx is not None else None
        if chosen is None:
            return None
        return Hit(DISEASE, chosen, "completion", REWRITE_SCORE, tuple(codes))

    def _superset_codes(self, words: Sequence[str]) -> int | list[int] | None:
        codes = self._superset.get(bag_key_of(words))
        if isinstance(codes, int) and codes < 0:
            return list(self._mesh_multi[~codes])
        return codes if codes is None or isinstance(codes, int) else list(codes)

    def _conjunct(self, clean: str, t: str, ctx: Context | None) -> Hit | None:
        """A coordination whose parts do not all name a condition (see :meth:`_coordination`):
        one conjunct, the last written in full first ("pulmonary and renal insufficiency" ->
        renal insufficiency), then the others with the shared head restored ("cardiac and
        renal lesions" -> cardiac lesions)."""
        parts = [p for p in CONJ_RE.split(clean) if p.strip()]
        if len(parts) < 2:
            return None
        head = parts[-1].split()
        tries = []
        if len(head) == 1 and len(parts[0].split()) > 1:
            # The modifiers are shared instead: "endometrial hyperplasia or cancer",
            # "cancer of the renal pelvis, ureter or bladder".
            tries.append(parts[0])
        for part in (parts[-1], *parts[:-1]):
            words = part.split()
            if len(words) < len(head) and len(head) > 1:
                tries.append(" ".join([*words, *head[len(words) - len(head) :]]))
                tries.append(" ".join([*words, head[-1]]))
            tries.append(part)
        for phrase in dict.fromkeys(tries):
            hit = self._direct(phrase, t, ctx) or self._fallback(phrase, t, ctx)
            if hit is not None and hit.item >= 0 and hit.matched_by not in ("partial", "extend"):
                return Hit(hit.type, hit.item, "conjunct", REWRITE_SCORE, hit.candidates)
        return None

    def _coordination(self, name: str, clean: str, ctx: Context | None) -> Normalized | None:
        """A coordination of diseases, one result per part: "breast and ovarian cancer" ->
        Breast Neoplasms + Ovarian Neoplasms, "type 1 and type 2 diabetes" -> both types. Every
        part must name its own condition (the shared head restored: "breast" -> "breast
        cancer"), each a different one; otherwise the name is read whole."""
        resolved = []
        for phrases in _conjuncts(clean):
            for phrase in phrases:
                r = self._normalize(phrase, DISEASE, ctx)
                if r.ontology_id is not None and r.matched_by in _WHOLE_PART:
                    resolved.append(r)
                    break
            else:
                return None
        ids = tuple(r.ontology_id or "" for r in resolved)
        if len(resolved) < 2 or len(set(ids)) < len(ids):
            return None
        score = min(r.score for r in resolved)
        return Normalized(name, DISEASE, clean, None, "coordination", score, ids, tuple(resolved))

    def _head(self, toks: Sequence[str], ctx: Context | None = None) -> Hit | None:
        """ "diabetes" -> Diabetes Mellitus: the most general disease with a two-word term
        holding the word (see :func:`fastbmrag.vocab.build.compile_mesh`); also for the last
        word of a longer name whose modifiers matched nothing ("impaired overnight memory").
        Where other diseases have such a term too ("glomerulosclerosis": Diabetic
        Nephropathies, Glomerulosclerosis, Focal Segmental) and the context picks none, the
        vocabulary gives no one completion: ambiguous."""
        for word in (*variants(toks[-1]), toks[-1]):
            item = self._mesh_head.get(word)
            if item is not None and "C" in self._desc[item][2]:
                score = HEAD_SCORE if len(toks) == 1 else 0.55
                chosen = self._head_from_context(word, ctx) if ctx is not None else None
                if chosen is not None and chosen != item:
                    return Hit(DISEASE, chosen, "head", score, (item, chosen))
                codes = self._mesh_extend.get(word)
                others = set() if codes is None else self._concepts(codes) - {item}
                top = self._desc[item][0]
                others = {
                    i
                    for i in others
                    if "C" in self._desc[i][2] and top not in self._mesh_ancestors.get(i, ())
                }  # a completion to a concept above the others is no guess
                if others and chosen is None:
                    return Hit(DISEASE, -1, "ambiguous", AMBIGUOUS_SCORE, (item, *sorted(others)))
                return Hit(DISEASE, item, "head", score)
        return None

    def _head_from_context(self, word: str, ctx: Context) -> int | None:
        """The candidate completion of ``word`` whose other term word the context uses:
        "hyperactivity" in a text on locomotor activity -> Hyperkinesis ("Motor
        Hyperactivity"), not Psychomotor Agitation ("Psychomotor Hyperactivity"). A context
        word counts fully when it is the partner, half when it is a compound ending in it
        ("locomotor" is a kind of "motor")."""
        partners = self._head_partners.get(word)
        if not partners:
            return None
        words = ctx.words

        def support(entry: list[Any]) -> float:
            best = 0.0
            for other in entry[1]:
                if other in words:
                    return 1.0
                if len(other) >= 4 and any(
                    len(w) > len(other) + 2 and w.endswith(other) for w in words
                ):
                    best = 0.5
            return best

        scored = sorted(((support(e), e[0]) for e in partners), reverse=True)
        best, item = scored[0]
        if best > 0 and "C" in self._desc[item][2] and (len(scored) == 1 or best > scored[1][0]):
            return int(item)
        return None

    def _extend(self, word: str, t: str) -> Hit | None:
        """A one-word name completed to the only two-word term of its type that contains it
        ("ecstasy" -> "Ecstasy (Drug)"). For a chemical, the build keeps only terms where the
        added word names the word's form or kind (``mesh_tables.completes_word``). The completion adds a
        word the name lacks: for a disease, :meth:`_normalize` gives no id ("weakness" is not
        only Muscle Weakness)."""
        codes = self._mesh_extend.get(word)
        if codes is None:
            return None
        if isinstance(codes, int) and codes < 0:
            codes = self._mesh_multi[~codes]
        cat = CATEGORY[t]
        items = {c // 2 for c in ([codes] if isinstance(codes, int) else codes)}
        fitting = [i for i in items if cat in self._desc[i][2]]
        if len(fitting) != 1:
            return None
        return Hit(t, fitting[0], "extend", EXTEND_SCORE)


_Stage = Callable[[MeshFallbacks, str, Sequence[str], str, "Context | None"], "Hit | None"]

# The fallback stages of each type, in order, each with the name `normalize --explain` gives it;
# each abstains (None) where it does not apply.
FALLBACKS: dict[str, tuple[tuple[str, _Stage], ...]] = {
    DISEASE: (
        ("the name without its aside", MeshFallbacks._aside),
        ("derived forms and rewrites", MeshFallbacks._rewritten),
        ("an adjective as its noun", MeshFallbacks._adjective_as_noun),
        ("one word short of a term", MeshFallbacks._one_word_short),
        ("one conjunct", MeshFallbacks._one_conjunct),
        ("the disease of its site", MeshFallbacks._site),
        ("a one-word completion", MeshFallbacks._completed),
        ("the word's most general disease", MeshFallbacks._head_word),
        ("a combining form split", MeshFallbacks._combining),
        ("a part of the name", MeshFallbacks._a_part),
        ("the head word completed", MeshFallbacks._head_of_longer),
    ),
    CHEMICAL: (
        ("the name without its aside", MeshFallbacks._aside),
        ("derived forms and rewrites", MeshFallbacks._rewritten),
        ("a one-word completion", MeshFallbacks._completed),
        ("a part of the name", MeshFallbacks._a_part),
    ),
}

# How each part of a coordination must match to give the coordination one id per part: as a
# term, not through a rewrite (a part's rewrite is less sure than a whole name's).
_WHOLE_PART = frozenset(("name", "entry_term", "word_order", "abbreviation"))


def _conjuncts(clean: str) -> list[list[str]]:
    """The parts of a coordination, each as the phrases to try, the shared words restored
    first: "breast and ovarian cancer" -> [["breast cancer", "breast"], ["ovarian cancer"]];
    "endometrial hyperplasia or cancer" (shared modifiers) -> [["endometrial hyperplasia"],
    ["endometrial cancer", "cancer"]]. Fewer than two parts: none."""
    parts = [p for p in CONJ_RE.split(clean) if p.strip()]
    if len(parts) < 2:
        return []
    head = parts[-1].split()
    first = parts[0].split()
    out = []
    for part in parts:
        words = part.split()
        tries = []
        if part is parts[-1] and len(head) == 1 and len(first) > 1:
            tries.append(" ".join([*first[:-1], *words]))  # the modifiers are shared
        elif part is not parts[-1] and len(words) < len(head):
            tries.append(" ".join([*words, *head[len(words) - len(head) :]]))
            tries.append(" ".join([*words, head[-1]]))
        tries.append(part)
        out.append(list(dict.fromkeys(tries)))
    return out
