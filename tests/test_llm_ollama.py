"""OllamaClient (the real `ollama` AsyncClient underneath) against the fake Ollama over HTTP."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import pytest
from pydantic import BaseModel

from fastbmrag.errors import LLMError, LLMUnavailable, ModelNotFound
from fastbmrag.llm import (
    KIND_EMBED,
    KIND_EXTRACT,
    KIND_REFINE,
    OllamaClient,
    ResponseCache,
    make_llm,
)
from fastbmrag.testing import FakeOllama, hashed_embedding
from fastbmrag.util.tokens import count_tokens

R = TypeVar("R")

ABSTRACT = (
    "Interleukin-1 beta (IL1B) is upregulated in ectopic endometriotic lesions, "
    "whereas ESR1 expression is reduced in endometriosis."
)
MESSAGES = [
    {"role": "system", "content": "Extract gene-disease relations as JSON."},
    {"role": "user", "content": ABSTRACT},
]


class Relation(BaseModel):
    source: str
    target: str
    relationship_type: Literal["upregulates", "downregulates", "associated_with"]


class Extraction(BaseModel):
    relations: list[Relation]


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def client(fake: FakeOllama | str, **kw: Any) -> OllamaClient:
    kw.setdefault("backoff", 0.001)
    host = fake.url if isinstance(fake, FakeOllama) else fake
    return OllamaClient(host, **kw)


def run(llm: OllamaClient, work: Callable[[OllamaClient], Awaitable[R]]) -> R:
    async def main() -> R:
        async with llm:
            return await work(llm)

    return asyncio.run(main())


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_chat_sends_schema_and_options_and_validates(fake: FakeOllama) -> None:
    llm = client(fake)
    result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    assert result.ok and result.error is None and result.calls == 1 and not result.cached
    assert isinstance(result.value, Extraction) and result.value.relations
    (req,) = fake.requests_to("/api/chat")
    assert req.json["format"] == Extraction.model_json_schema()
    assert req.json["options"] == {"temperature": 0.0, "num_ctx": 8192, "num_predict": 4096}
    assert req.json["keep_alive"] == "30m"
    assert req.json["stream"] is False
    assert req.json["messages"] == MESSAGES
    prompt_tokens = count_tokens(MESSAGES[0]["content"] + ABSTRACT)  # real BPE tokens
    assert result.prompt_tokens == prompt_tokens
    usage = llm.accounting.by_kind[KIND_EXTRACT]
    assert (usage.calls, usage.cached, usage.failures) == (1, 0, 0)
    assert usage.prompt_tokens == prompt_tokens
    assert usage.completion_tokens == result.completion_tokens > 0
    assert usage.seconds > 0


def test_per_call_model_and_options_override(fake: FakeOllama) -> None:
    fake.models.add("llama3.1:8b")
    llm = client(fake, num_ctx=16384, num_predict=None, temperature=0.2)
    run(
        llm,
        lambda c: c.chat(
            MESSAGES, Extraction, kind="query", model="llama3.1:8b", options={"temperature": 0.7}
        ),
    )
    req = fake.requests_to("/api/chat")[0]
    assert req.model == "llama3.1:8b"
    assert req.json["options"] == {"temperature": 0.7, "num_ctx": 16384}


def test_malformed_answer_is_repaired_once(fake: FakeOllama) -> None:
    fake.fail_next("malformed")
    llm = client(fake)
    result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    assert result.ok and result.calls == 2
    first, second = fake.requests_to("/api/chat")
    assert second.json["messages"][:2] == MESSAGES
    assert second.json["messages"][2]["role"] == "assistant"
    assert second.json["messages"][2]["content"].startswith("Sure! Here is the JSON")
    assert "invalid JSON" in second.json["messages"][3]["content"]
    assert second.json["format"] == first.json["format"]
    assert llm.accounting.by_kind[KIND_EXTRACT].calls == 2
    assert llm.accounting.by_kind[KIND_EXTRACT].failures == 0


def test_repair_then_failure_is_a_value_not_an_exception(tmp_path: Path, fake: FakeOllama) -> None:
    fake.fail_next("malformed")
    fake.fail_next("truncated")
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm = client(fake, cache=cache)
    result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_REFINE))
    assert result.value is None and result.calls == 2
    assert result.error is not None
    assert "did not match Extraction after a repair attempt" in result.error
    assert "truncated at the token cap" in result.error
    assert fake.counts["/api/chat"] == 2
    assert llm.accounting.by_kind[KIND_REFINE].failures == 1
    assert cache.counts() == {"chat": 0, "embedding": 0}  # failures are never cached
    cache.close()


def test_http500_is_retried_then_succeeds(fake: FakeOllama) -> None:
    fake.fail_next("http500", 2)
    llm = client(fake, retries=3)
    result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    assert result.ok and result.calls == 3
    assert [r.status for r in fake.requests_to("/api/chat")] == [500, 500, 200]


def test_retries_stop_at_the_limit(fake: FakeOllama) -> None:
    fake.fail_next("http500", 10)
    llm = client(fake, retries=2)
    result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    assert result.value is None and result.calls == 3
    assert (
        result.error is not None
        and "HTTP 500" in result.error
        and "after 3 attempts" in result.error
    )
    assert fake.counts["/api/chat"] == 3
    usage = llm.accounting.by_kind[KIND_EXTRACT]
    assert (usage.calls, usage.failures) == (3, 1)


def test_backoff_grows_exponentially(fake: FakeOllama) -> None:
    fake.fail_next("http500", 3)
    llm = client(fake, retries=3, backoff=0.05)
    run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    starts = [r.started for r in fake.requests_to("/api/chat")]
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2


def test_a_hang_times_out_and_is_not_retried() -> None:
    # a server that did not answer within the timeout would not answer a retry sooner: the
    # request fails at once, and a server that keeps doing so is given up (test_sweep.py)
    with FakeOllama(hang_seconds=30) as fake:
        fake.fail_next("hang")
        llm = client(fake, chat_timeout=1.0, retries=1)
        result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
        assert not result.ok and result.calls == 1
        assert "no answer within 1 s" in str(result.error)
        assert [r.fault for r in fake.requests_to("/api/chat")] == ["hang"]


def test_an_embedding_that_hangs_raises_llm_error() -> None:
    with FakeOllama(hang_seconds=30) as fake:
        fake.fail_next("hang", 2)
        llm = client(fake, embed_timeout=0.2, retries=1)
        with pytest.raises(
            LLMError,
            match=r"Embedding 1 text\(s\) with 'mxbai-embed-large'.*no answer within 0.2 s",
        ):
            run(llm, lambda c: c.embed(["IL1B"]))
        assert fake.counts["/api/embed"] == 1  # a timeout is not retried
        assert llm.accounting.by_kind[KIND_EMBED].failures == 1


def test_a_slow_answer_is_waited_for_with_a_line_that_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeOllama(slow_seconds=0.5) as fake:
        fake.fail_next("slow")
        llm = client(fake, chat_timeout=5.0, slow_notice=0.2)
        result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
    assert result.ok
    waiting = [r.getMessage() for r in caplog.records if "no answer yet" in r.getMessage()]
    assert waiting and waiting[0] == (
        f"{KIND_EXTRACT} request to {fake.url}: no answer yet after 0.2 s (it is given up at 5 s)"
    )


def test_slow_answers_within_the_timeout_are_fine() -> None:
    with FakeOllama(slow_seconds=0.2) as fake:
        fake.fail_next("slow")
        llm = client(fake, chat_timeout=2.0, retries=0)
        result = run(llm, lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT))
        assert result.ok and result.calls == 1
        assert llm.accounting.by_kind[KIND_EXTRACT].seconds >= 0.2


def test_concurrency_limit_holds_at_the_server() -> None:
    with FakeOllama(latency=0.1) as fake:
        llm = client(fake, concurrency=3)

        async def many(c: OllamaClient) -> list[Any]:
            return await asyncio.gather(
                *(
                    c.chat(
                        [{"role": "user", "content": f"gene {i}"}], Extraction, kind=KIND_EXTRACT
                    )
                    for i in range(12)
                )
            )

        results = run(llm, many)
        assert all(r.ok for r in results)
        assert fake.counts["/api/chat"] == 12
        assert fake.max_in_flight == 3  # never more, and the limit is actually used


def test_embed_batches_run_under_the_same_limit() -> None:
    with FakeOllama(latency=0.05) as fake:
        llm = client(fake, concurrency=2, embed_batch=3)
        texts = [f"IL{i} in endometriosis" for i in range(10)]
        vecs = run(llm, lambda c: c.embed(texts))
        assert vecs.shape == (10, 64) and vecs.dtype == np.float32
        batches = [r.json["input"] for r in fake.requests_to("/api/embed")]
        assert sorted(len(b) for b in batches) == [1, 3, 3, 3]  # arrival order may vary
        assert sorted(t for b in batches for t in b) == sorted(texts)
        assert fake.max_in_flight == 2
        np.testing.assert_allclose(vecs[4], hashed_embedding(texts[4], 64), rtol=1e-6)
        usage = llm.accounting.by_kind[KIND_EMBED]
        assert usage.calls == 4 and usage.prompt_tokens == sum(count_tokens(t) for t in texts)


def test_embed_keeps_order_and_deduplicates(fake: FakeOllama) -> None:
    llm = client(fake)
    texts = ["ESR1", "IL1B", "ESR1"]
    vecs = run(llm, lambda c: c.embed(texts))
    assert fake.requests_to("/api/embed")[0].json["input"] == ["ESR1", "IL1B"]
    np.testing.assert_array_equal(vecs[0], vecs[2])
    assert not np.allclose(vecs[0], vecs[1])


def test_cache_makes_an_identical_second_run_cost_zero_requests(
    tmp_path: Path, fake: FakeOllama
) -> None:
    texts = ["IL1B is upregulated", "ESR1 is reduced"]

    async def work(c: OllamaClient) -> tuple[Any, np.ndarray]:
        r = await c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT)
        return r, await c.embed(texts)

    cache = ResponseCache.for_working_dir(tmp_path)
    first, v1 = run(client(fake, cache=cache), work)
    cache.close()
    assert fake.counts == {"/api/chat": 1, "/api/embed": 1}
    assert (tmp_path / "llm_cache.sqlite").exists()

    fake.reset()
    cache = ResponseCache.for_working_dir(tmp_path)
    llm = client(fake, cache=cache)
    second, v2 = run(llm, work)
    assert fake.requests == []  # zero requests at the server
    assert second.cached and second.calls == 0 and second.value == first.value
    np.testing.assert_array_equal(v1, v2)
    assert llm.accounting.by_kind[KIND_EXTRACT].cached == 1
    assert llm.accounting.by_kind[KIND_EMBED].cached == 2
    assert llm.accounting.total().calls == 0

    # a different schema, model option or message is a different key
    run(client(fake, cache=cache), lambda c: c.chat(MESSAGES, Relation, kind=KIND_EXTRACT))
    run(
        client(fake, cache=cache, num_ctx=4096),
        lambda c: c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT),
    )
    assert fake.counts["/api/chat"] == 2
    cache.close()

    # no cache (--no-cache): every run asks again
    fake.reset()
    run(client(fake, cache=None), work)
    assert fake.counts == {"/api/chat": 1, "/api/embed": 1}


def test_embedding_dim_is_discovered_once() -> None:
    with FakeOllama(dims={"mxbai-embed-large": 1024}) as fake:
        llm = client(fake)

        async def twice(c: OllamaClient) -> tuple[int, int]:
            return await c.embedding_dim(), await c.embedding_dim()

        assert run(llm, twice) == (1024, 1024)
        assert fake.counts["/api/embed"] == 1


def test_preflight_ok_and_ollama_host_from_env(
    fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake.host)  # host:port, as users often write it
    llm = OllamaClient(backoff=0.001)
    assert llm.host == fake.url
    run(llm, lambda c: c.preflight())
    assert fake.counts["/api/tags"] == 1


def test_preflight_unreachable_names_host_and_fix() -> None:
    port = closed_port()
    llm = client(f"http://127.0.0.1:{port}")
    with pytest.raises(LLMUnavailable) as err:
        run(llm, lambda c: c.preflight())
    assert str(err.value) == (
        f"Cannot reach Ollama at http://127.0.0.1:{port}: run `ollama serve` or set OLLAMA_HOST"
    )
    assert err.value.exit_code == 2


def test_preflight_missing_model_names_model_and_fix(fake: FakeOllama) -> None:
    fake.models.discard("phi4")
    with pytest.raises(ModelNotFound) as err:
        run(client(fake), lambda c: c.preflight())
    assert str(err.value) == (
        f"Model 'phi4' is not available on {fake.url}: run `ollama pull phi4`"
    )
    assert err.value.exit_code == 2
    # embedding-only preflight does not need the chat model
    run(client(fake), lambda c: c.preflight(chat=False))
    with pytest.raises(ModelNotFound, match="ollama pull llama3.3"):
        run(client(fake), lambda c: c.preflight(chat=False, also=["llama3.3"]))


def test_chat_with_missing_model_raises(fake: FakeOllama) -> None:
    llm = client(fake)
    with pytest.raises(ModelNotFound, match="run `ollama pull qwen3`"):
        run(llm, lambda c: c.chat(MESSAGES, Extraction, kind="query", model="qwen3"))
    assert fake.counts["/api/chat"] == 1  # not retried
    assert llm.accounting.by_kind["query"].calls == 1


def test_server_gone_mid_run_raises_unavailable(fake: FakeOllama) -> None:
    async def work(c: OllamaClient) -> None:
        assert (await c.chat(MESSAGES, Extraction, kind=KIND_EXTRACT)).ok
        fake.refuse_connections()
        await c.chat([{"role": "user", "content": "more"}], Extraction, kind=KIND_EXTRACT)

    llm = client(fake, retries=2)
    with pytest.raises(LLMUnavailable, match=r"Cannot reach Ollama at .* \(after 3 attempts\)"):
        run(llm, work)
    assert llm.accounting.by_kind[KIND_EXTRACT].calls == 4


def test_warns_when_the_prompt_exceeds_num_ctx(
    fake: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    long = [{"role": "user", "content": "IL1B " * 1000}]  # 5000 chars, 3001 real tokens
    with caplog.at_level(logging.WARNING, logger="fastbmrag.llm"):
        run(client(fake, num_ctx=2048), lambda c: c.chat(long, Extraction, kind=KIND_EXTRACT))
        run(client(fake, num_ctx=4096), lambda c: c.chat(long, Extraction, kind=KIND_EXTRACT))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [  # the server's count (the fake's is cl100k_base's)
        "extract prompt of 3001 tokens filled the model's context (num_ctx=2048): the model "
        "saw a truncated prompt; raise num_ctx or shorten the input"
    ]


def test_make_llm_builds_the_ollama_client(fake: FakeOllama) -> None:
    llm = make_llm(host=fake.url, model="phi4", embed_model="mxbai-embed-large", concurrency=2)
    assert isinstance(llm, OllamaClient)
    assert (llm.host, llm.concurrency, llm.num_ctx, llm.embed_batch) == (fake.url, 2, 8192, 64)
    vecs = run(llm, lambda c: c.embed(["ESR1"]))
    assert vecs.shape == (1, 64)
