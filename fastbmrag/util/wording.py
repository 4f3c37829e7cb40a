"""How things are said to a reader: counts ("1 edge", "2 edges", "1,204 entities"), and text
that is safe to print."""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one: ``counted(1, "edge")`` ->
    "1 edge", ``counted(3, "entity", "entities")`` -> "3 entities"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def printable(text: str) -> str:
    """``text`` with each control character (line breaks and tabs too) written as its escape,
    ``\\x1b``: a file's name prints as it is, on one line, and never drives the terminal."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
