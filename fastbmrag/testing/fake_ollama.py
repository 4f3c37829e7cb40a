"""A fake Ollama: a real HTTP server on 127.0.0.1 that the real clients talk to.

Stdlib only, but for the token counts it reports (:mod:`fastbmrag.tokens`, a real BPE
tokenizer). Used by the tests and by the benchmark scripts::

    with FakeOllama() as fake:
        client = OllamaClient(fake.url)
        ...
        assert fake.counts["/api/chat"] == 1

Endpoints: ``/api/version``, ``/api/tags``, ``/api/show``, ``/api/chat`` (stream and
non-stream, answering with an instance of the ``format`` JSON schema), ``/api/embed``
(list input), and the OpenAI-compatible ``/v1/models``, ``/v1/chat/completions``,
``/v1/embeddings``. Unknown models get Ollama's 404 ``{"error": "model 'x' not found"}``.

Answers come from ``responder(request) -> dict | str``; a dict is JSON-encoded as the
message content. The request handed to it is the request JSON of ``/api/chat``; for
``/v1/chat/completions`` it is the same shape (``model``, ``messages``, ``format`` = the
json_schema's ``schema``, ``options`` = ``{"temperature", "num_predict"}``) with the
original under ``"openai"``. The default responder, :func:`schema_instance_responder`,
builds a deterministic, schema-valid instance from words of the last user message.

Embeddings are hashed bags of words (and word bigrams), L2-normalised: identical texts
give identical vectors and texts sharing words have a high cosine.

Faults (chat; ``http500``, ``slow`` and ``hang`` also embed): ``fault_rates`` rolled with
a seeded RNG, and one-shot ``fail_next(kind, n)``. Kinds: ``malformed`` (not JSON),
``truncated`` (JSON cut in half, done_reason "length"), ``http500``, ``slow`` (answer
after ``slow_seconds``), ``hang`` (no answer for ``hang_seconds``, or until the server
closes). ``refuse_connections()`` closes the port (connection refused) and
``accept_connections()`` opens it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import random
import re
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from fastbmrag.tokens import count_tokens

Responder = Callable[[dict[str, Any]], "dict[str, Any] | str"]

FAULT_KINDS = ("malformed", "truncated", "http500", "slow", "hang")
EMBED_FAULTS = ("http500", "slow", "hang")
DEFAULT_MODELS = frozenset({"phi4", "mxbai-embed-large"})
FAKE_VERSION = "0.9.0"

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")


# --- deterministic helpers ------------------------------------------------------------------


def _h(*parts: object) -> int:
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "big")


def last_user_message(request: dict[str, Any]) -> str:
    """The user's question: the last user message before any assistant turn.

    In a repair conversation (question, bad answer, "please fix") this is still the
    original question, so a repaired answer is about the same text.
    """
    found = ""
    for msg in request.get("messages") or []:
        if msg.get("role") == "assistant" and found:
            break
        if msg.get("role") == "user":
            found = str(msg.get("content") or "")
    return found


@lru_cache(maxsize=65536)
def _slot(token: str, dim: int) -> tuple[int, float]:
    h = _h(token, dim)
    return h % dim, (1.0 if (h >> 40) & 1 else -1.0)


def hashed_embedding(text: str, dim: int = 64, *, bigrams: bool = True) -> list[float]:
    """Hashed bag of lower-cased words (+ bigrams at half weight), L2-normalised."""
    words = [w.lower() for w in _WORD.findall(text)]
    vec = [0.0] * dim
    for w in words:
        i, s = _slot(w, dim)
        vec[i] += s
    if bigrams:
        for a, b in zip(words, words[1:], strict=False):
            i, s = _slot(a + " " + b, dim)
            vec[i] += 0.5 * s
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


def schema_instance(schema: dict[str, Any], text: str, *, seed: str = "") -> Any:
    """A deterministic instance of a JSON schema, with strings made of words from ``text``.

    Handles objects, arrays (1-3 items within min/maxItems; a tuple's ``prefixItems`` one
    each), enums and consts (picked by
    hash of ``text``), strings, integers/numbers (within bounds), booleans, null,
    ``$defs``/``definitions`` with ``$ref``, ``anyOf``/``oneOf`` (first non-null branch)
    and ``allOf``.
    """
    words = _WORD.findall(text) or ["fake"]
    root = schema
    key = seed + text

    def resolve(s: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in s and seen < 32:
            ref = str(s["$ref"])
            node: Any = root
            for part in ref.lstrip("#/").split("/"):
                if part:
                    node = node[part.replace("~1", "/").replace("~0", "~")]
            s = {**node, **{k: v for k, v in s.items() if k != "$ref"}}
            seen += 1
        return s

    def string(path: str, s: dict[str, Any]) -> str:
        h = _h(key, path)
        n = 1 + h % 4
        start = (h >> 8) % len(words)
        out = " ".join(words[(start + i) % len(words)] for i in range(n))
        lo, hi = int(s.get("minLength", 0)), s.get("maxLength")
        while len(out) < lo:
            out += " " + words[(start + len(out)) % len(words)]
        if hi is not None:
            out = out[: int(hi)]
        return out

    def walk(s: Any, path: str, depth: int) -> Any:
        if not isinstance(s, dict):
            return None
        s = resolve(s)
        if "const" in s:
            return s["const"]
        if "enum" in s and s["enum"]:
            options = list(s["enum"])
            return options[_h(key, path) % len(options)]
        for combo in ("anyOf", "oneOf"):
            if combo in s:
                branches = [b for b in s[combo] if resolve(b).get("type") != "null"]
                return walk((branches or s[combo])[0], path, depth)
        if "allOf" in s:
            merged: dict[str, Any] = {}
            for part in s["allOf"]:
                merged.update(resolve(part))
            return walk(merged, path, depth)
        typ = s.get("type")
        if isinstance(typ, list):
            typ = next((t for t in typ if t != "null"), "null")
        if typ is None:
            typ = "object" if "properties" in s else "array" if "items" in s else "string"
        if typ == "object":
            props: dict[str, Any] = s.get("properties") or {}
            if depth > 8:
                return {name: None for name in s.get("required", [])}
            return {name: walk(sub, f"{path}.{name}", depth + 1) for name, sub in props.items()}
        if typ == "array" and "prefixItems" in s:  # a tuple: one item per position
            return [walk(sub, f"{path}[{i}]", depth + 1) for i, sub in enumerate(s["prefixItems"])]
        if typ == "array":
            lo = int(s.get("minItems", 0))
            hi = int(s.get("maxItems", max(lo, 3)))
            n = min(max(1 + _h(key, path, "n") % 3, lo), hi)
            if depth > 8:
                n = lo
            return [walk(s.get("items", {}), f"{path}[{i}]", depth + 1) for i in range(n)]
        if typ == "string":
            return string(path, s)
        if typ == "integer":
            lo = math.ceil(s.get("minimum", s.get("exclusiveMinimum", -1) + 1))
            hi = math.floor(s.get("maximum", s.get("exclusiveMaximum", lo + 11) - 1))
            return lo + _h(key, path) % max(1, hi - lo + 1)
        if typ == "number":
            lo_f = float(s.get("minimum", s.get("exclusiveMinimum", 0.0)))
            hi_f = float(s.get("maximum", s.get("exclusiveMaximum", lo_f + 1.0)))
            frac = (_h(key, path) % 1000 + 1) / 1002.0
            return round(lo_f + (hi_f - lo_f) * frac, 3)
        if typ == "boolean":
            return bool(_h(key, path) % 2)
        return None

    return walk(schema, "$", 0)


def schema_instance_responder(request: dict[str, Any]) -> dict[str, Any] | str:
    """Default answer: an instance of the request's ``format`` schema (or a small object)."""
    text = last_user_message(request)
    fmt = request.get("format")
    if isinstance(fmt, dict):
        value = schema_instance(fmt, text)
        return value if isinstance(value, dict) else json.dumps(value)
    return {"answer": " ".join(_WORD.findall(text)[:8]) or "ok"}


# --- records ----------------------------------------------------------------------------------


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


class _Stop(Exception):
    """The server is closing: drop the connection without an answer."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], fake: FakeOllama) -> None:
        self.fake = fake
        super().__init__(addr, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up early are expected (timeouts, cancellation)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60  # idle keep-alive connections are closed after this
    wbufsize = 1 << 16  # headers and body leave in one send (no Nagle/delayed-ACK stall)
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.fake._dispatch(self, "GET")

    def do_POST(self) -> None:
        self.server.fake._dispatch(self, "POST")

    def do_DELETE(self) -> None:
        self.server.fake._dispatch(self, "DELETE")


# --- the fake ---------------------------------------------------------------------------------


class FakeOllama:
    """A fake Ollama (and OpenAI-compatible) server. See the module docstring."""

    def __init__(
        self,
        *,
        models: Iterable[str] = DEFAULT_MODELS,
        responder: Responder | None = None,
        dims: int | dict[str, int] = 64,
        fault_rates: dict[str, float] | None = None,
        seed: int = 0,
        latency: float = 0.0,
        slow_seconds: float = 0.5,
        hang_seconds: float = 600.0,
        stream_chunk: int = 16,
        usage: bool = True,
    ) -> None:
        self.models: set[str] = set(models)
        self.usage = usage  # False: OpenAI-compatible answers carry no "usage" (some servers)
        self.responder: Responder = responder or schema_instance_responder
        self.dims = dims
        self.fault_rates: dict[str, float] = dict(fault_rates or {})
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.hang_seconds = hang_seconds
        self.stream_chunk = stream_chunk
        self.requests: list[Record] = []
        self.counts: Counter[str] = Counter()
        self.max_in_flight = 0
        self.in_flight = 0
        self._rng = random.Random(seed)
        self._queue: deque[str] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._conns: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        """``127.0.0.1:port``, the form OLLAMA_HOST usually takes."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> FakeOllama:
        if self._server is not None:
            return self
        self._closing.clear()
        self._server = _Server(("127.0.0.1", self.port), self)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-ollama-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        self._closing.set()  # wakes "slow" and "hang" handlers
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def close(self) -> None:
        self._stop_server()

    def refuse_connections(self) -> None:
        """Close the port and every open connection: clients now get 'connection refused'."""
        self._stop_server()

    def accept_connections(self) -> None:
        """Listen again on the same port after :meth:`refuse_connections`."""
        self.start()

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- faults and records -----------------------------------------------------------------

    def fail_next(self, kind: str, n: int = 1) -> None:
        """The next ``n`` requests that ``kind`` applies to get that fault (FIFO with others)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; choose from {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._queue.extend([kind] * n)

    def set_fault_rates(self, **rates: float) -> None:
        for kind in rates:
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; choose from {', '.join(FAULT_KINDS)}")
        with self._lock:
            self.fault_rates = dict(rates)

    def reset(self) -> None:
        """Forget recorded requests, counters, max_in_flight and queued one-shot faults."""
        with self._lock:
            self.requests.clear()
            self.counts.clear()
            self.max_in_flight = 0
            self._queue.clear()

    def requests_to(self, path: str) -> list[Record]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def dim(self, model: str) -> int:
        if isinstance(self.dims, dict):
            return int(self.dims.get(model) or self.dims.get(_base(model)) or 64)
        return int(self.dims)

    def has_model(self, model: str | None) -> bool:
        return bool(model) and _base(str(model)) in {_base(m) for m in self.models}

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _pick_fault(self, applicable: tuple[str, ...]) -> str | None:
        with self._lock:
            for i, kind in enumerate(self._queue):
                if kind in applicable:
                    del self._queue[i]
                    return kind
            for kind in FAULT_KINDS:
                rate = self.fault_rates.get(kind, 0.0)
                if kind in applicable and rate > 0 and self._rng.random() < rate:
                    return kind
        return None

    def _wait(self, seconds: float) -> None:
        if self._closing.wait(seconds):
            raise _Stop

    # --- HTTP -------------------------------------------------------------------------------

    def _dispatch(self, h: _Handler, method: str) -> None:
        path = h.path.split("?", 1)[0].rstrip("/") or "/"
        body: Any = None
        try:
            length = int(h.headers.get("Content-Length") or 0)
            raw = h.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
        except (ValueError, OSError):
            body = None
        model = body.get("model") if isinstance(body, dict) else None
        rec = Record(
            path=path,
            model=model,
            json=body,
            started=time.time(),
            headers={k.lower(): v for k, v in h.headers.items()},
        )
        with self._lock:
            self.requests.append(rec)
            self.counts[path] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if body is None:
                self._send(h, rec, 400, {"error": "invalid JSON body"})
                return
            route = _ROUTES.get((method, path))
            if route is None:
                self._send(h, rec, 404, {"error": f"{method} {path} not found"})
                return
            route(self, h, rec, body)
        except (_Stop, OSError):
            h.close_connection = True
        finally:
            self._finish(rec)

    def _finish(self, rec: Record) -> None:
        """Count the request as done; called before the last byte of its answer leaves, so a
        client that sends its next request on receipt never overlaps it at the server."""
        with self._lock:
            if rec.ended:
                return
            rec.ended = time.time()
            self.in_flight -= 1

    def _send(self, h: _Handler, rec: Record, status: int, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        rec.status = status
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        self._finish(rec)
        h.wfile.flush()

    def _not_found(self, h: _Handler, rec: Record, model: Any, *, openai: bool = False) -> None:
        if openai:
            msg = f'model "{model}" not found, try pulling it first'
            self._send(h, rec, 404, {"error": {"message": msg, "type": "api_error"}})
        else:
            self._send(h, rec, 404, {"error": f"model '{model}' not found"})

    def _apply_fault(self, h: _Handler, rec: Record, applicable: tuple[str, ...]) -> str | None:
        """Sleep or answer 500 as the fault says; returns the fault left for the body."""
        fault = self._pick_fault(applicable)
        rec.fault = fault
        if self.latency:
            self._wait(self.latency)
        if fault == "hang":
            self._wait(self.hang_seconds)
            raise _Stop
        if fault == "slow":
            self._wait(self.slow_seconds)
            return None
        if fault == "http500":
            self._send(h, rec, 500, {"error": "fake: internal server error"})
            return "sent"
        return fault

    def _answer(self, request: dict[str, Any], fault: str | None) -> tuple[str, str]:
        """(content, done_reason) for a chat request, with the fault applied."""
        reply = self.responder(request)
        content = reply if isinstance(reply, str) else json.dumps(reply)
        if fault == "malformed":
            return "Sure! Here is the JSON you asked for: {relations: [oops,", "stop"
        if fault == "truncated":
            return content[: max(1, len(content) // 2)], "length"
        return content, "stop"

    # /api ----------------------------------------------------------------------------------

    def _version(self, h: _Handler, rec: Record, body: Any) -> None:
        self._send(h, rec, 200, {"version": FAKE_VERSION})

    def _tags(self, h: _Handler, rec: Record, body: Any) -> None:
        models = []
        for name in sorted(self.models):
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
        self._send(h, rec, 200, {"models": models})

    def _show(self, h: _Handler, rec: Record, body: dict[str, Any]) -> None:
        model = body.get("model") or body.get("name")
        if not self.has_model(model):
            self._not_found(h, rec, model)
            return
        embedding = "embed" in str(model)
        self._send(
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
                    "fake.embedding_length": self.dim(str(model)),
                    "fake.context_length": 131072,
                },
                "capabilities": ["embedding"] if embedding else ["completion"],
                "modified_at": "2025-01-01T00:00:00Z",
            },
        )

    def _chat(self, h: _Handler, rec: Record, body: dict[str, Any]) -> None:
        model = body.get("model")
        if not self.has_model(model):
            self._not_found(h, rec, model)
            return
        fault = self._apply_fault(h, rec, FAULT_KINDS)
        if fault == "sent":
            return
        content, reason = self._answer(body, fault)
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
            step = max(1, self.stream_chunk)
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
            self._finish(rec)
            h.wfile.flush()
            return
        self._send(
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

    def _embed_vectors(self, model: str, texts: list[str]) -> list[list[float]]:
        dim = self.dim(model)
        return [hashed_embedding(t, dim) for t in texts]

    def _embed(self, h: _Handler, rec: Record, body: dict[str, Any]) -> None:
        model = body.get("model")
        if not self.has_model(model):
            self._not_found(h, rec, model)
            return
        if self._apply_fault(h, rec, EMBED_FAULTS) == "sent":
            return
        inp = body.get("input", "")
        texts = [inp] if isinstance(inp, str) else [str(t) for t in inp]
        self._send(
            h,
            rec,
            200,
            {
                "model": model,
                "embeddings": self._embed_vectors(str(model), texts),
                "total_duration": 1_000_000,
                "load_duration": 1000,
                "prompt_eval_count": sum(count_tokens(t) for t in texts),
            },
        )

    # /v1 -----------------------------------------------------------------------------------

    def _v1_models(self, h: _Handler, rec: Record, body: Any) -> None:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "library"}
            for name in sorted(self.models)
        ]
        self._send(h, rec, 200, {"object": "list", "data": data})

    def _v1_chat(self, h: _Handler, rec: Record, body: dict[str, Any]) -> None:
        model = body.get("model")
        if not self.has_model(model):
            self._not_found(h, rec, model, openai=True)
            return
        if body.get("stream"):
            self._send(h, rec, 400, {"error": {"message": "the fake does not stream /v1"}})
            return
        fault = self._apply_fault(h, rec, FAULT_KINDS)
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
        content, reason = self._answer(request, fault)
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
        pt, ct = count_tokens(prompt), count_tokens(content)
        self._send(
            h,
            rec,
            200,
            {
                "id": f"chatcmpl-{_h(prompt) % 10**8}",
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
                    if self.usage
                    else {}
                ),
            },
        )

    def _v1_embeddings(self, h: _Handler, rec: Record, body: dict[str, Any]) -> None:
        model = body.get("model")
        if not self.has_model(model):
            self._not_found(h, rec, model, openai=True)
            return
        if self._apply_fault(h, rec, EMBED_FAULTS) == "sent":
            return
        inp = body.get("input", "")
        texts = [inp] if isinstance(inp, str) else [str(t) for t in inp]
        vectors = self._embed_vectors(str(model), texts)
        pt = sum(count_tokens(t) for t in texts)
        self._send(
            h,
            rec,
            200,
            {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in enumerate(vectors)
                ],
                "model": model,
                "usage": {"prompt_tokens": pt, "total_tokens": pt},
            },
        )


def _base(model: str) -> str:
    return model[: -len(":latest")] if model.endswith(":latest") else model


def _details(name: str) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "fake",
        "families": ["fake"],
        "parameter_size": "1B",
        "quantization_level": "Q4_K_M",
    }


_Route = Callable[[FakeOllama, _Handler, Record, Any], None]
_ROUTES: dict[tuple[str, str], _Route] = {
    ("GET", "/"): lambda f, h, r, b: f._send(h, r, 200, b"Ollama is running"),
    ("GET", "/api/version"): FakeOllama._version,
    ("GET", "/api/tags"): FakeOllama._tags,
    ("POST", "/api/show"): FakeOllama._show,
    ("POST", "/api/chat"): FakeOllama._chat,
    ("POST", "/api/embed"): FakeOllama._embed,
    ("GET", "/v1/models"): FakeOllama._v1_models,
    ("POST", "/v1/chat/completions"): FakeOllama._v1_chat,
    ("POST", "/v1/embeddings"): FakeOllama._v1_embeddings,
}

__all__ = [
    "DEFAULT_MODELS",
    "FAULT_KINDS",
    "FakeOllama",
    "Record",
    "Responder",
    "hashed_embedding",
    "last_user_message",
    "schema_instance",
    "schema_instance_responder",
]
