"""Entity types, relationship types and their opposites are declared once (fastbmrag.prompts);
every other spelling of them is tied to that declaration here."""

from __future__ import annotations

from typing import get_args

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
from fastbmrag.vocab.base import CHEMICAL, DISEASE, GENE, PATHWAY


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
