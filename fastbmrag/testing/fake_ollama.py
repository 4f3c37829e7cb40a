"""A fake Ollama: a real HTTP server on 127.0.0.1 that the real clients talk to.

Stdlib only, but for the token counts it reports (:mod:`fastbmrag.util.tokens`, a real BPE
tokenizer). Used by the tests and by the benchmark scripts::

    with FakeOllama() as fake:
        client = OllamaClient(fake.url)
        ...
        assert fake.counts["/api/chat"] == 1

Endpoints (one function each in :mod:`fastbmrag.testing.endpoints`): ``/api/version``,
``/api/tags``, ``/api/show``, ``/api/chat`` (stream and non-stream, answering with an instance
of the ``format`` JSON schema), ``/api/embed`` (list input), and the OpenAI-compatible
``/v1/models``, ``/v1/chat/completions``, ``/v1/embeddings``. Unknown models get Ollama's 404 ``{"error": "model 'x' not found"}``.

Answers come from ``responder(request) -> dict | str``; a dict is JSON-encoded as the
message content. The request handed to it is the request JSON of ``/api/chat``; for
``/v1/chat/completions`` it is the same shape (``model``, ``messages``, ``format`` = the
json_schema's ``schema``, ``options`` = ``{"temperature", "num_predict"}``) with the
original under ``"openai"``. The default responder, :func:`schema_instance_responder`,
builds a deterministic, schema-valid instance from words of the last user message.

Embeddings are hashed bags of words (and word bigrams), L2-normalised: identical texts
give identical vectors and texts sharing words have a high cosine
(:mod:`fastbmrag.testing.answers`); ``embedder(texts) -> vectors`` replaces them (a benchmark
serves a real sentence embedding model so).

Faults (chat; ``http500``, ``slow`` and ``hang`` also embed): ``fault_rates`` rolled with
a seeded RNG, and one-shot ``fail_next(kind, n)``. Kinds: ``malformed`` (not JSON),
``truncated`` (JSON cut in half, done_reason "length"), ``http500``, ``slow`` (answer
after ``slow_seconds``), ``hang`` (no answer for ``hang_seconds``, or until the server
closes), ``drop`` (chat only: the connection closed with no answer). ``refuse_connections()`` closes the port (connection refused) and
``accept_connections()`` opens it again.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from fastbmrag.testing.answers import schema_instance_responder
from fastbmrag.testing.endpoints import FAULT_KINDS, ROUTES, Embedder, Record

Responder = Callable[[dict[str, Any]], "dict[str, Any] | str"]

DEFAULT_MODELS = frozenset({"phi4", "mxbai-embed-large"})

# --- records ----------------------------------------------------------------------------------


class _Stop(Exception):
    """The server is closing: drop the connection without an answer."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], fake: FakeOllama) -> None:
        self.fake = fake
        super().__init__(addr, Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up early are expected (timeouts, cancellation)


class Handler(BaseHTTPRequestHandler):
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
        embedder: Embedder | None = None,
    ) -> None:
        self.models: set[str] = set(models)
        self.usage = usage  # False: OpenAI-compatible answers carry no "usage" (some servers)
        self.responder: Responder = responder or schema_instance_responder
        self.dims = dims
        self.embedder = embedder
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

    def _dispatch(self, h: Handler, method: str) -> None:
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
                self.send(h, rec, 400, {"error": "invalid JSON body"})
                return
            route = ROUTES.get((method, path))
            if route is None:
                self.send(h, rec, 404, {"error": f"{method} {path} not found"})
                return
            route(self, h, rec, body)
        except (_Stop, OSError):
            h.close_connection = True
        finally:
            self.finish(rec)

    def finish(self, rec: Record) -> None:
        """Count the request as done; called before the last byte of its answer leaves, so a
        client that sends its next request on receipt never overlaps it at the server."""
        with self._lock:
            if rec.ended:
                return
            rec.ended = time.time()
            self.in_flight -= 1

    def send(self, h: BaseHTTPRequestHandler, rec: Record, status: int, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        rec.status = status
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        self.finish(rec)
        h.wfile.flush()

    def not_found(
        self, h: BaseHTTPRequestHandler, rec: Record, model: Any, *, openai: bool = False
    ) -> None:
        if openai:
            msg = f'model "{model}" not found, try pulling it first'
            self.send(h, rec, 404, {"error": {"message": msg, "type": "api_error"}})
        else:
            self.send(h, rec, 404, {"error": f"model '{model}' not found"})

    def apply_fault(
        self, h: BaseHTTPRequestHandler, rec: Record, applicable: tuple[str, ...]
    ) -> str | None:
        """Sleep or answer 500 as the fault says; returns the fault left for the body."""
        fault = self._pick_fault(applicable)
        rec.fault = fault
        if self.latency:
            self._wait(self.latency)
        if fault == "hang":
            self._wait(self.hang_seconds)
            raise _Stop
        if fault == "drop":  # the connection closed with no answer
            raise _Stop
        if fault == "slow":
            self._wait(self.slow_seconds)
            return None
        if fault == "http500":
            self.send(h, rec, 500, {"error": "fake: internal server error"})
            return "sent"
        return fault

    def answer(self, request: dict[str, Any], fault: str | None) -> tuple[str, str]:
        """(content, done_reason) for a chat request, with the fault applied."""
        reply = self.responder(request)
        content = reply if isinstance(reply, str) else json.dumps(reply)
        if fault == "malformed":
            return "Sure! Here is the JSON you asked for: {relations: [oops,", "stop"
        if fault == "truncated":
            return content[: max(1, len(content) // 2)], "length"
        return content, "stop"


def _base(model: str) -> str:
    return model[: -len(":latest")] if model.endswith(":latest") else model


__all__ = [
    "DEFAULT_MODELS",
    "FAULT_KINDS",
    "FakeOllama",
    "Record",
    "Responder",
]
