"""A paper's names grounded on PubTator3's annotations of the same paper
(:class:`PaperGrounding`), the dictionaries as the fallback.

For a name the model wrote, in order:

a. an annotation inside the sentences the relation cites whose text is the name (case, spaces,
   hyphens and Greek letters folded: "TNF-α", "TNF alpha" and PubTator's ASCII "TNF-a" agree),
   or the name less a head word of its type ("BRCA1 mutations" -> BRCA1);
b. the same name annotated elsewhere in the paper;
c. the dictionary normaliser.

Where a, or b, finds two different ids for the name, it gives none (c decides). A name is
grounded only on annotations of the type the model gave it: measured on NCBI's real tagger
output, a name the tagger typed otherwise was as a rule the tagger's error ("NASH" annotated as
a gene), and the paper's annotated ids chosen among an ambiguous name's candidates added more
wrong ids than right (docs/benchmarks.md, "On real tagger output"). An annotation's
text is found in a sentence by string search on the folded texts, so PubTator's offsets (of its
own copy of the text) need not agree with this project's.

Ids: a human NCBI Gene id becomes its HGNC id (HGNC's cross-reference); another gene id becomes
the human gene whose approved symbol is the annotation's symbol, else stays ``NCBIGene:<id>``;
MeSH disease and chemical ids (D, and supplementary C) stay as they are, named by the vocabulary
where it knows them; an OMIM-only disease gives no id (the dictionaries decide); a variant keeps
its rs id or HGVS name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from fastbmrag.papers.pubtator import Annotation, Document
from fastbmrag.vocab.base import Normalized, Normalizer
from fastbmrag.vocab.mentions import GENE_CUES
from fastbmrag.vocab.rules.keys import word_set

PUBTATOR = "pubtator"
DICTIONARY = "dictionary"
NOT_YET = "not_yet"  # a paper with a PMID that NCBI has not annotated yet

# Head nouns that name an aspect of an entity, not another entity: "BRCA1 mutations" is about
# BRCA1, "breast cancer risk" about breast cancer, "cisplatin treatment" about cisplatin.
HEAD_WORDS: dict[str, frozenset[str]] = {
    "gene": GENE_CUES - {"human"},
    "disease": word_set(
        "patient patients risk progression severity susceptibility pathogenesis onset "
        "incidence development"
    ),
    "chemical": word_set(
        "treatment treatments therapy exposure administration use level levels concentration "
        "concentrations dose doses intake supplementation"
    ),
}
# The Greek letters names are written with, spelled out or as symbols; PubTator3 folds them to
# ASCII ("TNF-a"): each becomes its Latin initial.
_GREEK_WORDS = re.compile(
    r"(?<=[0-9a-z\s-])(alpha|beta|gamma|delta|epsilon|kappa|lambda|sigma|omega)(?![a-z])"
)
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def fold(text: str) -> str:
    """A name's comparison key: casefolded, Greek letters as their Latin initial, only letters
    and digits left ("TNF-α", "TNF alpha", "tnf-a" -> "tnfa")."""
    out = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        if "\u03b1" <= ch <= "\u03c9":  # a Greek letter: its name's initial
            name = unicodedata.name(ch, "")
            ch = name.split()[-1][0].lower() if name else ch
        out.append(ch)
    folded = " " + "".join(out)
    folded = _GREEK_WORDS.sub(lambda m: m.group(1)[0], folded)
    return _NOT_ALNUM.sub("", folded)


class CitedSentence(Protocol):
    """A sentence an edge cites: its text and where it stands (title, abstract, passage)."""

    @property
    def text(self) -> str: ...

    @property
    def where(self) -> str: ...


def _place(passage: str) -> str:
    """Where an annotation stands, in this project's terms: title, abstract or passage."""
    if passage in ("title", "front"):
        return "title"
    if passage == "abstract":
        return "abstract"
    return "passage"


@dataclass
class PaperGrounding:
    """The annotations of one paper, their ids resolved, and the names grounded on them."""

    document: Document
    normalizer: Normalizer
    _resolved: list[tuple[Annotation, str, Normalized]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for ann in self.document.annotations:
            norm = resolve(ann, self.normalizer)
            if norm is not None:
                self._resolved.append((ann, fold(ann.text), norm))

    @property
    def ids(self) -> set[str]:
        return {n.ontology_id for _, _, n in self._resolved if n.ontology_id}

    def ground(
        self, name: str, etype: str, cited: Sequence[CitedSentence] = ()
    ) -> Normalized | None:
        """The name's entity as PubTator3 annotated it in the cited sentences (a), else in the
        paper (b); None when neither gives exactly one id."""
        keys = _keys(name, etype)
        if not keys:
            return None
        inside = self._within(cited)
        for pool in (inside, self._resolved):
            found = {n.ontology_id: n for ann, f, n in pool if ann.type == etype and f in keys}
            if len(found) == 1:
                norm = next(iter(found.values()))
                return Normalized(name, etype, norm.normalized_name, norm.ontology_id,
                                  PUBTATOR, 1.0)  # fmt: skip
            if found:
                return None  # two ids for one name in this paper: the dictionaries decide
        return None

    def _within(self, cited: Sequence[CitedSentence]) -> list[tuple[Annotation, str, Normalized]]:
        texts = [(s.where, fold(s.text)) for s in cited]
        return [
            item
            for item in self._resolved
            if any(_place(item[0].passage) == where and item[1] in text for where, text in texts)
        ]


def _keys(name: str, etype: str) -> set[str]:
    """The folded name, and the name less its trailing head words of ``etype``."""
    words = name.split()
    keys = {fold(name)}
    heads = HEAD_WORDS.get(etype, frozenset())
    while len(words) > 1 and words[-1].casefold().strip(".,;:") in heads:
        words = words[:-1]
        keys.add(fold(" ".join(words)))
    keys.discard("")
    return keys


def resolve(ann: Annotation, normalizer: Normalizer) -> Normalized | None:
    """What an annotation's id stands for, as this project names it (None: no usable id)."""
    ident = ann.identifier
    if not ident:
        return None
    if ann.type == "gene":
        if not ident.isdigit():
            return None
        hgnc = normalizer.gene_of_ncbi(ident)
        if hgnc is None and (symbol := ann.name or ann.text):
            same = normalizer.normalize(symbol, "gene")  # a mouse gene: the human one
            hgnc = same.ontology_id if same.matched_by == "symbol" else None
        if hgnc is not None:
            return _named(ann, hgnc, normalizer)
        return Normalized(ann.text, "gene", ann.name or ann.text, f"NCBIGene:{ident}",
                          PUBTATOR, 1.0)  # fmt: skip
    if ann.type in ("disease", "chemical"):
        mesh = ident.removeprefix("MESH:").removeprefix("MeSH:")
        if not re.fullmatch(r"[CD]\d{6,9}", mesh):
            return None  # an OMIM or other id: the dictionaries decide
        return _named(ann, mesh, normalizer)
    return Normalized(ann.text, ann.type, ann.text, ident, PUBTATOR, 1.0)  # a variant


def _named(ann: Annotation, oid: str, normalizer: Normalizer) -> Normalized:
    name = normalizer.name_of(oid) or ann.name or ann.text
    return Normalized(ann.text, ann.type, name, oid, PUBTATOR, 1.0)
