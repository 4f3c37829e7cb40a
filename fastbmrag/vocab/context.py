"""What the stages share: the type names, the scores and the table of the ways a name can match
(:data:`MATCHED_BY`), the facts of one context text (the abbreviations it defines, its words)
and a stage's hit."""

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

# The score of each way a name can match (:data:`MATCHED_BY` below says what each means).
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
# a MeSH supplementary concept's own name, an entry term: below a descriptor's (whose own
# term a name is wins before these are looked up)
SUPPLEMENTARY_SCORES = (0.9, 0.85)
SUPPLEMENTARY_MATCHED = ("supplementary_name", "supplementary_term")
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
# An HGNC or MeSH id as written (a descriptor's D id, a supplementary concept's C id): looked up
# as an id before any stage reads a name.
ID_FORM = re.compile(r"(?:HGNC:\d+|[CD]\d{6,9})", re.I)
DRUG_INDUCED_FACTOR = 0.95
# The stages :meth:`DictionaryNormalizer.explain` is tracing, when it is.
TRACE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "normaliser_trace", default=None
)


class Match(NamedTuple):
    """One way a name can match: a result's ``matched_by``, its score and what it means, with
    an example name (type, context text) that matches so (a test normalises each)."""

    score: (
        float | str
    )  # a fixed score, or how it is found ("x0.95": that of the match it rests on, times 0.95)
    meaning: str
    example: tuple[str, str, str]
    # a context can change the hit (a fallback may pass over an ambiguous step the context
    # would have decided): a call with a context does not reuse the context-free memo
    context_sensitive: bool = False


def _x(factor: float) -> str:
    return f"x{factor}"


MATCHED_BY: dict[str, Match] = {
    "symbol": Match(
        GENE_SCORES["symbol"],
        "HGNC approved symbol (case, punctuation, Greek letters folded)",
        ("IL-1 beta", GENE, ""),
    ),
    "name": Match(
        MESH_SCORES[0],
        "HGNC approved name, or the MeSH descriptor's own name",
        ("interleukin 1 beta", GENE, ""),
    ),
    "prev_symbol": Match(GENE_SCORES["prev_symbol"], "HGNC previous symbol", ("PARK1", GENE, "")),
    "entry_term": Match(
        MESH_SCORES[1],
        "a MeSH entry term (synonym, permuted form, spelling variant)",
        ("tumour", DISEASE, ""),
    ),
    "supplementary_name": Match(
        SUPPLEMENTARY_SCORES[0],
        "a MeSH supplementary concept's own name (a C id, filed under its heading descriptors)",
        ("bevonium", CHEMICAL, ""),
    ),
    "supplementary_term": Match(
        SUPPLEMENTARY_SCORES[1],
        "an entry term of a MeSH supplementary concept",
        ("acetylglucosaminylasparagine", CHEMICAL, ""),
    ),
    "alias": Match(GENE_SCORES["alias"], "HGNC alias symbol", ("IL1F2", GENE, "")),
    "prev_name": Match(
        GENE_SCORES["prev_name"],
        "HGNC previous name",
        ("caspase 3 apoptosis-related cysteine peptidase", GENE, ""),
    ),
    "alias_name": Match(
        GENE_SCORES["alias_name"], "HGNC alias name", ("alpha-synuclein", GENE, "")
    ),
    "protein_name": Match(
        GENE_SCORES["protein_name"],
        "a protein name NCBI Gene lists for the gene",
        ("hepcidin", GENE, ""),
    ),
    "ncbi_synonym": Match(
        GENE_SCORES["ncbi_synonym"],
        "a synonym NCBI Gene lists and HGNC does "
        "not; neither kind when the name begins other genes' names (a family "
        "stem)",
        ("TIPE2", GENE, ""),
    ),
    "isoform": Match(
        _x(AS_WRITTEN_FACTOR),
        "an isoform or variant after an approved symbol: the symbol's gene",
        ("TP63 gamma", GENE, ""),
    ),
    "respelled": Match(
        _x(AS_WRITTEN_FACTOR),
        "a gene name written beyond its dictionary forms; via holds the form that matched",
        ("CEBPalpha", GENE, ""),
    ),
    "gene_group": Match(
        GROUP_SCORE,
        "an HGNC gene group's name or its members' shared stem: the family's node, never a member",
        ("caspases", GENE, ""),
    ),
    "group_member": Match(
        GROUP_MEMBER_SCORE,
        "a family's name in the singular (an HGNC gene "
        "group's, or the stem its symbols share) in a text that writes the "
        "symbol of exactly one of its genes: that gene",
        ("estrogen receptor", GENE, "The estrogen receptor binds; ESR1 expression rose."),
    ),
    "formula": Match(
        FORMULA_SCORE, "a chemical formula written as its names", ("NaHCO3", CHEMICAL, "")
    ),
    "word_order": Match(
        WORD_ORDER_SCORE,
        "the same words as a MeSH term in another order",
        ("insufficiency renal", DISEASE, ""),
    ),
    "abbreviation": Match(
        _x(ABBREVIATION_FACTOR),
        "a short form the context defines whose long "
        "form matched (x0.9 inside a longer name, x0.7 undefined but spelt "
        "out by words of the text); a defined short form is no gene whose "
        "name shares no word with its long form",
        ("ALF", DISEASE, "Patients with acute liver failure (ALF) were seen."),
    ),
    "drug_induced": Match(
        _x(DRUG_INDUCED_FACTOR),
        "the drug-induced descriptor of the condition "
        "found, when the name or its sentence speaks of a drug's effects; "
        "never when the name states another cause",
        ("hepatitis", DISEASE, "Hepatitis induced by isoniazid was seen."),
    ),
    "derived": Match(
        REWRITE_SCORE,
        "a derived form of the last word",
        ("hypotensive", DISEASE, ""),
        context_sensitive=True,
    ),
    "rewrite": Match(
        REWRITE_SCORE,
        "a rewrite towards MeSH's wording; the name without a "
        "parenthesised aside; a combining form split",
        ("liver tumors", DISEASE, ""),
        context_sensitive=True,
    ),
    "completion": Match(
        REWRITE_SCORE,
        "a disease name one word short of a term: a word for "
        "disease added, or the word the term has besides",
        ("bipolar", DISEASE, ""),
        context_sensitive=True,
    ),
    "organ": Match(
        REWRITE_SCORE,
        "an organ's damage as the organ's disease",
        ("nephrotoxicity", DISEASE, ""),
        context_sensitive=True,
    ),
    "site": Match(
        REWRITE_SCORE,
        "a head that only says its site is diseased as the site's disease",
        ("bladder inflammation", DISEASE, ""),
        context_sensitive=True,
    ),
    "conjunct": Match(
        REWRITE_SCORE,
        "one conjunct of a coordination whose parts are not all terms",
        ("pulmonary and renal insufficiency", DISEASE, ""),
        context_sensitive=True,
    ),
    "head": Match(
        HEAD_SCORE,
        "one disease word completed to the most general descriptor with a "
        "two-word term holding it; 0.55 for the head word of a longer name no part "
        "of which is a term",
        ("diabetes", DISEASE, ""),
        context_sensitive=True,
    ),
    "partial": Match(
        "0.50+",
        "the longest part of the name that is a MeSH term: 0.5 + 0.3 x "
        "the share of the name's word weight the part carries",
        ("severe hypotension", DISEASE, ""),
        context_sensitive=True,
    ),
    "coordination": Match(
        "min",
        "several genes or diseases, each part its own result in parts; "
        "a disease coordination only when every part is a term as written",
        ("breast and ovarian cancer", DISEASE, ""),
    ),
    "ambiguous": Match(
        AMBIGUOUS_SCORE,
        "the name fits several entries equally well and the "
        "context does not decide, or joins two chemicals: no id, candidates "
        "lists the ids",
        ("iron dextran", CHEMICAL, ""),
    ),
    "spelling": Match(
        SPELLING_SCORE,
        "the one descriptor of the type whose term the name "
        "misspells by a letter or two (one edit per ten letters, six letters or "
        "more, the first two as written)",
        ("epirubicine", CHEMICAL, ""),
    ),
    "extend": Match(
        EXTEND_SCORE,
        "a one-word chemical name completed to the only two-word "
        "chemical term holding it, one that names its form or kind",
        ("Ecstasy", CHEMICAL, ""),
        context_sensitive=True,
    ),
    "abstained": Match(
        "<0.71",
        "a name whose only term is a part carrying too little of its "
        "word weight, a code's letters without its number, or a disease's one "
        "word whose only term adds a word: no id, candidates lists the "
        "descriptor",
        ("forestomach tumors", DISEASE, ""),
    ),
    "id": Match(
        1.0,
        "an HGNC or MeSH id as written (HGNC:5992, D004715, C000002): the concept it names, of "
        "its own type; an id not bundled gets none, never a name's reading",
        ("C000002", AUTO, ""),
    ),
    "none": Match(
        0.0, "unknown, or a type with no vocabulary: the cleaned name, no id", ("zzqx", DISEASE, "")
    ),
}
CONTEXT_SENSITIVE = frozenset(k for k, m in MATCHED_BY.items() if m.context_sensitive)


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
    """Schwartz-Hearst definitions, and for every "(SF)" the words before it (up to eight, or
    the long form's words where it has more, in the same sentence): the long form may be longer than the letters show ("cyclase
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
        limit = min(len(short) + 5, len(short) * 2)
        long = best_long_form(short, " ".join(before.split()[-limit:]))
        # the window holds the long form, however long ("sudden infant death with dysgenesis of
        # the testes syndrome (SIDDT)": nine words)
        reach = max(8, len(long.split()) if long else 0)
        window.setdefault(short, " ".join(before.split()[-reach:]))
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
