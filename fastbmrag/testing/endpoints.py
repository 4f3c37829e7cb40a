"""The fake model server's endpoints, one function each (``ROUTES``): Ollama's ``/api`` and the
OpenAI-compatible ``/v1``. Each gets the server (:class:`~fastbmrag.testing.fake_ollama.FakeOllama`),
the request handler, the request's record and its JSON body."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from fastbmrag.testing.answers import hashed_embedding, stable_hash
from fastbmrag.util.tokens import count_tokens

Handler = BaseHTTPRequestHandler
Embedder = Callable[[list[str]], list[list[float]]]


@dataclass(slots=True)
class Record:
    """One request as the fake saw it."""

    path: str
    model: str | None
    json: Any
    started: float
    ended: float = 0.0
    status: int = 0
    fault: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


class Server(Protocol):
    """What an endpoint uses of the server (:class:`~fastbmrag.testing.fake_ollama.FakeOllama`)."""

    @property
    def models(self) -> Iterable[str]: ...

    @property
    def usage(self) -> bool: ...

    @property
    def stream_chunk(self) -> int: ...

    def has_model(self, model: Any) -> bool: ...

    def dim(self, model: str) -> int: ...

    @property
    def embedder(self) -> Embedder | None: ...

    def send(self, h: Handler, rec: Record, status: int, payload: Any) -> None: ...

    def not_found(self, h: Handler, rec: Record, model: Any, *, openai: bool = False) -> None: ...

    def apply_fault(self, h: Handler, rec: Record, applicable: tuple[str, ...]) -> str | None: ...

    def answer(self, request: dict[str, Any], fault: str | None) -> tuple[str, str]: ...

    def finish(self, rec: Record) -> None: ...


FAULT_KINDS = ("malformed", "truncated", "http500", "slow", "hang", "drop")
EMBED_FAULTS = ("http500", "slow", "hang")
FAKE_VERSION = "0.9.0"

# --- /api --------------------------------------------------------------------------------------


def version(fake: Server, h: Handler, rec: Record, body: Any) -> None:
    fake.send(h, rec, 200, {"version": FAKE_VERSION})


def tags(fake: Server, h: Handler, rec: Record, body: Any) -> None:
    models = []
    for name in sorted(fake.models):
        full = name if ":" in name else name + ":latest"
        models.append(
            {
                "name": full,
                "model": full,
                "modified_at": "2025-01-01T00:00:00Z",
                "size": 1000 + len(name),
                "digest": hashlib.sha256(full.encode()).hexdigest(),
                "details": _details(name),
            }
        )
    fake.send(h, rec, 200, {"models": models})


def show(fake: Server, h: Handler, rec: Record, body: dict[str, Any]) -> None:
    model = body.get("model") or body.get("name")
    if not fake.has_model(model):
        fake.not_found(h, rec, model)
        return
    embedding = "embed" in str(model)
    fake.send(
        h,
        rec,
        200,
        {
            "modelfile": f"FROM {model}",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": _details(str(model)),
            "model_info": {
                "general.architecture": "fake",
                "fake.embedding_length": fake.dim(str(model)),
                "fake.context_length": 131072,
            },
            "capabilities": ["embedding"] if embedding else ["completion"],
            "modified_at": "2025-01-01T00:00:00Z",
        },
    )


def chat(fake: Server, h: Handler, rec: Record, body: dict[str, Any]) -> None:
    model = body.get("model")
    if not fake.has_model(model):
        fake.not_found(h, rec, model)
        return
    fault = fake.apply_fault(h, rec, FAULT_KINDS)
    if fault == "sent":
        return
    content, reason = fake.answer(body, fault)
    prompt = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
    counts = {
        "total_duration": 1_000_000,
        "load_duration": 1000,
        "prompt_eval_count": count_tokens(prompt),
        "prompt_eval_duration": 1000,
        "eval_count": count_tokens(content),
        "eval_duration": 1000,
    }
    now = datetime.now(UTC).isoformat()
    if body.get("stream", True):
        rec.status = 200
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        step = max(1, fake.stream_chunk)
        for i in range(0, len(content), step):
            part = {
                "model": model,
                "created_at": now,
                "message": {"role": "assistant", "content": content[i : i + step]},
                "done": False,
            }
            h.wfile.write(json.dumps(part).encode() + b"\n")
            h.wfile.flush()
        final = {
            "model": model,
            "created_at": now,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": reason,
            **counts,
        }
        h.wfile.write(json.dumps(final).encode() + b"\n")
        fake.finish(rec)
        h.wfile.flush()
        return
    fake.send(
        h,
        rec,
        200,
        {
            "model": model,
            "created_at": now,
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": reason,
            **counts,
        },
    )


def embed_vectors(fake: Server, model: str, texts: list[str]) -> list[list[float]]:
    if fake.embedder is not None:  # a real model a benchmark serves
        return fake.embedder(texts)
    dim = fake.dim(model)
    return [hashed_embedding(t, dim) for t in texts]


def embed(fake: Server, h: Handler, rec: Record, body: dict[str, Any]) -> None:
    model = body.get("model")
    if not fake.has_model(model):
        fake.not_found(h, rec, model)
        return
    if fake.apply_fault(h, rec, EMBED_FAULTS) == "sent":
        return
    inp = body.get("input", "")
    texts = [inp] if isinstance(inp, str) else [str(t) for t in inp]
    fake.send(
        h,
        rec,
        200,
        {
            "model": model,
            "embeddings": embed_vectors(fake, str(model), texts),
            "total_duration": 1_000_000,
            "load_duration": 1000,
            "prompt_eval_count": sum(count_tokens(t) for t in texts),
        },
    )


# --- /v1 (OpenAI-compatible) -------------------------------------------------------------------


def v1_models(fake: Server, h: Handler, rec: Record, body: Any) -> None:
    data = [
        {"id": name, "object": "model", "created": 0, "owned_by": "library"}
        for name in sorted(fake.models)
    ]
    fake.send(h, rec, 200, {"object": "list", "data": data})


def v1_chat(fake: Server, h: Handler, rec: Record, body: dict[str, Any]) -> None:
    model = body.get("model")
    if not fake.has_model(model):
        fake.not_found(h, rec, model, openai=True)
        return
    if body.get("stream"):
        fake.send(h, rec, 400, {"error": {"message": "the fake does not stream /v1"}})
        return
    fault = fake.apply_fault(h, rec, FAULT_KINDS)
    if fault == "sent":
        return
    rf = body.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") if isinstance(rf, dict) else None
    request = {
        "model": model,
        "messages": body.get("messages") or [],
        "format": schema if schema is not None else ("json" if rf else None),
        "options": {
            "temperature": body.get("temperature"),
            "num_predict": body.get("max_tokens"),
        },
        "stream": False,
        "openai": body,
    }
    content, reason = fake.answer(request, fault)
    prompt = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
    pt, ct = count_tokens(prompt), count_tokens(content)
    fake.send(
        h,
        rec,
        200,
        {
            "id": f"chatcmpl-{stable_hash(prompt) % 10**8}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": reason,
                }
            ],
            **(
                {
                    "usage": {
                        "prompt_tokens": pt,
                        "completion_tokens": ct,
                        "total_tokens": pt + ct,
                    }
                }
                if fake.usage
                else {}
            ),
        },
    )


def v1_embeddings(fake: Server, h: Handler, rec: Record, body: dict[str, Any]) -> None:
    model = body.get("model")
    if not fake.has_model(model):
        fake.not_found(h, rec, model, openai=True)
        return
    if fake.apply_fault(h, rec, EMBED_FAULTS) == "sent":
        return
    inp = body.get("input", "")
    texts = [inp] if isinstance(inp, str) else [str(t) for t in inp]
    vectors = embed_vectors(fake, str(model), texts)
    pt = sum(count_tokens(t) for t in texts)
    fake.send(
        h,
        rec,
        200,
        {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "model": model,
            "usage": {"prompt_tokens": pt, "total_tokens": pt},
        },
    )


def _details(name: str) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "fake",
        "families": ["fake"],
        "parameter_size": "1B",
        "quantization_level": "Q4_K_M",
    }


Route = Callable[[Server, Handler, Record, Any], None]
ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/"): lambda f, h, r, b: f.send(h, r, 200, b"Ollama is running"),
    ("GET", "/api/version"): version,
    ("GET", "/api/tags"): tags,
    ("POST", "/api/show"): show,
    ("POST", "/api/chat"): chat,
    ("POST", "/api/embed"): embed,
    ("GET", "/v1/models"): v1_models,
    ("POST", "/v1/chat/completions"): v1_chat,
    ("POST", "/v1/embeddings"): v1_embeddings,
}
