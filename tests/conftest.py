"""Shared fixtures. Every test runs with its own FASTBMRAG_HOME and no ambient service settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTBMRAG_HOME", str(tmp_path / "home"))
    # papers with PMIDs are grounded on PubTator3 by default: tests that want it start the
    # fake server and turn it on; the others never reach for NCBI
    monkeypatch.setenv("FASTBMRAG_PUBTATOR", "0")
    for var in (
        "OLLAMA_HOST",
        "QDRANT_URL",
        "QDRANT_API_KEY",
        "FASTBMRAG_COLLECTION",
        "FASTBMRAG_LLM_MODEL",
        "FASTBMRAG_EMBED_MODEL",
        "FASTBMRAG_ANSWER_MODEL",
        "NCBI_API_KEY",
        "FASTBMRAG_NUM_PREDICT",
        "FASTBMRAG_PUBTATOR_URL",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    """A 200 MB tmpfs the test mounts (as root); skipped where it cannot."""
    yield from _tmpfs(tmp_path, "200m")


@pytest.fixture
def volume_of_400_mb(tmp_path: Path) -> Iterator[Path]:
    """A 400 MB tmpfs: room for a collection that is opened for writing again."""
    yield from _tmpfs(tmp_path, "400m")


def _tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    import os
    import subprocess

    where = tmp_path / "small"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:  # lazily: a process that still holds a file there does not keep it mounted
        subprocess.run(["umount", "--lazy", str(where)], check=False)
