"""ResponseCache: a real SQLite file in WAL mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fastbmrag.errors import ConfigError
from fastbmrag.llm import ResponseCache
from fastbmrag.llm.cache import chat_cache_key, embed_cache_key


def test_chat_round_trip_survives_reopen(tmp_path: Path) -> None:
    key = chat_cache_key(
        "ollama",
        "phi4",
        [{"role": "user", "content": "IL1B"}],
        {"type": "object"},
        {"num_ctx": 8192},
    )
    with ResponseCache.for_working_dir(tmp_path / "wd") as cache:
        assert cache.get_chat(key) is None
        cache.put_chat(key, '{"gene": "IL1B"}', model="phi4", kind="extract")
    with ResponseCache(tmp_path / "wd" / "llm_cache.sqlite") as cache:
        assert cache.get_chat(key) == '{"gene": "IL1B"}'
        assert cache.counts() == {"chat": 1, "embedding": 0}
    with sqlite3.connect(tmp_path / "wd" / "llm_cache.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT model, kind FROM chat").fetchall() == [("phi4", "extract")]


def test_keys_change_with_every_part() -> None:
    base = ("ollama", "phi4", [{"role": "user", "content": "a"}], {"type": "object"}, {"t": 0})
    key = chat_cache_key(*base)
    assert len(key) == 64 and key == chat_cache_key(*base)
    variants = [
        ("openai", *base[1:]),
        (base[0], "phi4:14b", *base[2:]),
        (*base[:2], [{"role": "user", "content": "b"}], *base[3:]),
        (*base[:3], {"type": "array"}, base[4]),
        (*base[:4], {"t": 1}),
    ]
    assert len({chat_cache_key(*v) for v in variants} | {key}) == 6
    assert embed_cache_key("ollama", "m", "IL1B") != embed_cache_key("ollama", "m", "IL1b")
    # option order does not matter
    assert chat_cache_key(*base[:4], {"a": 1, "b": 2}) == chat_cache_key(
        *base[:4], {"b": 2, "a": 1}
    )


def test_vectors_round_trip_in_bulk(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vectors = {f"k{i}": rng.standard_normal(1024).astype(np.float32) for i in range(1200)}
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put_vectors(vectors, model="mxbai-embed-large")
        got = cache.get_vectors([*vectors, "absent"])
        assert set(got) == set(vectors)
        np.testing.assert_array_equal(got["k1199"], vectors["k1199"])
        assert got["k7"].dtype == np.float32 and got["k7"].shape == (1024,)
        assert cache.counts()["embedding"] == 1200
        cache.clear()
        assert cache.counts() == {"chat": 0, "embedding": 0}


def test_unusable_path_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match=r"Cannot open the LLM cache .*run without the cache \(use_cache\)$"):
        ResponseCache(blocker / "llm_cache.sqlite")


def test_close_is_safe_for_a_cache_shared_by_clients(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put_chat("k", '{"a": 1}', model="phi4", kind="extract")
    cache.close()
    cache.close()  # a second client closing it too
    assert cache.get_chat("k") == '{"a": 1}'  # reopened on use
    cache.close()
