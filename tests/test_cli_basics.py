from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from fastbmrag import __version__
from fastbmrag.cli import cli


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_help_lists_commands() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "knowledge graph" in result.output


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fastbmrag", "--version"], capture_output=True, text=True, check=True
    )
    assert __version__ in out.stdout
