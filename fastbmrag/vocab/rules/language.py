"""How disease, chemical and gene names are written: word tables and the rewrites built on
them (derived forms, organ adjectives); chemical notation is in :mod:`.chemistry`. Each table
says which phenomenon of the language or the vocabulary it encodes, and which stages
(`matched_by`) use it."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from fastbmrag.vocab.rules.keys import (
    BAG_STOP,
    COMPLETION_HEADS,
    GENE_WORDS,
    bag_of,
    token_form_tuples,
    tokens,
    word_set,
)

FREE_CACHE_SIZE = 1 << 16  # memoised names and words


# Derivational suffix rules for the last word (adjective -> noun), tried in order.
# Stages: `derived`, and the derived forms every other stage tries.
VARIANT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ptic", "psy"),  # epileptic -> epilepsy, cataleptic -> catalepsy
    ("otic", "osis"),  # psychotic -> psychosis, necrotic -> necrosis
    ("tic", "sis"),  # paralytic -> paralysis
    ("ive", "ion"),  # hypotensive -> hypotension
    ("ic", "ia"),  # ischemic -> ischemia, anemic -> anemia
    ("ic", "y"),  # neuropathic -> neuropathy
    ("ic", "icity"),  # nephrotoxic -> nephrotoxicity
    ("ous", ""),  # cancerous -> cancer
    ("ian", ""),  # parkinsonian -> parkinson (+ disease)
    ("ssion", "ssive"),  # depression -> depressive (+ disorder)
    ("ssed", "ssive"),  # depressed -> depressive (+ disorder)
    ("ted", "tion"),  # HIV-infected -> HIV infection
    ("ied", "y"),  # hypertrophied -> hypertrophy
    ("ism", "ist"),  # receptor antagonism -> receptor antagonist
    ("ese", "esity"),  # obese -> obesity
    ("oid", "oidism"),  # hypothyroid -> hypothyroidism
    ("etic", "esia"),  # akinetic -> akinesia
    ("ic", "ism"),  # thromboembolic -> thromboembolism
    ("ing", "e"),  # bruising -> bruise
    ("ing", ""),  # swelling -> swell(ing)
    ("ed", ""),  # --
    ("ic", "es"),  # diabetic -> diabetes
    ("al", ""),  # --
    ("al", "a"),  # anginal -> angina
    ("al", "e"),  # syncopal -> syncope
    ("ic", "e"),  # asystolic -> asystole, hemorrhagic -> hemorrhage
    ("tous", ""),  # edematous -> edema, glaucomatous -> glaucoma
    ("tory", "tion"),  # hallucinatory -> hallucination
    ("ful", ""),  # painful -> pain
    ("genic", "genesis"),  # carcinogenic -> carcinogenesis
    ("ting", "tion"),  # constipating -> constipation
    ("sis", "sia"),  # akinesis -> akinesia
    ("ptiform", "psy"),  # epileptiform -> epilepsy (as epileptic)
    ("eur", "e"),  # migraineur -> migraine
    ("ive", "ivity"),  # hyperactive -> hyperactivity
    ("i", "us"),  # thrombi -> thrombus (Latin plural)
    ("um", "a"),  # contrast medium -> contrast media (Latin plural)
    ("age", "e"),  # overdosage -> overdose
    ("ency", "ence"),  # dependency -> dependence
    ("ic", "a"),  # purpuric -> purpura
    ("mata", "ma"),  # scotomata -> scotoma (Greek plural)
    ("ologic", "ic"),  # rheumatologic -> rheumatic
    ("", "ness"),  # blind -> blindness
)
# Head nouns MeSH disease names often carry that writers leave out ("neurotoxicity" ->
# Neurotoxicity Syndromes, "parkinson" -> Parkinson Disease).
# Stages: `completion` (a word for disease added), `head`.
DISEASE_HEADS = COMPLETION_HEADS
# Organ adjectives and combining forms -> the organ word MeSH disease names use.
# Stages: `rewrite`, `site`, `organ`.
ORGAN_ADJECTIVES = {
    "renal": "kidney",
    "kidney": "kidney",
    "hepatic": "liver",
    "liver": "liver",
    "cardiac": "heart",
    "heart": "heart",
    "myocardial": "heart",
    "neurological": "nervous system",
    "neurologic": "nervous system",
    "neural": "nervous system",
    "pulmonary": "lung",
    "lung": "lung",
    "cerebral": "brain",
    "brain": "brain",
    "gastrointestinal": "gastrointestinal",
    "ocular": "eye",
    "retinal": "retinal",
    "cutaneous": "skin",
    "skin": "skin",
    "vascular": "vascular",
    "bone": "bone",
    "muscle": "muscular",
    "muscular": "muscular",
    "cognitive": "cognition",
    "sexual": "sexual",
    "behavioral": "behavior",
    "gastric": "stomach",
    "bladder": "urinary bladder",
    "visual": "vision",
    "intracerebral": "cerebral",
    "arterial": "vascular",
    "artery": "vascular",
    "venous": "vascular",
    "glomerular": "kidney",
    "auditory": "hearing",
    "hematologic": "hematologic",
    "haematological": "hematologic",
    "hematological": "hematologic",
}


# Organ nouns -> the adjective MeSH names also use ("Hepatic Veno-Occlusive Disease").
# Stage: `rewrite`.
ORGAN_NOUN_ADJECTIVES = {
    "liver": "hepatic",
    "kidney": "renal",
    "heart": "cardiac",
    "lung": "pulmonary",
    "brain": "cerebral",
    "stomach": "gastric",
    "skin": "cutaneous",
    "eye": "ocular",
    "prostate": "prostatic",
}
# A site written either way: "lung nodule" and "pulmonary nodule" name the same site.
# Stage: `completion` (one word short of a term).
SITE_SPELLINGS = {
    w: (noun, adjective)
    for noun, adjective in ORGAN_NOUN_ADJECTIVES.items()
    for w in (noun, adjective)
}
# Head nouns of a sign or a vague complaint, and the head MeSH disorder names use instead:
# "extrapyramidal symptoms" -> Extrapyramidal Disorders, "memory impairment" -> Memory
# Disorders, "myocardial damage" -> Myocardial Disease.
# Stage: `rewrite`; with the episode words, no `head` completion.
SIGN_HEADS = word_set(
    "symptom sign effect side impairment disturbance dysfunction damage injury "
    "complication problem abnormality alteration change loss suppression"
)
SIGN_TO = ("disorder", "disease")
# Heads saying that a tissue is lost or damaged, as MeSH's "degeneration" does.
# Stage: `rewrite` (an adjective as its noun).
LOSS_HEADS = word_set("loss death damage injury")
# Head nouns that are another word for a disease ("thyroid illness", "HIV disease"): the
# name is tried with each of these instead, an infection last ("adenovirus disease").
# Stages: `rewrite`, `site` (never a site's head).
DISEASE_SYNONYMS = word_set("disease disorder illness condition")
SYNONYM_TO = ("disease", "disorder", "syndrome", "infection")
# Head nouns naming one occurrence or one aspect of a condition: "syncopal attacks",
# "embolic events", "dyskinetic movements", "purpuric lesions" name the condition itself.
# Stage: `rewrite`; with the sign words, no `head` completion.
EPISODE_HEADS = word_set(
    "attack episode event movement activity lesion reaction feature manifestation state "
    "behavior behaviour"
)
_EPISODE_OR_SIGN = EPISODE_HEADS | SIGN_HEADS
# Words for the course or severity of a condition, which writers add to a term.
# Stages: `completion`, `site`.
COURSE_WORDS = word_set("acute chronic severe mild moderate early late transient recurrent")
# Words that mark likeness ("tic-like symptoms", "hepatitis-like illness").
# Stage: `rewrite`.
LIKE_WORDS = word_set("like type")
# Quantity words -> the adjectives MeSH terms use ("elevated blood pressure" -> High Blood
# Pressure, "QT prolongation" -> Long QT Syndrome, "decreased cardiac output" -> Cardiac
# Output, Low).
# Stage: `rewrite`.
QUANTITY = {
    "elevated": "high", "increased": "high", "increase": "high", "raised": "high",
    "rise": "high", "higher": "high", "excessive": "high",
    "decreased": "low", "decrease": "low", "reduced": "low", "reduction": "low",
    "lowered": "low", "lower": "low", "diminished": "low", "poor": "low", "drop": "low",
    "fall": "low",
    "prolonged": "long", "prolongation": "long",
}  # fmt: skip
# Nouns naming what is measured, which MeSH terms leave out ("QT interval", "blood level").
# Stage: `rewrite`.
MEASURE_WORDS = word_set("interval level concentration count value")
# A site's measures: "heart rate", "blood pressure", "renal blood flow" name no disease.
# Stage: `site` (a measure is no disease of its site).
MEASURES = MEASURE_WORDS | word_set("rate pressure output flow weight size volume function")
# Words saying that an organ's function is impaired: "decreased renal function" -> Renal
# Insufficiency, "impaired heart function" -> Heart Diseases.
# Stage: `rewrite`.
IMPAIRED = word_set(
    "low impaired abnormal abnormality deteriorated deterioration altered impairment loss decline"
)
# Adjectives that say a faculty is impaired, before its name.
# Tumour words -> MeSH's "Neoplasms" ("liver tumors" -> Liver Neoplasms).
# Stage: `rewrite`.
NEOPLASM_WORDS = word_set(
    "tumor cancer carcinoma adenocarcinoma malignancy neoplasia neoplasm metastasis"
)
# Words for a malformation -> MeSH's "Abnormalities" ("cardiovascular malformations" ->
# Cardiovascular Abnormalities).
# Stage: `rewrite`.
ABNORMALITY_WORDS = word_set("anomaly malformation deformity")
# Stages: `organ`, `rewrite` (a combining form split).
ORGAN_PREFIXES = {
    "nephro": "kidney",
    "hepato": "liver",
    "cardio": "heart",
    "neuro": "nervous system",
    "oto": "ear",
    "myelo": "bone marrow",
    "pneumo": "lung",
    "encephalo": "brain",
    "gastro": "stomach",
    "dermato": "skin",
    "myo": "muscular",
    "glomerulo": "kidney",
    "hemato": "hematologic",
    "vestibulo": "vestibular",
    "immuno": "immunologic",
    "retino": "retinal",
}
# Stage: `organ`.
ORGAN_DAMAGE = word_set(
    "toxicity toxic pathy pathic dysfunction damage injury impairment disorder disease "
    "complication problem abnormality alteration lesion disturbance suppression"
)
# Stage: `organ`.
TOXIC = frozenset(["toxicity", "toxic"])
# Words too general to stand for a whole name when only part of it matches.
# Stages: `partial`, `abbreviation` (the words before a short form).
GENERIC = word_set(
    "disease disorder syndrome injury damage lesion abnormality condition failure dysfunction "
    "acid acids salt cell cells drug drugs agent agents compound substance toxicity effect "
    "infection pain level levels chronic acute severe mild human patient patients"
)
# Head words too vague to complete on their own in a longer name.
# Stage: `head` (of a longer name).
VAGUE_HEADS = SIGN_HEADS | EPISODE_HEADS | GENERIC | DISEASE_SYNONYMS

# Words by which a name gives its condition a cause other than a drug: such a name never gets
# a drug-induced descriptor, whatever the text says of drugs ("viral hepatitis" in a paper on
# isoniazid stays hepatitis; "radiation-induced pneumonitis" is not drug-induced).
# Stage: `drug_induced`.
OTHER_CAUSES = word_set(
    "viral virus bacterial infectious infective fungal parasitic autoimmune alcoholic alcohol "
    "radiation irradiation hereditary inherited congenital familial genetic traumatic idiopathic"
)

# Phrases that present a condition as caused by a drug or chemical.
DRUG_CAUSE_RE = re.compile(
    r"(?<=\w)-induced\b|\b(?:induced by|toxicity|toxic|adverse (?:effect|event|"
    r"reaction)s?|side[- ]effects?|overdoses?|intoxication|poisoning|(?:allergic|allergy|"
    r"hypersensitivity|reactions?) to|exposure to|after (?:the )?(?:administration|exposure|"
    r"ingestion|infusion|injection|intake|use) of|(?:drug|medication) use)\b",
    re.IGNORECASE,
)
WS_RE = re.compile(r"\s+")
CONJ_RE = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and/or|and|or)\s+")
PLAIN_WORD_RE = re.compile(r"[^\W_]+(?:'s)?")
AND_OR_RE = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)
AND_OR_CAPITALS = frozenset("ANDOR")  # an "and"/"or" not in lower case has one of these


# A Greek letter written as its Latin initial before a hyphen, in lower case: "b-thalassemia",
# "a-tocopherol", "g-aminobutyric acid", "k-opioid". Not "d-" or "l-" (dextro, levo) and not a
# capital ("B-cell").
_GREEK_INITIAL_RE = re.compile(r"(?<![\w-])([abgk])-(?=[a-z])")
_GREEK_INITIALS = {"a": "alpha", "b": "beta", "g": "gamma", "k": "kappa"}


def greek_initials(text: str) -> str | None:
    """The name with Greek letters written out for their Latin initials; None if it has none."""
    if _GREEK_INITIAL_RE.search(text) is None:
        return None
    return _GREEK_INITIAL_RE.sub(lambda m: _GREEK_INITIALS[m.group(1)] + "-", text)


def abbreviation_like(text: str) -> bool:
    """ "AZT", "5-FU", "LiCl": short, no space, two capitals or a digit."""
    return (
        len(text) <= 10
        and " " not in text
        and (sum(c.isupper() for c in text) >= 2 or any(c.isdigit() for c in text))
    )


def tokens_key(text: str) -> str:
    return "".join(tokens(text))


def acronym_like(text: str) -> bool:
    """ "ALF", "OAB", "ICH": two to six letters, upper case (a final plural "s" allowed)."""
    core = text[:-1] if text.endswith("s") else text
    return 2 <= len(core) <= 6 and core.isalpha() and core.isupper()


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def condition_key(text: str) -> tuple[str, bool]:
    """(bag key of the condition, whether the text says it is induced): "levodopa-induced
    dyskinesias" -> ("dyskinesia", True)."""
    toks = name_forms(text)[1]
    induced = "induced" in toks[:-1]
    if induced:
        toks = toks[len(toks) - toks[::-1].index("induced") :]
    return " ".join(sorted(x for x in toks if x not in BAG_STOP)), induced


def rewrites(toks: Sequence[str]) -> list[Sequence[str]]:
    """Disease names rewritten towards MeSH's wording, most literal first:

    - a sign or complaint head as a disorder ("extrapyramidal symptoms" -> extrapyramidal
      disorder; "sexual side effects" -> sexual disorder);
    - tumour words as neoplasm ("liver tumors" -> liver neoplasm);
    - organ adjectives as MeSH's organ nouns ("gastric" -> stomach, "visual" -> vision),
      alone and with the head rewrites.
    """
    out: list[Sequence[str]] = []
    modifiers = toks[:-1]
    heads: list[list[str]] = []
    body, last = modifiers, toks[-1]
    while body and body[-1] in SIGN_HEADS:  # "side effects"
        body = body[:-1]
    if last in SIGN_HEADS and body:
        heads += [[*body, to] for to in SIGN_TO]
    elif last in NEOPLASM_WORDS:
        heads.append([*body, "neoplasm"])
    elif last in ABNORMALITY_WORDS:
        heads.append([*body, "abnormality"])
    out += heads
    if not modifiers:
        return out
    if not ORGAN_ADJECTIVES.keys().isdisjoint(modifiers):
        organ = [x for w in modifiers for x in ORGAN_ADJECTIVES.get(w, w).split()]
        out.append([*organ, last])
        out += [[*organ, h[-1]] for h in heads]
    if not ORGAN_NOUN_ADJECTIVES.keys().isdisjoint(modifiers):
        # The other way: "veno-occlusive liver disease" -> Hepatic Veno-Occlusive Disease.
        out.append([*(ORGAN_NOUN_ADJECTIVES.get(w, w) for w in modifiers), last])
    out += organ_phrases_of((last,))
    return out


def more_rewrites(toks: Sequence[str]) -> list[Sequence[str]]:
    """Further rewrites of a disease name, tried after :func:`rewrites`:

    - likeness words dropped ("tic-like symptoms" -> tic disorder);
    - a disease synonym as head swapped ("thyroid illness" -> thyroid disease, "adenovirus
      disease" -> adenovirus infection);
    - an episode head dropped ("syncopal attacks" -> syncope, "embolic events" -> embolism);
    - quantity words as MeSH's adjectives ("elevated blood pressure" -> high blood
      pressure, "QT prolongation" -> long QT + syndrome), and an impaired organ function
      as the organ's insufficiency or disease ("decreased renal function").
    """
    out: list[Sequence[str]] = []
    base: Sequence[str] = toks
    if not LIKE_WORDS.isdisjoint(toks[1:]):
        base = [w for n, w in enumerate(toks) if not (n and w in LIKE_WORDS)]
        out.append(base)
        out += rewrites(base)
    body, last = base[:-1], base[-1]
    if body and last in DISEASE_SYNONYMS:
        out += [[*body, to] for to in SYNONYM_TO if to != last]
    if len(body) == 1 and (last in DISEASE_SYNONYMS or last == "syndrome"):
        # An adjective and a word for disease: "cholestatic disease" -> cholestasis.
        out += [[v] for v in variants(body[0])]
    if body and last in _EPISODE_OR_SIGN:
        while len(body) > 1 and body[-1] in SIGN_HEADS:
            body = body[:-1]
        out.append(body)
        out += [[*body[:-1], v] for v in variants(body[-1])]
        out += [[*body, h] for h in DISEASE_HEADS]
    if "of" in base[1:-1]:
        # "calcification of the artery" -> artery calcification -> vascular calcification
        i = base.index("of")
        inverted = [w for w in base[i + 1 :] if w not in BAG_STOP] + list(base[:i])
        out.append(inverted)
        out += rewrites(inverted)
    quantity = base if QUANTITY.keys().isdisjoint(base) else [QUANTITY.get(w, w) for w in base]
    if quantity is not base:
        out.append(quantity)
        out.append([*quantity, "syndrome"])
        # The measure's own noun and its modifiers left out: "prolonged QT interval" -> long
        # QT syndrome, "decrease in arterial blood pressure" -> low blood pressure.
        core = [w for w in quantity if w not in MEASURE_WORDS and w not in BAG_STOP]
        if core != quantity:
            out.append(core)
            out.append([*core, "syndrome"])
        amount = next(w for w, q in zip(base, quantity, strict=True) if w != q)
        rest = [w for w in core if w != QUANTITY[amount]]
        out += [[QUANTITY[amount], *rest[-n:]] for n in (2, 1) if len(rest) > n]
    out += _impaired_function(quantity)
    return out


def _impaired_function(toks: Sequence[str]) -> list[Sequence[str]]:
    """An organ's or a faculty's function said to be impaired, before or after it
    ("decreased renal function", "impairment of hepatic function", "thyroid function
    abnormalities") -> the organ's insufficiency, disease or disorder, the site's
    dysfunction ("impaired cognitive functions" -> cognition disorder)."""
    if len(toks) < 3 or ("function" not in toks and "functioning" not in toks):
        return []
    toks = ["function" if w == "functioning" else w for w in toks]
    if toks[-1] == "function" and len(toks) > 2 and toks[0] in IMPAIRED:
        site = toks[1:-1]
    elif toks[0] in IMPAIRED and "of" in toks[1:-2] and toks[-1] == "function":
        site = [w for w in toks[toks.index("of") + 1 : -1] if w not in BAG_STOP]
    elif toks[-1] in IMPAIRED and len(toks) > 2 and toks[-2] == "function":
        site = toks[:-2]
    else:
        return []
    if not site:
        return []
    organ = [x for w in site for x in ORGAN_ADJECTIVES.get(w, w).split()]
    return [
        [*site, "insufficiency"],
        [*organ, "insufficiency"],
        [*organ, "disease"],
        [*organ, "disorder"],
        [*site, "dysfunction"],
    ]


def variants(word: str) -> tuple[str, ...]:
    """Derived forms of one word by :data:`VARIANT_SUFFIXES` ("bruising" -> "bruise")."""
    return suffix_variants(word, 3)


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def suffix_variants(word: str, min_stem: int) -> tuple[str, ...]:
    """The forms of ``word`` by :data:`VARIANT_SUFFIXES`, in rule order, keeping a stem of at
    least ``min_stem`` letters. Memoised: the same words end many names."""
    rules = _SUFFIXES_BY_END.get(word[-2:])
    if rules is None:
        rules = _SUFFIXES_BY_END.get(word[-1:], _SUFFIXES_ANY)
    n = len(word)
    return tuple(
        [word[: n - k] + new for old, new, k in rules if n - k >= min_stem and word.endswith(old)]
    )


def _suffixes_ending(end: str) -> tuple[tuple[str, str, int], ...]:
    """(old, new, len(old)) of the :data:`VARIANT_SUFFIXES` that can apply to a word whose
    last letters are ``end`` and no others (rule order kept)."""
    return tuple(
        (old, new, len(old))
        for old, new in VARIANT_SUFFIXES
        if not old or (old.endswith(end) if len(old) >= len(end) else end.endswith(old))
    )


# VARIANT_SUFFIXES that can apply to a word, by its last two letters, else its last letter.
_SUFFIXES_ANY = tuple((old, new, 0) for old, new in VARIANT_SUFFIXES if not old)
_SUFFIXES_BY_END = {
    end: _suffixes_ending(end)
    for old, _new in VARIANT_SUFFIXES
    for end in (old[-2:], old[-1:])
    if old
}


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def name_forms(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`~fastbmrag.vocab.rules.keys.token_forms` of a name as tuples, memoised: one name
    is tokenised by the direct lookup, the fallback rules and the drug-induced check."""
    return token_form_tuples(text)


def organ_phrases(toks: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """ "renal damage", "nephrotoxicity", "nephropathy" -> (("kidney", "disease"), ...)."""
    if len(toks) > 2 or (
        len(toks) == 2 and (toks[0] not in ORGAN_ADJECTIVES or toks[1] not in ORGAN_DAMAGE)
    ):
        return ()
    return organ_phrases_of(tuple(toks))


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def organ_phrases_of(toks: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    organ = damage = None
    if len(toks) == 2 and toks[0] in ORGAN_ADJECTIVES and toks[1] in ORGAN_DAMAGE:
        organ, damage = ORGAN_ADJECTIVES[toks[0]], toks[1]
    elif len(toks) == 1:
        word = toks[0]
        for prefix, name in ORGAN_PREFIXES.items():
            if word.startswith(prefix) and (rest := word[len(prefix) :]) in ORGAN_DAMAGE:
                organ, damage = name, rest
                break
    if organ is None or damage is None:
        return ()
    words = organ.split()
    out: list[tuple[str, ...]] = []
    if damage in TOXIC:
        out.append(("drug", "induced", *words, "injury"))
        out.append((*words, "toxicity"))
    out.append((*words, "disease"))
    return tuple(out)


def combining_split(word: str) -> str:
    """ "myonecrosis" -> "muscular necrosis": a word made of an organ's combining form
    (:data:`ORGAN_PREFIXES`) and a word of four letters or more; "" when it is none."""
    for prefix, organ in ORGAN_PREFIXES.items():
        if word.startswith(prefix) and len(word) - len(prefix) >= 4:
            return f"{organ} {word[len(prefix) :]}"
    return ""


def unique_best(items: Sequence[int], support: Any) -> int | None:
    scored = sorted(((support(i), i) for i in items), reverse=True)
    if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        return scored[0][1]
    return None


def strip_gene_words(toks: list[str]) -> list[str]:
    out = list(toks)
    while out and out[-1] in GENE_WORDS:
        out.pop()
    while out and out[0] in GENE_WORDS:
        out.pop(0)
    return out


def bag_key_of(toks: Sequence[str]) -> str:
    """:func:`~fastbmrag.vocab.rules.keys.bag_key` of a name's tokens."""
    return bag_of(toks if BAG_STOP.isdisjoint(toks) else [x for x in toks if x not in BAG_STOP])
