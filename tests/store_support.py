"""Helpers shared by the storage tests (no tests here): real BC5CDR chemical-induced-disease
relations (PubMed ids, MeSH ids) turned into the points and refs the indexer would give."""

from __future__ import annotations

import csv
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from fastbmrag.store.base import EdgeRef, Point, edge_point_id, node_key

DIM = 16
SAMPLE = Path(__file__).parent / "data" / "store" / "bc5cdr_cid_sample.tsv"
Row = dict[str, str]


def cid_rows() -> list[Row]:
    with SAMPLE.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def cid_papers() -> dict[str, list[Row]]:
    """paper id ("PMID:<pmid>") -> its relation rows, in file order (30 papers, 57 relations)."""
    papers: dict[str, list[Row]] = defaultdict(list)
    for row in cid_rows():
        papers[f"PMID:{row['pmid']}"].append(row)
    return dict(papers)


def vec(text: str, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def edge(paper_id: str, row: Row, relation: str = "induces") -> tuple[Point, EdgeRef]:
    src = node_key(row["chemical_id"], "chemical", row["chemical_name"])
    tgt = node_key(row["disease_id"], "disease", row["disease_name"])
    ref = EdgeRef(
        source_key=src,
        source_name=row["chemical_name"],
        source_type="chemical",
        source_id=row["chemical_id"],
        relationship_type=relation,
        target_key=tgt,
        target_name=row["disease_name"],
        target_type="disease",
        target_id=row["disease_id"],
    )
    description = f"{row['chemical_name']} {relation} {row['disease_name']}"
    payload = {
        "paper_id": paper_id,
        "pmid": row["pmid"],
        "title": row["title"],
        "year": 1990,
        "source": row["chemical_name"],
        "source_id": row["chemical_id"],
        "source_type": "chemical",
        "target": row["disease_name"],
        "target_id": row["disease_id"],
        "target_type": "disease",
        "relationship_type": relation,
        "description": description,
        "evidence": row["title"],
        "refined": False,
    }
    point = Point(edge_point_id(paper_id, src, relation, tgt), vec(description), payload)
    return point, ref


def paper_edges(
    paper_id: str, rows: list[Row], relation: str = "induces"
) -> tuple[list[Point], list[EdgeRef]]:
    pairs = [edge(paper_id, r, relation) for r in rows]
    return [p for p, _ in pairs], [r for _, r in pairs]


def expected_degrees(papers: dict[str, list[tuple[str, str, str]]]) -> dict[str, int]:
    """Degrees over distinct (source, relation, target) triples, computed from scratch."""
    triples = {t for edges in papers.values() for t in edges}
    degree: dict[str, int] = defaultdict(int)
    for s, _r, t in triples:
        for node in {s, t}:
            degree[node] += 1
    return dict(degree)
