"""OpenAI-compatible servers (vLLM, llama.cpp server, LM Studio, Ollama's /v1) over plain httpx.

The scale-out path: one vLLM server spread over many GPUs takes far more concurrent
requests than one Ollama. Structured output uses ``response_format`` with a strict
``json_schema``; ``num_predict`` becomes ``max_tokens``; ``num_ctx`` is the server's
business (vLLM ``--max-model-len``) and is not sent.

``base_url`` is the server's API root; ``/v1`` is appended when it is missing, so
``http://localhost:8000`` and ``http://localhost:8000/v1`` both work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx

from fastbmrag import config
from fastbmrag.errors import LLMUnavailable, ModelNotFound
from fastbmrag.llm.base import Permanent, RawChat, RawEmbed, Transient
from fastbmrag.llm.common import BaseLLM
from fastbmrag.util.wording import option_named


def normalize_base_url(url: str | None) -> str:
    """The server's /v1 URL (``OPENAI_BASE_URL`` and the default when none is given)."""
    return config.openai_base_url(url)


def _same_model(wanted: str, served: str) -> bool:
    if wanted == served:
        return True
    # Ollama's /v1/models lists "phi4:latest" for "phi4".
    return ":" not in wanted and served == wanted + ":latest"


class OpenAICompatClient(BaseLLM):
    """An :class:`~fastbmrag.llm.base.LLMClient` for an OpenAI-compatible server.

    ``base_url``: argument, else ``OPENAI_BASE_URL``, else http://localhost:8000/v1;
    ``api_key``: argument, else ``OPENAI_API_KEY``, else none (local servers need none).
    """

    backend = "openai"

    def __init__(
        self, base_url: str | None = None, *, api_key: str | None = None, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.base_url = normalize_base_url(base_url)
        self.api_key = config.openai_api_key(api_key)
        self._client: httpx.AsyncClient | None = None

    @property
    def where(self) -> str:
        return self.base_url

    def unreachable_message(self) -> str:
        return (
            f"Cannot reach the OpenAI-compatible server at {self.base_url}: start it "
            f"(for example `vllm serve <model>`) or set {option_named('openai_base_url')}"
        )

    def _missing(self, model: str) -> ModelNotFound:
        return ModelNotFound(
            f"Model '{model}' is not served by {self.base_url}: start the server with it "
            f"or choose another with {option_named('llm_model')} / {option_named('embed_model')}"
        )

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = {"Accept": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            # Timeouts are applied per request by BaseLLM.
            self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=None)
        return self._client

    async def _post(self, path: str, body: dict[str, Any], model: str) -> dict[str, Any]:
        try:
            resp = await self.client.post(path, json=body)
        except httpx.ConnectError:
            raise Transient(f"connection refused by {self.base_url}", unreachable=True) from None
        except httpx.TimeoutException as err:
            raise Transient(f"timed out ({type(err).__name__})") from None
        except httpx.TransportError as err:
            raise Transient(f"connection error: {type(err).__name__}: {err}") from None
        if resp.status_code >= 400:
            text = resp.text[:300]
            if resp.status_code >= 500 or resp.status_code in (408, 429):
                raise Transient(f"HTTP {resp.status_code}: {text}")
            low = text.lower()
            if (
                resp.status_code == 404
                and "model" in low
                and ("not found" in low or "does not exist" in low)
            ):
                raise self._missing(model)
            raise Permanent(f"HTTP {resp.status_code}: {text}")
        try:
            data = resp.json()
        except ValueError as err:
            raise Permanent(f"answer is not JSON: {err}") from None
        if not isinstance(data, dict):
            raise Permanent("answer is not a JSON object")
        return data

    async def _send_chat(
        self,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        schema_name: str,
        options: dict[str, Any],
    ) -> RawChat:
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
            "stream": False,
        }
        if "temperature" in options:
            body["temperature"] = options["temperature"]
        if options.get("num_predict") is not None:
            body["max_tokens"] = options["num_predict"]
        for name in ("top_p", "seed", "stop"):
            if name in options:
                body[name] = options[name]
        data = await self._post("chat/completions", body, model)
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise Permanent("answer has no choices[0].message") from None
        usage = data.get("usage") or {}
        return RawChat(
            content=content,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            truncated=choice.get("finish_reason") == "length",
        )

    async def _send_embed(self, model: str, texts: list[str]) -> RawEmbed:
        data = await self._post("embeddings", {"model": model, "input": texts}, model)
        try:
            items = sorted(data["data"], key=lambda d: d.get("index", 0))
            vectors = [list(d["embedding"]) for d in items]
        except (KeyError, TypeError, AttributeError):
            raise Permanent("answer has no data[].embedding") from None
        usage = data.get("usage") or {}
        return RawEmbed(vectors=vectors, prompt_tokens=int(usage.get("prompt_tokens") or 0))

    async def _check_models(self, wanted: Sequence[str]) -> None:
        """Check ``/v1/models`` answers and lists the ``wanted`` models."""
        try:
            async with asyncio.timeout(self.preflight_timeout):
                resp = await self.client.get("models")
        except TimeoutError:
            raise LLMUnavailable(self.hangs_message("/v1/models")) from None
        except httpx.TransportError:
            raise LLMUnavailable(self.unreachable_message()) from None
        if resp.status_code in (401, 403):
            raise LLMUnavailable(
                f"{self.base_url} refused the API key (HTTP {resp.status_code}): "
                f"set {option_named('openai_api_key')} or OPENAI_API_KEY"
            )
        try:
            resp.raise_for_status()
            served = [str(m.get("id")) for m in resp.json().get("data", [])]
        except (httpx.HTTPStatusError, ValueError, AttributeError, TypeError):
            raise LLMUnavailable(
                f"{self.base_url}/models answered HTTP {resp.status_code} without a model list: "
                "is this an OpenAI-compatible server?"
            ) from None
        for model in wanted:
            if not any(_same_model(model, s) for s in served):
                raise self._missing(model)

    async def aclose(self) -> None:
        """Close the HTTP connections and the cache's database connection."""
        if self.cache is not None:
            self.cache.close()
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
