"""An edge's two ends as values: what the model wrote, what the normaliser made of it
(:class:`EdgeEnd`), the edges of a paper's relations (:func:`build_edges`: one per pair of
entities, a coordination giving one per part, self-loops dropped and counted), and the point
an edge is stored as (:func:`edge_point`), each end's fields written once for both roles."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fastbmrag.index.extract import Relation
from fastbmrag.index.grounding import PUBTATOR, PaperGrounding
from fastbmrag.papers.model import Paper
from fastbmrag.prompts import relation_statement
from fastbmrag.store.base import EdgeRef, Point, edge_point_id, node_key
from fastbmrag.store.payload import PAPER_FIELDS, edge_payload, ledger_columns
from fastbmrag.text.sentences import Sentence
from fastbmrag.text.stems import edge_words
from fastbmrag.vocab.base import Normalized, Normalizer
from fastbmrag.vocab.context import SUPPLEMENTARY_MATCHED, Context
from fastbmrag.vocab.mentions import GENE_CUES, SECONDARY_GENE


@dataclass(frozen=True)
class EdgeEnd:
    """One end of an edge: the name as the model wrote it and what the normaliser made of it."""

    raw: str
    norm: Normalized
    type: str
    type_from: str = "model"  # "vocabulary": the model's type gave no id, one other did
    by: str = ""  # "pubtator" when PubTator3's annotation of the paper gave the id

    @property
    def grounding(self) -> str:
        """Where the id came from: "pubtator", "dictionary", or "none" (no id)."""
        return self.by or ("dictionary" if self.norm.ontology_id else "none")

    @property
    def key(self) -> str:
        return node_key(self.norm.ontology_id, self.type, self.norm.normalized_name)

    @property
    def name(self) -> str:
        return self.norm.normalized_name

    @property
    def as_written(self) -> str:
        """The end as the paper writes it, with its normalised name where that differs
        ("IL-8 (CXCL8)")."""
        if self.name.casefold() == self.raw.casefold():
            return self.raw
        return f"{self.raw} ({self.name})"

    def payload(self, role: str, ancestors: Callable[[str], Sequence[str]]) -> dict[str, Any]:
        """This end's payload fields as the ``role`` ("source" or "target") of an edge."""
        oid = self.norm.ontology_id
        return {
            role: self.name,
            f"{role}_id": oid or "",
            f"{role}_key": self.key,
            f"{role}_type": self.type,
            f"{role}_type_from": self.type_from,
            f"{role}_ancestors": list(ancestors(oid)) if oid else [],
            f"{role}_raw": self.raw,
            f"{role}_match": self.norm.matched_by,
            f"{role}_grounding": self.grounding,
        }

    def ref(self, role: str) -> dict[str, Any]:
        """This end's fields of an :class:`~fastbmrag.store.base.EdgeRef` as ``role``."""
        return {
            f"{role}_key": self.key,
            f"{role}_name": self.name,
            f"{role}_type": self.type,
            f"{role}_id": self.norm.ontology_id,
            f"{role}_raw": self.raw,
        }


@dataclass(frozen=True)
class Edge:
    relation: Relation
    source: EdgeEnd
    target: EdgeEnd

    @property
    def statement(self) -> str:
        """What is embedded and stored: the normalised names."""
        return relation_statement(self.source.name, self.relation.rel, self.target.name)

    @property
    def as_written(self) -> str:
        """What stage 2 reads beside the passages: the names as the paper writes them."""
        return relation_statement(self.source.as_written, self.relation.rel, self.target.as_written)


# The types a name the model typed wrongly may take instead ("COVID-19" typed gene), and the
# matches that may retype it: the other type's own symbol, name or term (a supplementary
# concept's own name too: "bevonium" typed other is the chemical C000002), or its id, never an alias (an
# alias is often another field's acronym), or, for a short form the paper defines, its long
# form as a term ("Rift Valley fever (RVF)" typed other: a short form names what its long form
# names; not for one typed gene). A name typed as one of the types no vocabulary grounds
# (``other``, ``cell``) is retyped by the same rule: "Tinnitus" typed other is the disease the
# vocabularies name so.
GROUNDED_TYPES = ("gene", "disease", "chemical")
RETYPED_TYPES = (*GROUNDED_TYPES, "other", "cell")
RETYPING_MATCHES = frozenset({"symbol", "name", "entry_term", "id", SUPPLEMENTARY_MATCHED[0]})


def name_ends(
    normalizer: Normalizer,
    name: str,
    etype: str,
    context: str,
    paper: PaperGrounding | None = None,
    cited: Sequence[Sentence] = (),
) -> list[EdgeEnd]:
    """The entities a name stands for: one, or one per part of a coordination ("SMAD2/3",
    "breast and ovarian cancer"). With the ``paper``'s PubTator3 annotations, the entity they
    give the name comes first (:mod:`fastbmrag.index.grounding`). A gene, disease, chemical,
    other or cell name that its type matches nothing for, and exactly one other of gene, disease
    and chemical by its own symbol, name or term (or, for a short form the paper defines, by
    its long form), takes that type: the vocabularies know the name, the model mistyped it."""
    if paper is not None and (found := paper.ground(name, etype, cited)) is not None:
        return [EdgeEnd(name, found, etype, by=PUBTATOR)]
    norm = normalizer.normalize(name, etype, context)
    if etype == "gene" and _unsupported_alias(name, norm, context):
        norm = replace(norm, ontology_id=None, matched_by="none", score=0.0, normalized_name=name)
    if norm.parts:
        return [EdgeEnd(name, part, etype) for part in norm.parts]
    if etype in RETYPED_TYPES and norm.ontology_id is None and norm.matched_by == "none":
        others = [normalizer.normalize(name, t, context) for t in GROUNDED_TYPES if t != etype]
        grounded = [o for o in others if o.ontology_id and _retypes(name, o, etype, context)]
        if len(grounded) == 1:
            return [EdgeEnd(name, grounded[0], grounded[0].type, "vocabulary")]
    return [EdgeEnd(name, norm, etype)]


def _unsupported_alias(name: str, norm: Normalized, context: str) -> bool:
    """Whether a gene's id rests on a short form of capital letters alone that HGNC lists as
    another symbol of it (an alias, a previous symbol) with nothing in the paper for that gene:
    no gene word in a sentence that writes the name and no approved symbol of the gene in its
    text. Such a short form is as often a method's or a procedure's acronym ("IVF" is an alias
    of SCN5A); a gene's other symbols mostly carry its number ("PS1", "IL-8"), which acronyms
    do not."""
    if norm.matched_by not in SECONDARY_GENE or not re.fullmatch(r"[A-Z]+", name):
        return False
    words = [w.lower() for w in _WORD.findall(context)]
    if norm.normalized_name.lower() in words:
        return False
    for sentence in _SENTENCE.split(context):
        said = {w.lower() for w in _WORD.findall(sentence)}
        if name.lower() in said and not said.isdisjoint(GENE_CUES):
            return False
    return True


_WORD = re.compile(r"[\w-]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


def _retypes(name: str, other: Normalized, etype: str, context: str) -> bool:
    """Whether another type's match may retype a name: its own name or term, or its symbol
    written as a symbol is (not a lowercase word, "mice" is no MICE; nothing but the symbol's
    letters, digits and hyphens, "T>G" is no TG); for a short form the ``context`` defines,
    its long form as a term itself (not by way of a part of it), unless the model typed it
    gene: a gene's short form is often its disease's ("EDA", anhidrotic ectodermal dysplasia)."""
    if other.matched_by == "symbol":
        written = re.sub(r"[\s-]", "", name)
        return not name.islower() and written.upper() == other.normalized_name.replace("-", "")
    if other.matched_by == "abbreviation" and " -> " not in other.via and etype != "gene":
        return name in Context(context).abbreviations
    return other.matched_by in RETYPING_MATCHES


def build_edges(
    paper: Paper,
    relations: list[Relation],
    normalizer: Normalizer,
    drafted: list[Sentence] | None = None,
    grounding: PaperGrounding | None = None,
) -> tuple[list[Edge], int]:
    """Normalise both ends (a coordination gives one edge per entity it names); one edge per
    (source, type, target) in a paper. The context is the title and abstract, or the
    ``drafted`` sentences of a paper without an abstract; ``grounding``: the paper's PubTator3
    annotations. Returns the edges and the number of relations dropped because both their ends
    became one entity ("HIF1" -> "HIF1A")."""
    context = f"{paper.title}\n{paper.abstract}"
    if drafted and not paper.abstract.strip():
        context = "\n".join(s.text for s in drafted)
    seen: set[tuple[str, str, str]] = set()
    out = []
    self_loops = 0
    for rel in relations:
        pairs = [
            (src, tgt)
            for src in name_ends(normalizer, rel.src, rel.src_type, context, grounding, rel.cited)
            for tgt in name_ends(normalizer, rel.tgt, rel.tgt_type, context, grounding, rel.cited)
        ]
        if all(src.key == tgt.key for src, tgt in pairs):
            self_loops += 1
            continue
        for src, tgt in pairs:
            triple = (src.key, rel.rel, tgt.key)
            if src.key == tgt.key or triple in seen:
                continue
            seen.add(triple)
            out.append(Edge(rel, src, tgt))
    return out, self_loops


def edge_point(
    paper: Paper,
    edge: Edge,
    vector: Sequence[float],
    ancestors: Callable[[str], Sequence[str]],
    **described: Any,
) -> tuple[Point, EdgeRef]:
    """The stored point of ``edge`` (``described``: its ``description``,
    ``description_source`` and ``evidence``) and its reference for the ledger."""
    meta = paper.metadata()  # the paper's declared fields, and its other input columns
    known = {k: meta.pop(k) for k in PAPER_FIELDS if k in meta}
    src, tgt, rel = edge.source, edge.target, edge.relation.rel
    names = list({n.casefold(): n for n in (src.raw, src.name, tgt.raw, tgt.name)}.values())
    payload = edge_payload(
        {
            **known,
            **src.payload("source", ancestors),
            **tgt.payload("target", ancestors),
            "relationship_type": rel,
            "names": names,
            "words": edge_words(names),
            **described,
            "retracted": int(paper.retraction == "retracted"),
            "finding": edge.relation.finding,
            "finding_from": edge.relation.finding_from,
            "background_p": edge.relation.background_p,
            "design": paper.design,
            "design_from": paper.design_from,
            "organisms": list(paper.organisms),
            "organisms_from": paper.organisms_from,
        },
        meta,
    )
    point = Point(edge_point_id(paper.paper_id, src.key, rel, tgt.key), vector, payload)
    ref = EdgeRef(**src.ref("source"), relationship_type=rel, **tgt.ref("target"),
                  columns=ledger_columns(payload))  # fmt: skip
    return point, ref
