"""A paper's own findings told from what it restates, from how papers are written: each sentence's
role (:func:`sentence_roles`), and a relation's from the sentences that state it and, where they
do not decide, the model's mark (:func:`relation_role`).

A sentence is **background** where it reports knowledge as prior ("Previous studies have shown
that ...", "X is known to ...", "accumulating evidence suggests ...", the authors' earlier work:
"we previously showed", another paper cited in full text: "[12]", "(Smith et al., 2010)"),
stands under a section whose role is to set the scene or say what was done (a structured
abstract's BACKGROUND or METHODS, a paper's Introduction, its number read past), or opens an
unstructured abstract before the paper speaks of its own work (an abstract states what was known
in its first one or two sentences, then what was done), or describes the study's experimental
model ("a rat model of ..."). A sentence that names a relation inside a noun phrase presupposes
it rather than reports it: one end named by its known action on the other ("the GLUT inhibitor
cytochalasin B"), or by what causes it ("methamphetamine-induced neurotoxicity")
(:func:`named_as_known`). It is a
**finding** where the paper speaks of its own work ("we found", "our results", "in this study")
or stands under RESULTS or CONCLUSIONS. A title states the paper's subject: no role. Other
sentences have no role from the text.

A relation is a finding where one sentence that states it is one, background where every one is;
otherwise the model's mark decides (it cites a sentence that restates what was known as a
negative number), and without a mark the relation is taken as the paper's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fastbmrag.text.citations import REFERENCE
from fastbmrag.text.sentences import ABSTRACT, TITLE, Sentence

FINDING, BACKGROUND = "finding", "background"
ROLES = (FINDING, BACKGROUND)
UNDECIDED = ""  # the text does not say
# where a relation's role came from: the text, the model's mark, or neither (taken as a finding)
FROM_TEXT, FROM_MODEL, UNMARKED = "text", "model", ""
CLASSIFIER = "classifier"  # the findings model decided (text.novelty), the text's cues among its inputs

# The sentences an unstructured abstract may spend on what was known before it speaks of its own
# work: one or two (the context, then the gap the study fills).
OPENING_SENTENCES = 2

# A structured abstract's label at the start of a sentence ("RESULTS: ..."), where the abstract
# was flattened to one line: it holds for the sentences after it, up to the next.
_INLINE_LABEL = re.compile(r"([A-Z][A-Z /&-]{2,40}):\s")
# Sections whose role is to report what was known or what was done (the study's design,
# subjects and tools: no result), or what the paper found (a label's first word, lower case:
# "Background and aims", "Materials and methods", "Results and discussion").
BACKGROUND_SECTIONS = frozenset((
    "background", "introduction", "context", "rationale", "importance", "motivation",
    "methods", "method", "materials", "design", "setting", "participants", "patients",
    "subjects", "interventions", "measurements", "experimental", "procedures",
))  # fmt: skip
FINDING_SECTIONS = frozenset(
    ["results", "result", "findings", "conclusion", "conclusions", "interpretation"]
)

_W = r"(?:\s+\w+){0,3}?"  # up to three words between, as in "has also been shown"
# Knowledge reported as prior: a perfect passive of reporting ("has been shown"), a state of
# knowledge ("is well known", "it is established"), earlier work or evidence as the subject.
_REPORTED = re.compile(
    r"\b(?:previous(?:ly)?|prior\s+(?:studies|work|research|reports)|earlier\s+(?:studies|work"
    r"|reports)|(?:has|have)" + _W + r"\s+been" + _W + r"\s+(?:shown|reported|demonstrated|"
    r"suggested|implicated|associated|linked|identified|recognized|recognised|proposed|"
    r"described|established|documented|observed|found|considered)|(?:is|are|was|were)"
    + _W
    + r"\s+(?:well[- ])?(?:known|established|recognized|recognised|documented|accepted|"
    r"thought|believed)\s+(?:to|that|as|for)|it\s+is" + _W + r"\s+(?:known|established|"
    r"accepted|believed|recognized|recognised)|(?:accumulating|growing|increasing|emerging|"
    r"mounting|recent|considerable|substantial)\s+(?:evidence|data|studies|research)|"
    r"(?:studies|reports|evidence|research)\s+(?:has|have)" + _W + r"\s+(?:shown|suggested|"
    r"demonstrated|indicated|revealed|implicated|reported))\b",
    re.IGNORECASE,
)
# A citation of another paper in full text: numbered (citations.REFERENCE: "[12]", "[3-5]") or
# author and year ("(Smith et al., 2010)", "(Smith and Jones 2010; Lee 2012)"): the sentence
# reports that paper's work.
_CITATION = re.compile(
    REFERENCE.pattern + r"|\((?:[^()]*?\bet\s+al\.?,?\s*|[A-Z][\w'\u2019-]+"
    r"(?:\s+(?:and|&)\s+[A-Z][\w'\u2019-]+)?,?\s+)(?:19|20)\d\d[a-z]?(?:\s*[;,][^()]*)?\)"
)
# The study's experimental model ("a mouse model of colitis"): what was done, which restates the
# relation that makes it a model of the disease.
_MODEL = re.compile(r"\bmodels?\s+of\b", re.IGNORECASE)
# The authors speaking of their earlier work ("we previously showed", "recently, we found",
# "our previous study"): what this paper restates, though it says "we".
_OWN_EARLIER = re.compile(
    r"\bwe\s+(?:have\s+)?(?:previously|recently|earlier)\b|\b(?:previously|recently),?\s+we\b|"
    r"\bour\s+(?:previous|earlier|prior|recent)\b",
    re.IGNORECASE,
)
# The paper speaking of its own work.
_OWN = re.compile(
    r"\b(?:we|our)\b|\b(?:in|from)\s+(?:this|the\s+present|the\s+current)\s+(?:study|work|"
    r"report|analysis|cohort|trial|series)\b|\bthis\s+(?:study|work|report|analysis)\b|"
    r"\b(?:these|the\s+present|the\s+current)\s+(?:results|data|findings|observations)\b",
    re.IGNORECASE,
)


def sentence_roles(sentences: Sequence[Sentence]) -> list[str]:
    """Each sentence's role from the text: :data:`BACKGROUND`, :data:`FINDING` or
    :data:`UNDECIDED`, in order (``sentences``: a paper's title and abstract, or passages)."""
    opening = _opening(sentences)
    return [
        UNDECIDED if s.where == TITLE else _role(s.text, label, i in opening)
        for i, (s, label) in enumerate(zip(sentences, sentence_labels(sentences), strict=True))
    ]


def sentence_labels(sentences: Sequence[Sentence]) -> list[str]:
    """The section or structured-abstract label each sentence stands under ("" for none): a
    passage's section, an abstract line's label, or a label inside a flattened abstract, which
    holds for the sentences after it up to the next."""
    labels: list[str] = []
    label, line = "", ""
    for s in sentences:
        if s.section != line:  # a new line's label (or passage's section)
            label = line = s.section
        if m := _INLINE_LABEL.match(s.text):  # a label inside a flattened abstract
            label = m.group(1)
        labels.append(label)
    return labels


def _opening(sentences: Sequence[Sentence]) -> set[int]:
    """The sentences that open an unstructured abstract before it speaks of its own work (none
    where it never does: nothing tells its context from its results; none of the main text)."""
    body = [i for i, s in enumerate(sentences) if s.where == ABSTRACT]
    if not body or any(
        sentences[i].section or _INLINE_LABEL.match(sentences[i].text) for i in body
    ):
        return set()  # a structured abstract, or passages: their labels say
    own = next((n for n, i in enumerate(body) if _OWN.search(sentences[i].text)), None)
    return set(body[: min(own, OPENING_SENTENCES)]) if own is not None else set()


# A section title's number ("2.", "2.1", "IV."), read past to the title's first word
_NUMBERING = re.compile(r"(?:\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")


def _role(text: str, section: str, opening: bool) -> str:
    words = _NUMBERING.sub("", section.strip(), count=1).split()
    first = words[0].lower() if words else ""
    if _OWN_EARLIER.search(text):
        return BACKGROUND
    if _OWN.search(text):
        return FINDING
    if opening or first in BACKGROUND_SECTIONS or any(
        cue.search(text) for cue in (_REPORTED, _CITATION, _MODEL)
    ):
        return BACKGROUND
    if first in FINDING_SECTIONS:
        return FINDING
    return UNDECIDED


# A noun phrase that presupposes a relation between two entities named in it: one named by its
# known action on the other ("the GLUT inhibitor cytochalasin B", "the melanocortin agonist
# melanotan II"), or a process named by its cause ("methamphetamine-induced neurotoxicity").
_ACTION_NOUN = (r"(?:inhibitor|agonist|antagonist|blocker|activator|ligand|analogu?e|substrate|"
                r"modulator|inducer|stimulator)s?")  # fmt: skip
_PRESUPPOSED = re.compile(
    r"[\s-]*(?:[\w-]+\s+){0,2}?" + _ACTION_NOUN + r"\s*(?:\([^)]*\)\s*)?,?\s*"
    r"|\s*-\s*induced\s+(?:[\w-]+\s+){0,2}?",
    re.IGNORECASE,
)


def named_as_known(text: str, one: str, two: str) -> bool:
    """Whether ``text`` names a relation of two entities (as written) inside a noun phrase, which
    presents it as known whatever the sentence reports: "the GLUT inhibitor cytochalasin B"
    (cytochalasin B inhibits GLUT), "methamphetamine-induced neurotoxicity" (methamphetamine
    causes neurotoxicity)."""
    low = text.casefold()
    for first, second in ((one, two), (two, one)):
        first, second = first.casefold(), second.casefold()
        start = low.find(first)
        while first and second and start != -1:
            end = start + len(first)
            after = low.find(second, end)
            if after != -1 and _PRESUPPOSED.fullmatch(text[end:after]):
                return True
            start = low.find(first, start + 1)
    return False


def relation_role(roles: Iterable[str], marked: bool | None = None) -> tuple[str, str]:
    """A relation's role and where it came from, from the roles of the sentences that state it
    and the model's mark (True: background, False: a finding, None: no mark)."""
    given = set(roles)
    if FINDING in given:
        return FINDING, FROM_TEXT
    if given == {BACKGROUND}:
        return BACKGROUND, FROM_TEXT
    if marked is not None:
        return (BACKGROUND if marked else FINDING), FROM_MODEL
    return FINDING, UNMARKED


# The cues :func:`sentence_roles` reads, by name: the inputs a learned model weighs together
# (:mod:`fastbmrag.text.novelty`).
CUES: dict[str, re.Pattern[str]] = {
    "reported": _REPORTED,
    "citation": _CITATION,
    "model": _MODEL,
    "own_earlier": _OWN_EARLIER,
    "own": _OWN,
}


def section_role(section: str) -> str:
    """The role of a section or structured-abstract label by its first word (its number read
    past): :data:`BACKGROUND`, :data:`FINDING` or :data:`UNDECIDED`."""
    words = _NUMBERING.sub("", section.strip(), count=1).split()
    first = words[0].lower() if words else ""
    if first in BACKGROUND_SECTIONS:
        return BACKGROUND
    return FINDING if first in FINDING_SECTIONS else UNDECIDED
