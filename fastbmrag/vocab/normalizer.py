"""Dictionary normaliser: genes -> HGNC, diseases -> MeSH (C tree, F03), chemicals -> MeSH (D tree).

No model, no network: lookups in the compact files built by :mod:`fastbmrag.vocab.build`.

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
                        failure ... ALF patients")
``drug_induced`` x0.95  the drug-induced descriptor of the condition found, when the name
                        says "X-induced" or the context speaks of a drug's effects
                        ("induced", "toxicity", "adverse effects", "overdose" ...):
                        "hepatitis" -> Chemical and Drug Induced Liver Injury (MeSH's own
                        entry term "Hepatitis, Drug-Induced"); also the drug-induced
                        form of the descriptor found ("dyskinetic" -> Dyskinesias ->
                        Dyskinesia, Drug-Induced); never when the name states another
                        cause ("viral hepatitis", "radiation-induced"); see ``compile_mesh``
``variant``      0.70   a derived form: "hypotensive" -> hypotension, "psychotic" -> psychosis;
                        or a rewrite towards MeSH wording: "extrapyramidal symptoms" ->
                        Extrapyramidal Disorders, "liver tumors" -> Liver Neoplasms,
                        "gastric" -> stomach, "levodopa-induced X" -> X
``head``         0.60   one disease word completed to the most general descriptor with a
                        two-word term holding it (largest MeSH subtree): "rigidity" ->
                        Muscle Rigidity, "diabetes" -> Diabetes Mellitus; a tree sibling
                        instead when the context uses its other term word
                        ("hyperactivity" + "locomotor" -> Hyperkinesis); 0.55 for the
                        head word of a longer name no part of which is a term
                        ("truncal rigidity")
``partial``      0.50+  the longest part of the name that is a MeSH term ("severe
                        hypotension" -> Hypotension); 0.5 + 0.3 x the share of the name's
                        word weight the part carries (:mod:`fastbmrag.vocab.candidates`)
``ambiguous``    0.50   the name fits several entries equally well and the context does not
                        decide; ``ontology_id`` is None and ``candidates`` lists the ids
``abstained``    <0.71  a disease name whose only term is a part carrying less than 70 % of
                        its word weight ("forestomach tumors" is not Neoplasms): no id,
                        ``candidates`` lists the part's descriptor
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
import re
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from fastbmrag import config
from fastbmrag.errors import VocabError
from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, Normalized
from fastbmrag.vocab.build import (
    BAG_STOP,
    COMPLETION_HEADS,
    FORMAT_VERSION,
    GENE_KINDS,
    GENE_WORDS,
    GREEK_LETTER,
    GROUP_PREFIX,
    MANIFEST,
    _forms,
    _words,
    completion_tables,
    raw_tokens,
    term_key,
    token_form_tuples,
    tokens,
)
from fastbmrag.vocab.candidates import WordWeights, partial_score, too_partial, word_weights
from fastbmrag.vocab.phenomena import coordination_parts, species_stripped

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "data" / "vocab"
CACHE_SUBDIR = "vocab"

TYPE_ALIASES = {
    GENE: GENE,
    "genes": GENE,
    "protein": GENE,
    "proteins": GENE,
    "rna": GENE,
    "mrna": GENE,
    DISEASE: DISEASE,
    "diseases": DISEASE,
    "disorder": DISEASE,
    "phenotype": DISEASE,
    "symptom": DISEASE,
    CHEMICAL: CHEMICAL,
    "chemicals": CHEMICAL,
    "drug": CHEMICAL,
    "drugs": CHEMICAL,
    "compound": CHEMICAL,
    "metabolite": CHEMICAL,
}
AUTO = "auto"
ALL_TYPES = (GENE, DISEASE, CHEMICAL)

GENE_SCORES = {
    "symbol": 1.0,
    "prev_symbol": 0.9,
    "alias": 0.85,
    "name": 0.95,
    "prev_name": 0.85,
    "alias_name": 0.8,
    "protein_name": 0.75,
    "ncbi_synonym": 0.7,
}
MESH_SCORES = (0.95, 0.9)  # descriptor name, entry term
MESH_MATCHED = ("name", "entry_term")
WORD_ORDER_SCORE = 0.8
HGNC_SYMBOL_KINDS = frozenset(("symbol", "prev_symbol", "alias"))
SPECIES_FACTOR = 0.95
GROUP_SCORE = 0.8
HEAD_SCORE = 0.6
VARIANT_SCORE = 0.7
AMBIGUOUS_SCORE = 0.5
ABBREVIATION_FACTOR = 0.95
_CAT = {DISEASE: "C", CHEMICAL: "D"}

FORMULA_SCORE = 0.85
DRUG_INDUCED_FACTOR = 0.95
FREE_CACHE_SIZE = 1 << 16
# Results that a context can change: a fallback may pass over an ambiguous step the context
# would have decided.
_CONTEXT_SENSITIVE = frozenset(["variant", "partial", "head"])

# Derivational suffix rules for the last word (adjective -> noun), tried in order.
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
    ("age", "e"),  # overdosage -> overdose
    ("ency", "ence"),  # dependency -> dependence
    ("ic", "a"),  # purpuric -> purpura
    ("mata", "ma"),  # scotomata -> scotoma (Greek plural)
    ("ologic", "ic"),  # rheumatologic -> rheumatic
    ("", "ness"),  # blind -> blindness
)
# Head nouns MeSH disease names often carry that writers leave out ("neurotoxicity" ->
# Neurotoxicity Syndromes, "parkinson" -> Parkinson Disease).
DISEASE_HEADS = COMPLETION_HEADS
# Organ adjectives and combining forms -> the organ word MeSH disease names use.
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
ORGAN_NOUN_ADJECTIVES = {
    "liver": "hepatic",
    "kidney": "renal",
    "heart": "cardiac",
    "lung": "pulmonary",
    "brain": "cerebral",
    "stomach": "gastric",
    "skin": "cutaneous",
    "eye": "ocular",
}
# Head nouns of a sign or a vague complaint, and the head MeSH disorder names use instead:
# "extrapyramidal symptoms" -> Extrapyramidal Disorders, "memory impairment" -> Memory
# Disorders, "myocardial damage" -> Myocardial Disease.
SIGN_HEADS = _words(
    "symptom sign effect side deficit impairment disturbance dysfunction damage injury "
    "complication problem abnormality alteration change loss suppression"
)
SIGN_TO = ("disorder", "disease")
# Heads saying that a tissue is lost or damaged, as MeSH's "degeneration" does.
LOSS_HEADS = _words("loss death damage injury")
# Head nouns that are another word for a disease ("thyroid illness", "HIV disease"): the
# name is tried with each of these instead, an infection last ("adenovirus disease").
DISEASE_SYNONYMS = _words("disease disorder illness condition")
SYNONYM_TO = ("disease", "disorder", "syndrome", "infection")
# Head nouns naming one occurrence or one aspect of a condition: "syncopal attacks",
# "embolic events", "dyskinetic movements", "purpuric lesions" name the condition itself.
EPISODE_HEADS = _words(
    "attack episode event movement activity lesion reaction feature manifestation state "
    "behavior behaviour"
)
_EPISODE_OR_SIGN = EPISODE_HEADS | SIGN_HEADS
# Words for the course or severity of a condition, which writers add to a term.
COURSE_WORDS = _words("acute chronic severe mild moderate early late transient recurrent")
# Words that mark likeness ("tic-like symptoms", "hepatitis-like illness").
LIKE_WORDS = _words("like type")
# Quantity words -> the adjectives MeSH terms use ("elevated blood pressure" -> High Blood
# Pressure, "QT prolongation" -> Long QT Syndrome, "decreased cardiac output" -> Cardiac
# Output, Low).
QUANTITY = {
    "elevated": "high", "increased": "high", "increase": "high", "raised": "high",
    "rise": "high", "higher": "high", "excessive": "high",
    "decreased": "low", "decrease": "low", "reduced": "low", "reduction": "low",
    "lowered": "low", "lower": "low", "diminished": "low", "poor": "low",
    "prolonged": "long", "prolongation": "long",
}  # fmt: skip
# Nouns naming what is measured, which MeSH terms leave out ("QT interval", "blood level").
MEASURE_WORDS = _words("interval level concentration count value")
# Words saying that an organ's function is impaired: "decreased renal function" -> Renal
# Insufficiency, "impaired heart function" -> Heart Diseases.
IMPAIRED = _words(
    "low impaired abnormal abnormality deteriorated deterioration altered impairment loss decline"
)
# Adjectives that say a faculty is impaired, before its name.
IMPAIRED_ADJECTIVES = _words("impaired abnormal disturbed deficient")
# Tumour words -> MeSH's "Neoplasms" ("liver tumors" -> Liver Neoplasms).
NEOPLASM_WORDS = _words("tumor cancer carcinoma adenocarcinoma malignancy neoplasia neoplasm")
# Words for a malformation -> MeSH's "Abnormalities" ("cardiovascular malformations" ->
# Cardiovascular Abnormalities).
ABNORMALITY_WORDS = _words("anomaly malformation deformity")
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
}
ORGAN_DAMAGE = _words(
    "toxicity toxic pathy pathic dysfunction damage injury impairment disorder disease "
    "complication problem abnormality alteration lesion disturbance suppression"
)
TOXIC = frozenset(["toxicity", "toxic"])
# Chemical element symbols (IUPAC) -> English names, for "Na", "Ca2+", "K(+)".
ELEMENTS = {
    "H": "hydrogen", "Li": "lithium", "B": "boron", "C": "carbon", "N": "nitrogen",
    "O": "oxygen", "F": "fluorine", "Na": "sodium", "Mg": "magnesium", "Al": "aluminum",
    "Si": "silicon", "P": "phosphorus", "S": "sulfur", "Cl": "chlorine", "K": "potassium",
    "Ca": "calcium", "Ti": "titanium", "V": "vanadium", "Cr": "chromium", "Mn": "manganese",
    "Fe": "iron", "Co": "cobalt", "Ni": "nickel", "Cu": "copper", "Zn": "zinc",
    "As": "arsenic", "Se": "selenium", "Br": "bromine", "Rb": "rubidium", "Sr": "strontium",
    "Mo": "molybdenum", "Ag": "silver", "Cd": "cadmium", "Sn": "tin", "I": "iodine",
    "Cs": "cesium", "Ba": "barium", "Gd": "gadolinium", "W": "tungsten", "Pt": "platinum",
    "Au": "gold", "Hg": "mercury", "Tl": "thallium", "Pb": "lead", "Bi": "bismuth",
    "U": "uranium",
}  # fmt: skip
ANIONS = {
    "Cl": "chloride", "Br": "bromide", "I": "iodide", "F": "fluoride", "O": "oxide",
    "S": "sulfide", "N": "nitride",
}  # fmt: skip
NUMBER_PREFIX = {1: "mon", 2: "di", 3: "tri", 4: "tetra", 5: "penta"}
_CHARGE_RE = re.compile(r"(?:\(?\d?[+-]+\)?|\(\d?[+-]\))$")
_BINARY_RE = re.compile(r"^([A-Z][a-z]?)(\d?)([A-Z][a-z]?)\(?(\d?)\)?$")
# Words too general to stand for a whole name when only part of it matches.
GENERIC = _words(
    "disease disorder syndrome injury damage lesion abnormality condition failure dysfunction "
    "acid acids salt cell cells drug drugs agent agents compound substance toxicity effect "
    "infection pain level levels chronic acute severe mild human patient patients"
)
# Head words too vague to complete on their own in a longer name.
_VAGUE_HEADS = SIGN_HEADS | EPISODE_HEADS | GENERIC | DISEASE_SYNONYMS
# Words never linked on their own in free text (find_mentions).
STOP_WORDS = _words(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not now of off on once only or other our out over own same she should
    so some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    role roles effect effects gene genes protein proteins disease diseases level levels patient
    patients study studies cell cells type types role function functions expression involved
    associated association treatment therapy risk case cases use used using show shown find
    found new high low increased decreased via among known related"""
)

# Words by which a name gives its condition a cause other than a drug: such a name never gets
# a drug-induced descriptor, whatever the text says of drugs ("viral hepatitis" in a paper on
# isoniazid stays hepatitis; "radiation-induced pneumonitis" is not drug-induced).
_OTHER_CAUSES = _words(
    "viral virus bacterial infectious infective fungal parasitic autoimmune alcoholic alcohol "
    "radiation irradiation hereditary inherited congenital familial genetic traumatic idiopathic"
)

# Phrases that present a condition as caused by a drug or chemical.
_DRUG_CAUSE_RE = re.compile(
    r"\b(?:\w+-induced|induced by|induces?|induction of|toxicity|toxic|adverse (?:effect|event|"
    r"reaction)s?|side[- ]effects?|overdoses?|intoxication|poisoning|(?:allergic|allergy|"
    r"hypersensitivity|reactions?) to|exposure to|after (?:the )?(?:administration|exposure|"
    r"ingestion|infusion|injection|intake|use) of|(?:drug|medication) use)\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"\w+(?:[-/.'’]\w+)*")
_WS_RE = re.compile(r"\s+")
_CONJ_RE = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and/or|and|or)\s+")
_PLAIN_WORD_RE = re.compile(r"[^\W_]+(?:'s)?")
_AND_OR_RE = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)
_AND_OR_CAPITALS = frozenset("ANDOR")  # an "and"/"or" not in lower case has one of these


def _clean(name: str) -> str:
    if name.isprintable() and "  " not in name:  # no whitespace but single plain spaces
        return name.strip().strip(".,;:")
    return _WS_RE.sub(" ", name).strip().strip(".,;:")


# --------------------------------------------------------------------------------------------
# Abbreviations defined in the text (Schwartz & Hearst, PSB 2003)
# --------------------------------------------------------------------------------------------

_PAREN_RE = re.compile(r"\(([^()]{1,20})\)")
_PARENS_RE = re.compile(r"\s*\([^()]*\)")


def _best_long_form(short: str, long: str) -> str | None:
    s, j = len(short) - 1, len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while (j >= 0 and long[j].lower() != c) or (s == 0 and j > 0 and long[j - 1].isalnum()):
            j -= 1
        if j < 0:
            return None
        j -= 1
        s -= 1
    start = long.rfind(" ", 0, j + 1) + 1
    return long[start:]


def find_abbreviations(text: str) -> dict[str, str]:
    """Short form -> long form for every "long form (SF)" definition in ``text``."""
    return _abbreviations(text)[0]


def _abbreviations(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """Schwartz-Hearst definitions, and for every "(SF)" the words before it (up to eight, in
    the same sentence): the long form may be longer than the letters show ("cyclase
    associated actin cytoskeleton regulatory protein 1 (CAP)") or not align at all
    ("zidovudine (AZT)")."""
    found: dict[str, str] = {}
    window: dict[str, str] = {}
    for m in _PAREN_RE.finditer(text):
        short = m.group(1).strip()
        if ";" in short or "," in short:
            short = re.split(r"[;,]", short)[0].strip()
        words = short.split()
        if not short or len(words) > 2 or len(short) < 2 or not short[0].isalnum():
            continue
        if not any(c.isalpha() for c in short):
            continue
        before = text[: m.start()].rstrip()
        cut = max(before.rfind(". "), before.rfind("; "), before.rfind("("), before.rfind(")"))
        before = before[cut + 1 :].strip()
        if not before:
            continue
        window.setdefault(short, " ".join(before.split()[-8:]))
        limit = min(len(short) + 5, len(short) * 2)
        long = _best_long_form(short, " ".join(before.split()[-limit:]))
        if long and len(long) > len(short) and short.lower() not in long.lower().split():
            found.setdefault(short, long)
            if short.endswith("s") and short[:-1].isupper() and len(short) > 2:
                # "ventricular septal defects (VSDs)" also defines VSD.
                window.setdefault(short[:-1], window[short])
                found.setdefault(short[:-1], long)
    return found, window


# --------------------------------------------------------------------------------------------
# The normaliser
# --------------------------------------------------------------------------------------------


class _Hit(NamedTuple):  # a tuple: built several times per name, cheaply
    type: str
    item: int  # gene or descriptor number; -1 when ambiguous
    matched_by: str
    score: float
    candidates: tuple[int, ...] = ()


class _Context:
    """Facts about one context text, computed once (and only when needed) for all its names."""

    __slots__ = (
        "_drug_cause",
        "_gene_keys",
        "_plain_words",
        "_words",
        "abbreviations",
        "acronyms",
        "text",
        "windows",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.abbreviations, self.windows = _abbreviations(text) if "(" in text else ({}, {})
        self._words: frozenset[str] | None = None
        self._gene_keys: frozenset[str] | None = None
        self._drug_cause: bool | None = None
        self._plain_words: list[str] | None = None
        self.acronyms: dict[tuple[str, str], _Hit | None] = {}

    @property
    def plain_words(self) -> list[str]:
        """The words of the text in order, split at spaces and hyphens, punctuation trimmed."""
        if self._plain_words is None:
            self._plain_words = _PLAIN_WORD_RE.findall(self.text)
        return self._plain_words

    @property
    def drug_cause(self) -> bool:
        """Whether the text speaks of a condition caused by a drug or other chemical."""
        if self._drug_cause is None:
            self._drug_cause = _DRUG_CAUSE_RE.search(self.text) is not None
        return self._drug_cause

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(tokens(self.text))
        return self._words

    @property
    def gene_keys(self) -> frozenset[str]:
        if self._gene_keys is None:
            self._gene_keys = frozenset(_gene_key_from(raw_tokens(w)) for w in self.text.split())
        return self._gene_keys


def _gene_key_from(toks: Sequence[str]) -> str:
    return "".join(GREEK_LETTER.get(t, t) for t in toks)


def _read_data(path: Path) -> Any:
    """A vocabulary data file: gzipped pickle (current) or gzipped JSON (older builds)."""
    raw = gzip.decompress(path.read_bytes())
    if path.name.endswith(".pickle.gz"):
        return pickle.loads(raw)  # noqa: S301 - written by build.py into the package or the user's own cache
    return json.loads(raw)


class DictionaryNormalizer:
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

        def match_free(clean: str, t: str) -> _Hit | None:
            return _alive(ref)._match_uncached(clean, t)

        self._free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(free)
        self._match_free = functools.lru_cache(maxsize=FREE_CACHE_SIZE)(match_free)
        self._contexts: dict[str, _Context] = {}
        self._site_heads: dict[str, bool] = {}
        self._labels: dict[str, str] | None = None
        self._group_keys: dict[str, str] | None = None
        self._ids: dict[str, int] | None = None
        self._word_weights: WordWeights | None = None
        self._word_weight_table: dict[str, Any] | None = mesh.get("word_weights")
        self._covered: dict[str, int] | None = None
        self._gene_groups: dict[int, list[str]] = genes.get("groups", {})
        self._group_names: dict[str, str] = genes.get("group_names", {})
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

    def _normalize(self, name: str, type_hint: str, ctx: _Context | None) -> Normalized:
        clean = _clean(name)
        kind = TYPE_ALIASES.get(type_hint)  # as written, most often
        hint = type_hint if kind is not None else (type_hint or AUTO).strip().lower()
        if kind is None:
            kind = TYPE_ALIASES.get(hint)
        if not clean:
            return Normalized(name, hint, clean, None, "none", 0.0)
        if kind is None and hint != AUTO:
            return Normalized(name, hint, clean, None, "none", 0.0)
        types = ALL_TYPES if kind is None else (kind,)
        best: _Hit | None = None
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
        if best.matched_by == "partial" and best.type == DISEASE and too_partial(best.score):
            # Chemicals keep their parts: a chemical's name adds salts, forms and formulations
            # to its substance's, and abstaining there cost more right ids than wrong ones.
            best = _Hit(best.type, -1, "abstained", best.score, (best.item, *best.candidates))
        return self._result(name, hint if kind is not None else best.type, best)

    def _gene_group(self, name: str, clean: str) -> Normalized | None:
        """A name that is an HGNC gene group's ("caspases", "interleukins", "toll-like
        receptors"): the family's own node, never one of its members."""
        if self._group_keys is None:
            keys: dict[str, list[str]] = {}
            for group_id, group_name in self._group_names.items():
                keys.setdefault(term_key(group_name), []).append(group_id)
            self._group_keys = {k: v[0] for k, v in keys.items() if len(v) == 1}
        found = self._group_keys.get(term_key(clean))
        if found is None:
            return None
        return Normalized(name, GENE, self._group_names[found], found, "gene_group", GROUP_SCORE)

    def _gene_as_written(self, name: str, clean: str, ctx: _Context | None) -> Normalized | None:
        """A gene name written beyond its dictionary forms (fastbmrag.vocab.phenomena): a
        species letter before an HGNC symbol ("hIL-6"), or a coordination or range of genes
        ("SMAD2/3", "IL-4 and -13", "TGF-beta1-3"), every part of which names its own gene."""
        bare = species_stripped(clean)
        if bare is not None:
            hit = self._direct(bare, GENE, ctx)
            if hit is not None and hit.item >= 0 and hit.matched_by in HGNC_SYMBOL_KINDS:
                score = round(hit.score * SPECIES_FACTOR, 3)
                return self._result(name, GENE, _Hit(GENE, hit.item, "species_prefix", score))
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

    def normalize_many(self, items: Iterable[tuple[str, ...] | Sequence[str]]) -> list[Normalized]:
        """Normalise ``(name,)``, ``(name, type)`` or ``(name, type, context)`` rows, in order."""
        out = []
        for row in items:
            name = row[0]
            type_hint = row[1] if len(row) > 1 and row[1] else AUTO
            context = row[2] if len(row) > 2 and row[2] else ""
            out.append(self.normalize(name, type_hint, context))
        return out

    def find_mentions(
        self, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 8
    ) -> list[Normalized]:
        """Genes, diseases and chemicals named in free text (a question), left to right.

        Longest match over word n-grams; stop words and short or lower-case single words are
        not linked as genes. ``name`` of each result is the text as written.
        """
        return [n for _start, _end, n in self.find_mention_spans(text, types, max_words=max_words)]

    def find_mention_spans(
        self, text: str, types: Iterable[str] = ALL_TYPES, *, max_words: int = 8
    ) -> list[tuple[int, int, Normalized]]:
        """Like :meth:`find_mentions`, with the character span of each mention."""
        wanted = tuple(dict.fromkeys(TYPE_ALIASES.get(t.lower(), t.lower()) for t in types))
        ctx = self._context(text)
        words = [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(text)]
        gtoks = [raw_tokens(w) for _, _, w in words]
        ttoks = [tokens(w) for _, _, w in words]
        out: list[tuple[int, int, Normalized]] = []
        i = 0
        while i < len(words):
            found = None
            if words[i][2].lower() not in STOP_WORDS:
                for n in range(min(max_words, len(words) - i), 0, -1):
                    last = words[i + n - 1][2].lower()
                    if last in STOP_WORDS:
                        continue
                    hit = self._span_hit(
                        words[i : i + n], gtoks[i : i + n], ttoks[i : i + n], wanted, ctx
                    )
                    if hit is not None:
                        found = (n, hit)
                        break
            if found is None:
                i += 1
                continue
            n, hit = found
            start, end = words[i][0], words[i + n - 1][1]
            out.append((start, end, self._result(text[start:end], hit.type, hit)))
            i += n
        return out

    # ---- matching --------------------------------------------------------------------------

    def _span_hit(
        self,
        words: Sequence[tuple[int, int, str]],
        gtoks: Sequence[list[str]],
        ttoks: Sequence[list[str]],
        wanted: Sequence[str],
        ctx: _Context,
    ) -> _Hit | None:
        single = len(words) == 1
        surface = words[0][2]
        best: _Hit | None = None
        for t in wanted:
            hit: _Hit | None
            if t == GENE:
                if single and not _gene_like(surface):
                    continue
                key = _gene_key_from([x for toks in gtoks for x in toks])
                hit = self._gene_codes(self._gene_index.get(key), ctx)
                if hit is not None and single and hit.matched_by.endswith("name"):
                    hit = None  # one ordinary word that is a gene's name ("insulin") is too loose
            elif t in _CAT:
                if single and (len(surface) < 3 or (surface.islower() and len(surface) < 4)):
                    continue
                key = "".join(x for toks in ttoks for x in toks)
                hit = self._mesh_codes(self._mesh_index.get(key), t, ctx, 0)
            else:
                continue
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        return best

    def _match(self, clean: str, t: str, ctx: _Context | None) -> _Hit | None:
        hit = self._match_free(_free_key(clean, t), t)
        if ctx is not None and (
            hit is None
            or hit.item < 0
            or hit.matched_by in _CONTEXT_SENSITIVE
            or clean in ctx.windows
        ):
            hit = self._match_uncached(clean, t, ctx)
        if t == DISEASE and hit is not None and hit.item >= 0:
            induced = self._induced_form(clean, ctx, hit.item)
            if induced is not None and induced != hit.item:
                return _Hit(t, induced, "drug_induced", round(hit.score * DRUG_INDUCED_FACTOR, 3))
        return hit

    def _induced_form(self, clean: str, ctx: _Context | None, item: int = -1) -> int | None:
        """The drug-induced descriptor of a condition named in a text about a drug's effects
        ("hepatitis" -> Chemical and Drug Induced Liver Injury), or written as induced by a
        named substance ("levodopa-induced dyskinesia" -> Dyskinesia, Drug-Induced)."""
        if not self._drug_induced:
            return None
        if ctx is not None and clean in ctx.windows:
            clean = ctx.abbreviations.get(clean, clean)
        if (
            (ctx is None or not ctx.drug_cause)
            and clean.isascii()
            and "induced" not in clean.lower()
        ):
            return None  # neither said to be induced nor in a text about a drug's effects
        if not _OTHER_CAUSES.isdisjoint(_name_forms(clean)[1]):
            return None
        key, induced = _condition_key(clean)
        if not induced and (ctx is None or not ctx.drug_cause):
            return None
        found = self._drug_induced.get(key)
        if found is None and item >= 0:
            # The condition as found ("dyskinetic" -> Dyskinesias, "hepatic injury" -> Liver
            # Diseases): the drug-induced form of that descriptor's own name.
            found = self._drug_induced.get(_condition_key(self._desc[item][1])[0])
            if found is None:
                found = self._induced_child.get(item)
        return found

    def _match_uncached(self, clean: str, t: str, ctx: _Context | None = None) -> _Hit | None:
        if t == CHEMICAL:
            for formula in _formula_name(clean):
                hit = self._direct(formula, t, None)
                if hit is not None and hit.item >= 0:
                    return _Hit(hit.type, hit.item, "formula", FORMULA_SCORE)
        window = ctx.windows.get(clean) if ctx is not None else None
        long = ctx.abbreviations.get(clean) if ctx is not None and window else None
        if ctx is not None and window and long:
            # A defined short form: its long form first (the short one is often ambiguous).
            words = window.split()
            for n in range(len(words), len(long.split()) - 1, -1):
                hit = self._direct(" ".join(words[-n:]), t, ctx)
                if hit is not None and hit.item >= 0:
                    return _abbreviation(hit, ABBREVIATION_FACTOR)
        hit = self._direct(clean, t, ctx)
        if hit is not None or t == GENE:
            return hit
        if ctx is not None and window:
            if long:
                hit = self._fallback(long, t, ctx)
                if hit is not None:
                    return _abbreviation(hit, 0.8)
            elif _abbreviation_like(clean):
                # "zidovudine (AZT)": letters that do not align; the words before, longest first.
                words = window.split()
                for n in range(len(words), 0, -1):
                    if n == 1 and words[-1].lower() in GENERIC:
                        continue
                    hit = self._direct(" ".join(words[-n:]), t, ctx)
                    if hit is not None and hit.item >= 0:
                        return _abbreviation(hit, 0.8)
        if ctx is not None and not window and _acronym_like(clean):
            hit = self._acronym_in_text(clean, t, ctx)
            if hit is not None:
                return hit
        if ctx is not None and ctx.abbreviations and (" " in clean or "-" in clean):
            # Short forms inside the name spelt out: "HBV infection" -> "hepatitis B virus
            # infection" where the text defines "hepatitis B virus (HBV)".
            expanded = self._expand_short_forms(clean, ctx)
            if expanded is not None:
                hit = self._direct(expanded, t, ctx) or self._fallback(expanded, t, ctx)
                if hit is not None and hit.item >= 0:
                    return _abbreviation(hit, 0.9)
        return self._fallback(clean, t, ctx)

    @staticmethod
    def _expand_short_forms(clean: str, ctx: _Context) -> str | None:
        parts = re.split(r"([\s/-]+)", clean)
        out = [ctx.abbreviations.get(p, p) if len(p) > 1 else p for p in parts]
        if out == parts:
            return None
        return "".join(" " if i % 2 else w for i, w in enumerate(out))

    def _acronym_in_text(self, short: str, t: str, ctx: _Context) -> _Hit | None:
        """An abbreviation the text uses without defining it in parentheses: the words of
        the text that spell it (Schwartz-Hearst alignment, first letter on a word start) and
        name a term of the type, the most frequent such phrase first ("... acute liver
        failure ... 1223 consecutive ALF patients" -> Liver Failure, Acute)."""
        key = (short, t)
        if key in ctx.acronyms:
            return ctx.acronyms[key]
        letters = [c.lower() for c in short if c.isalnum()]
        words = ctx.plain_words
        counts: dict[str, int] = {}
        for i, first in enumerate(words):
            if first[:1].lower() != letters[0]:
                continue
            for n in range(1, min(len(letters), len(words) - i) + 1):
                span = " ".join(words[i : i + n])
                if _best_long_form(short, span) == span and len(span) > len(short):
                    counts[span] = counts.get(span, 0) + 1
        found: _Hit | None = None
        for span in sorted(counts, key=lambda x: (-counts[x], -len(x))):
            hit = self._direct(span, t, None)
            if hit is not None and hit.item >= 0:
                found = _abbreviation(hit, 0.7)
                break
        ctx.acronyms[key] = found
        return found

    def _direct(self, clean: str, t: str, ctx: _Context | None) -> _Hit | None:
        if t == GENE:
            raw = raw_tokens(clean)
            hit = self._gene_codes(self._gene_index.get(_gene_key_from(raw)), ctx)
            if hit is None:
                core = _strip_gene_words(raw)
                if core and core != raw:
                    hit = self._gene_codes(self._gene_index.get(_gene_key_from(core)), ctx)
            return hit
        plain, toks = _name_forms(clean)
        codes = self._mesh_index.get("".join(toks))
        # The unfolded key only tells apart several descriptors under one key.
        several = codes is not None and (not isinstance(codes, int) or codes < 0)
        exact = "".join(plain) if several else ""
        hit = self._mesh_codes(codes, t, ctx, 0, exact)
        if hit is None and self._bag_words.issuperset(toks):
            hit = self._mesh_codes(self._mesh_bag.get(_bag_key(toks)), t, ctx, WORD_ORDER_SCORE)
            if hit is not None and hit.item >= 0:
                hit = _Hit(hit.type, hit.item, "word_order", WORD_ORDER_SCORE, hit.candidates)
        if hit is None and "-" in clean:
            # A hyphen inside a word ("thrombo-embolism"): the joined word, whose spelling
            # folds as MeSH's does (thromboembolism).
            joined = _tokens_key(clean.replace("-", ""))
            if joined != "".join(toks):
                hit = self._mesh_codes(self._mesh_index.get(joined), t, ctx, 0)
        return hit

    def _mesh_tokens(self, toks: Sequence[str], t: str, ctx: _Context | None) -> _Hit | None:
        codes = self._mesh_index.get("".join(toks))
        if codes is not None:
            hit = self._mesh_codes(codes, t, ctx, 0)
            if hit is not None:
                return hit
        if len(toks) == 1 or not self._bag_words.issuperset(toks):
            return None  # a one-word bag key is the index key
        codes = self._mesh_bag.get(_bag_key(toks))
        return None if codes is None else self._mesh_codes(codes, t, ctx, 0)

    def _is_key(self, phrase: Sequence[str]) -> bool:
        """Whether the phrase is an index or a bag key (of any category): else
        :meth:`_mesh_tokens` finds nothing for it."""
        return "".join(phrase) in self._mesh_index or (
            len(phrase) > 1
            and self._bag_words.issuperset(phrase)
            and _bag_key(phrase) in self._mesh_bag
        )

    def _head_completions(self, stems: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """``(*stem, head)`` for each stem and each of :data:`DISEASE_HEADS` (in that order),
        kept only where it is an index or a bag key (see
        :func:`~fastbmrag.vocab.build.completion_tables`): the others cannot match."""
        out: list[tuple[str, ...]] = []
        for stem in stems:
            mask = self._completions.get("".join(stem), 0)
            if self._bag_words.issuperset(stem):
                mask |= self._bag_completions.get(_bag_key(stem), 0)
            if mask:
                out += [(*stem, h) for bit, h in enumerate(DISEASE_HEADS) if mask >> bit & 1]
        return out

    def _fallback(self, clean: str, t: str, ctx: _Context | None) -> _Hit | None:
        if "(" in clean:
            # A parenthesised aside dropped: "central nervous system (CNS) complications".
            bare = _clean(_PARENS_RE.sub("", clean))
            if bare and bare != clean:
                hit = self._direct(bare, t, ctx) or self._fallback(bare, t, ctx)
                if hit is not None and hit.item >= 0:
                    if hit.matched_by in _CONTEXT_SENSITIVE:
                        return hit
                    return _Hit(hit.type, hit.item, "variant", VARIANT_SCORE, hit.candidates)
        toks = _name_forms(clean)[1]
        if not toks:
            return None
        body = toks[:-1]
        variants = [(*body, v) for v in _suffix_variants(toks[-1], 2)]
        tries: list[Sequence[str]] = [*variants]
        if t == DISEASE:
            tries += _rewrites(toks)
            tries += self._head_completions((*variants, toks))
            if len(toks) == 1:
                tries.append(("drug", *toks))  # "toxicity", "overdose": of the drug studied
            tries += _organ_phrases(toks)
            if len(toks) == 1 and toks[0].endswith("toxicity") and len(toks[0]) > 9:
                tries.append(("drug", "toxicity"))  # "cytotoxicity": the compound's head
            tries += _more_rewrites(toks)
            for k in range(len(toks) - 1, 0, -1):
                # A substance named as the cause: "cocaine overdose" -> drug overdose.
                if self._is_key(toks[:k]) and self._mesh_tokens(toks[:k], CHEMICAL, None):
                    tries.append(["drug", *toks[k:]])
                    tries.append(["substance", *toks[k:]])
                    break
        index, bag_words = self._mesh_index, self._bag_words
        if len(toks) > 1:
            # The head word as its descriptor's own name: "supraventricular
            # tachyarrhythmia" -> supraventricular tachycardia.
            head = self._mesh_tokens(toks[-1:], t, None)
            if head is not None and head.item >= 0:
                name = _name_forms(self._desc[head.item][1])[1]
                if name != toks[-1:]:
                    tries.append((*toks[:-1], *name))
        hit = self._first_term(tries, t, ctx)
        if hit is not None:
            return hit
        if t == DISEASE and len(toks) > 1:
            # Tried last, as few names get this far: an adjective before a head as its
            # noun ("neuronal degeneration" -> neuron degeneration, "olfactory disorder" ->
            # olfaction disorder), only where the noun is a word of some term; the loss of
            # a tissue as its degeneration ("neuronal loss" -> Nerve Degeneration); a
            # derived form of the head as its descriptor's name.
            if len(toks) == 2:
                first, last = toks
                late: list[tuple[str, ...]] = [
                    (v, last) for v in _variants(first) if v in bag_words
                ]
                if last in LOSS_HEADS:
                    late += [(v, "degeneration") for v in (first, *_variants(first))]
                if last in SIGN_HEADS:
                    # The organ of a derived adjective: "neuropathic damage" -> neuropathy ->
                    # nervous system disease.
                    late += [p for v in _variants(first) for p in _organ_phrases_of((v,))]
                if last not in index:
                    # A derived or Latin form of the head as its descriptor's name:
                    # "pulmonary emboli" -> embolus (Embolism) -> pulmonary embolism.
                    for v in _suffix_variants(last, 2):
                        head = self._mesh_tokens((v,), t, None) if v in index else None
                        if head is not None and head.item >= 0:
                            late.append((first, *_name_forms(self._desc[head.item][1])[1]))
                            break
                hit = self._first_term(late, t, ctx)
                if hit is not None:
                    return hit
            hit = self._superset_hit(toks, ctx)
            if hit is not None:
                return hit
        if t == DISEASE and len(toks) > 2:
            hit = self._conjunct(clean, t, ctx)
            if hit is not None:
                return hit
        if t == DISEASE and len(toks) > 1:
            hit = self._site_disease(toks, ctx)
            if hit is not None:
                return hit
        if len(toks) == 1:
            hit = self._extend(toks[0], t)
            if hit is not None:
                return hit
        if t == DISEASE and len(toks) == 1:
            hit = self._head(toks, ctx)
            if hit is not None:
                return hit
        if t == DISEASE and len(toks) == 1:
            # A combining form and a disease word: "myonecrosis" -> muscular necrosis,
            # "immunodeficiency" -> immunologic deficiency.
            split = _combining_split(toks[0])
            if split and split.rsplit(" ", 1)[1] in self._bag_words:  # a word of some term
                # The phrase, its head completions ("immunologic deficiency syndrome"), or
                # a disease of the site ("muscular necrosis" -> muscular disease).
                parts = _name_forms(split)[1]
                hit = (
                    self._direct(split, t, ctx)
                    or self._first_term(self._head_completions((parts,)), t, ctx)
                    or self._site_disease(parts, ctx)
                )
                if hit is not None and hit.item >= 0:
                    return _Hit(hit.type, hit.item, "variant", VARIANT_SCORE, hit.candidates)
        hit = self._partial(toks, t, ctx)
        if hit is not None:
            return hit
        if t == DISEASE and len(toks) > 1 and toks[-1] not in _VAGUE_HEADS:
            # No part is a term: the head word completed ("chest wall rigidity" -> Muscle
            # Rigidity), unless it is a word any condition can have ("lesion", "failure"),
            # and only to a descriptor whose name has it as its head ("Muscle Rigidity",
            # "Vision Disorders"; not "Pressure Ulcer" for "intraocular pressure").
            hit = self._head(toks, ctx)
            if hit is not None and self._names_head(hit.item, toks[-1]):
                return hit
        return None

    def _partial(self, toks: Sequence[str], t: str, ctx: _Context | None) -> _Hit | None:
        """The longest part of the name (a run of its words) that is a term of the type, the
        parts ending at the last word (the head noun in English) first. Its score is 0.5 +
        0.3 x the share of the name's word weight the part covers
        (:mod:`fastbmrag.vocab.candidates`); :meth:`_normalize` abstains below
        :data:`~fastbmrag.vocab.candidates.MIN_COVERAGE`."""
        index, bag, bag_words = self._mesh_index, self._mesh_bag, self._bag_words
        n_all = len(toks)
        for n in range(n_all - 1, 0, -1):
            for start in range(n_all - n, -1, -1):
                part = toks[start : start + n]
                if n == 1 and (part[0] in GENERIC or len(part[0]) < 4):
                    continue
                if part[0] in BAG_STOP or part[-1] in BAG_STOP:
                    continue
                if "".join(part) not in index and (
                    n == 1 or not bag_words.issuperset(part) or _bag_key(part) not in bag
                ):
                    continue
                hit = self._mesh_tokens(part, t, ctx)
                if hit is not None and hit.item >= 0:
                    content = [w for w in toks if w not in BAG_STOP]
                    share = self.word_weights.coverage(content, part)
                    return _Hit(hit.type, hit.item, "partial", partial_score(share), hit.candidates)
        return None

    def _concepts(self, codes: object) -> set[int]:
        """The descriptors of an index or bag entry."""
        if isinstance(codes, int):
            return {codes // 2} if codes >= 0 else {c // 2 for c in self._mesh_multi[~codes]}
        return {c // 2 for c in codes}  # type: ignore[attr-defined]

    @property
    def word_weights(self) -> WordWeights:
        """How much of a disease or chemical name each word carries (built with the
        vocabularies; by the first call for an older build, 0.2 s)."""
        if self._word_weights is None:
            table = self._word_weight_table or word_weights(
                {k: self._concepts(v) for k, v in self._mesh_bag.items()}
            )  # a build from before the table was added
            self._word_weights = WordWeights(table)
        return self._word_weights

    def _names_head(self, item: int, word: str) -> bool:
        """Whether the descriptor's name ends in ``word`` (or a derived form of it), or in it
        and a word for disease ("Vision Disorders")."""
        name = _name_forms(self._desc[item][1])[1]
        forms = (word, *_variants(word))
        return name[-1] in forms or (
            len(name) > 1 and name[-2] in forms and name[-1] in DISEASE_HEADS
        )

    def _first_term(
        self, tries: Iterable[Sequence[str]], t: str, ctx: _Context | None
    ) -> _Hit | None:
        """The first phrase of ``tries`` that is a term of the type, as a variant. Most
        tries name no term: both keys are looked up inline first (as :meth:`_mesh_tokens`
        does), and only a phrase with a key goes through :meth:`_mesh_tokens`. A phrase
        tried twice is looked up twice: cheaper than removing the few repeats."""
        index, bag, bag_words = self._mesh_index, self._mesh_bag, self._bag_words
        for phrase in tries:
            if "".join(phrase) not in index and (
                len(phrase) == 1 or not bag_words.issuperset(phrase) or _bag_key(phrase) not in bag
            ):
                continue
            hit = self._mesh_tokens(phrase, t, ctx)
            if hit is not None and hit.item >= 0:
                return _Hit(hit.type, hit.item, "variant", VARIANT_SCORE, hit.candidates)
        return None

    def _site_disease(self, toks: Sequence[str], ctx: _Context | None) -> _Hit | None:
        """The modifiers as the site of a disease, when the head only says that the site is
        diseased ("bladder inflammation" -> bladder disease, "bone marrow necrosis" -> bone
        marrow disease, "cardiovascular toxicity" -> cardiovascular disease); not when the
        name ends in a term of two or more words ("acute myocardial infarction")."""
        if toks[-1] in DISEASE_SYNONYMS or not self._site_head(toks[-1]):
            return None
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
        )
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
            hit = self._first_term(([*organ, "disease"], [*organ, "disorder"]), DISEASE, ctx)
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
            if hit is not None and _name_forms(self._desc[hit.item][1])[1][-len(ends) :] == ends:
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

    def _site_head_uncached(self, word: str) -> bool:
        hit = self._mesh_tokens([word], DISEASE, None)
        if hit is None:
            hit = next(
                (h for v in _variants(word) if (h := self._mesh_tokens([v], DISEASE, None))),
                None,
            )
        return hit is None or hit.item in self._processes

    def _superset_hit(self, toks: Sequence[str], ctx: _Context | None) -> _Hit | None:
        """A name one word short of a disease term ("variant angina" -> Angina Pectoris,
        Variant); several such terms: the most general, else the one the context names."""
        codes = self._superset.get(" ".join(sorted(x for x in toks if x not in BAG_STOP)))
        if codes is None:
            return None
        if isinstance(codes, int) and codes < 0:
            codes = self._mesh_multi[~codes]
        core = [x for x in toks if x not in COURSE_WORDS]
        if len(core) < len(toks) and core and self._mesh_tokens(core, DISEASE, None) is not None:
            return None  # "acute myocardial infarction": a course word on a term of its own
        if isinstance(codes, int):
            return _Hit(DISEASE, codes, "variant", VARIANT_SCORE)
        chosen = self._pick_descriptor(codes, ctx) if ctx is not None else None
        if chosen is None:
            return None
        return _Hit(DISEASE, chosen, "variant", VARIANT_SCORE, tuple(codes))

    def _conjunct(self, clean: str, t: str, ctx: _Context | None) -> _Hit | None:
        """A coordination names several conditions; one is returned: the last conjunct,
        written in full, first ("pulmonary and renal insufficiency" -> renal insufficiency),
        then the others with the shared head restored ("cardiac and renal lesions" ->
        cardiac lesions)."""
        parts = [p for p in _CONJ_RE.split(clean) if p.strip()]
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
            if hit is not None and hit.item >= 0 and hit.matched_by != "partial":
                return _Hit(hit.type, hit.item, "variant", VARIANT_SCORE, hit.candidates)
        return None

    def _head(self, toks: Sequence[str], ctx: _Context | None = None) -> _Hit | None:
        """ "rigidity" -> Muscle Rigidity: the most general disease with a two-word term holding
        the word (see :func:`fastbmrag.vocab.build.compile_mesh`); also for the last word of
        a longer name whose modifiers matched nothing ("severe rigidity")."""
        for word in (*_variants(toks[-1]), toks[-1]):
            item = self._mesh_head.get(word)
            if item is not None and "C" in self._desc[item][2]:
                score = HEAD_SCORE if len(toks) == 1 else 0.55
                chosen = self._head_from_context(word, ctx) if ctx is not None else None
                if chosen is not None and chosen != item:
                    return _Hit(DISEASE, chosen, "head", score, (item, chosen))
                return _Hit(DISEASE, item, "head", score)
        return None

    def _head_from_context(self, word: str, ctx: _Context) -> int | None:
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

    def _extend(self, word: str, t: str) -> _Hit | None:
        """A one-word name completed to the only two-word term of its type that contains it."""
        codes = self._mesh_extend.get(word)
        if codes is None:
            return None
        if isinstance(codes, int) and codes < 0:
            codes = self._mesh_multi[~codes]
        cat = _CAT[t]
        items = {c // 2 for c in ([codes] if isinstance(codes, int) else codes)}
        fitting = [i for i in items if cat in self._desc[i][2]]
        if len(fitting) != 1:
            return None
        return _Hit(t, fitting[0], "partial", 0.6)

    def _gene_codes(self, codes: int | Sequence[int] | None, ctx: _Context | None) -> _Hit | None:
        if codes is None:
            return None
        if isinstance(codes, int):
            if codes < 0:
                return self._gene_codes(self._gene_multi[~codes], ctx)
            kind = GENE_KINDS[codes % 8]
            return _Hit(GENE, codes // 8, kind, GENE_SCORES[kind])
        best_kind = codes[0] % 8
        items = tuple(c // 8 for c in codes if c % 8 == best_kind)
        kind = GENE_KINDS[best_kind]
        if len(items) == 1:
            return _Hit(GENE, items[0], kind, GENE_SCORES[kind], tuple(c // 8 for c in codes))
        chosen = self._pick_gene(items, ctx) if ctx is not None else None
        if chosen is not None:
            return _Hit(GENE, chosen, kind, round(GENE_SCORES[kind] * 0.9, 3), items)
        return _Hit(GENE, -1, "ambiguous", AMBIGUOUS_SCORE, items)

    def _mesh_codes(
        self,
        codes: int | Sequence[int] | None,
        t: str,
        ctx: _Context | None,
        fixed: float,
        exact_key: str = "",
    ) -> _Hit | None:
        if codes is None:
            return None
        cat = _CAT[t]
        if isinstance(codes, int) and codes < 0:
            codes = self._mesh_multi[~codes]
        if isinstance(codes, int):
            if cat not in self._desc[codes // 2][2]:
                return None
            return _Hit(t, codes // 2, MESH_MATCHED[codes % 2], fixed or MESH_SCORES[codes % 2])
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
            return _Hit(t, items[0], MESH_MATCHED[best_kind], score)
        chosen = self._pick_descriptor(items, ctx) if ctx is not None else None
        if chosen is not None:
            return _Hit(t, chosen, MESH_MATCHED[best_kind], round(score * 0.9, 3), items)
        return _Hit(t, -1, "ambiguous", AMBIGUOUS_SCORE, items)

    # ---- context ---------------------------------------------------------------------------

    def _context(self, text: str) -> _Context:
        ctx = self._contexts.get(text)
        if ctx is None:
            ctx = _Context(text)
            with self._lock:
                if len(self._contexts) >= 256:
                    self._contexts.clear()
                self._contexts[text] = ctx
        return ctx

    def _pick_gene(self, items: Sequence[int], ctx: _Context) -> int | None:
        def support(i: int) -> float:
            _hgnc, symbol, name, _group = self._genes[i]
            s = 2.0 if _gene_key_from(raw_tokens(symbol)) in ctx.gene_keys else 0.0
            words = [w for w in tokens(name) if len(w) > 2 and w not in BAG_STOP]
            if words:
                s += sum(w in ctx.words for w in words) / len(words)
            return s

        return _unique_best(items, support)

    def _pick_descriptor(self, items: Sequence[int], ctx: _Context) -> int | None:
        def support(i: int) -> float:
            words = [w for w in tokens(self._desc[i][1]) if len(w) > 2 and w not in BAG_STOP]
            return sum(w in ctx.words for w in words) / len(words) if words else 0.0

        return _unique_best(items, support)

    # ---- output ----------------------------------------------------------------------------

    def _result(self, name: str, type_: str, hit: _Hit) -> Normalized:
        if not hit.candidates:
            ids: tuple[str, ...] = ()
        elif hit.type == GENE:
            ids = tuple(self._genes[i][0] for i in hit.candidates)
        else:
            ids = tuple(self._desc[i][0] for i in hit.candidates)
        if hit.item < 0:  # ambiguous, or abstained
            return Normalized(name, type_, _clean(name), None, hit.matched_by, hit.score, ids)
        if hit.type == GENE:
            row = self._genes[hit.item]
            return Normalized(name, type_, row[1], row[0], hit.matched_by, hit.score, ids)
        row = self._desc[hit.item]
        return Normalized(name, type_, row[1], row[0], hit.matched_by, hit.score, ids)

    def label(self, ontology_id: str) -> str | None:
        """A readable name for an HGNC or MeSH id: "IL1B (interleukin 1 beta)", "Endometriosis"."""
        if self._labels is None:
            labels = {row[0]: f"{row[1]} ({row[2]})" for row in self._genes}
            labels.update((row[0], row[1]) for row in self._desc)
            labels.update(self._group_names)
            self._labels = labels
        return self._labels.get(ontology_id)

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        """What a concept belongs to: a MeSH descriptor's ancestors in its trees, an HGNC gene's
        gene groups (families). Edges carry them, so a filter on a broad concept finds its
        narrower ones."""
        index = self._id_index()
        i = index.get(ontology_id)
        if i is None:
            return ()
        if ontology_id.startswith("HGNC:"):
            return tuple(self._gene_groups.get(i, ()))
        return tuple(self._mesh_ancestors.get(i, ()))

    def covers(self, ontology_id: str) -> int:
        """How many concepts a filter on ``ontology_id`` covers: itself and every descriptor
        below it, or every gene of a gene group."""
        if self._covered is None:
            counts: dict[str, int] = {}
            for ids in (*self._mesh_ancestors.values(), *self._gene_groups.values()):
                for a in ids:
                    counts[a] = counts.get(a, 0) + 1
            self._covered = counts
        if ontology_id.startswith(GROUP_PREFIX):
            return self._covered.get(ontology_id, 0)
        return 1 + self._covered.get(ontology_id, 0)

    def group_name(self, group_id: str) -> str | None:
        return self._group_names.get(group_id)

    def _id_index(self) -> dict[str, int]:
        if self._ids is None:
            ids = {row[0]: i for i, row in enumerate(self._genes)}
            ids.update((row[0], i) for i, row in enumerate(self._desc))
            self._ids = ids
        return self._ids

    def facts(self, ontology_id: str) -> dict[str, str]:
        """What the vocabulary says of an id: an HGNC gene's symbol, name, locus group and gene
        groups; a MeSH descriptor's name, categories (disease, chemical) and broader
        descriptors."""
        if ontology_id in self._group_names:
            return {"source": "HGNC gene group", "name": self._group_names[ontology_id],
                    "genes": str(self.covers(ontology_id))}  # fmt: skip
        i = self._id_index().get(ontology_id)
        if i is None:
            return {}
        above = [self.label(a) or a for a in self.ancestors(ontology_id)]
        if ontology_id.startswith("HGNC:"):
            row = self._genes[i]
            return {"source": "HGNC", "symbol": row[1], "name": row[2], "locus_group": row[3],
                    "groups": "; ".join(above)}  # fmt: skip
        row = self._desc[i]
        kinds = {"C": "disease", "F": "mental disorder", "D": "chemical"}
        return {"source": "MeSH", "name": row[1],
                "categories": ", ".join(kinds[c] for c in row[2] if c in kinds),
                "broader": "; ".join(sorted(above))}  # fmt: skip

    def gene(self, hgnc_id: str) -> tuple[str, str] | None:
        """(symbol, name) of an HGNC id, e.g. "HGNC:5992" -> ("IL1B", "interleukin 1 beta")."""
        for row in self._genes:
            if row[0] == hgnc_id:
                return row[1], row[2]
        return None


def _free_key(clean: str, t: str) -> str:
    """The key of the context-free memo: the name in lower case where case cannot change the
    context-free match ("Renal failure" = "renal failure"): ASCII, no element symbol
    ("Ca2+") for a chemical, and "and"/"or" already in lower case where written as words
    (coordination is split on the lower-case words only)."""
    if not clean.isascii():
        return clean
    low = clean.lower()
    if low == clean:
        return clean
    if t == CHEMICAL and _formula_name(clean):
        return clean
    if not _AND_OR_CAPITALS.isdisjoint(clean) and any(
        not m.islower() for m in _AND_OR_RE.findall(clean)
    ):
        return clean
    return low


def _bag_key(toks: Sequence[str]) -> str:
    """:func:`~fastbmrag.vocab.build.bag_key` of a name's tokens."""
    if BAG_STOP.isdisjoint(toks):
        return " ".join(sorted(toks))
    return " ".join(sorted([x for x in toks if x not in BAG_STOP]))


def _alive(ref: weakref.ReferenceType[DictionaryNormalizer]) -> DictionaryNormalizer:
    norm = ref()
    if norm is None:  # only a memo kept past its normaliser could get here
        raise ReferenceError("the normaliser of this memo is gone")
    return norm


def _abbreviation(hit: _Hit, factor: float) -> _Hit:
    if hit.item < 0:
        return hit  # the long form is ambiguous, or abstained: so is the short one
    return _Hit(hit.type, hit.item, "abbreviation", round(hit.score * factor, 3), hit.candidates)


def _abbreviation_like(text: str) -> bool:
    """ "AZT", "5-FU", "LiCl": short, no space, two capitals or a digit."""
    return (
        len(text) <= 10
        and " " not in text
        and (sum(c.isupper() for c in text) >= 2 or any(c.isdigit() for c in text))
    )


def _tokens_key(text: str) -> str:
    return "".join(tokens(text))


def _acronym_like(text: str) -> bool:
    """ "ALF", "OAB", "ICH": two to six letters, upper case (a final plural "s" allowed)."""
    core = text[:-1] if text.endswith("s") else text
    return 2 <= len(core) <= 6 and core.isalpha() and core.isupper()


def _formula_name(text: str) -> list[str]:
    """Names for an element symbol or a binary formula: "Ca2+" -> calcium, "CaCl2" ->
    calcium chloride, "CO2" -> carbon dioxide. Case-sensitive; [] when not a formula."""
    core = _CHARGE_RE.sub("", text) if text[-1] in "+-)" else text
    if core in ELEMENTS:
        return [ELEMENTS[core]]
    m = _BINARY_RE.match(core)
    if not m or m.group(1) not in ELEMENTS or m.group(3) not in ANIONS:
        return []
    first, anion = ELEMENTS[m.group(1)], ANIONS[m.group(3)]
    n = int(m.group(4) or 1)
    prefix = NUMBER_PREFIX.get(n, "")
    if prefix == "mon" and anion[0] != "o":
        prefix = "mono"
    return [f"{first} {anion}", f"{first} {prefix}{anion}"]


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def _condition_key(text: str) -> tuple[str, bool]:
    """(bag key of the condition, whether the text says it is induced): "levodopa-induced
    dyskinesias" -> ("dyskinesia", True)."""
    toks = _name_forms(text)[1]
    induced = "induced" in toks[:-1]
    if induced:
        toks = toks[len(toks) - toks[::-1].index("induced") :]
    return " ".join(sorted(x for x in toks if x not in BAG_STOP)), induced


def _rewrites(toks: Sequence[str]) -> list[Sequence[str]]:
    """Disease names rewritten towards MeSH's wording, most literal first:

    - the condition of an "X-induced Y" ("contrast media-induced nephropathy" -> nephropathy);
    - a sign or complaint head as a disorder ("extrapyramidal symptoms" -> extrapyramidal
      disorder; "sexual side effects" -> sexual disorder);
    - tumour words as neoplasm ("liver tumors" -> liver neoplasm);
    - organ adjectives as MeSH's organ nouns ("gastric" -> stomach, "visual" -> vision),
      alone and with the head rewrites.
    """
    out: list[Sequence[str]] = []
    base = toks
    modifiers = base[:-1]
    if "induced" in modifiers:
        base = base[len(base) - list(base)[::-1].index("induced") :]
        modifiers = base[:-1]
        out.append(base)
        out += _organ_phrases(base)
    heads: list[list[str]] = []
    body, last = modifiers, base[-1]
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
    out += _organ_phrases_of((last,))
    return out


def _more_rewrites(toks: Sequence[str]) -> list[Sequence[str]]:
    """Further rewrites of a disease name, tried after :func:`_rewrites`:

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
        out += _rewrites(base)
    body, last = base[:-1], base[-1]
    if body and last in DISEASE_SYNONYMS:
        out += [[*body, to] for to in SYNONYM_TO if to != last]
    if len(body) == 1 and (last in DISEASE_SYNONYMS or last == "syndrome"):
        # An adjective and a word for disease: "cholestatic disease" -> cholestasis.
        out += [[v] for v in _variants(body[0])]
    if body and last in _EPISODE_OR_SIGN:
        while len(body) > 1 and body[-1] in SIGN_HEADS:
            body = body[:-1]
        out.append(body)
        out += [[*body[:-1], v] for v in _variants(body[-1])]
        out += [[*body, h] for h in DISEASE_HEADS]
    if "of" in base[1:-1]:
        # "calcification of the artery" -> artery calcification -> vascular calcification
        i = base.index("of")
        inverted = [w for w in base[i + 1 :] if w not in BAG_STOP] + list(base[:i])
        out.append(inverted)
        out += _rewrites(inverted)
    if len(base) > 1:
        # "peripheral neurotoxicity" -> peripheral nervous system disease
        out += [[*base[:-1], *p] for p in _organ_phrases_of((last,))]
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
    if len(base) > 1 and base[0] in IMPAIRED_ADJECTIVES:
        # "impaired memory" -> memory disorder, "impaired consciousness" -> consciousness
        # disorder (as "memory impairment").
        out += [[*base[1:], to] for to in SIGN_TO]
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


def _variants(word: str) -> tuple[str, ...]:
    """Derived forms of one word by :data:`VARIANT_SUFFIXES` ("bruising" -> "bruise")."""
    return _suffix_variants(word, 3)


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def _suffix_variants(word: str, min_stem: int) -> tuple[str, ...]:
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
def _name_forms(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`~fastbmrag.vocab.build.token_forms` of a name as tuples, memoised: one name
    is tokenised by the direct lookup, the fallback rules and the drug-induced check."""
    return token_form_tuples(text)


def clear_caches() -> None:
    """Empty the per-process word and name memos (for benchmarks that start cold)."""
    for cached in (_forms, _condition_key, _suffix_variants, _name_forms, _organ_phrases_of):
        cached.cache_clear()


def _organ_phrases(toks: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """ "renal damage", "nephrotoxicity", "nephropathy" -> (("kidney", "disease"), ...)."""
    if len(toks) > 2 or (
        len(toks) == 2 and (toks[0] not in ORGAN_ADJECTIVES or toks[1] not in ORGAN_DAMAGE)
    ):
        return ()
    return _organ_phrases_of(tuple(toks))


@functools.lru_cache(maxsize=FREE_CACHE_SIZE)
def _organ_phrases_of(toks: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
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


def _combining_split(word: str) -> str:
    """ "myonecrosis" -> "muscular necrosis": a word made of an organ's combining form
    (:data:`ORGAN_PREFIXES`) and a word of four letters or more; "" when it is none."""
    for prefix, organ in ORGAN_PREFIXES.items():
        if word.startswith(prefix) and len(word) - len(prefix) >= 4:
            return f"{organ} {word[len(prefix) :]}"
    return ""


def _unique_best(items: Sequence[int], support: Any) -> int | None:
    scored = sorted(((support(i), i) for i in items), reverse=True)
    if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        return scored[0][1]
    return None


def _strip_gene_words(toks: list[str]) -> list[str]:
    out = list(toks)
    while out and out[-1] in GENE_WORDS:
        out.pop()
    while out and out[0] in GENE_WORDS:
        out.pop(0)
    return out


def _gene_like(word: str) -> bool:
    """A single word that may be a gene symbol in running text: IL1B, TP53, p53, MYC, IL-1β."""
    if word.lower() in STOP_WORDS or len(word) < 2:
        return False
    if any(c.isdigit() for c in word):
        return True
    return sum(c.isupper() for c in word[1:]) >= 1 and len(word) >= 3


# --------------------------------------------------------------------------------------------
# Loading (memoised per process)
# --------------------------------------------------------------------------------------------

# directory -> (manifest mtime, its normaliser): one normaliser per directory, the newest build
_MEMO: dict[str, tuple[int, DictionaryNormalizer]] = {}
_MEMO_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where `fastbmrag vocab update` writes rebuilt vocabularies: ``<FASTBMRAG_HOME>/vocab``."""
    return config.home() / CACHE_SUBDIR


def vocab_dir(path: Path | None = None) -> tuple[Path, str]:
    """The directory to load and where it comes from: "custom", "cache" or "bundled"."""
    if path is not None:
        return Path(path).expanduser(), "custom"
    cached = cache_dir()
    if (cached / MANIFEST).is_file():
        return cached, "cache"
    return BUNDLED_DIR, "bundled"


def load_normalizer(path: Path | None = None) -> DictionaryNormalizer:
    """The normaliser over ``path``, else the user's rebuilt cache, else the bundled files.

    Loaded once per process and directory; reloaded when the directory is rebuilt, and the
    previous build's normaliser is then dropped (freed once its callers let go of it).
    """
    directory, _origin = vocab_dir(path)
    try:
        stamp = (directory / MANIFEST).stat().st_mtime_ns
    except OSError as err:
        raise VocabError(
            f"No vocabularies in {directory} (missing {MANIFEST}); "
            "run `fastbmrag vocab update` or reinstall fastbmrag."
        ) from err
    key = str(directory.resolve())
    with _MEMO_LOCK:
        held = _MEMO.get(key)
        if held is not None and held[0] == stamp:
            return held[1]
        norm = DictionaryNormalizer.from_dir(directory)
        _MEMO[key] = (stamp, norm)
    return norm


def vocab_info(path: Path | None = None) -> dict[str, Any]:
    """Versions, sources and counts of the vocabularies :func:`load_normalizer` would load."""
    directory, origin = vocab_dir(path)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise VocabError(
            f"Cannot read {directory / MANIFEST} ({err}); run `fastbmrag vocab update` "
            "or reinstall fastbmrag."
        ) from err
    return {"path": str(directory), "origin": origin, **manifest}
