"""Entity types, relationship types and their opposites are declared once (fastbmrag.prompts),
and the ways a name can match once (fastbmrag.vocab.context.MATCHED_BY); every other spelling
of them is tied to that declaration here."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest
from click.testing import CliRunner

from fastbmrag.cli import cli
from fastbmrag.index.edges import GROUNDED_TYPES
from fastbmrag.prompts import (
    ENTITY_TYPES,
    OPPOSITE_RELATIONS,
    RELATIONSHIP_TYPES,
    AnswerType,
    EntityType,
    RelationshipType,
)
from fastbmrag.query.filters import PAYLOAD_FILTERS
from fastbmrag.query.understand import GROUNDED_TYPES as LINKED_TYPES
from fastbmrag.vocab import load_normalizer
from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY
from fastbmrag.vocab.context import MATCHED_BY, MESH_MATCHED
from fastbmrag.vocab.layout import GENE_KINDS


def test_the_schema_types_are_the_declared_tables() -> None:
    assert get_args(EntityType) == tuple(ENTITY_TYPES)
    assert get_args(RelationshipType) == tuple(RELATIONSHIP_TYPES)
    assert get_args(AnswerType) == (*ENTITY_TYPES, "any")


def test_opposites_pair_declared_relationship_types() -> None:
    assert all(len(pair) == 2 and pair <= RELATIONSHIP_TYPES.keys() for pair in OPPOSITE_RELATIONS)


def test_the_grounded_types_are_declared_entity_types() -> None:
    assert {GENE, DISEASE, CHEMICAL, PATHWAY} <= ENTITY_TYPES.keys()
    assert set(GROUNDED_TYPES) <= ENTITY_TYPES.keys() and set(LINKED_TYPES) <= ENTITY_TYPES.keys()


def test_the_command_line_offers_the_declared_entity_types() -> None:
    spec = next(f for f in PAYLOAD_FILTERS if f.name == "entity_types")
    assert spec.choices == tuple(ENTITY_TYPES)
    out = CliRunner().invoke(cli, ["query", "--help"]).output
    assert "[" + "|".join(ENTITY_TYPES) + "]" in out.replace("\n", "").replace(" ", "")


def test_every_way_of_matching_is_declared_with_an_example_that_matches_so() -> None:
    norm = load_normalizer()
    for kind, match in MATCHED_BY.items():
        got = norm.normalize(*match.example)
        assert got.matched_by == kind, (kind, match.example, got)
        if isinstance(match.score, float):
            assert got.score == pytest.approx(match.score), kind


def test_the_normaliser_writes_only_declared_ways_of_matching() -> None:
    """Every matched_by the code spells (a Hit's third argument, a Normalized's fifth, a
    gene index kind, a MeSH term kind) is a row of MATCHED_BY."""
    written = {*GENE_KINDS, *MESH_MATCHED}
    vocab = Path(__file__).resolve().parents[1] / "fastbmrag" / "vocab"
    for path in vocab.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", None))
            at = {"Hit": 2, "Normalized": 4}.get(str(called))
            args = [node.args[at]] if at is not None and len(node.args) > at else []
            args += [k.value for k in node.keywords if k.arg == "matched_by"]
            written |= {a.value for a in args if isinstance(a, ast.Constant)}
    assert written - MATCHED_BY.keys() == set()
    assert len(written) > 20  # the search found the code's spellings


def test_every_query_option_is_taken_at_every_door() -> None:
    """The command line, the page's API and the Python API take every field of QueryOptions
    (the page all but the server's own settings), and the command line's flags name them."""
    from dataclasses import fields

    from fastbmrag.query import QueryOptions
    from fastbmrag.web import QUERY_FIELDS, SERVER_SIDE

    declared = {f.name for f in fields(QueryOptions)}
    assert set(QUERY_FIELDS) - {"question"} == declared - SERVER_SIDE
    command = cli.get_command(None, "query")  # type: ignore[arg-type]
    assert command is not None
    taken = {p.name for p in command.params}
    # the switches the command line spells the other way round, or as another word; the
    # map-reduce width and batch are the library's tuning (the command line's --concurrency is
    # the model server's)
    spelled = {"all": "all_", "link": "no_link", "fallback": "no_fallback", "concurrency": None,
               "answer_batch": None}  # fmt: skip
    assert {spelled.get(f, f) for f in declared} - {None} <= taken


def test_the_study_tables_name_declared_designs_and_organisms() -> None:
    from fastbmrag.papers import design

    assert set(design.DESIGN_CODES.values()) == design.DESIGNS.keys() == design.DESIGN_WORDS.keys()
    assert set(design.ORGANISM_CODES.values()) == design.ORGANISMS.keys()
    assert set(design.PUBLICATION_TYPES.values()) <= design.DESIGNS.keys()
    assert set(design.ARTICLE_TYPES.values()) <= design.DESIGNS.keys()
    assert set(design.CHECK_TAGS.values()) <= design.ORGANISMS.keys()
    for spec in PAYLOAD_FILTERS:  # the filters of the two read the payload fields they name
        if spec.name in ("designs", "organisms"):
            assert spec.field == {"designs": "design", "organisms": "organisms"}[spec.name]
