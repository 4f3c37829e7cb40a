"""Every error fastbmrag raises on purpose, and the exit code the CLI maps it to.

Hierarchy::

    FastbmragError                 exit 2  cannot start / cannot continue
    ├── InputError                 exit 2  a papers file, XML file or option value is unusable
    │   └── TruncatedInput         exit 2  a file ends inside a value: cut short (stops the run)
    ├── ConfigError                exit 2  a setting is missing or inconsistent
    ├── LLMError                           a call to the model server failed after retries
    │   ├── LLMUnavailable         exit 2  the server cannot be reached (preflight)
    │   └── ModelNotFound          exit 2  the model is not pulled on the server (preflight)
    ├── StoreError                 exit 2  Qdrant refused an operation
    │   ├── CollectionNotFound     exit 2  no such collection in the working dir / server
    │   ├── DimensionMismatch      exit 2  embedding size differs from the collection's
    │   ├── StoreLost              exit 2  the ledger lists edges the store does not hold
    │   ├── DiskFull               exit 2  too little free space where the collection lives
    │   └── StoreBusy              exit 3  another process has the embedded shard open
    ├── LockedError                exit 3  another update/sync holds the collection lock
    ├── VocabError                 exit 2  the vocabularies cannot be loaded or built
    └── FetchError                 exit 2  PubMed / PMC cannot be reached or answered nonsense

Exit codes (documented in README.md):

    0  success
    1  the run finished but some papers failed (listed by `fastbmrag status`)
    2  cannot start: bad input, unreachable service, missing model, bad setting
    3  locked: another run holds the collection
    70 internal error: a bug; one line names the log file that holds the traceback
    130 interrupted (Ctrl-C / SIGINT); everything already committed is kept

A path that cannot be created or written (``OSError``) is exit 2 with a line naming the path.

Messages are one line and name the fix. An option a message names is written
``option_named(field)`` (:mod:`fastbmrag.util.wording`): the library names the field, and each
door says it in its own words (:meth:`FastbmragError.said`: ``--top-k`` on the command line,
``'top_k'`` on the page, ``top_k`` in Python, where ``str(err)`` is the message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastbmrag.util.wording import options_in, said

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_CANNOT_START = 2
EXIT_LOCKED = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE
EXIT_INTERRUPTED = 130


class FastbmragError(Exception):
    """Base class. ``str(err)`` is a complete one-line message for the user; ``summary``,
    where a run stopped on it, is what the run had done (its committed papers)."""

    exit_code = EXIT_CANNOT_START
    summary: Any = None

    def __str__(self) -> str:
        return self.said(str)

    def said(
        self, word: Callable[[str], str], call: Callable[[str, tuple[str, ...]], str] | None = None
    ) -> str:
        """The message, each option it names
        (:func:`~fastbmrag.util.wording.option_named`) said as ``word(field)``, each operation
        it advises (:func:`~fastbmrag.util.wording.operation_named`) as ``call(name, args)``."""
        return said(super().__str__(), word, call)

    @property
    def options(self) -> tuple[str, ...]:
        """The options the message names, as their fields (``("top_k",)``): what a door says
        in its own words."""
        return options_in(super().__str__())


class InputError(FastbmragError):
    """An input file or value cannot be used. ``field``: the option it is about, where it is
    one (its message begins with it: ``top_k must be ...``)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TruncatedInput(InputError):
    """A file ends in the middle of a value (a quoted CSV cell): it was cut short. Unlike other
    unreadable files, which are skipped, it stops the run before anything is indexed."""


class ConfigError(FastbmragError):
    """A setting is missing or inconsistent."""


class LLMError(FastbmragError):
    """A model-server call failed after its retries."""


class LLMUnavailable(LLMError):
    """The model server cannot be reached."""


class ModelNotFound(LLMError):
    """The requested model is not available on the server."""


class StoreError(FastbmragError):
    """The vector store refused an operation."""


class CollectionNotFound(StoreError):
    """The collection does not exist."""


class DimensionMismatch(StoreError):
    """The embedding model's vector size differs from the collection's."""


class StoreLost(StoreError):
    """The collection's ledger lists edges that its store does not hold (a deleted or damaged
    shard, a dropped server collection)."""


class DiskFull(StoreError):
    """The volume of a collection has too little free space to open or write it safely."""


class StoreBusy(StoreError):
    """The embedded shard is open in another process (``holder``: which, and doing what)."""

    exit_code = EXIT_LOCKED
    holder = ""


class LockedError(FastbmragError):
    """Another indexing run holds the collection lock."""

    exit_code = EXIT_LOCKED


class VocabError(FastbmragError):
    """The vocabularies cannot be loaded or built."""


class FetchError(FastbmragError):
    """PubMed or the full-text service failed."""
