"""An option declared once: its field in an operation's options dataclass carries what every
door needs (:class:`Opt`: the flag, a short flag, the range or choices, the help, an environment
variable), and :func:`check` holds it to its range. The command line's options, the page's
parameters and the Python API's keywords are all these fields; a value out of range is the same
:class:`~fastbmrag.errors.InputError` at every door, naming the field, which each door words
its own way (``--top-k`` at the command line, ``'top_k'`` on the page)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

from fastbmrag.errors import InputError
from fastbmrag.util.wording import option_named


@dataclass(frozen=True)
class Opt:
    """How an options field is given: ``flag`` at the command line (``negate``: the flag turns
    the field off, ``--no-refine`` for ``refine``), an optional ``short`` flag, ``low``/``high``
    bounds (``whole``: a whole number) or ``choices``, the ``help`` and an ``env`` variable.
    ``cli=False``: a field no command takes (library tuning); ``page=False``: the web server's
    setting, not a request's."""

    help: str
    flag: str = ""
    short: str = ""
    low: float | None = None
    high: float | None = None
    whole: bool = False
    choices: tuple[str, ...] = ()
    env: str = ""
    negate: bool = False
    cli: bool = True
    page: bool = True  # False: the server's setting, not a request's
    kind: str = ""  # what the value is, in a refusal: "a cosine similarity", "seconds"
    note: str = ""  # said after the range in a refusal: "(all: every edge)"
    plain: bool = False  # the bounds written without thousands' commas (a year: 1800)
    label: str = ""  # its input's label on the page ("": its name, "Top k")
    argument: bool = False  # a positional parameter: the command line's argument, not a flag

    def refusal(self, name: str, value: Any) -> str | None:
        """Why ``value`` is refused for the field ``name`` (a message that begins with the
        field), None when it is in range."""
        if value is None or (self.low is None and self.high is None and not self.choices):
            return None
        if isinstance(value, tuple):  # a list option: each of its values
            return next((why for v in value if (why := self.refusal(name, v))), None)
        if self.choices:
            if value in self.choices:
                return None
            return f"{name} must be one of {', '.join(self.choices)}, got {value!r}"
        number = isinstance(value, int | float) and not isinstance(value, bool)
        ok = number and (isinstance(value, int) or not self.whole)  # NaN fails the bounds
        if ok and (self.low is None or value >= self.low) and (
            self.high is None or value <= self.high
        ):
            return None
        kind = self.kind or ("a whole number" if self.whole else "a number")
        note = f" {self.note}" if self.note else ""
        return f"{name} must be {kind}{self.span()}{note}, got {value!r}"

    def span(self) -> str:
        """The range in words, after what the value is: " from 1 to 20", ", 0 or more"."""
        low, high = _shown(self.low, self.plain), _shown(self.high, self.plain)
        if self.low is not None and self.high is not None:
            return f" from {low} to {high}"
        return f", {low} or more" if self.low is not None else f", {high} or less"

    def described(self) -> str:
        """The help, and the range as its last sentence ("From 1 to 20.")."""
        if self.low is None and self.high is None:
            return self.help
        span = self.span().lstrip(" ,")
        return f"{self.help} {span[0].upper()}{span[1:]}."


def _shown(bound: float | None, plain: bool = False) -> str:
    if bound is None:
        return ""
    if float(bound).is_integer():
        return str(int(bound)) if plain else f"{int(bound):,}"
    return f"{bound:g}"


def option(default: Any = MISSING, *, factory: Any = MISSING, **opt: Any) -> Any:
    """A dataclass field with its :class:`Opt` (``kw_only=True``: a required field may follow
    the defaults of a base class's)."""
    kw_only = bool(opt.pop("kw_only", False))
    if factory is not MISSING:
        return field(default_factory=factory, kw_only=kw_only, metadata={"option": Opt(**opt)})
    return field(default=default, kw_only=kw_only, metadata={"option": Opt(**opt)})


def declared(cls: Any) -> Iterator[tuple[Field[Any], Opt]]:
    """The fields of an options dataclass that carry an :class:`Opt`, in order."""
    for f in fields(cls):
        if "option" in f.metadata:
            yield f, f.metadata["option"]


def check(options: Any) -> None:
    """InputError (with the field) for the first declared field out of its range or choices,
    a true/false field given anything but True or False ("no" is a word, and true), or a text
    field given anything but text (``kind`` says what text)."""
    for f, opt in declared(options):
        value = getattr(options, f.name)
        if f.type in ("bool", bool) and not isinstance(value, bool):
            raise InputError(
                f"{option_named(f.name)} must be True or False, got {value!r}", field=f.name
            )
        text = not opt.choices and (
            f.type in ("str", str) or (f.type == "str | None" and value is not None)
        )
        if text and not isinstance(value, str):
            raise InputError(
                f"{option_named(f.name)} must be {opt.kind or 'text'}, got {value!r}",
                field=f.name,
            )
        if (why := opt.refusal(option_named(f.name), value)) is not None:
            raise InputError(why, field=f.name)


def values_of(value: Any, name: str) -> tuple[str, ...]:
    """A list option as the tuple of its values: None is none, one text is one value (not its
    characters: ``watch("IL6")`` watches IL6), a list or any other iterable its items (texts,
    or whole numbers as ids); anything else is an InputError naming the field (a number where
    names are asked)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and not isinstance(value, bytes | bytearray):
        items = list(value)
        bad = next((v for v in items if not isinstance(v, str | int) or isinstance(v, bool)), None)
        if bad is None:
            return tuple(str(v) for v in items)
    else:
        bad = value
    raise InputError(
        f"{option_named(name)} must be text or a list of texts, got {bad!r}", field=name
    )


def options_of(kind: Any, given: dict[str, Any]) -> Any:
    """``kind(**given)`` for an options dataclass, an unknown keyword an InputError naming the
    known ones."""
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(f"Unknown option {unknown[0]!r}: use one of {', '.join(sorted(known))}")
    return kind(**given)
