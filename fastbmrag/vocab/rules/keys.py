"""Text keys shared by the vocabulary build and the lookups: case, accents, Greek letters,
possessives, British spellings and plurals folded, so that a name and a term meet on one key.

- :func:`term_key`: the tokens joined ("Non-Hodgkin's Lymphomas" -> "nonhodgkinlymphoma");
- :func:`bag_key`: the content tokens sorted (word order free: "cancer of the breast");
- :func:`gene_key`: every letter and digit, Greek letters as one letter ("IL-1β" -> "il1b").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "µ": "mu",  # micro sign
    "ν": "nu",
    "ξ": "xi",
    "ο": "omicron",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
# Greek letter words as gene symbols write them (IL1B, TGFB1, HIF1A, PRKCA).
GREEK_LETTER = {
    "alpha": "a",
    "beta": "b",
    "gamma": "g",
    "delta": "d",
    "epsilon": "e",
    "kappa": "k",
    "zeta": "z",
    "theta": "q",
    "eta": "h",
    "iota": "i",
    "lambda": "l",
    "mu": "m",
    "sigma": "s",
    "tau": "t",
    "omega": "w",
}
_GREEK_RE = re.compile("[" + "".join(GREEK) + "".join(k.upper() for k in GREEK if k != "µ") + "]")
_POSSESSIVE_RE = re.compile(r"(?<=[a-z])['’]s\b")
_TOKEN_RE = re.compile(r"[a-z]+|[0-9]+")


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Head nouns MeSH disease names often carry that writers leave out ("neurotoxicity" ->
# Neurotoxicity Syndromes, "parkinson" -> Parkinson Disease); see completion_tables.
COMPLETION_HEADS = ("syndrome", "disease", "disorder", "infection")
# Prepositions, articles and conjunctions: they part phrases ("an antagonist at the ...").
FUNCTION_WORDS = word_set("of the a an and in on by with for to from or as at")
# Words dropped from order-free (bag) keys: "cancer of the breast" ~ "breast cancer".
BAG_STOP = FUNCTION_WORDS | word_set("induced associated due")
# Words after which a name names something related to what precedes, not a kind of it
# (genes: "tumor necrosis factor alpha induced protein 1", "huntingtin interacting protein 1",
# "angiotensin I converting enzyme", "interleukin 1 receptor").
RELATION_WORDS = frozenset(
    [
        "induced", "inducible", "inducing", "interacting", "associated", "binding", "regulated",
        "related", "like", "activated", "activating", "converting", "releasing", "dependent",
        "responsive", "receptor",
    ]
)  # fmt: skip
# Words that say which kind of molecule a gene name refers to, not which gene.
GENE_WORDS = word_set(
    "gene genes protein proteins mrna mrnas cdna cdnas transcript transcripts expression level levels "
    "polypeptide subunit isoform isoforms human"
)
_INVARIANT = word_set(
    "species series caries herpes rabies scabies measles mumps diabetes rickets lupus "
    "status virus corpus fetus sinus nucleus stimulus bronchus thrombus calculus "
    "uterus tetanus pancreas ascites gas bias mass less loss abscess stress press "
    "illness sickness weakness deafness blindness numbness dizziness tenderness "
    "hypersensitivity"
)


def _fold(text: str) -> str:
    """Greek letters to words, accents dropped, lower case, British spellings folded."""
    if text.isascii():  # no Greek letters, no accents
        text = text.lower()
        return _POSSESSIVE_RE.sub("", text) if "'" in text else text
    if _GREEK_RE.search(text):
        text = _GREEK_RE.sub(lambda m: " " + GREEK[m.group(0).lower()] + " ", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.lower()
    if "'" in text or "’" in text:
        text = _POSSESSIVE_RE.sub("", text)
    return text


def _spelling(tok: str) -> str:
    """American spelling: anaemia, oedema, tumour, sulphate, leucocyte, aluminium, necrotising
    -> anemia, edema, ..., necrotizing."""
    if len(tok) < 4 or not tok.isalpha():
        return tok
    stem = tok[:-1]
    if "ae" in stem or "oe" in stem:  # not a final -ae/-oe (vertebrae, aloe)
        tok = stem.replace("ae", "e").replace("oe", "e") + tok[-1:]
    if "sulph" in tok:
        tok = tok.replace("sulph", "sulf")
    if "leuc" in tok:  # leucocyte, leucopenia, leucaemia
        tok = tok.replace("leuc", "leuk")
    if tok.endswith("our") and len(tok) > 4:
        tok = tok[:-3] + "or"
    elif tok.endswith("ours") and len(tok) > 5:  # tumours (folded before the plural is)
        tok = tok[:-4] + "ors"
    if tok == "aluminium":
        tok = "aluminum"
    elif tok == "hem":  # haem: heme, as haemoglobin is hemoglobin
        tok = "heme"
    m = _ISE_RE.match(tok)
    if m:  # necrotising, immunisation, sensitised -> -iz- ("bruising": its stem is too short)
        tok = f"{m.group(1)}iz{m.group(2)}"
    return tok


# British -ise- forms: a stem of five letters or more, then -ise, -ised, -ising, -isation(s)
_ISE_RE = re.compile(r"^([a-z]{5,})is(e|es|ed|ing|ation|ations)$")


def _singular(tok: str) -> str:
    """Singular of an English (or -osis) plural: tumors -> tumor, endometrioses -> endometriosis."""
    if len(tok) < 5 or tok in _INVARIANT or not tok.isalpha():
        return tok
    if tok.endswith("oses"):
        return tok[:-4] + "osis"
    if tok.endswith("ies"):
        return tok[:-3] + "y"
    if tok.endswith(("xes", "ches", "shes", "sses")):
        return tok[:-2]
    if tok.endswith("s") and not tok.endswith(("ss", "us", "is", "ys")):
        return tok[:-1]
    return tok


def in_both_numbers(name: str) -> tuple[str, ...]:
    """A name as written and with its last word in the other number, when that is an English
    plural or a singular that makes one ("hydatidiform moles" -> + "hydatidiform mole";
    "fracture" -> + "fractures"; "cell death" -> + "cell deaths"). Case kept."""
    head = name.rsplit(" ", 1)[-1]
    low = head.lower()
    if not low.isalpha() or len(low) < 4 or low in _INVARIANT or head.isupper():
        return (name,)
    single = _singular(low)
    if single != low:
        other = single
    elif low.endswith("osis"):
        other = low[:-4] + "oses"
    elif low.endswith("y") and low[-2:-1] not in tuple("aeiou"):
        other = low[:-1] + "ies"
    elif low.endswith(("s", "x", "z", "ch", "sh")):
        return (name,)  # a singular in -s or a sibilant: its plural is no safer guess
    else:
        other = low + "s"
    return (name, name[: len(name) - len(head)] + other)


@functools.lru_cache(maxsize=1 << 16)
def word_forms(tok: str) -> tuple[str, str]:
    spelled = _spelling(tok)
    return spelled, _singular(spelled)


def tokens(text: str) -> list[str]:
    """Word tokens: alphabetic and numeric runs ("IL-1beta" -> il, 1, beta), spelling and
    number folded (singular, American spelling)."""
    return [word_forms(t)[1] for t in _TOKEN_RE.findall(_fold(text))]


def plain_tokens(text: str) -> list[str]:
    """Like :func:`tokens` but plurals kept (to tell "Amphetamine" from "Amphetamines")."""
    return [word_forms(t)[0] for t in _TOKEN_RE.findall(_fold(text))]


def token_forms(text: str) -> tuple[list[str], list[str]]:
    """(:func:`plain_tokens`, :func:`tokens`) of ``text`` in one pass."""
    plain, toks = token_form_tuples(text)
    return list(plain), list(toks)


def token_form_tuples(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`token_forms` as tuples."""
    words = _TOKEN_RE.findall(_fold(text))
    if len(words) == 1:  # most chemical names
        plain, tok = word_forms(words[0])
        return (plain,), (tok,)
    if not words:
        return (), ()
    plain_forms, toks = zip(*map(word_forms, words), strict=True)
    return plain_forms, toks


def raw_tokens(text: str) -> list[str]:
    """Word tokens without spelling folding (for gene keys, where every letter counts)."""
    return _TOKEN_RE.findall(_fold(text))


# Roman numerals of two letters or more as the numbers gene names also write them with ("IL-II",
# "interleukin II", "collagen type IV"); single letters stay letters ("factor X", "protein C",
# "class I" are as often letters as numbers).
ROMAN_NUMBER = {
    r: str(n)
    for n, r in enumerate(
        [
            "-",
            "i",
            "ii",
            "iii",
            "iv",
            "v",
            "vi",
            "vii",
            "viii",
            "ix",
            "x",
            "xi",
            "xii",
            "xiii",
            "xiv",
            "xv",
            "xvi",
            "xvii",
            "xviii",
            "xix",
            "xx",
        ]
    )
    if len(r) > 1
}
GENE_LETTERS = {**ROMAN_NUMBER, **GREEK_LETTER}


def gene_key_of(toks: Iterable[str], roman: bool = True) -> str:
    """:func:`gene_key` of :func:`raw_tokens` already split; ``roman=False`` leaves roman
    numerals as written (a name that glues one to a word, "UPIII", is indexed so)."""
    return "".join((GENE_LETTERS if roman else GREEK_LETTER).get(t, t) for t in toks)


def gene_key(text: str) -> str:
    """Key for gene symbols and names: no separators, Greek letters as single letters, roman
    numerals as numbers.

    "IL-1β", "IL1-beta", "il1b" -> "il1b"; "interleukin 1 beta" -> "interleukin1b";
    "IL-II" -> "il2".
    """
    return gene_key_of(raw_tokens(text))


def term_key(text: str) -> str:
    """Key for MeSH terms: tokens without separators ("Non-Hodgkin's Lymphomas" -> "nonhodgkinlymphoma")."""
    return "".join(tokens(text))


def bag_key(text: str) -> str:
    """Order-free key: sorted content tokens ("Cancer of the Breast" == "breast cancer")."""
    return bag_of([t for t in tokens(text) if t not in BAG_STOP])


def bag_of(words: Sequence[str]) -> str:
    """:func:`bag_key` of content tokens. "without" keeps its sides apart: what follows it is
    absent ("aura without headache" is no "headache without aura")."""
    if "without" not in words:
        return " ".join(sorted(words))
    i = words.index("without")
    return " ".join([*sorted(words[:i]), "without", *sorted(words[i + 1 :])])
