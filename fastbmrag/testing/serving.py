"""What the fake NCBI servers share: a real HTTP server on 127.0.0.1 (a free port) in a thread,
started and stopped as a context manager (:class:`LocalServer`)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from fastbmrag.util.closing import Closing


class LocalServer(Closing):
    """Subclasses set :attr:`handler`, a request handler class whose ``owner`` is the server
    object; ``with Fake() as fake:`` starts it, leaving the block stops it."""

    handler: type[BaseHTTPRequestHandler]
    thread_name = "fake-server"

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        handler: Any = type("Handler", (self.handler,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> Self:
        return self.start()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return int(self._server.server_address[1])

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"
