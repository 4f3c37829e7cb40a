"""LLM layer: one small interface, two backends (Ollama, OpenAI-compatible).

from fastbmrag.llm import make_llm, ResponseCache

async with make_llm("ollama", cache=ResponseCache.for_working_dir(wd)) as llm:
    await llm.preflight()
    result = await llm.chat(messages, MySchema, kind=KIND_EXTRACT)
    vectors = await llm.embed(texts)
print(llm.accounting.to_dict())
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbmrag import config
from fastbmrag.errors import ConfigError
from fastbmrag.llm.base import (
    KIND_EMBED,
    KIND_EXTRACT,
    KIND_QUERY,
    KIND_REFINE,
    Accounting,
    ChatResult,
    LLMClient,
    Usage,
)
from fastbmrag.util.lazy import lazy
from fastbmrag.util.wording import option_named

if TYPE_CHECKING:
    from fastbmrag.llm.cache import CACHE_FILENAME, ResponseCache
    from fastbmrag.llm.common import BaseLLM
    from fastbmrag.llm.ollama import OllamaClient
    from fastbmrag.llm.openai_compat import OpenAICompatClient
    from fastbmrag.llm.pool import ServerPool

# The clients and their cache, imported where a model server is first called (the ollama and
# httpx packages take a tenth of a second): a command that calls none does not pay for them.
_LAZY = {
    "CACHE_FILENAME": "fastbmrag.llm.cache",
    "ResponseCache": "fastbmrag.llm.cache",
    "BaseLLM": "fastbmrag.llm.common",
    "OllamaClient": "fastbmrag.llm.ollama",
    "OpenAICompatClient": "fastbmrag.llm.openai_compat",
    "ServerPool": "fastbmrag.llm.pool",
}
__getattr__ = lazy(__name__, _LAZY)

BACKENDS = ("ollama", "openai")


def make_llm(
    backend: str = "ollama",
    *,
    host: str | None = None,
    model: str | None = None,
    embed_model: str | None = None,
    concurrency: int = config.DEFAULT_CONCURRENCY,
    embed_batch: int = config.DEFAULT_EMBED_BATCH,
    num_ctx: int = config.DEFAULT_NUM_CTX,
    cache: ResponseCache | None = None,
    api_key: str | None = None,
    **kw: Any,
) -> BaseLLM | ServerPool:
    """Build a client. ``host`` is the Ollama host or the OpenAI-compatible base URL; a
    comma-separated list of them builds a :class:`ServerPool` over one client per server.

    Further keyword arguments (``num_predict``, ``temperature``, ``retries``, ``backoff``,
    ``chat_timeout``, ``embed_timeout``, ``preflight_timeout``, ``keep_alive`` for Ollama)
    go to the backend's constructor.
    """
    common: dict[str, Any] = dict(
        model=model,
        embed_model=embed_model,
        concurrency=concurrency,
        embed_batch=embed_batch,
        num_ctx=num_ctx,
        cache=cache,
        **kw,
    )
    if backend not in BACKENDS:
        raise ConfigError(f"Unknown LLM backend '{backend}': choose one of {', '.join(BACKENDS)}")
    if backend == "ollama" and api_key:
        raise ConfigError(
            f"{option_named('openai_api_key')} only applies to {option_named('llm_backend')} openai"
        )
    from fastbmrag.llm.ollama import OllamaClient
    from fastbmrag.llm.openai_compat import OpenAICompatClient
    from fastbmrag.llm.pool import ServerPool

    resolve = config.ollama_host if backend == "ollama" else config.openai_base_url
    hosts = resolve(host).split(",")

    def one(h: str) -> BaseLLM:
        if backend == "ollama":
            return OllamaClient(h, **common)
        return OpenAICompatClient(h, api_key=api_key, **common)

    if len(hosts) > 1:  # several servers: one client each, behind a pool
        return ServerPool([one(h) for h in hosts])
    return one(hosts[0])


__all__ = [
    "BACKENDS",
    "CACHE_FILENAME",
    "KIND_EMBED",
    "KIND_EXTRACT",
    "KIND_QUERY",
    "KIND_REFINE",
    "Accounting",
    "BaseLLM",
    "ChatResult",
    "LLMClient",
    "OllamaClient",
    "OpenAICompatClient",
    "ResponseCache",
    "ServerPool",
    "Usage",
    "llm_for",
    "make_llm",
]


def llm_for(
    s: config.Settings, *, cache: bool | None = None, query: bool = False
) -> BaseLLM | ServerPool:
    """The client the settings ``s`` describe, with the working directory's response cache
    unless ``cache`` is False (or the settings turn it off). ``query``: a question's one
    embedding must come within the preflight bound, so that a server that hangs is named (or,
    in a pool, left out) at once."""
    from fastbmrag.llm.cache import ResponseCache

    use_cache = s.use_cache if cache is None else cache and s.use_cache
    return make_llm(
        s.llm_backend,
        host=s.server(),
        model=s.llm_model,
        embed_model=s.embed_model,
        concurrency=s.concurrency,
        embed_batch=s.embed_batch,
        num_ctx=s.num_ctx,
        cache=ResponseCache.for_working_dir(s.working_dir) if use_cache else None,
        api_key=s.api_key,
        preflight_timeout=s.preflight_timeout,
        **({"embed_timeout": s.preflight_timeout} if query else {}),
    )
