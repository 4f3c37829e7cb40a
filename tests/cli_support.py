"""Running the command line in-process, as the tests do (no tests here)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from fastbmrag.cli import cli


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
