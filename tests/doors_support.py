"""The doors as the tests use them, in-process (no tests here): the command line and the page."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from fastbmrag.api import RAG
from fastbmrag.cli import cli
from fastbmrag.web import create_app


def cli_run(
    *args: str | Path, env: dict[str, str] | None = None, catch_exceptions: bool = True
) -> Result:
    """``fastbmrag ARGS`` with ``env`` over the test's environment: its result."""
    return CliRunner().invoke(cli, [str(a) for a in args], env=env,
                              catch_exceptions=catch_exceptions)  # fmt: skip


def cli_parts(*args: str | Path) -> tuple[int, str, str]:
    """``fastbmrag ARGS``: its exit code, standard output and standard error."""
    result = cli_run(*args)
    return result.exit_code, result.stdout, result.stderr


def page(rag: RAG, host: str = "testserver") -> TestClient:
    """The page's API over ``rag``, asked as by a browser at ``host``."""
    return TestClient(create_app(rag), base_url=f"http://{host}")
