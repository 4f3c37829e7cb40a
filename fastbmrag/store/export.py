"""Write a collection's graph as GraphML (Cytoscape, Gephi, networkx, yEd) or as CSV.

Both make two passes over the store's payloads (no vectors): the first learns the columns and
their types, the second streams the rows, so memory stays flat however many edges there are.

GraphML: directed graph; a node per entity (id = node key; name, type, ontology_id, degree,
weight), an edge per stored edge (id = point id; every payload field plus ``weight``).
CSV: one row per edge: ``point_id``, ``weight``, then every payload field. Lists and objects
are written as JSON.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import IO, Any

from lxml import etree

from fastbmrag.papers.model import without_controls
from fastbmrag.store.base import Hit
from fastbmrag.store.collection import Collection
from fastbmrag.store.payload import completed

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_SCROLL_BATCH = 1024


def _scalar(value: Any) -> Any:
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value


def _graphml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    return "string"


def _merge_type(old: str | None, new: str) -> str:
    if old is None or old == new:
        return new
    if {old, new} == {"long", "double"}:
        return "double"
    return "string"


def _text(value: Any, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "string" and not isinstance(value, str):
        value = (
            json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)
        )
    return without_controls(str(value))  # XML holds no control character


# A cell a spreadsheet runs as a formula: =, +, -, @ first (tab and carriage return too).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any, raw: bool) -> Any:
    value = "" if value is None else _scalar(value)
    if not raw and isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _edges(coll: Collection) -> Iterator[Hit]:
    """Every edge, its payload with current degrees and weight (Collection.with_degrees)."""
    return coll.edges(batch_size=_SCROLL_BATCH)


def write_graphml(coll: Collection, out: IO[bytes]) -> tuple[int, int]:
    """Write the graph to ``out`` (binary). Returns (nodes, edges) written."""
    n_nodes = coll.ledger.node_count()
    edge_types: dict[str, str] = {}
    endpoints: dict[str, tuple[str, str]] = {}
    for hit in _edges(coll):
        for key, value in completed(hit.payload).items():
            if value is None:
                continue
            edge_types[key] = _merge_type(edge_types.get(key), _graphml_type(_scalar(value)))
        for side in ("source", "target"):
            node = hit.payload.get(f"{side}_key")
            if node is not None and node not in endpoints:
                endpoints[str(node)] = (
                    str(hit.payload.get(side, node)),
                    str(hit.payload.get(f"{side}_type", "")),
                )
    node_types = {
        "name": "string",
        "type": "string",
        "ontology_id": "string",
        "degree": "long",
        "weight": "double",
    }

    written_nodes = 0
    written_edges = 0
    with etree.xmlfile(out, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element("graphml", nsmap={None: GRAPHML_NS}):
            for name, kind in node_types.items():
                xf.write(
                    etree.Element(
                        "key",
                        {"id": f"n_{name}", "for": "node", "attr.name": name, "attr.type": kind},
                    )
                )
            for name, kind in edge_types.items():
                xf.write(
                    etree.Element(
                        "key",
                        {"id": f"e_{name}", "for": "edge", "attr.name": name, "attr.type": kind},
                    )
                )
            with xf.element("graph", {"id": coll.name, "edgedefault": "directed"}):
                seen: set[str] = set()
                for key, name, type_, ontology_id, degree in coll.ledger.entities():
                    values = {
                        "name": name,
                        "type": type_,
                        "ontology_id": ontology_id,
                        "degree": degree,
                        "weight": degree / n_nodes if n_nodes else 0.0,
                    }
                    xf.write(_node(key, values, node_types))
                    seen.add(key)
                    written_nodes += 1
                for key, (name, type_) in endpoints.items():
                    if key not in seen:  # not in the ledger (should not happen): still a node
                        xf.write(_node(key, {"name": name, "type": type_}, node_types))
                        written_nodes += 1
                for hit in _edges(coll):
                    payload = completed(hit.payload)
                    el = etree.Element(
                        "edge",
                        {
                            "id": hit.id,
                            "source": without_controls(str(payload.get("source_key", ""))),
                            "target": without_controls(str(payload.get("target_key", ""))),
                        },
                    )
                    for name, value in payload.items():
                        if value is None or name not in edge_types:
                            continue
                        data = etree.SubElement(el, "data", {"key": f"e_{name}"})
                        data.text = _text(_scalar(value), edge_types[name])
                    xf.write(el)
                    written_edges += 1
    return written_nodes, written_edges


def _node(key: str, values: dict[str, Any], types: dict[str, str]) -> etree._Element:
    el = etree.Element("node", {"id": without_controls(key)})
    for name, value in values.items():
        if value is None:
            continue
        data = etree.SubElement(el, "data", {"key": f"n_{name}"})
        data.text = _text(value, types[name])
    return el


def write_csv(coll: Collection, out: IO[str], *, raw: bool = False) -> int:
    """Write one row per edge to ``out`` (text, opened with ``newline=""``). Returns rows. A
    text cell beginning as a spreadsheet formula does (``=HYPERLINK(...)``, ``-308G>A``) gets a
    leading ``'``, the usual convention, unless ``raw``."""
    columns: dict[str, None] = {}
    for hit in _edges(coll):
        for key in completed(hit.payload):
            columns.setdefault(key, None)
    columns.pop("weight", None)
    header = ["point_id", "weight", *columns]
    writer = csv.writer(out)
    writer.writerow(header)
    rows = 0
    for hit in _edges(coll):
        payload = completed(hit.payload)
        row: list[Any] = [hit.id, payload["weight"]]
        row += [_cell(payload.get(key), raw) for key in columns]
        writer.writerow(row)
        rows += 1
    return rows
