"""Readers of the annotated corpora the benchmark scripts score against (PubTator format).

* BC5CDR (BioCreative V CDR): Disease and Chemical mentions with MeSH ids.
* BioRED: gene (NCBI Gene ids), disease and chemical (MeSH ids) mentions, and relations.
  Genes are compared through NCBI Gene's cross-reference to HGNC (gene_info's dbXrefs).

A mention row is (text, type, context = title + abstract, gold ids); "-1" means no concept.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BIORED_TYPES = {
    "GeneOrGeneProduct": "gene",
    "DiseaseOrPhenotypicFeature": "disease",
    "ChemicalEntity": "chemical",
}

Row = tuple[str, str, str, tuple[str, ...]]


@dataclass
class Doc:
    pmid: str
    title: str = ""
    abstract: str = ""
    mentions: list[tuple[str, str, tuple[str, ...]]] = field(
        default_factory=list
    )  # text, type, ids
    entity_types: dict[str, str] = field(default_factory=dict)  # corpus id -> corpus type
    relations: list[tuple[str, str, str]] = field(default_factory=list)  # (type, id1, id2)
    # BioRED's novelty mark of a relation, where it has one: "Novel" (the paper's own finding)
    # or "No" (background), by (id1, id2)
    novelty: dict[tuple[str, str], str] = field(default_factory=dict)
    # every mention with its offsets in title + " " + abstract: (start, end, text, type, ids)
    spans: list[tuple[int, int, str, str, tuple[str, ...]]] = field(default_factory=list)

    @property
    def context(self) -> str:
        return f"{self.title} {self.abstract}"


def read_pubtator(path: Path) -> list[Doc]:
    docs: dict[str, Doc] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "|t|" in line[:20]:
            pmid, _, title = line.split("|", 2)
            docs.setdefault(pmid, Doc(pmid)).title = title
        elif "|a|" in line[:20]:
            pmid, _, abstract = line.split("|", 2)
            docs.setdefault(pmid, Doc(pmid)).abstract = abstract
        elif line.strip():
            parts = line.split("\t")
            doc = docs.setdefault(parts[0], Doc(parts[0]))
            if len(parts) >= 6 and parts[1].isdigit():
                ids = tuple(x for x in parts[5].replace(",", "|").replace(";", "|").split("|") if x)
                doc.mentions.append((parts[3], parts[4], ids))
                doc.spans.append((int(parts[1]), int(parts[2]), parts[3], parts[4], ids))
                for eid in ids:
                    doc.entity_types[eid] = parts[4]
            elif len(parts) >= 4:
                doc.relations.append((parts[1], parts[2], parts[3]))
                if len(parts) >= 5 and parts[4] in ("Novel", "No"):
                    doc.novelty[(parts[2], parts[3])] = parts[4]
    return list(docs.values())


def read_gene_xrefs(path: Path) -> dict[str, str]:
    """NCBI GeneID -> HGNC id, from gene_info's dbXrefs (human genes only have one)."""
    out: dict[str, str] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            for ref in cols[5].split("|"):
                if ref.startswith("HGNC:HGNC:"):
                    out[cols[1]] = ref[5:]
    return out


def bc5cdr_rows(path: Path) -> list[Row]:
    """Every Disease/Chemical mention of a BC5CDR file."""
    return [
        (text, kind.lower(), doc.context, ids)
        for doc in read_pubtator(path)
        for text, kind, ids in doc.mentions
        if kind in ("Disease", "Chemical")
    ]


def biored_rows(path: Path, genes: dict[str, str], parity: int | None = None) -> list[Row]:
    """Every gene, disease and chemical mention of a BioRED file, gene ids as HGNC ids (a gene
    with no HGNC cross-reference, e.g. a mouse gene, keeps "-1": no concept to find).
    ``parity`` 0 or 1 keeps only the documents whose PMID is even or odd."""
    rows: list[Row] = []
    for doc in read_pubtator(path):
        if parity is not None and int(doc.pmid) % 2 != parity:
            continue
        for text, kind, ids in doc.mentions:
            t = BIORED_TYPES.get(kind)
            if t == "gene":
                ids = tuple(genes[i] for i in ids if i in genes) or ("-1",)
            if t:
                rows.append((text, t, doc.context, ids))
    return rows


# BioRED's entity types as the model types a relation's ends (text.novelty.TYPES)
NOVELTY_TYPES = {**BIORED_TYPES, "SequenceVariant": "variant"}


@dataclass
class MarkedPaper:
    """A BioRED paper's title and abstract sentences and its relations with a novelty mark:
    each relation's ends as written, typed, with the sentences that name both ends, and its
    gold role ("background" for BioRED's "No", else "finding")."""

    pmid: str
    sentences: list
    pairs: list
    gold: list[str]


def marked_papers(path: Path) -> list[MarkedPaper]:
    """The papers of a BioRED PubTator file, each relation with a novelty mark as a
    :class:`fastbmrag.text.novelty.Pair` (the sentences that state it: those naming both ends,
    by the corpus's own spans)."""
    from fastbmrag.text.novelty import Pair
    from fastbmrag.text.sentences import abstract_sentences

    out = []
    for doc in read_pubtator(path):
        marks = [(a, b, m) for (a, b), m in doc.novelty.items()]
        if not marks:
            continue
        sentences = abstract_sentences(doc.title, doc.abstract)
        offset = len(doc.title) + 1  # the abstract's first character in PubTator's offsets
        bounds = [(s.start, s.end) if s.where == "title" else (s.start + offset, s.end + offset)
                  for s in sentences]  # fmt: skip
        held: list[set[str]] = [set() for _ in sentences]
        names: dict[str, set[str]] = {}
        for start, _end, text, _kind, ids in doc.spans:
            for one in ids:
                names.setdefault(one, set()).add(text)
            for i, (a, b) in enumerate(bounds):
                if a <= start < b:
                    held[i].update(ids)
        pairs, gold = [], []
        for one, two, mark in marks:
            cited = tuple(i for i, ids in enumerate(held) if one in ids and two in ids)
            pairs.append(Pair(tuple(sorted(names.get(one, ()))), tuple(sorted(names.get(two, ()))),
                              NOVELTY_TYPES.get(doc.entity_types.get(one, ""), "other"),
                              NOVELTY_TYPES.get(doc.entity_types.get(two, ""), "other"), cited))  # fmt: skip
            gold.append("background" if mark == "No" else "finding")
        out.append(MarkedPaper(doc.pmid, sentences, pairs, gold))
    return out
