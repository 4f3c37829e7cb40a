"""What the fake model server answers, deterministically: embeddings of a text (hashed bags of
words and word bigrams, L2-normalised: identical texts give identical vectors, texts sharing
words a high cosine) and instances of a JSON schema built from the words of the request."""

from __future__ import annotations

import hashlib
import json
import math
import re
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")


def stable_hash(*parts: object) -> int:
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
    h = stable_hash(token, dim)
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
        h = stable_hash(key, path)
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
            return options[stable_hash(key, path) % len(options)]
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
            n = min(max(1 + stable_hash(key, path, "n") % 3, lo), hi)
            if depth > 8:
                n = lo
            return [walk(s.get("items", {}), f"{path}[{i}]", depth + 1) for i in range(n)]
        if typ == "string":
            return string(path, s)
        if typ == "integer":
            lo = math.ceil(s.get("minimum", s.get("exclusiveMinimum", -1) + 1))
            hi = math.floor(s.get("maximum", s.get("exclusiveMaximum", lo + 11) - 1))
            return lo + stable_hash(key, path) % max(1, hi - lo + 1)
        if typ == "number":
            lo_f = float(s.get("minimum", s.get("exclusiveMinimum", 0.0)))
            hi_f = float(s.get("maximum", s.get("exclusiveMaximum", lo_f + 1.0)))
            frac = (stable_hash(key, path) % 1000 + 1) / 1002.0
            return round(lo_f + (hi_f - lo_f) * frac, 3)
        if typ == "boolean":
            return bool(stable_hash(key, path) % 2)
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
