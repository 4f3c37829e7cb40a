"""The shared LLM options: flag > env > default, the cache location, and preflight exit codes."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from fastbmrag.api import RAG
from fastbmrag.cli.common import FastbmragGroup, llm_options, working_dir_option
from fastbmrag.errors import ConfigError
from fastbmrag.llm import OllamaClient, OpenAICompatClient, make_llm
from fastbmrag.testing import FakeOllama


@click.group(cls=FastbmragGroup)
def group() -> None:
    """A stand-in for the real group (commands register there, not in tests)."""


@group.command()
@llm_options
@working_dir_option
@click.option("--collection", default="c")
def probe(working_dir: str | None, **opts: Any) -> None:
    llm = RAG.from_options({**opts, "working_dir": working_dir}).llm()

    async def main() -> None:
        async with llm:
            await llm.preflight()

    asyncio.run(main())
    click.echo(
        json.dumps(
            {
                "backend": llm.backend,
                "where": llm.where,
                "model": llm.model,
                "embed_model": llm.embed_model,
                "concurrency": llm.concurrency,
                "num_ctx": llm.num_ctx,
                "embed_batch": llm.embed_batch,
                "cache": str(llm.cache.path) if llm.cache else None,
            }
        )
    )
    if llm.cache:
        llm.cache.close()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models={"phi4", "mxbai-embed-large", "llama3.1:8b", "nomic-embed-text"}) as f:
        yield f


def test_defaults_env_and_cache_location(
    fake: FakeOllama, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    monkeypatch.setenv("FASTBMRAG_EMBED_MODEL", "nomic-embed-text")
    result = CliRunner().invoke(group, ["probe", "--working-dir", str(tmp_path / "wd")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "backend": "ollama",
        "where": fake.url,
        "model": "phi4",
        "embed_model": "nomic-embed-text",
        "concurrency": 4,
        "num_ctx": 8192,
        "embed_batch": 64,
        "cache": str(tmp_path / "wd" / "llm_cache.sqlite"),
    }


def test_flags_beat_env(fake: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:1")
    monkeypatch.setenv("FASTBMRAG_LLM_MODEL", "phi4")
    args = ["probe", "--ollama-host", fake.url, "--llm-model", "llama3.1:8b", "--no-cache"]
    args += ["--concurrency", "8", "--num-ctx", "16384", "--embed-batch", "16"]
    result = CliRunner().invoke(group, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["where"], out["model"], out["cache"]) == (fake.url, "llama3.1:8b", None)
    assert (out["concurrency"], out["num_ctx"], out["embed_batch"]) == (8, 16384, 16)
    assert json.loads(result.output)["cache"] is None


def test_openai_backend_options(fake: FakeOllama) -> None:
    args = ["probe", "--llm-backend", "openai", "--openai-base-url", fake.url, "--no-cache"]
    result = CliRunner().invoke(group, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["where"] == fake.url + "/v1"
    assert fake.counts["/v1/models"] == 1


def test_preflight_failures_exit_2_with_one_line(fake: FakeOllama) -> None:
    result = CliRunner().invoke(
        group, ["probe", "--ollama-host", fake.url, "--llm-model", "phi5", "--no-cache"]
    )
    assert result.exit_code == 2
    assert result.output == (
        f"Error: Model 'phi5' is not available on {fake.url}: run `ollama pull phi5`\n"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = CliRunner().invoke(
        group, ["probe", "--ollama-host", f"127.0.0.1:{port}", "--no-cache"]
    )
    assert result.exit_code == 2
    assert result.output == (
        f"Error: Cannot reach Ollama at http://127.0.0.1:{port}: run `ollama serve` or set "
        "OLLAMA_HOST\n"
    )


def test_make_llm_choices() -> None:
    assert isinstance(make_llm("ollama"), OllamaClient)
    assert isinstance(make_llm("openai", host="http://gpu01:8000"), OpenAICompatClient)
    with pytest.raises(
        ConfigError, match="Unknown LLM backend 'vllm': choose one of ollama, openai"
    ):
        make_llm("vllm")
    with pytest.raises(ConfigError, match="^openai_api_key only applies to llm_backend openai"):
        make_llm("ollama", api_key="sk")
