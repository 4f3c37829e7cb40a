"""Several model servers behind one client, for groups with more than one GPU machine.

``--ollama-host http://gpu01:11434,http://gpu02:11434`` (or the same in ``OLLAMA_HOST`` /
``OPENAI_BASE_URL``) builds one backend client per server and a :class:`ServerPool` over them:

* each request goes to the least busy healthy server (each server takes ``--concurrency``
  requests at once);
* a request that fails on a server (unreachable, the model gone, 5xx or timeouts after the
  server's own retries, an answer that stays invalid JSON after its repair attempt) is sent to
  another server, and counts as that server's failure;
* a server that failed is left out for ``cooldown`` seconds, then tried again by the next
  request (its probe); one that answers is healthy again; one whose requests failed
  server-side :data:`~fastbmrag.llm.common.MAX_FAILURES_IN_A_ROW` times in a row (a server that
  hangs or answers 5xx) is dropped for the rest of the run, with one warning, and with none
  left the run stops (exit 2, every server named);
* the preflight checks every server and names each that fails; the run goes on with the others
  when one is fine, and fails (exit 2, every server named) when none is.

The pool shares one accounting and one response cache among its servers (a cached answer is
the same whichever server gave it); :meth:`ServerPool.servers` gives requests and failures per
server for the run summary.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from fastbmrag.errors import LLMError, LLMUnavailable, ModelNotFound
from fastbmrag.llm.base import KIND_EMBED, ChatResult, LLMClient, T
from fastbmrag.llm.common import MAX_FAILURES_IN_A_ROW, BaseLLM

log = logging.getLogger("fastbmrag.llm")

DEFAULT_COOLDOWN = 30.0  # seconds a failed server is left out before it is tried again
R = TypeVar("R")
_SAID: set[str] = set()  # preflight failures already reported


class ServerPool(LLMClient):
    """An :class:`LLMClient` over several servers of one backend (see the module docstring)."""

    def __init__(self, clients: Sequence[BaseLLM], *, cooldown: float = DEFAULT_COOLDOWN) -> None:
        if not clients:
            raise LLMError("A server pool needs at least one server")
        self.clients = list(clients)
        self.accounting = self.clients[0].accounting
        for c in self.clients[1:]:
            c.accounting = self.accounting  # one accounting for the run summary
        self.cooldown = cooldown
        self.preflight_timeout = max(c.preflight_timeout for c in self.clients)
        self._busy = [0] * len(self.clients)
        self._down_until = [0.0] * len(self.clients)
        self._requests = [0] * len(self.clients)
        self._failures = [0] * len(self.clients)
        self._dropped: set[int] = set()
        self.backend = self.clients[0].backend
        self.cache = self.clients[0].cache
        self.model = self.clients[0].model
        self.embed_model = self.clients[0].embed_model
        self.concurrency = sum(c.concurrency for c in self.clients)

    @property
    def where(self) -> str:
        return ",".join(c.where for c in self.clients)

    def servers(self) -> dict[str, dict[str, int]]:
        """Requests sent to and failed on each server (a retry on another counts there)."""
        return {
            c.where: {"requests": self._requests[i], "failures": self._failures[i]}
            for i, c in enumerate(self.clients)
        }

    def _pick(self, tried: set[int]) -> int | None:
        now = time.monotonic()
        ready = [i for i in range(len(self.clients)) if i not in tried and i not in self._dropped]
        healthy = [i for i in ready if self._down_until[i] <= now]
        pool = healthy or ready  # every server down: try one anyway rather than fail at once
        if not pool:
            return None
        return min(pool, key=lambda i: (self._busy[i], self._requests[i], i))

    async def _call(
        self, send: Callable[[BaseLLM], Awaitable[R]], failed: Callable[[R], bool]
    ) -> R:
        """``send`` to the least busy healthy server; on a server-side failure, to another."""
        tried: set[int] = set()
        last: R | None = None
        error: LLMError | None = None
        while (i := self._pick(tried)) is not None:
            tried.add(i)
            self._busy[i] += 1
            self._requests[i] += 1
            try:
                result = await send(self.clients[i])
            except LLMError as err:  # unreachable, the model gone, embeddings kept failing
                error = err
                if self.clients[i].failed_in_a_row >= MAX_FAILURES_IN_A_ROW:
                    self._drop(i, str(err))
                else:
                    self._fail(i, str(err))
                continue
            finally:
                self._busy[i] -= 1
            if failed(result):
                last = result
                self._fail(i, "the request kept failing")
                continue
            self._down_until[i] = 0.0
            return result
        if last is not None:
            return last
        assert error is not None
        raise error

    def _drop(self, i: int, why: str) -> None:
        self._failures[i] += 1
        if i in self._dropped:  # a request in flight when it was dropped
            return
        self._dropped.add(i)
        left = len(self.clients) - len(self._dropped)
        if left:
            log.warning("%s; going on without it (%d server(s) left)", why, left)

    def _fail(self, i: int, why: str, *, say: bool = True) -> None:
        self._failures[i] += 1
        self._down_until[i] = time.monotonic() + self.cooldown
        if say:
            log.warning("model server %s failed (%s); trying another", self.clients[i].where, why)

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
        # An answer that failed on one server (unreachable, 5xx, no answer within ``timeout``,
        # or invalid JSON even after the repair attempt) is asked of another: servers differ in
        # models and in health.
        return await self._call(
            lambda c: c.chat(
                messages, schema, kind=kind, model=model, options=options, timeout=timeout
            ),
            lambda r: r.value is None,
        )


    async def embed(self, texts: list[str], *, kind: str = KIND_EMBED) -> np.ndarray:
        return await self._call(lambda c: c.embed(texts, kind=kind), lambda r: False)

    async def embedding_dim(self) -> int:
        return await self._call(lambda c: c.embedding_dim(), lambda r: False)

    async def preflight(self, *, chat: bool = True, embed: bool = True) -> None:
        """Check every server at once; fine when one is (the others are named and left out)."""
        errors: list[str] = []
        results = await asyncio.gather(
            *(c.preflight(chat=chat, embed=embed) for c in self.clients), return_exceptions=True
        )
        for i, err in enumerate(results):
            if isinstance(err, LLMUnavailable | ModelNotFound):
                errors.append(str(err))
                self._fail(i, str(err), say=False)
            elif isinstance(err, BaseException):
                raise err
        if len(errors) == len(self.clients):
            raise LLMUnavailable("No model server can be used: " + " | ".join(errors))
        for message in errors:
            if message not in _SAID:  # once per process: a run checks its servers twice
                _SAID.add(message)
                log.warning("%s; going on with the other servers", message)

    async def aclose(self) -> None:
        for c in self.clients:
            await c.aclose()
