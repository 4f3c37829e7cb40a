"""The registry of operations (fastbmrag.registry) is what the doors are made from: RAG's
methods, the command line's commands and the page's endpoints are exactly its operations'."""

from __future__ import annotations

import inspect
from pathlib import Path

import click
import pytest
from doors_support import page

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.registry import COMMANDS, OPERATIONS


def test_every_operation_is_a_method_of_the_workspace_running_its_function() -> None:
    methods = [op for op in OPERATIONS if op.method]
    assert {"insert_paper", "query", "entity", "digest", "export"} <= {
        op.name for op in methods
    }
    for op in methods:
        function = op.function()
        assert getattr(RAG, op.name) is function, op.name
        first = next(iter(inspect.signature(function).parameters))
        assert first == "rag", (op.name, first)  # it runs against the workspace
        assert function.__doc__, op.name  # help(RAG.<name>) says what it does
        if op.options:  # an operation that declares options takes them by name
            kinds = {p.kind for p in inspect.signature(function).parameters.values()}
            declared = {f for f in op.declared().__dataclass_fields__}
            named = set(inspect.signature(function).parameters)
            assert inspect.Parameter.VAR_KEYWORD in kinds or declared <= named, op.name
    # a name no operation has is no method
    assert not hasattr(RAG(Path("."), "c"), "no_such_operation")


def test_the_command_line_offers_exactly_the_registered_commands() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name, where in COMMANDS.items():
        module, attr = where.split(":")
        command = cli.get_command(ctx, name)
        assert command is not None and command.callback.__module__ == module, name  # type: ignore[union-attr]
        assert command.name == name or attr == command.callback.__name__  # type: ignore[union-attr]


def test_the_page_serves_exactly_the_registered_endpoints(tmp_path: Path) -> None:
    served = page(RAG(tmp_path, "c"), "127.0.0.1")
    routes = [(op.route.split(" ")[0] if " " in op.route else "GET", op.route.split(" ")[-1])
              for op in OPERATIONS if op.route]  # fmt: skip
    assert ("POST", "/api/query") in routes and ("GET", "/api/entity") in routes
    for method, path in routes:
        other = "GET" if method == "POST" else "POST"
        said = served.request(other, path)
        assert said.status_code == 405, (path, said.text)
        allowed = said.json()["error"].split(": use ")[1].split(", ")
        assert method in allowed and other not in allowed
    missing = served.get("/api/nothing").json()["error"]
    assert missing.split("there are ")[1].split(", ") == [p for _, p in routes] + ["/api/options"]


def test_a_message_that_advises_an_operation_names_it_as_each_door_runs_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fastbmrag.errors import InputError
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    papers = tmp_path / "papers.csv"
    papers.write_text("paper_id,article_title,abstract\nP1,IL1B,IL1B was higher in endometriosis.\n")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path, "c", ollama_host=fake.url)
        rag.insert_paper(str(papers))
    with pytest.raises(InputError) as raised:
        rag.path("IL1B", "BRCA1")
    assert str(raised.value).endswith(
        "(rag.entity('BRCA1') says what the vocabularies know of it)"
    )
    assert raised.value.args[0].isprintable()
    at_cli = CliRunner().invoke(cli, ["path", "IL1B", "BRCA1", "-c", "c", "--working-dir",
                                      str(tmp_path)])  # fmt: skip
    assert at_cli.exit_code == 2
    assert "(`fastbmrag entity BRCA1` says what the vocabularies know of it)" in at_cli.stderr
    said = page(rag, "127.0.0.1").get("/api/path", params={"start": "IL1B", "end": "BRCA1"})
    assert said.status_code == 400
    assert said.json()["error"].endswith(
        "(a search for 'BRCA1' on this page says what the vocabularies know of it)"
    )
