"""OpenAICompatClient against the fake's /v1 endpoints (the vLLM / llama.cpp / LM Studio path)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from pydantic import BaseModel

from fastbmrag.errors import LLMUnavailable, ModelNotFound
from fastbmrag.llm import KIND_EMBED, KIND_QUERY, OpenAICompatClient, ResponseCache, make_llm
from fastbmrag.llm.openai_compat import normalize_base_url
from fastbmrag.testing import FakeOllama, hashed_embedding
from fastbmrag.util.tokens import count_tokens

R = TypeVar("R")

MESSAGES = [{"role": "user", "content": "What is the role of IL1B in endometriosis?"}]


class Answer(BaseModel):
    answer: str
    citations: list[int]


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def client(base_url: str, **kw: Any) -> OpenAICompatClient:
    kw.setdefault("backoff", 0.001)
    return OpenAICompatClient(base_url, **kw)


def run(llm: OpenAICompatClient, work: Callable[[OpenAICompatClient], Awaitable[R]]) -> R:
    async def main() -> R:
        async with llm:
            return await work(llm)

    return asyncio.run(main())


def test_base_url_normalisation() -> None:
    assert normalize_base_url("http://gpu01:8000") == "http://gpu01:8000/v1"
    assert normalize_base_url("http://gpu01:8000/v1/") == "http://gpu01:8000/v1"
    assert normalize_base_url("gpu01:8000") == "http://gpu01:8000/v1"


def test_chat_sends_strict_json_schema(fake: FakeOllama) -> None:
    llm = client(fake.url, api_key="sk-local", num_predict=512)
    result = run(llm, lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY))
    assert result.ok and isinstance(result.value, Answer) and result.value.citations
    (req,) = fake.requests_to("/v1/chat/completions")
    assert req.json["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": Answer.model_json_schema(), "strict": True},
    }
    assert req.json["temperature"] == 0.0 and req.json["max_tokens"] == 512
    assert "num_ctx" not in req.json
    assert req.headers["authorization"] == "Bearer sk-local"
    usage = llm.accounting.by_kind[KIND_QUERY]
    assert usage.calls == 1 and usage.prompt_tokens == count_tokens(MESSAGES[0]["content"])
    assert usage.completion_tokens == result.completion_tokens > 0


def test_a_server_that_reports_no_token_counts_is_counted_with_a_real_tokenizer() -> None:
    counted = []
    for usage in (True, False):  # the fake counts with the same tokenizer when it reports
        with FakeOllama(usage=usage) as fake:
            llm = client(fake.url)
            assert run(llm, lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY)).ok
        by_kind = llm.accounting.by_kind[KIND_QUERY]
        counted.append((by_kind.prompt_tokens, by_kind.completion_tokens))
    assert counted[0] == counted[1]
    assert counted[1][0] == count_tokens(MESSAGES[0]["content"]) and counted[1][1] > 0


def test_repair_and_retry_over_v1(fake: FakeOllama) -> None:
    fake.fail_next("http500")
    fake.fail_next("truncated")
    result = run(client(fake.url), lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY))
    assert result.ok and result.calls == 3
    reqs = fake.requests_to("/v1/chat/completions")
    assert [r.status for r in reqs] == [500, 200, 200]
    assert "truncated at the token cap" in reqs[2].json["messages"][-1]["content"]


def test_embeddings_and_dim(fake: FakeOllama) -> None:
    fake.dims = {"mxbai-embed-large": 256}
    llm = client(fake.url, embed_batch=2)

    async def work(c: OpenAICompatClient) -> tuple[np.ndarray, int]:
        return await c.embed(["IL1B", "ESR1", "TNF"]), await c.embedding_dim()

    vecs, dim = run(llm, work)
    assert dim == 256 and vecs.shape == (3, 256)
    np.testing.assert_allclose(vecs[2], hashed_embedding("TNF", 256), rtol=1e-6)
    batches = sorted(r.json["input"] for r in fake.requests_to("/v1/embeddings"))
    assert batches == [["IL1B", "ESR1"], ["TNF"]]  # sent concurrently: arrival order varies
    assert llm.accounting.by_kind[KIND_EMBED].calls == 2


def test_cache_shared_shape_but_keyed_by_backend(tmp_path: Path, fake: FakeOllama) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        run(client(fake.url, cache=cache), lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY))
        run(client(fake.url, cache=cache), lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY))
        assert fake.counts["/v1/chat/completions"] == 1
        ollama = make_llm("ollama", host=fake.url, cache=cache, backoff=0.001)
        run(ollama, lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY))  # type: ignore[arg-type]
        assert fake.counts["/api/chat"] == 1  # another backend is another key


def test_preflight_missing_model(fake: FakeOllama) -> None:
    with pytest.raises(ModelNotFound) as err:
        run(client(fake.url, model="Qwen/Qwen2.5-7B-Instruct"), lambda c: c.preflight())
    assert str(err.value) == (
        f"Model 'Qwen/Qwen2.5-7B-Instruct' is not served by {fake.url}/v1: start the server "
        "with it or choose another with llm_model / embed_model"
    )
    run(client(fake.url), lambda c: c.preflight())


def test_preflight_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LLMUnavailable) as err:
        run(client(f"http://127.0.0.1:{port}"), lambda c: c.preflight())
    assert str(err.value) == (
        f"Cannot reach the OpenAI-compatible server at http://127.0.0.1:{port}/v1: start it "
        "(for example `vllm serve <model>`) or set openai_base_url"
    )


def test_chat_with_unknown_model_raises(fake: FakeOllama) -> None:
    with pytest.raises(ModelNotFound, match="'gpt-oss' is not served"):
        run(client(fake.url), lambda c: c.chat(MESSAGES, Answer, kind=KIND_QUERY, model="gpt-oss"))
