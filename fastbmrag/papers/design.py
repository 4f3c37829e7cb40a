"""How strong a paper's evidence is: its study design and the organisms it studied.

One declared table each. A design is one of :data:`DESIGNS`, ordered by strength of evidence
(a meta-analysis first); the organisms are among :data:`ORGANISMS`. Each comes from the paper's
record where the record says it (``metadata``: MEDLINE publication types and MeSH check tags,
a JATS ``article-type``, a papers CSV's ``publication_types`` / ``design`` and ``organisms``
columns), else from the model's reading of the abstract (``model``: a short code in the
stage-1 answer, :data:`DESIGN_CODES`, :data:`ORGANISM_CODES`); metadata wins over the model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# design -> how a reference shows it; in order of strength of evidence
DESIGNS: dict[str, str] = {
    "meta-analysis": "meta-analysis",  # and systematic reviews
    "rct": "RCT",
    "clinical-trial": "clinical trial",  # a trial not said to be randomised and controlled
    "observational": "observational",  # cohort, case-control, cross-sectional
    "case-report": "case report",  # and case series
    "review": "review",  # a narrative review
    "preclinical": "in vitro/animal",
    "other": "other",
}
ORGANISMS: dict[str, str] = {
    "human": "humans",
    "mouse": "mice",
    "rat": "rats",
    "animal": "other animals",
    "cells": "cells",
}
METADATA, MODEL = "metadata", "model"
# how the extraction prompt names each design, in as few tokens as it can
DESIGN_WORDS: dict[str, str] = {
    "meta-analysis": "meta-analysis", "rct": "RCT", "clinical-trial": "trial",
    "observational": "observational", "case-report": "case", "review": "review",
    "preclinical": "animal/cells", "other": "other",
}  # fmt: skip

# MEDLINE publication types (NLM's list) that name a design
PUBLICATION_TYPES: dict[str, str] = {
    "Meta-Analysis": "meta-analysis",
    "Network Meta-Analysis": "meta-analysis",
    "Systematic Review": "meta-analysis",
    "Randomized Controlled Trial": "rct",
    "Randomized Controlled Trial, Veterinary": "rct",
    "Clinical Trial": "clinical-trial",
    "Clinical Trial, Phase I": "clinical-trial",
    "Clinical Trial, Phase II": "clinical-trial",
    "Clinical Trial, Phase III": "clinical-trial",
    "Clinical Trial, Phase IV": "clinical-trial",
    "Controlled Clinical Trial": "clinical-trial",
    "Pragmatic Clinical Trial": "clinical-trial",
    "Adaptive Clinical Trial": "clinical-trial",
    "Equivalence Trial": "clinical-trial",
    "Clinical Trial, Veterinary": "clinical-trial",
    "Observational Study": "observational",
    "Observational Study, Veterinary": "observational",
    "Twin Study": "observational",
    "Case Reports": "case-report",
    "Review": "review",
    "Scoping Review": "review",
}
# MeSH check tags and the descriptors below them that name who was studied
CHECK_TAGS: dict[str, str] = {
    "Humans": "human",
    "Mice": "mouse",
    "Rats": "rat",
    "Animals": "animal",
    "Cells, Cultured": "cells",
    "Cell Line": "cells",
    "In Vitro Techniques": "cells",
}
# the organisms' scientific names (NCBI Taxonomy), as metadata and users write them
SPECIES: dict[str, str] = {"Homo sapiens": "human", "Mus musculus": "mouse",
                           "Rattus norvegicus": "rat"}  # fmt: skip
# JATS article types that name a design
ARTICLE_TYPES: dict[str, str] = {"review-article": "review", "case-report": "case-report",
                                 "systematic-review": "meta-analysis",
                                 "meta-analysis": "meta-analysis"}  # fmt: skip

# the model's code: one letter for the design, then one per organism ("Rh", "Amc")
DESIGN_CODES: dict[str, str] = {
    "M": "meta-analysis", "R": "rct", "T": "clinical-trial", "O": "observational",
    "C": "case-report", "V": "review", "A": "preclinical", "X": "other",
}  # fmt: skip
ORGANISM_CODES: dict[str, str] = {"h": "human", "m": "mouse", "r": "rat", "a": "animal",
                                  "c": "cells"}  # fmt: skip
CODE_PATTERN = f"^[{''.join(DESIGN_CODES)}][{''.join(ORGANISM_CODES)}]{{0,5}}$"
_CODE = re.compile(CODE_PATTERN)


def strongest(designs: Iterable[str]) -> str:
    """The strongest of these designs (:data:`DESIGNS` order), "" for none."""
    given = set(designs)
    return next((d for d in DESIGNS if d in given), "")


def rank(design: str) -> int:
    """A design's place in :data:`DESIGNS` (0 strongest); unknown designs last."""
    order = list(DESIGNS)
    return order.index(design) if design in DESIGNS else len(order)


def by_design(designs: Iterable[str]) -> dict[str, int]:
    """How many of these (one per paper) each design has, strongest first; "" counts as
    "unknown"."""
    counts: dict[str, int] = {}
    for design in designs:
        counts[design or "unknown"] = counts.get(design or "unknown", 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: rank(kv[0])))


def design_of_types(publication_types: Iterable[str]) -> str:
    """The design MEDLINE publication types name (the strongest), "" if none does."""
    return strongest(PUBLICATION_TYPES.get(t.strip(), "") for t in publication_types)


def organisms_of_headings(descriptors: Iterable[str]) -> list[str]:
    """The organisms MeSH headings name: a check tag or a descriptor below one ("Mice, Inbred
    C57BL" is mice); "Animals" only where no animal more precise is named."""
    found: list[str] = []
    for name in descriptors:
        head = name.split(",")[0].strip()
        organism = CHECK_TAGS.get(name.strip()) or CHECK_TAGS.get(head)
        if organism and organism not in found:
            found.append(organism)
    if "animal" in found and ({"mouse", "rat"} & set(found)):
        found.remove("animal")
    return sorted(found, key=list(ORGANISMS).index)


def from_code(code: str) -> tuple[str, list[str]]:
    """The design and organisms of the model's code; ("", []) for one that is no code."""
    code = (code or "").strip()
    if not _CODE.match(code):
        return "", []
    organisms = [ORGANISM_CODES[c] for c in dict.fromkeys(code[1:])]
    return DESIGN_CODES[code[0]], sorted(organisms, key=list(ORGANISMS).index)


def _written(text: str) -> str:
    """A label as a key of :func:`_labels`: case, separators, number and British spelling
    aside ("randomised controlled trials" is "Randomized Controlled Trial")."""
    from fastbmrag.vocab.rules.keys import term_key

    return term_key(text)


@functools.lru_cache(maxsize=1)
def _labels() -> tuple[dict[str, str], dict[str, str]]:
    """Every way a design and an organism is written here, by :func:`_written` key."""
    designs = {_written(t): key for t, key in PUBLICATION_TYPES.items()}
    designs |= {_written(w): key for key, label in DESIGNS.items() for w in (key, label)}
    organisms = {_written(t): key for t, key in {**CHECK_TAGS, **SPECIES}.items()}
    organisms |= {_written(w): key for key, label in ORGANISMS.items() for w in (key, label)}
    return designs, organisms


def named_design(value: str) -> str:
    """A design as a user or a CSV writes it: a key ("rct"), a label ("RCT", "case report"),
    a MEDLINE publication type, in any case and spelling; "" if it is none."""
    return _labels()[0].get(_written(value), "")


def named_organism(value: str) -> str:
    """An organism as a user or a CSV writes it ("human", "humans", "mice", "Rats", "Homo
    sapiens"); "" if it is none."""
    return _labels()[1].get(_written(value), "")


def label(design: str, organisms: Iterable[str], source: str = "") -> str:
    """How a reference shows a paper's design: "RCT, humans"; a model's judgement marked."""
    parts = [DESIGNS.get(design, "")] if design else []
    parts += [ORGANISMS.get(o, o) for o in organisms]
    shown = ", ".join(p for p in parts if p)
    return f"{shown} (model-judged)" if shown and source == MODEL else shown
