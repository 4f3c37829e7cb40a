"""What a new user gets wrong, round 4: a malformed OLLAMA_HOST, a nearly full volume, loose
Python arguments. Each refusal is one line naming the problem and the fix, exit 2, nothing
lost."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doors_support import cli_run

from fastbmrag import RAG
from fastbmrag.errors import InputError
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder

DATA = Path(__file__).parent / "data"
PAPERS = DATA / "query" / "papers.csv"


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wd = tmp_path_factory.mktemp("misuse")
    with FakeOllama(responder=responder) as fake:
        rag = RAG(wd, "papers", ollama_host=fake.url)
        assert rag.insert_paper(str(PAPERS)).indexed == 5
    return rag


# --- a malformed OLLAMA_HOST -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "command"),
    [
        ("localhost:abc", ["status"]),
        ("http://127.0.0.1:99999", ["normalize", "IL6"]),
        ("http://[::1", ["query", "IL6?"]),
    ],
)
def test_a_malformed_ollama_host_is_one_line_naming_it(
    value: str, command: list[str], tmp_path: Path
) -> None:
    # a process of its own: the ollama package reads the variable when it is first imported
    env = {**os.environ, "OLLAMA_HOST": value, "FASTBMRAG_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "fastbmrag", *command], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "OLLAMA_HOST" in line and "not an http(s) URL" in line and "Traceback" not in line


def test_a_malformed_fulltext_url_is_refused_as_a_setting(tmp_path: Path) -> None:
    result = cli_run("fetch", "--query", "x[tiab]", "--days", "3", "--email", "a@example.org",
                     "--fulltext-url", "http://[::1", "-o", tmp_path / "x.csv")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--fulltext-url / FASTBMRAG_FULLTEXT_URL is 'http://[::1'" in result.output


# --- loose Python arguments --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("refine", "no"), ("pubtator", "off"), ("force", "yes"), ("dry_run", 1)],
)
def test_a_true_or_false_option_takes_only_true_or_false(
    option: str, value: Any, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match=f"^{option} must be True or False, got {value!r}$"):
        RAG(tmp_path, "x").insert_paper(str(PAPERS), **{option: value})
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name", ["empty.csv", "binary.csv"])
def test_an_unusable_file_is_refused_in_python_as_at_the_command_line(
    name: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(b"" if name == "empty.csv" else bytes(range(256)) * 4)
    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path, "x", ollama_host=fake.url)
        with pytest.raises(InputError, match="^No papers to index in .*unreadable file"):
            rag.insert_paper(str(path))
        result = cli_run("update", "-c", "x", "--working-dir", tmp_path, "--ollama-host",
                         fake.url, path)  # fmt: skip
    assert result.exit_code == 2


def test_one_name_is_one_entity_and_an_unknown_one_is_refused(rag: Any) -> None:
    assert rag.watch("IL1B") == [("HGNC:5992", "IL1B")]
    assert list(rag.watched()) == ["HGNC:5992"]
    assert rag.unwatch("IL1B") == 1
    for unknown in ("zzzqqq", "HGNC:99999999", "D000000"):
        with pytest.raises(InputError, match=f"^'{unknown}' is no entity of collection 'papers'"):
            rag.watch([unknown])
    assert rag.watched() == {}


def test_arguments_of_the_wrong_kind_are_input_errors(rag: Any) -> None:
    with pytest.raises(InputError, match="^organisms must be text or a list of texts, got 5$"):
        rag.contradictions(organisms=5)
    with pytest.raises(InputError, match="^name must be an entity's name or id as text"):
        rag.narrower(None)
    with pytest.raises(InputError, match="^names must be text or a list of texts"):
        rag.watch(6)


# --- a nearly full volume ---------------------------------------------------------------------


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    """A 200 MB tmpfs the test mounts (as root); skipped where it cannot."""
    where = tmp_path / "small"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(where)],
                             capture_output=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def test_reads_on_a_nearly_full_volume_are_refused_not_killed(
    small_volume: Path, tmp_path: Path
) -> None:
    """A tmpfs allocates a page for a read of a hole: the store's files, made at their full
    size, would fill the volume as an open reads them, and the reader would die of SIGBUS."""
    env = {**os.environ, "FASTBMRAG_HOME": str(small_volume / "home"), "FASTBMRAG_PUBTATOR": "0"}
    with FakeOllama(responder=responder) as fake:
        env["OLLAMA_HOST"] = fake.url

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "fastbmrag", *args], env=env,
                                  capture_output=True, text=True, timeout=120)  # fmt: skip

        assert run("update", "-c", "demo", "-q", str(PAPERS)).returncode == 0
        free = shutil.disk_usage(small_volume).free
        (small_volume / "filler").write_bytes(b"\0" * (free - (40 << 20)))
        used = shutil.disk_usage(small_volume).used
        for args in (["query", "IL1B?", "-c", "demo", "--no-answer"], ["entity", "IL1B", "-c",
                     "demo"], ["export", "-c", "demo", "-o", str(tmp_path / "e.csv")],
                     ["digest", "-c", "demo"]):  # fmt: skip
            done = run(*args)
            assert done.returncode == 2, (args, done.returncode, done.stderr)
            [line] = done.stderr.strip().splitlines()
            assert "has 40 MB free and opening collection 'demo' for reading needs about" in line
        status = run("status", "-c", "demo")
        assert status.returncode == 0, status.stderr
        assert "(not opened: its volume of" in status.stdout
        assert "MB free and opening collection 'demo' for reading needs about" in status.stdout
        assert run("watch", "add", "IL1B", "-c", "demo").returncode == 0  # the ledger alone
        assert shutil.disk_usage(small_volume).used <= used + (1 << 20)  # the store did not grow
        (small_volume / "filler2").write_bytes(b"\0" * shutil.disk_usage(small_volume).free)
        done = run("watch", "add", "IL6", "-c", "demo")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "has 0 MB free, too little for opening the ledger" in line
    assert "nothing committed is lost" in line and "delete" not in line
