"""The one record every reader produces and the indexer consumes."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from fastbmrag.papers.design import MODEL, from_code

# Control characters (C0 but tab, line feed and carriage return; DEL; C1): PDF-extracted text
# carries form feeds and stray bytes, which XML cannot hold and a terminal may obey (ESC ...).
# The bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder all the text
# after them on a page ("deMbuP"): removed too.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_TEXT_FIELDS = ("paper_id", "abstract", "title", "authors", "journal", "pmid", "pmcid", "doi")


def without_controls(text: str) -> str:
    """``text`` with its control characters removed (a form feed or vertical tab, a space)."""
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub(lambda m: " " if m.group(0) in "\x0b\x0c" else "", text)


@dataclass(slots=True)
class Paper:
    """A paper as the indexer sees it.

    ``paragraphs`` is the main text, one string per paragraph (empty for an
    abstract-only paper). Readers of structured full text (JATS) prefix a
    paragraph with its section title in square brackets: ``"[Results] ..."``.
    ``extra`` holds every input column without a known meaning; it reaches
    every stored edge of the paper.

    ``retraction`` is what the record says of a retraction: "retracted" (the paper was
    retracted: its edges are flagged), "notice" (the record is itself a retraction notice:
    not indexed), or "". ``deleted`` marks a MEDLINE update file's deleted citation: no paper,
    only its id, whose edges are removed. Neither is part of :meth:`content_hash`: a
    retraction flags a paper's edges, it does not re-extract them.
    """

    paper_id: str
    abstract: str = ""
    paragraphs: list[str] = field(default_factory=list)
    title: str = ""
    year: int | None = None
    authors: str = ""
    journal: str = ""
    weight: float | None = None
    pmid: str = ""
    pmcid: str = ""
    doi: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    retraction: str = ""
    deleted: bool = False
    version: int = 1  # MEDLINE's version of the PMID (a corrected citation is a later one)
    # what the record says of the study (papers.design): its design and organisms; "metadata"
    # where it says it. Not part of content_hash: a record's new publication types relabel a
    # paper's edges, they do not re-extract them
    design: str = ""
    organisms: list[str] = field(default_factory=list)
    design_from: str = ""
    organisms_from: str = ""

    def study(self, code: str) -> None:
        """Fill what the record did not say of the study from the model's code (its answer's
        ``k``, :func:`fastbmrag.papers.design.from_code`); the record's own labels stay."""
        design, organisms = from_code(code)
        if design and not self.design:
            self.design, self.design_from = design, MODEL
        if organisms and not self.organisms:
            self.organisms, self.organisms_from = organisms, MODEL

    def clean_controls(self) -> int:
        """Remove control characters from every text field (:func:`without_controls`); how
        many there were."""
        found = 0

        def clean(value: str) -> str:
            nonlocal found
            found += len(_CONTROLS.findall(value))
            return without_controls(value)

        for name in _TEXT_FIELDS:
            setattr(self, name, clean(getattr(self, name)))
        self.paragraphs = [clean(p) for p in self.paragraphs]
        for key, value in self.extra.items():
            if isinstance(value, str):
                self.extra[key] = clean(value)
        return found

    @property
    def has_main_text(self) -> bool:
        return any(p.strip() for p in self.paragraphs)

    def content_hash(self) -> str:
        """Stable hash of everything that influences the paper's edges and payloads."""
        blob = json.dumps(
            [
                self.paper_id,
                self.title,
                self.abstract,
                self.paragraphs,
                self.metadata(),
            ],
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def metadata(self) -> dict[str, Any]:
        """The paper-level fields copied into every edge payload (see DESIGN: payload)."""
        meta: dict[str, Any] = {
            "paper_id": self.paper_id,
            "title": self.title,
            "year": self.year,
            "authors": self.authors,
            "journal": self.journal,
            "pmid": self.pmid,
            "pmcid": self.pmcid,
            "doi": self.doi,
            "paper_weight": self.weight,
        }
        for key, value in self.extra.items():
            meta.setdefault(key, value)
        return meta
