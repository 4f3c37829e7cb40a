"""A response cache in one SQLite file (WAL), so re-running the same papers costs no calls.

Chat answers are keyed by sha256 of (backend, model, messages, schema, options) and
embeddings by sha256 of (backend, model, text), one row per text; the keys are built in
:func:`chat_cache_key` and :func:`embed_cache_key`. Only validated answers are stored. The default file is
``<working_dir>/llm_cache.sqlite``.

One connection, guarded by a lock: safe from one process running asyncio (each call is a
short synchronous statement) and from threads of that process. ``close()`` may be called by
every client that shares the cache: the connection reopens on the next use.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fastbmrag.errors import ConfigError
from fastbmrag.util.closing import Closing
from fastbmrag.util.wording import option_named

CACHE_FILENAME = "llm_cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
);
"""

_MAX_VARS = 500  # keys per SELECT ... IN (...)


def _digest(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def chat_cache_key(
    backend: str,
    model: str,
    messages: Sequence[dict[str, str]],
    schema: dict[str, Any],
    options: dict[str, Any],
) -> str:
    """sha256 over everything that changes an answer."""
    return _digest(
        {
            "backend": backend,
            "model": model,
            "messages": list(messages),
            "schema": schema,
            "options": options,
        }
    )


def embed_cache_key(backend: str, model: str, text: str) -> str:
    return _digest({"backend": backend, "model": model, "text": text})


class ResponseCache(Closing):
    """Validated chat answers and embedding vectors, by content hash."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self._lock:
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The open connection; (re)opened on first use, so ``close()`` is always safe."""
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=10000")
                conn.executescript(_SCHEMA)
            except (OSError, sqlite3.Error) as err:
                raise ConfigError(
                    f"Cannot open the LLM cache {self.path}: {err}; fix the path or run without "
                    f"the cache ({option_named('use_cache')})"
                ) from None
            self._conn = conn
        return self._conn

    @property
    def _db(self) -> sqlite3.Connection:
        return self._connect()

    @classmethod
    def for_working_dir(cls, working_dir: str | Path) -> ResponseCache:
        return cls(Path(working_dir) / CACHE_FILENAME)

    # --- chat -----------------------------------------------------------------------------

    def get_chat(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM chat WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_chat(self, key: str, value: str, *, model: str, kind: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO chat (key, model, kind, value, created) VALUES (?, ?, ?, ?, ?)",
                (key, model, kind, value, time.time()),
            )

    # --- embeddings -------------------------------------------------------------------------

    def get_vectors(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(wanted), _MAX_VARS):
                part = wanted[i : i + _MAX_VARS]
                marks = ",".join("?" * len(part))
                for key, blob in self._db.execute(
                    f"SELECT key, vector FROM embedding WHERE key IN ({marks})", part
                ):
                    out[key] = np.frombuffer(blob, dtype=np.float32).copy()
        return out

    def put_vectors(self, vectors: dict[str, np.ndarray], *, model: str) -> None:
        now = time.time()
        rows = [
            (k, model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes(), now)
            for k, v in vectors.items()
        ]
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO embedding (key, model, dim, vector, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- housekeeping -----------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Rows per table: ``{"chat": n, "embedding": m}``."""
        with self._lock:
            chat = self._db.execute("SELECT count(*) FROM chat").fetchone()[0]
            emb = self._db.execute("SELECT count(*) FROM embedding").fetchone()[0]
        return {"chat": int(chat), "embedding": int(emb)}

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM chat")
            self._db.execute("DELETE FROM embedding")

    def close(self) -> None:
        """Close the connection (clients do this in ``aclose``); a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
