"""How things are said to a reader: counts ("1 edge", "2 edges", "1,204 entities"), an option
named in the words of the door that said it, and text that is safe to print."""

from __future__ import annotations

import re
from collections.abc import Callable

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MARK = "\x1f"  # the unit separator: either side of an option's field inside a message


def option_named(field: str) -> str:
    """The option ``field`` inside a message (an error, a query's warning), for each door to
    say in its own words with :func:`said`."""
    return f"{_MARK}{field}{_MARK}"


def said(text: str, word: Callable[[str], str] = str) -> str:
    """``text``, each option it names (:func:`option_named`) said as ``word(field)``: ``--top-k`` on
    the command line, ``'top_k'`` on the page, the field itself in Python and in JSON."""
    parts = text.split(_MARK)
    return "".join(word(part) if i % 2 else part for i, part in enumerate(parts))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one: ``counted(1, "edge")`` ->
    "1 edge", ``counted(3, "entity", "entities")`` -> "3 entities"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def printable(text: str) -> str:
    """``text`` with each control character (line breaks and tabs too) written as its escape,
    ``\\x1b``: a file's name prints as it is, on one line, and never drives the terminal."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
