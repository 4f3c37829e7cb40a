"""Counts as a reader says them: "1 edge", "2 edges", "1,204 entities"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one: ``counted(1, "edge")`` ->
    "1 edge", ``counted(3, "entity", "entities")`` -> "3 entities"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
