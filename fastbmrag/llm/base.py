"""The LLM interface the pipeline and query code depend on.

Two implementations (Ollama through the official ``ollama`` package, and
OpenAI-compatible servers over HTTP) live beside this module. Callers pass a
client object; nothing else in fastbmrag talks to a model server.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

# Call kinds used for accounting.
KIND_EXTRACT = "extract"
KIND_REFINE = "refine"
KIND_EMBED = "embed"
KIND_QUERY = "query"


@dataclass(slots=True)
class ChatResult(Generic[T]):
    """Outcome of one structured chat request (after its repair attempt and retries).

    Exactly one of ``value`` and ``error`` is set. A failure is a value, not an
    exception, so one bad paper never kills a batch: the caller records
    ``error`` against its paper.
    """

    value: T | None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # requests actually sent (0 when served from the cache)
    cached: bool = False
    timed_out: bool = False  # the server did not answer within the timeout

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass(slots=True)
class Usage:
    calls: int = 0
    cached: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Accounting:
    """Calls, tokens and seconds per call kind; thread-safe; part of every run summary."""

    by_kind: dict[str, Usage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(
        self,
        kind: str,
        *,
        calls: int = 0,
        cached: int = 0,
        failures: int = 0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        seconds: float = 0.0,
    ) -> None:
        with self._lock:
            u = self.by_kind.setdefault(kind, Usage())
            u.calls += calls
            u.cached += cached
            u.failures += failures
            u.prompt_tokens += prompt_tokens
            u.completion_tokens += completion_tokens
            u.seconds += seconds

    def total(self) -> Usage:
        t = Usage()
        for u in self.by_kind.values():
            t.calls += u.calls
            t.cached += u.cached
            t.failures += u.failures
            t.prompt_tokens += u.prompt_tokens
            t.completion_tokens += u.completion_tokens
            t.seconds += u.seconds
        return t

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {kind: asdict(u) for kind, u in sorted(self.by_kind.items())}


class LLMClient(ABC):
    """Structured chat + batched embeddings against one model server."""

    accounting: Accounting
    # seconds a request of the preflight may take; a question's parse call is bounded by it too
    preflight_timeout: float

    @abstractmethod
    async def preflight(self, *, chat: bool = True, embed: bool = True) -> None:
        """Check the server is reachable and the models exist.

        Raises LLMUnavailable or ModelNotFound with a one-line message naming the fix.
        """

    @abstractmethod
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
        """Send ``messages`` asking for JSON matching ``schema``; validate into ``schema``.
        ``timeout``: this request's bound, instead of the client's chat timeout."""

    @abstractmethod
    async def embed(self, texts: list[str], *, kind: str = KIND_EMBED) -> np.ndarray:
        """Embed ``texts`` (batched internally); returns float32 array (len(texts), dim).

        Raises LLMError after retries are exhausted.
        """

    @abstractmethod
    async def embedding_dim(self) -> int:
        """The embedding model's vector size (discovered once, then remembered)."""

    @abstractmethod
    async def aclose(self) -> None: ...


# --- what a backend's one request returns or raises (see fastbmrag.llm.common.BaseLLM) ------


@dataclass(frozen=True, slots=True)
class RawChat:
    """One chat answer as the server sent it, before validation."""

    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: bool = (
        False  # the server stopped at the token cap (done_reason/finish_reason "length")
    )


@dataclass(frozen=True, slots=True)
class RawEmbed:
    vectors: list[list[float]]
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Transient(Exception):
    """A failure worth retrying: connection refused/reset, HTTP 5xx, timeout."""

    def __init__(self, message: str, *, unreachable: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.timed_out = timed_out


class Permanent(Exception):
    """A failure specific to this request that a retry will not fix (HTTP 400, bad body)."""


class RetriesExhausted(Exception):
    def __init__(self, last: Transient, attempts: int) -> None:
        super().__init__(f"{last} (after {attempts} attempts)")
        self.last = last
        self.attempts = attempts
