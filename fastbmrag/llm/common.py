"""What both backends share: retries with backoff, bounded concurrency, timeouts,
validation with one repair attempt, the response cache, and accounting.

A backend subclasses :class:`BaseLLM` and implements three small methods that send one
HTTP request each (``_send_chat``, ``_send_embed``, ``preflight``), translating its
library's exceptions into :class:`~fastbmrag.llm.base.Transient` (retry) or
:class:`~fastbmrag.llm.base.Permanent` (do not).
Everything else -- the order of cache lookup, semaphore, timeout, retry, validation,
repair and accounting -- lives here once, so the two backends behave the same.

Token counts come from the server, counted by the model's own tokenizer (a prompt that fills
``num_ctx`` is reported); where a server reports none, they are counted with a real BPE tokenizer
(:mod:`fastbmrag.util.tokens`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, Self, TypeVar

import numpy as np

from fastbmrag import config
from fastbmrag.errors import LLMError, LLMUnavailable
from fastbmrag.llm.base import (
    KIND_EMBED,
    Accounting,
    ChatResult,
    LLMClient,
    Permanent,
    RawChat,
    RawEmbed,
    RetriesExhausted,
    T,
    Transient,
)
from fastbmrag.llm.cache import ResponseCache, chat_cache_key, embed_cache_key
from fastbmrag.llm.validation import repair_messages, validate
from fastbmrag.util.tokens import count_tokens
from fastbmrag.util.wording import option_named

log = logging.getLogger("fastbmrag.llm")

DEFAULT_TEMPERATURE = 0.0
DEFAULT_NUM_PREDICT = 4096  # cap on generated tokens per chat call; None = the server's default
DEFAULT_KEEP_ALIVE = "30m"  # keep the model loaded between papers of a batch
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5  # seconds before the first retry; doubles each time
MAX_BACKOFF = 30.0
DEFAULT_CHAT_TIMEOUT = 300.0
DEFAULT_EMBED_TIMEOUT = 120.0
# A server whose requests fail server-side this many times in a row (each after its retries:
# HTTP 5xx, a dropped connection, no answer within the timeout) is given up: the run stops
# (exit 2, what was committed kept), or a pool goes on without it.
MAX_FAILURES_IN_A_ROW = 3
SLOW_NOTICE = 60.0  # seconds of silence after which a request says it is still waiting

PROBE_TEXT = "embedding size probe"

R = TypeVar("R", bound="_HasTokens")


class _HasTokens(Protocol):
    @property
    def prompt_tokens(self) -> int: ...

    @property
    def completion_tokens(self) -> int: ...


class BaseLLM(LLMClient):
    """Shared behaviour of both backends. See the module docstring."""

    backend: str = ""

    def __init__(
        self,
        *,
        model: str | None = None,
        embed_model: str | None = None,
        concurrency: int = config.DEFAULT_CONCURRENCY,
        embed_batch: int = config.DEFAULT_EMBED_BATCH,
        num_ctx: int = config.DEFAULT_NUM_CTX,
        num_predict: int | None = DEFAULT_NUM_PREDICT,
        temperature: float = DEFAULT_TEMPERATURE,
        cache: ResponseCache | None = None,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        chat_timeout: float = DEFAULT_CHAT_TIMEOUT,
        embed_timeout: float = DEFAULT_EMBED_TIMEOUT,
        preflight_timeout: float = config.DEFAULT_PREFLIGHT_TIMEOUT,
        slow_notice: float = SLOW_NOTICE,
    ) -> None:
        if concurrency < 1:
            raise LLMError(f"{option_named('concurrency')} must be at least 1, got {concurrency}")
        if embed_batch < 1:
            raise LLMError(f"embedding batch size must be at least 1, got {embed_batch}")
        self.model = config.llm_model(model)
        self.embed_model = config.embed_model(embed_model)
        self.concurrency = concurrency
        self.embed_batch = embed_batch
        self.num_ctx = num_ctx
        self.num_predict = num_predict
        self.temperature = temperature
        self.cache = cache
        self.retries = max(0, retries)
        self.backoff = backoff
        self.chat_timeout = chat_timeout
        self.embed_timeout = embed_timeout
        self.preflight_timeout = preflight_timeout
        self.slow_notice = slow_notice
        self.accounting = Accounting()
        self.failed_in_a_row = 0  # server-side failures since the last answer
        self._dim: int | None = None
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None

    # --- what a backend implements --------------------------------------------------------

    @property
    @abstractmethod
    def where(self) -> str:
        """The server, as shown in messages (``http://localhost:11434``)."""

    @abstractmethod
    async def _send_chat(
        self,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        schema_name: str,
        options: dict[str, Any],
    ) -> RawChat:
        """Send one chat request. Raise Transient, Permanent or ModelNotFound."""

    async def _counted_embed(self, model: str, texts: list[str]) -> RawEmbed:
        """:meth:`_send_embed`, its tokens counted here where the server reports none."""
        raw = await self._send_embed(model, texts)
        if raw.prompt_tokens:
            return raw
        return replace(raw, prompt_tokens=sum(count_tokens(t) for t in texts))

    @abstractmethod
    async def _send_embed(self, model: str, texts: list[str]) -> RawEmbed:
        """Send one embedding request for ``texts``. Raise Transient, Permanent or ModelNotFound."""

    @abstractmethod
    async def _check_models(self, wanted: Sequence[str]) -> None:
        """Check the server answers and serves ``wanted``, each request bounded by the preflight
        timeout. Raise LLMUnavailable or ModelNotFound."""

    def unreachable_message(self) -> str:
        return f"Cannot reach the model server at {self.where}"

    def hangs_message(self, endpoint: str) -> str:
        """A server that took the connection and never answered (preflight)."""
        return (
            f"{self.where} accepted a request to {endpoint} and did not answer within "
            f"{self.preflight_timeout:g} s: the server hangs; restart it or leave it out"
        )

    # --- preflight ----------------------------------------------------------------------------

    async def preflight(
        self, *, chat: bool = True, embed: bool = True, also: Sequence[str] = ()
    ) -> None:
        """Check the server answers, serves the chat/embedding models (and ``also``) and, with
        ``embed``, learn the embedding size from one probe. Every request is bounded by the
        preflight timeout and none is retried, so a server that hangs is named within it."""
        wanted = [m for m, on in ((self.model, chat), (self.embed_model, embed)) if on]
        await self._check_models(wanted + [m for m in also if m not in wanted])
        if embed and self._dim is None:
            self._dim = await self._probe_embedding()

    async def _probe_embedding(self) -> int:
        """The embedding size, from one request: a check, not the run's work, so not in its
        accounting (a fully cached run makes no call)."""
        raw: RawEmbed | None = None
        try:
            async with asyncio.timeout(self.preflight_timeout):
                raw = await self._send_embed(self.embed_model, [PROBE_TEXT])
        except TimeoutError:
            raise LLMUnavailable(
                f"{self.where} accepted an embedding request and did not answer within "
                f"{self.preflight_timeout:g} s: the server hangs; restart it or leave it out"
            ) from None
        except (Transient, Permanent) as err:
            raise LLMUnavailable(
                f"{self.where} failed an embedding request with '{self.embed_model}' ({err}): "
                "check the server's log"
            ) from None
        if len(raw.vectors) != 1 or not raw.vectors[0]:
            raise LLMUnavailable(f"{self.where} answered an embedding request without a vector")
        return len(raw.vectors[0])

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- plumbing ---------------------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem = asyncio.Semaphore(self.concurrency)
            self._sem_loop = loop
        return self._sem

    def chat_options(self, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Client defaults (temperature, num_ctx, num_predict) overridden by ``options``."""
        merged: dict[str, Any] = {"temperature": self.temperature, "num_ctx": self.num_ctx}
        if self.num_predict is not None:
            merged["num_predict"] = self.num_predict
        merged.update(options or {})
        return merged

    async def _request(
        self, kind: str, timeout: float, send: Callable[[], Awaitable[R]]
    ) -> tuple[R, int]:
        """Send with the semaphore, a timeout and retries; account every attempt.

        Returns the answer and the number of requests sent. Raises RetriesExhausted,
        Permanent or a FastbmragError (ModelNotFound) from ``send``.
        """
        attempt = 0
        while True:
            attempt += 1
            failure: Transient | None = None
            async with self._semaphore():
                started = time.perf_counter()
                try:
                    async with asyncio.timeout(timeout):
                        answer = await self._noting_slow(send(), kind, timeout)
                except Transient as err:
                    failure = err
                except TimeoutError:
                    # no retry: a server that did not answer in this long would not answer a
                    # retry sooner; the failures in a row decide what becomes of it
                    self.accounting.add(kind, calls=1, seconds=time.perf_counter() - started)
                    failed = Transient(f"no answer within {timeout:g} s", timed_out=True)
                    raise RetriesExhausted(failed, attempt) from None
                except BaseException:  # Permanent, ModelNotFound, cancellation: still a call
                    self.accounting.add(kind, calls=1, seconds=time.perf_counter() - started)
                    raise
                seconds = time.perf_counter() - started
            if failure is None:
                self.failed_in_a_row = 0
                self.accounting.add(
                    kind,
                    calls=1,
                    prompt_tokens=answer.prompt_tokens,
                    completion_tokens=answer.completion_tokens,
                    seconds=seconds,
                )
                return answer, attempt
            self.accounting.add(kind, calls=1, seconds=seconds)
            if attempt > self.retries:
                raise RetriesExhausted(failure, attempt)
            delay = min(MAX_BACKOFF, self.backoff * 2 ** (attempt - 1))
            log.info(
                "%s request to %s failed (%s); retry %d/%d in %.2f s",
                kind,
                self.where,
                failure,
                attempt,
                self.retries,
                delay,
            )
            await asyncio.sleep(delay)

    async def _noting_slow(self, request: Awaitable[R], kind: str, timeout: float) -> R:
        """``request``'s answer; every ``slow_notice`` seconds without one, a line says the
        server is still working on it (a long answer, a loaded GPU, or a server that hangs)."""
        task = asyncio.ensure_future(request)
        waited = 0.0
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.slow_notice)
                if done:
                    return task.result()
                waited += self.slow_notice
                log.warning(
                    "%s request to %s: no answer yet after %g s (it is given up at %g s)",
                    kind, self.where, waited, timeout,
                )  # fmt: skip
        finally:
            task.cancel()

    def _raise_if_unreachable(self, err: RetriesExhausted) -> None:
        """LLMUnavailable when the server cannot be reached, or when this is its
        :data:`MAX_FAILURES_IN_A_ROW`-th request in a row to fail after its retries."""
        if err.last.unreachable:
            raise LLMUnavailable(f"{self.unreachable_message()} (after {err.attempts} attempts)")
        self.failed_in_a_row += 1
        if self.failed_in_a_row >= MAX_FAILURES_IN_A_ROW:
            raise LLMUnavailable(
                f"The model server at {self.where} failed {self.failed_in_a_row} requests in a "
                f"row ({err.last}): check it (its log, `ollama ps`) or leave it out"
            )

    # --- chat ---------------------------------------------------------------------------------

    async def chat(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        kind: str,
        model: str | None = None,
        options: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ChatResult[T]:
        """Structured chat: cache, send, validate, one repair attempt, account.

        Failures specific to this request (invalid JSON twice, HTTP 4xx/5xx or timeouts
        after the retries) come back as ``ChatResult(value=None, error=...)``. Failures
        that would fail every request raise: ``LLMUnavailable`` when the server cannot be
        reached after the retries, ``ModelNotFound`` when the model is not there.
        """
        model = model or self.model
        opts = self.chat_options(options)
        json_schema = schema.model_json_schema()
        key = chat_cache_key(self.backend, model, messages, json_schema, opts)
        if self.cache is not None:
            hit = self.cache.get_chat(key)
            if hit is not None:
                value, _ = validate(hit, schema)
                if value is not None:
                    self.accounting.add(kind, cached=1)
                    return ChatResult(value=value, cached=True)

        num_ctx = int(opts.get("num_ctx") or self.num_ctx)

        result: ChatResult[T] = ChatResult(value=None)
        convo = list(messages)
        schema_name = schema.__name__
        for round_ in (1, 2):

            async def send(convo: list[dict[str, str]] = convo) -> RawChat:
                raw = await self._send_chat(model, convo, json_schema, schema_name, opts)
                if raw.prompt_tokens or raw.completion_tokens:
                    return raw
                # a server that reports no counts: counted here, with a real tokenizer
                prompt = "".join(m.get("content", "") for m in convo)
                return replace(
                    raw,
                    prompt_tokens=count_tokens(prompt),
                    completion_tokens=count_tokens(raw.content),
                )

            try:
                raw, sent = await self._request(kind, timeout or self.chat_timeout, send)
            except RetriesExhausted as err:
                self._raise_if_unreachable(err)
                result.calls += err.attempts
                result.error = f"{kind} request to {self.where} failed: {err}"
                result.timed_out = err.last.timed_out
                break
            except Permanent as err:
                result.calls += 1
                result.error = f"{kind} request to {self.where} was refused: {err}"
                break
            result.calls += sent
            result.prompt_tokens += raw.prompt_tokens
            result.completion_tokens += raw.completion_tokens
            if self.backend == "ollama" and raw.prompt_tokens >= num_ctx:  # its own count
                log.warning(
                    "%s prompt of %d tokens filled the model's context (num_ctx=%d): the model "
                    "saw a truncated prompt; raise num_ctx or shorten the input",
                    kind,
                    raw.prompt_tokens,
                    num_ctx,
                )
            value, reason = validate(raw.content, schema, truncated=raw.truncated)
            if value is not None:
                result.value = value
                result.error = None
                if self.cache is not None:
                    self.cache.put_chat(key, value.model_dump_json(), model=model, kind=kind)
                return result
            if round_ == 1:
                log.info("%s answer did not validate (%s); asking once more", kind, reason)
                convo = repair_messages(messages, raw.content, reason)
            else:
                result.error = (
                    f"{kind} answer did not match {schema_name} after a repair attempt: {reason}"
                )
        self.accounting.add(kind, failures=1)
        return result

    # --- embeddings --------------------------------------------------------------------------

    async def embed(self, texts: list[str], *, kind: str = KIND_EMBED) -> np.ndarray:
        """Embed ``texts`` in batches of ``embed_batch``, each text cached on its own.

        Raises LLMError (LLMUnavailable, ModelNotFound) after the retries.
        """
        if not texts:
            return np.zeros((0, await self.embedding_dim()), dtype=np.float32)
        model = self.embed_model
        keys = [embed_cache_key(self.backend, model, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        if self.cache is not None:
            found = self.cache.get_vectors(keys)
            if found:
                self.accounting.add(kind, cached=sum(1 for k in keys if k in found))
        todo: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in found and k not in todo:
                todo[k] = t
        if todo:
            items = list(todo.items())
            batches = [
                items[i : i + self.embed_batch] for i in range(0, len(items), self.embed_batch)
            ]
            results = await asyncio.gather(
                *(self._embed_batch(model, b, kind) for b in batches), return_exceptions=True
            )
            for res in results:
                if isinstance(res, BaseException):
                    raise res
            fresh: dict[str, np.ndarray] = {}
            for batch, res in zip(batches, results, strict=True):
                assert not isinstance(res, BaseException)
                for (k, _), vec in zip(batch, res, strict=True):
                    fresh[k] = vec
            if self.cache is not None:
                self.cache.put_vectors(fresh, model=model)
            found.update(fresh)
        out = np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
        if self._dim is None:
            self._dim = int(out.shape[1])
        return out

    async def _embed_batch(
        self, model: str, batch: list[tuple[str, str]], kind: str
    ) -> list[np.ndarray]:
        texts = [t for _, t in batch]
        try:
            raw, _ = await self._request(
                kind, self.embed_timeout, lambda: self._counted_embed(model, texts)
            )
        except RetriesExhausted as err:
            self.accounting.add(kind, failures=1)
            self._raise_if_unreachable(err)
            raise LLMError(
                f"Embedding {len(texts)} text(s) with '{model}' on {self.where} failed: {err}"
            ) from None
        except Permanent as err:
            self.accounting.add(kind, failures=1)
            raise LLMError(
                f"Embedding {len(texts)} text(s) with '{model}' on {self.where} was refused: {err}"
            ) from None
        if len(raw.vectors) != len(texts):
            self.accounting.add(kind, failures=1)
            raise LLMError(
                f"{self.where} returned {len(raw.vectors)} embeddings for {len(texts)} texts"
            )
        vecs = [np.asarray(v, dtype=np.float32) for v in raw.vectors]
        if len({v.shape for v in vecs}) > 1:
            raise LLMError(f"'{model}' on {self.where} returned embeddings of different sizes")
        return vecs

    async def embedding_dim(self) -> int:
        if self._dim is None:
            vecs = await self.embed([PROBE_TEXT])
            self._dim = int(vecs.shape[1])
        return self._dim
