"""The collection's edges as the ledger holds them, the names of its nodes, and which relationship types say opposite things."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastbmrag.papers.design import by_design
from fastbmrag.prompts import OPPOSITE_RELATIONS
from fastbmrag.text.findings import BACKGROUND, FINDING

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection


def opposed(a: str, b: str) -> bool:
    """Whether two relationship types say opposite things (:data:`~fastbmrag.prompts.OPPOSITE_RELATIONS`)."""
    return frozenset((a, b)) in OPPOSITE_RELATIONS


@dataclass(frozen=True, slots=True)
class Edge:
    """One stored edge as the ledger knows it."""

    point_id: str
    paper_id: str
    source: str  # node key
    relationship_type: str
    target: str
    finding: str = FINDING  # or "background": the paper restates it (text.findings)

    @property
    def background(self) -> bool:
        return self.finding == BACKGROUND


@dataclass(frozen=True, slots=True)
class Studies:
    """The papers a graph command reads: of these designs and organisms (any of each; none
    given: every paper); with ``findings_only``, only the edges a paper found, not those it
    restates as known."""

    designs: tuple[str, ...] = ()
    organisms: tuple[str, ...] = ()
    findings_only: bool = False

    def papers(self, collection: Collection) -> set[str] | None:
        """The papers that pass; None where every paper does."""
        if not (self.designs or self.organisms):
            return None
        return {
            pid
            for pid, (design, organisms, _, _) in collection.ledger.labels.all().items()
            if (not self.designs or design in self.designs)
            and (not self.organisms or set(organisms) & set(self.organisms))
        }


def ledger_edges(
    collection: Collection, *, retracted: bool = False, studies: Studies | None = None
) -> list[Edge]:
    """The collection's edges; those of retracted papers only with ``retracted``; only those
    of the papers ``studies`` passes (only findings, where it says so)."""
    edges = [Edge(*row) for row in collection.ledger.edge_rows()]
    gone = set() if retracted else collection.ledger.retracted()
    kept = studies.papers(collection) if studies is not None else None
    findings = studies is not None and studies.findings_only
    return [e for e in edges if e.paper_id not in gone and (kept is None or e.paper_id in kept)
            and not (findings and e.background)]  # fmt: skip


def papers_by_design(
    studies: dict[str, tuple[str, tuple[str, ...], str, str]], papers: set[str]
) -> dict[str, int]:
    """How many of ``papers`` each design has (``studies``: the ledger's), strongest first."""
    return by_design(studies.get(pid, ("",))[0] for pid in papers)


def node_names(collection: Collection) -> dict[str, dict[str, Any]]:
    """Node key -> name, type, ontology id and degree."""
    return {
        key: {"name": name, "type": etype, "id": ontology_id, "degree": degree}
        for key, name, etype, ontology_id, degree in collection.ledger.entities()
    }
