"""The normaliser interface: raw entity name -> normalised name + ontology id."""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Protocol

# Entity types the extractor emits (see fastbmrag/prompts.py). The normaliser maps
# gene -> HGNC, disease -> MeSH C tree, chemical -> MeSH D tree, pathway -> MeSH's biological
# processes (G tree); others pass through.
GENE = "gene"
DISEASE = "disease"
CHEMICAL = "chemical"
PATHWAY = "pathway"  # a biological process: MeSH's (Apoptosis, Signal Transduction ...)


@dataclass(frozen=True, slots=True)
class Normalized:
    name: str  # the input as given
    type: str  # the type hint used (or the type found with "auto")
    normalized_name: str  # approved symbol / descriptor name; the cleaned raw name if unknown
    ontology_id: (
        str | None
    )  # "HGNC:5992" or a MeSH descriptor UI "D004715"; None when unknown or ambiguous
    matched_by: str  # "symbol", "prev_symbol", "alias", "name", "entry_term", "abbreviation", ..., "ambiguous", "none"
    score: float  # 1.0 exact ... 0.0 unknown
    candidates: tuple[str, ...] = ()  # ids, when ambiguous; every part's id, for a coordination
    # A coordination ("SMAD2/3", "breast and ovarian cancer") names several genes or diseases:
    # one result per part.
    parts: tuple[Normalized, ...] = ()
    # The phrase that matched, where it is not the name: the long form of a short form, the
    # rewrite or part of the name that is a term ("lung disease" for "lung nodules").
    via: str = ""


class Normalizer(Protocol):
    """What the indexer, the query and the API ask of a normaliser."""

    def normalize(self, name: str, type_hint: str = "auto", context: str = "") -> Normalized: ...

    def find_mentions(
        self,
        text: str,
        types: Iterable[str] = (GENE, DISEASE, CHEMICAL),
        *,
        max_words: int = 6,
        known: Container[str] = (),
    ) -> list[Normalized]:
        """Genes, diseases and chemicals named in free text, left to right."""
        ...

    def find_mention_spans(
        self,
        text: str,
        types: Iterable[str] = (GENE, DISEASE, CHEMICAL),
        *,
        max_words: int = 6,
        known: Container[str] = (),
    ) -> list[tuple[int, int, Normalized]]:
        """Like :meth:`find_mentions`, with the character span of each mention; ``known``: the
        ids of the collection asked (a short form that is also an acronym links when it names
        one of them)."""
        ...

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        """What a concept belongs to: MeSH ancestors, HGNC gene groups."""
        ...

    def covers(self, ontology_id: str) -> int:
        """How many concepts a filter on ``ontology_id`` covers (itself and those below it)."""
        ...

    def facts(self, ontology_id: str) -> dict[str, str]:
        """What the vocabularies say of an id (an entity card's facts)."""
        ...

    def label(self, ontology_id: str) -> str | None:
        """A readable name for an id."""
        ...

    def name_of(self, ontology_id: str) -> str | None:
        """The name an edge carries for an id: a gene's symbol, a descriptor's name."""
        ...

    def gene_of_ncbi(self, ncbi_id: str) -> str | None:
        """The HGNC id of a human NCBI Gene id, or None."""
        ...

    def explain(self, name: str, type_hint: str = "auto", context: str = "") -> list[str]:
        """The stages tried for a name, each with what it found."""
        ...


class IdentityNormalizer:
    """Cleans whitespace, gives no id, knows no concept. Used when vocabularies are disabled."""

    def normalize(self, name: str, type_hint: str = "auto", context: str = "") -> Normalized:
        clean = " ".join(name.split())
        return Normalized(name, type_hint, clean, None, "none", 0.0)

    def find_mentions(
        self,
        text: str,
        types: Iterable[str] = (GENE, DISEASE, CHEMICAL),
        *,
        max_words: int = 6,
        known: Container[str] = (),
    ) -> list[Normalized]:
        return []

    def find_mention_spans(
        self,
        text: str,
        types: Iterable[str] = (GENE, DISEASE, CHEMICAL),
        *,
        max_words: int = 6,
        known: Container[str] = (),
    ) -> list[tuple[int, int, Normalized]]:
        return []

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        return ()

    def covers(self, ontology_id: str) -> int:
        return 1

    def facts(self, ontology_id: str) -> dict[str, str]:
        return {}

    def label(self, ontology_id: str) -> str | None:
        return None

    def name_of(self, ontology_id: str) -> str | None:
        return None

    def gene_of_ncbi(self, ncbi_id: str) -> str | None:
        return None

    def explain(self, name: str, type_hint: str = "auto", context: str = "") -> list[str]:
        return []
