"""How things are said to a reader: counts ("1 edge", "2 edges", "1,204 entities"), an option
named in the words of the door that said it, and text that is safe to print."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
_CALL = re.compile(r"`rag\.([a-z_]+)\(((?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|, )*)\)`")
# The fields messages name as options (:func:`option_named`): the words a door says in its own.
_NAMED: set[str] = set()


def option_named(field: str) -> str:
    """The option ``field`` inside a message (an error, a query's warning), in the library's
    words: the field in backquotes (`top_k`), as code is quoted in text. Each door says it in
    its own words with :func:`said`; :func:`options_in` gives the options a message names."""
    _NAMED.add(field)
    return f"`{field}`"


def options_in(text: str) -> tuple[str, ...]:
    """The options ``text`` names (:func:`option_named`), in order, once each."""
    return tuple(dict.fromkeys(m[1] for m in _QUOTED.finditer(text) if m[1] in _NAMED))


def operation_named(name: str, *args: str) -> str:
    """An operation a message advises, with its arguments, in the library's words: the call in
    backquotes (`rag.entity('IL1B')`). Each door says it in its own words with :func:`said`'s
    ``call``: ``fastbmrag entity IL1B`` on the command line."""
    return f"`{python_call(name, args)}`"


def python_call(name: str, args: Sequence[str]) -> str:
    """An operation as Python calls it: ``rag.entity('IL1B')``."""
    return f"rag.{name}({', '.join(map(repr, args))})"


def said(
    text: str,
    word: Callable[[str], str] = str,
    call: Callable[[str, tuple[str, ...]], str] | None = None,
) -> str:
    """``text``, each option it names (:func:`option_named`) said as ``word(field)``: ``--top-k`` on
    the command line, ``'top_k'`` on the page, the field itself in Python and in JSON; each
    operation it advises (:func:`operation_named`) as ``call(name, args)`` (Python's call,
    without the backquotes, where no ``call`` is given)."""
    text = _CALL.sub(lambda m: (call or python_call)(m[1], _arguments(m[2])), text)
    return _QUOTED.sub(lambda m: word(m[1]) if m[1] in _NAMED else m[0], text)


def _arguments(written: str) -> tuple[str, ...]:
    value = ast.literal_eval(f"({written},)") if written.strip() else ()
    return tuple(str(v) for v in value)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one: ``counted(1, "edge")`` ->
    "1 edge", ``counted(3, "entity", "entities")`` -> "3 entities"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def printable(text: str) -> str:
    """``text`` with each control character (line breaks and tabs too) written as its escape,
    ``\\x1b``: a file's name prints as it is, on one line, and never drives the terminal."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
