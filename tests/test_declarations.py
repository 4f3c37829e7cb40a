"""Entity types, relationship types and their opposites are declared once (fastbmrag.prompts),
and the ways a name can match once (fastbmrag.vocab.context.MATCHED_BY); every other spelling
of them is tied to that declaration here."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args

import click
import pytest
from click.testing import CliRunner
from doors_support import page

import fastbmrag
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
from fastbmrag.registry import OPERATIONS as REGISTRY
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


def _out_of_range(opt: Any) -> list[Any]:
    """Values a declared option refuses: below and above its range, or not a choice."""
    if opt.choices:
        return ["none-of-these"]
    step = 1 if opt.whole else 0.5
    return [b for b in (opt.low - step if opt.low is not None else None,
                        opt.high + step if opt.high is not None else None) if b is not None]  # fmt: skip


# The command line of each operation that declares options (the registry says which): its
# command, the flags it places first, then its arguments; sync's options are update's, checked
# there (sync needs PubMed)
ARGV = {
    "update": ["update", "-c", "c"], "query": ["query", "-c", "c"], "path": ["path", "-c", "c"],
    "export": ["export", "-c", "c", "-o", "-"], "digest": ["digest", "-c", "c"],
    "status": ["status", "-c", "c"], "entity": ["entity", "-c", "c"],
    "contradictions": ["contradictions", "-c", "c"],
}  # fmt: skip
# each operation's positional arguments, valid
POSITIONAL = {"query": ["a question"], "path": ["IL1B", "TNF"],
              "entity": ["IL1B"], "find_entities": ["IL"], "neighbours": ["IL1B"]}  # fmt: skip
OPERATIONS = {op.name: op for op in REGISTRY if op.options and op.name != "sync"}
# values refused, at least
RANGED = {"insert_paper": 2, "query": 2, "path": 2, "export": 1, "digest": 0,
          "status": 1, "find_entities": 2, "entity": 0, "edges": 2, "graph": 2,
          "neighbours": 2, "contradictions": 0}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_declared_option_is_taken_and_checked_alike_at_every_door(
    name: str, tmp_path: Path
) -> None:
    """Each operation's parameters are declared once (fastbmrag.declared): the command line
    takes every field declared with a flag, under that flag, named as the field, and every
    positional one as an argument; a value out of a declared range is refused with the same
    message at the command line (the flag named), in the Python API (the field) and on the page
    (the field quoted), HTTP 400."""
    import dataclasses
    import inspect
    import io

    from fastbmrag import RAG
    from fastbmrag.declared import declared
    from fastbmrag.errors import InputError

    op = OPERATIONS[name]
    options = op.declared()
    command = cli.get_command(None, op.command[0]) if op.command else None  # type: ignore[arg-type]
    params = {p.name: p for p in command.params} if command else {}
    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,article_title,abstract\n1,A title,An abstract.\n")
    served = page(RAG(tmp_path, "c"), "127.0.0.1")
    argv, positional = ARGV.get(op.command[0] if op.command else "", []), POSITIONAL.get(name, [])
    fixed = [f.name for f, o in declared(options) if o.argument]  # its positional fields
    given = dict(zip(fixed, positional, strict=False))
    checked = 0
    for fld, opt in declared(options):
        if op.route and not opt.page:  # the server's setting, not a request's to change
            method, path = op.route.split(" ") if " " in op.route else ("GET", op.route)
            bad = {**given, fld.name: "x"}
            said = (served.post(path, json=bad) if method == "POST"
                    else served.get(path, params=bad))  # fmt: skip
            assert said.status_code == 400
            assert said.json()["error"].startswith(f"Unknown parameter(s) of {path}: {fld.name};")
        if command is not None and opt.cli:
            assert fld.name in params, (name, fld.name)
            kind = click.Argument if opt.argument else click.Option
            assert isinstance(params[fld.name], kind), (name, fld.name)
            if not opt.argument:
                assert set(params[fld.name].opts) == {n for n in (opt.flag, opt.short) if n}
        for value in _out_of_range(opt):
            with pytest.raises(InputError) as raised:
                options(**{**given, fld.name: value})
            err = raised.value
            assert err.field == fld.name and str(err).startswith(f"{fld.name} must be ")
            # the option it names is data, not a marker: the text holds no control character
            assert err.options == (fld.name,) and err.args[0].isprintable()
            method = getattr(RAG(tmp_path, "c"), name)
            with pytest.raises(InputError) as api:
                if name == "insert_paper":
                    method(str(papers), **{fld.name: value})
                elif name == "export":
                    method(value, io.StringIO())
                elif name == "query":
                    method("a question", **{fld.name: value})
                else:
                    method(**{**given, fld.name: value})
            assert str(api.value) == str(err)
            if op.route.startswith("POST") and opt.page:
                said = served.post("/api/query", json={**given, fld.name: value})
            elif op.route and opt.page:
                said = served.get(op.route, params={**given, fld.name: str(value)})
            else:
                said = None
            if said is not None:
                assert said.status_code == 400
                assert said.json()["error"] == err.said(lambda f: f"'{f}'")
            if command is not None and opt.cli and not opt.choices:
                extra = [str(papers)] if name == "insert_paper" else positional
                result = CliRunner().invoke(
                    cli, [*argv, "--working-dir", str(tmp_path), opt.flag, str(value), *extra]
                )
                assert result.exit_code == 2, result.output
                assert result.stderr.strip() == f"Error: {err.said(opt.flag.format)}"
            checked += 1
    assert checked >= RANGED[name]
    # every field of the dataclass is declared (a payload filter with its edge field)
    assert [f.name for f in dataclasses.fields(options)] == [f.name for f, _ in declared(options)]
    # an operation that names its parameters takes its declared fields, with their defaults
    taken = list(inspect.signature(op.function()).parameters.values())[1:]
    if not any(p.kind is p.VAR_KEYWORD for p in taken):
        fields = {f.name: f.default for f in dataclasses.fields(options)}
        assert {p.name: p.default for p in taken} == {
            n: inspect.Parameter.empty if d is dataclasses.MISSING else d
            for n, d in fields.items()
        }


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


def test_no_library_message_names_a_command_line_flag() -> None:
    """A message of the library names an option by its field (util.wording.option_named), for
    each door to say it: no text outside cli/ and web/ spells a flag of the command line, but
    the declarations of the flags themselves and their help (which is the command line's)."""
    ctx = click.Context(cli)
    flags: set[str] = set()
    spelled: dict[str, set[str]] = {}
    stack: list[click.Command] = [cli]
    while stack:
        command = stack.pop()
        if isinstance(command, click.Group):
            stack += [c for n in command.list_commands(ctx) if (c := command.get_command(ctx, n))]
        flags |= {o for p in command.params for o in p.opts if o.startswith("--")}
        for p in command.params:
            if isinstance(p, click.Option):
                spelled.setdefault(str(p.name), set()).add(max(p.opts, key=len))
    flags -= {"--help"}
    assert {"--top-k", "--no-answer", "--qdrant-url"} <= flags
    # a field is one flag across the commands, so a message's option has one spelling there
    assert {name: f for name, f in spelled.items() if len(f) > 1} == {}
    said = []
    for path in sorted(Path(fastbmrag.__file__).parent.rglob("*.py")):
        if path.parent.name in ("cli", "web", "testing"):
            continue
        tree = ast.parse(path.read_text())
        allowed = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg in ("flag", "short", "help", "note"):
                allowed |= {id(n) for n in ast.walk(node.value)}
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("FieldFilter", "_any"):
                allowed |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in allowed):  # fmt: skip
                words = set(node.value.replace("`", " ").replace("(", " ").split())
                said += [f"{path.name}:{node.lineno}: {w}" for w in words & flags]
    assert said == []
