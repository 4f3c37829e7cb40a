"""Ollama through the official ``ollama`` package (AsyncClient).

Structured output uses ``format=<JSON schema>``; options carry temperature (0 by
default), ``num_ctx`` (8192 by default: Ollama's own default of 2048-4096 silently cuts
long prompts) and a ``num_predict`` cap. Embeddings go to ``/api/embed`` with a list of
texts per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import ValidationError

from fastbmrag import config

with config.ollama_import_environment():
    from ollama import AsyncClient, ResponseError
from fastbmrag.errors import LLMUnavailable, ModelNotFound
from fastbmrag.llm.base import Permanent, RawChat, RawEmbed, Transient
from fastbmrag.llm.common import DEFAULT_KEEP_ALIVE, BaseLLM
from fastbmrag.util.wording import option_named


def _same_model(wanted: str, name: str) -> bool:
    """``phi4`` is ``phi4:latest`` in /api/tags."""
    if ":" not in wanted:
        wanted += ":latest"
    if ":" not in name:
        name += ":latest"
    return wanted == name


class OllamaClient(BaseLLM):
    """An :class:`~fastbmrag.llm.base.LLMClient` for one Ollama server.

    ``host``: constructor argument, else ``OLLAMA_HOST``, else http://localhost:11434.
    Other keyword arguments are those of :class:`~fastbmrag.llm.common.BaseLLM`.
    """

    backend = "ollama"

    def __init__(
        self,
        host: str | None = None,
        *,
        keep_alive: str | float | None = DEFAULT_KEEP_ALIVE,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.host = config.ollama_host(host)
        self.keep_alive = keep_alive
        self._client: AsyncClient | None = None

    @property
    def where(self) -> str:
        return self.host

    def unreachable_message(self) -> str:
        return f"Cannot reach Ollama at {self.host}: run `ollama serve` or set OLLAMA_HOST"

    def _missing(self, model: str) -> ModelNotFound:
        return ModelNotFound(
            f"Model '{model}' is not available on {self.host}: run `ollama pull {model}`"
        )

    @property
    def client(self) -> AsyncClient:
        # Created on first use, inside the running event loop; timeouts are applied per
        # request by BaseLLM, so the transport itself has none. A plain-http host needs no
        # certificates: without verify=False httpx loads the CA bundle anyway (~25 ms of every
        # CLI call).
        if self._client is None:
            plain = self.host.lower().startswith("http://")
            self._client = AsyncClient(
                host=self.host, timeout=None, **({"verify": False} if plain else {})
            )
        return self._client

    def _translate(self, err: Exception, model: str) -> Exception:
        """The ollama/httpx exception as Transient, Permanent or ModelNotFound."""
        if isinstance(err, ConnectionError | httpx.ConnectError):
            return Transient(f"connection refused by {self.host}", unreachable=True)
        if isinstance(err, httpx.TimeoutException):
            return Transient(f"timed out ({type(err).__name__})")
        if isinstance(err, httpx.TransportError):
            return Transient(f"connection error: {type(err).__name__}: {err}")
        if isinstance(err, ResponseError):
            if err.status_code == 404 and "not found" in str(err.error).lower():
                return self._missing(model)
            if err.status_code >= 500 or err.status_code in (408, 429) or err.status_code < 0:
                return Transient(f"HTTP {err.status_code}: {err.error}")
            return Permanent(f"HTTP {err.status_code}: {err.error}")
        if isinstance(err, ValidationError | json.JSONDecodeError | ValueError):
            return Permanent(f"unexpected answer: {type(err).__name__}: {err}")
        return err

    async def _send_chat(
        self,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        schema_name: str,
        options: dict[str, Any],
    ) -> RawChat:
        try:
            resp = await self.client.chat(
                model=model,
                messages=messages,
                format=schema,
                options=options,
                keep_alive=self.keep_alive,
                stream=False,
            )
        except Exception as err:  # noqa: BLE001 - translated, never swallowed
            raise self._translate(err, model) from None
        return RawChat(
            content=resp.message.content or "",
            prompt_tokens=resp.prompt_eval_count or 0,
            completion_tokens=resp.eval_count or 0,
            truncated=resp.done_reason == "length",
        )

    async def _send_embed(self, model: str, texts: list[str]) -> RawEmbed:
        try:
            resp = await self.client.embed(model=model, input=texts, keep_alive=self.keep_alive)
        except Exception as err:  # noqa: BLE001 - translated, never swallowed
            raise self._translate(err, model) from None
        return RawEmbed(
            vectors=[list(v) for v in resp.embeddings], prompt_tokens=resp.prompt_eval_count or 0
        )

    async def _check_models(self, wanted: Sequence[str]) -> None:
        """Check the server answers and that the ``wanted`` models are pulled."""
        try:
            async with asyncio.timeout(self.preflight_timeout):
                tags = await self.client.list()
        except ValueError:  # 200 with a body that is not JSON: an HTML page, another server
            raise LLMUnavailable(
                f"{self.host}/api/tags did not answer as Ollama does: is {self.host} an Ollama "
                f"server? Set {option_named('ollama_host')} or OLLAMA_HOST to one"
            ) from None
        except ResponseError as err:
            raise LLMUnavailable(
                f"Ollama at {self.host} answered /api/tags with HTTP {err.status_code} "
                f"({err.error}): check the `ollama serve` log"
            ) from None
        except TimeoutError:
            raise LLMUnavailable(self.hangs_message("/api/tags")) from None
        except (ConnectionError, httpx.TransportError, ValidationError):
            raise LLMUnavailable(self.unreachable_message()) from None
        names = [m.model or "" for m in tags.models]
        for model in wanted:
            if any(_same_model(model, n) for n in names):
                continue
            try:  # names in /api/tags can differ from what /api/show resolves
                async with asyncio.timeout(self.preflight_timeout):
                    await self.client.show(model)
            except ResponseError as err:
                if err.status_code == 404:
                    raise self._missing(model) from None
                raise LLMUnavailable(
                    f"Ollama at {self.host} answered /api/show with HTTP {err.status_code} "
                    f"({err.error}): check the `ollama serve` log"
                ) from None
            except ValidationError:
                continue  # it answered 200 about the model: the model is there
            except TimeoutError:
                raise LLMUnavailable(self.hangs_message("/api/show")) from None
            except (ConnectionError, httpx.TransportError):
                raise LLMUnavailable(self.unreachable_message()) from None

    async def aclose(self) -> None:
        """Close the HTTP connections and the cache's database connection."""
        if self.cache is not None:
            self.cache.close()
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
