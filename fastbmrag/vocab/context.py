"""What the stages share: the facts of one context text (the abbreviations it defines, its
words) and a stage's hit."""

from __future__ import annotations

import contextvars
import re
from typing import NamedTuple

from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY
from fastbmrag.vocab.rules.keys import gene_key_of, raw_tokens, tokens
from fastbmrag.vocab.rules.language import DRUG_CAUSE_RE, PLAIN_WORD_RE, WS_RE

# Type hints as the extractor or a user may write them, and the type each one means.
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
    PATHWAY: PATHWAY,
    "pathways": PATHWAY,
    "process": PATHWAY,
}
AUTO = "auto"
ALL_TYPES = (GENE, DISEASE, CHEMICAL)

# The score of each way a name can match (see the table in fastbmrag.vocab.normalizer).
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
AS_WRITTEN_FACTOR = 0.95  # a symbol before an isoform's marker, a respelt name
GROUP_SCORE = 0.8
GROUP_MEMBER_SCORE = 0.7  # a family's name, the one member the text writes
HEAD_SCORE = 0.6
REWRITE_SCORE = 0.7
SPELLING_SCORE = 0.65
EXTEND_SCORE = 0.6
AMBIGUOUS_SCORE = 0.5
ABBREVIATION_FACTOR = 0.95
CATEGORY = {DISEASE: "C", CHEMICAL: "D"}

FORMULA_SCORE = 0.85
DRUG_INDUCED_FACTOR = 0.95
# The stages :meth:`DictionaryNormalizer.explain` is tracing, when it is.
TRACE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "normaliser_trace", default=None
)

# The stages whose hit a context can change: a fallback may pass over an ambiguous step the
# context would have decided.
CONTEXT_SENSITIVE = frozenset(
    ["derived", "rewrite", "completion", "organ", "site", "conjunct", "partial", "extend", "head"]
)


def clean_name(name: str) -> str:
    if name.isprintable() and "  " not in name:  # no whitespace but single plain spaces
        return name.strip().strip(".,;:")
    return WS_RE.sub(" ", name).strip().strip(".,;:")


# --------------------------------------------------------------------------------------------
# Abbreviations defined in the text (Schwartz & Hearst, PSB 2003)
# --------------------------------------------------------------------------------------------

_PAREN_RE = re.compile(r"\(([^()]{1,20})\)")
PARENS_RE = re.compile(r"\s*\([^()]*\)")


def best_long_form(short: str, long: str) -> str | None:
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
        if not short or len(words) > 2 or not short[0].isalnum():
            continue
        if len(short) < 2 and not short.isupper():
            continue  # one capital may stand for a word ("phlorizin (P)"); "(a)" enumerates
        if not any(c.isalpha() for c in short):
            continue
        before = text[: m.start()].rstrip()
        cut = max(before.rfind(". "), before.rfind("; "), before.rfind("("), before.rfind(")"))
        before = before[cut + 1 :].strip()
        if before.endswith("-") and short.endswith("-"):
            # "Dexamethasone- (Dex-) induced": a compound modifier's hyphen on both forms
            before, short = before.rstrip("-"), short.rstrip("-")
        if not before:
            continue
        window.setdefault(short, " ".join(before.split()[-8:]))
        limit = min(len(short) + 5, len(short) * 2)
        long = best_long_form(short, " ".join(before.split()[-limit:]))
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


class Hit(NamedTuple):  # a tuple: built several times per name, cheaply
    type: str
    item: int  # gene or descriptor number; -1 when ambiguous
    matched_by: str
    score: float
    candidates: tuple[int, ...] = ()
    via: str = ""  # the phrase that matched, where it is not the name: a rewrite, a part ...


# A step's answer that ends the search with no id.
NO_ID = Hit("", -1, "none", 0.0)


# Where a sentence ends: a line break, or ". ", "? ", "! " before a capital, digit or bracket. Cruder
# than the paper's sentence breaker and many times faster; it only bounds where a cue applies.
_SENTENCE_END_RE = re.compile(r"\n|(?<=[.!?])\s+(?=[A-Z0-9(\[])")


class Context:
    """Facts about one context text, computed once (and only when needed) for all its names."""

    __slots__ = (
        "_sentences",
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
        self._sentences: list[list] | None = None  # [lower-case sentence, cue or None]
        self._plain_words: list[str] | None = None
        self.acronyms: dict[tuple[str, str], Hit | None] = {}

    @property
    def plain_words(self) -> list[str]:
        """The words of the text in order, split at spaces and hyphens, punctuation trimmed."""
        if self._plain_words is None:
            self._plain_words = PLAIN_WORD_RE.findall(self.text)
        return self._plain_words

    def drug_cause(self, *names: str) -> bool:
        """Whether a sentence of the text that writes one of ``names`` presents a condition
        as caused by a drug or other chemical ("hepatitis after isoniazid treatment"). A cue
        elsewhere in the text says nothing of this condition."""
        if self._sentences is None:
            self._sentences = [[part.lower(), None] for part in _SENTENCE_END_RE.split(self.text)]
        lows = [n.lower() for n in names if n]
        for sentence in self._sentences:
            if any(n in sentence[0] for n in lows):
                if sentence[1] is None:
                    sentence[1] = DRUG_CAUSE_RE.search(sentence[0]) is not None
                if sentence[1]:
                    return True
        return False

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(tokens(self.text))
        return self._words

    @property
    def gene_keys(self) -> frozenset[str]:
        if self._gene_keys is None:
            self._gene_keys = frozenset(gene_key_of(raw_tokens(w)) for w in self.text.split())
        return self._gene_keys
