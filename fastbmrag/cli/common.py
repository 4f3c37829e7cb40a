"""Options shared by several commands, defined once, and the error-to-exit-code mapping."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import MISSING
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from fastbmrag import config
from fastbmrag.declared import declared
from fastbmrag.errors import (
    EXIT_CANNOT_START,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    FastbmragError,
)
from fastbmrag.util.files import replacing, written_for
from fastbmrag.util.wording import counted, printable

__all__ = ["counted", "replacing"]  # what the commands write with, from here

F = TypeVar("F", bound=Callable[..., Any])


class FastbmragGroup(click.Group):
    """Maps every error to one line on stderr and a documented exit code: library errors to
    theirs, a path that cannot be written to 2, anything unexpected to 70 with its traceback
    in a log file. No traceback reaches the user."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            try:
                return super().invoke(ctx)
            finally:
                _flush_stdout()  # what is written there is written before the command ends
        except click.exceptions.ClickException as err:
            err.message = printable(err.message)  # type: ignore[misc]  # a file name in it
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except FastbmragError as err:
            said = err.said(lambda field: flag_of(field, ctx), command_of)
            click.echo(f"Error: {printable(said)}", err=True)
            sys.exit(err.exit_code)
        except BrokenPipeError:  # the reader of stdout went away (`export -o - | head`)
            with contextlib.suppress(OSError, ValueError):  # so that the exit's flush is quiet
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM / SIGHUP (cli.Terminated)
            by = f" by {err}" if str(err) else ""
            click.echo(
                f"Interrupted{by}: everything already committed is kept; rerun to continue.",
                err=True,
            )
            sys.exit(getattr(err, "exit_code", EXIT_INTERRUPTED))
        except OSError as err:
            if err.filename is None and err.errno in _NO_SPACE:
                stdout_failed(err)
            click.echo(f"Error: {printable(path_error(err))}", err=True)
            sys.exit(EXIT_CANNOT_START)
        except Exception as err:  # a bug: say where the traceback is, in one line
            log = config.crash_log(err)
            click.echo(
                f"Error: internal error ({type(err).__name__}: {err}); the traceback is in "
                f"{log}: please report it",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)


def command_of(name: str, args: tuple[str, ...]) -> str:
    """An operation a message advises, as the command line runs it (``fastbmrag entity IL1B``):
    its command in the registry (:mod:`fastbmrag.registry`)."""
    from fastbmrag.registry import operation

    command = operation(name).command
    words = [command[0] if command else name, *map(shlex.quote, args)]
    return f"`fastbmrag {' '.join(words)}`"


def flag_of(field: str, ctx: click.Context | None = None) -> str:
    """The flag that gives the option ``field`` (``top_k`` -> ``--top-k``): the option of a
    command named as the field (each is named so, and a name means one flag across the
    commands), else the field itself."""
    ctx = ctx or click.get_current_context()
    for command in _commands(ctx.find_root().command, ctx):
        for param in command.params:
            if param.name == field and isinstance(param, click.Option):
                return max(param.opts, key=len)
    return field


def _commands(group: click.Command, ctx: click.Context) -> Iterator[click.Command]:
    """Every command under ``group``, its subgroups' included."""
    if not isinstance(group, click.Group):
        yield group
        return
    for name in group.list_commands(ctx):
        if (command := group.get_command(ctx, name)) is not None:
            yield from _commands(command, ctx)


class _Ascii(click.ParamType):
    """A number as a command line writes one, in ASCII digits: Python's ``int`` and ``float``
    also read Arabic-Indic ("٣") and full-width ("３") digits, which no option means."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number written in ASCII digits", param, ctx)
        return super().convert(value, param, ctx)


class IntRange(_Ascii, click.IntRange):
    """:class:`click.IntRange` in ASCII digits."""


class FloatRange(_Ascii, click.FloatRange):
    """:class:`click.FloatRange` in ASCII digits."""


class _Int(_Ascii, click.types.IntParamType):
    """:data:`click.INT` in ASCII digits."""


class _Float(_Ascii, click.types.FloatParamType):
    """:data:`click.FLOAT` in ASCII digits."""


_KINDS = {"int": _Int(), "float": _Float(), "str": click.STRING}


def declared_options(options: Any) -> Callable[[F], F]:
    """The command-line options of an options dataclass (:mod:`fastbmrag.declared`): one per
    field whose declaration gives a flag, its parameter named as the field, with the field's
    default, help and environment variable; an argument per positional field, in order. The range is the dataclass's to check, so that a
    value out of it is refused in the same words at every door."""

    def apply(f: F) -> F:
        for fld, opt in reversed(list(declared(options))):
            if not opt.cli:
                continue
            if opt.argument:  # a positional parameter
                f = click.argument(fld.name)(f)
                continue
            names = [n for n in (opt.short, opt.flag) if n]
            kind = str(fld.type).split(" | ")[0]
            if kind == "bool":
                f = click.option(*names, fld.name, is_flag=True, default=False,
                                 help=opt.help)(f)  # fmt: skip
                continue
            many = kind.startswith("tuple")
            default = None if many or fld.default is MISSING else fld.default
            f = click.option(
                *names, fld.name, multiple=many, envvar=opt.env or None,
                type=click.Choice(opt.choices) if opt.choices else _KINDS.get(kind, click.STRING),
                default=default, show_default=default is not None and not opt.env,
                help=opt.described(),
            )(f)  # fmt: skip
        return f

    return apply


def declared_values(options: Any, given: dict[str, Any]) -> dict[str, Any]:
    """The fields of an options dataclass from a command's parsed options: a negating flag
    given turns its field off; one not given leaves the field's default."""
    out: dict[str, Any] = {}
    for fld, opt in declared(options):
        if not opt.cli or fld.name not in given:
            continue
        if opt.negate:
            if given[fld.name]:
                out[fld.name] = False
        else:
            out[fld.name] = given[fld.name]
    return out


def _flush_stdout() -> None:
    """Standard output flushed before the command ends: a full disk or a device that takes
    nothing (/dev/full) under it is one line and exit 2, not a run that seems to have written
    its output."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        stdout_failed(err)


# A write that failed for want of space, of no named file (files the commands write name
# themselves: util.files.replacing): standard output's, as click writes and flushes it.
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def stdout_failed(err: OSError) -> NoReturn:
    """One line on stderr for standard output that takes nothing more, and exit 2."""
    with contextlib.suppress(OSError, ValueError):  # the exit's own flush stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    click.echo(f"Error: Cannot write standard output: {err.strerror or err}", err=True)
    sys.exit(EXIT_CANNOT_START)


def path_error(err: OSError) -> str:
    """One line for a path that cannot be used: the path, the reason and the fix."""
    name = err.filename or ""
    path = written_for(Path(str(name)))
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        reason += " (a folder on the way is missing or is a file)"
    return (
        f"Cannot create or write {path or 'a file'}: {reason}. Choose a writable place "
        f"(--working-dir or {config.ENV_HOME} for collections and caches, -o for output files, "
        "--log-file for logs) or fix its permissions"
    )


def working_dir_option(f: F) -> F:
    return click.option(
        "--working-dir",
        type=click.Path(file_okay=False),
        default=None,
        help=f"Directory holding collections and state [env {config.ENV_HOME}, default {config.DEFAULT_HOME}].",
    )(f)


def collection_option(
    required: bool = False, default: str = "the only collection there is"
) -> Callable[[F], F]:
    """``-c/--collection``; optional ones say what they do without it (``default``)."""
    # No explicit default value: Click 8.3 and later count `default=None` as a value given, so
    # a required option would go unchecked. Missing and optional, it is None all the same.
    more = "" if required else f"; default: {default}"

    def deco(f: F) -> F:
        return click.option(
            "-c",
            "--collection",
            envvar=config.ENV_COLLECTION,
            required=required,
            help=f"Collection name [env {config.ENV_COLLECTION}{more}].",
        )(f)

    return deco


def qdrant_options(f: F) -> F:
    f = click.option(
        "--qdrant-api-key",
        default=None,
        help=f"API key for the Qdrant server [env {config.ENV_QDRANT_API_KEY}].",
    )(f)
    return click.option(
        "--qdrant-url",
        default=None,
        help=f"Use a Qdrant server/cluster instead of the embedded store [env {config.ENV_QDRANT_URL}].",
    )(f)


def quiet_option(f: F) -> F:
    return click.option(
        "-q", "--quiet", is_flag=True, help="Only errors and a one-line summary (for cron)."
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout.")(
        f
    )


# --- LLM options (shared by update, sync, query) ----------------------------------------------


def llm_options(f: F) -> F:
    """--llm-backend, --ollama-host, --llm-model, --embed-model, --concurrency, --embed-batch,
    --num-ctx, --no-cache, --openai-base-url, --openai-api-key."""
    decorators = [
        click.option(
            "--llm-backend",
            type=click.Choice(["ollama", "openai"]),
            default="ollama",
            show_default=True,
            help="Model server: Ollama, or an OpenAI-compatible server (vLLM, llama.cpp, LM Studio).",
        ),
        click.option(
            "--ollama-host",
            default=None,
            help=f"Ollama server [env {config.ENV_OLLAMA_HOST}, default {config.DEFAULT_OLLAMA_HOST}].",
        ),
        click.option(
            "--llm-model",
            default=None,
            envvar=config.ENV_LLM_MODEL,
            help=f"Chat model [env {config.ENV_LLM_MODEL}, default {config.DEFAULT_LLM_MODEL}].",
        ),
        click.option(
            "--embed-model",
            default=None,
            envvar=config.ENV_EMBED_MODEL,
            help=f"Embedding model [env {config.ENV_EMBED_MODEL}, default {config.DEFAULT_EMBED_MODEL}].",
        ),
        *(
            click.option(f"--{f.name.replace('_', '-')}", type=_Int(), default=f.default,
                         show_default=True, help=opt.described())  # fmt: skip
            for f, opt in declared(config.Settings)
            if f.name in ("concurrency", "embed_batch", "num_ctx")
        ),
        click.option(
            "--no-cache",
            "use_cache",
            is_flag=True,
            flag_value=False,
            default=True,
            help="Do not read or write the LLM response cache (<working-dir>/llm_cache.sqlite).",
        ),
        click.option(
            "--openai-base-url",
            default=None,
            envvar="OPENAI_BASE_URL",
            help="OpenAI-compatible server, e.g. http://localhost:8000/v1 [env OPENAI_BASE_URL].",
        ),
        click.option(
            "--openai-api-key",
            default=None,
            envvar="OPENAI_API_KEY",
            help="API key for the OpenAI-compatible server [env OPENAI_API_KEY].",
        ),
    ]
    for deco in reversed(decorators):
        f = deco(f)
    return f


# --- logging for long runs (update, sync) -----------------------------------------------------


class _LogFile(logging.FileHandler):
    """``--log-file``: a line it cannot write (a full disk) stops the command with one line
    naming the file, not a traceback per line."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        err = sys.exc_info()[1]
        if isinstance(err, OSError):
            raise OSError(err.errno, err.strerror, self.baseFilename) from err
        super().handleError(record)


@contextlib.contextmanager
def command_logging(log_file: str | None, quiet: bool) -> Iterator[logging.Logger]:
    """stderr: warnings (errors only with --quiet); ``--log-file``: INFO and up, appended.

    Restores the ``fastbmrag`` logger afterwards and closes the file.
    """
    logger = logging.getLogger("fastbmrag")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    stderr_level = max(logging.getLogger().getEffectiveLevel(), logging.WARNING)
    if quiet:
        stderr_level = logging.ERROR
    opened: list[logging.Handler] = []
    try:
        if log_file:
            fh = _LogFile(log_file, encoding="utf-8")
            fh.setLevel(logging.INFO)
            fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            err = logging.StreamHandler(sys.stderr)
            err.setLevel(stderr_level)
            err.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            opened += [fh, err]
            logger.handlers = [fh, err]
            logger.propagate = False
            logger.setLevel(logging.INFO)
        elif quiet:
            logger.setLevel(logging.ERROR)
        yield logger
    finally:
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        logger.handlers = saved[2]
        for h in opened:
            with contextlib.suppress(OSError):  # a write it failed has stopped the command
                h.close()


def index_options(update_options: Any) -> Callable[[F], F]:
    """Everything that shapes indexing, shared by `update` and `sync`: the declared fields of
    ``update_options`` (:class:`fastbmrag.index.UpdateOptions`, passed in so that a command
    that does not index loads none of it), then the settings that shape a run."""

    def apply(f: F) -> F:
        decorators = [
            declared_options(update_options),
            click.option(
                "--no-normalize",
                "normalize",
                is_flag=True,
                flag_value=False,
                default=True,
                help="Keep entity names as the model wrote them (no HGNC/MeSH ids).",
            ),
            click.option(
                "--num-predict",
                type=_Int(),
                default=None,
                envvar=config.ENV_NUM_PREDICT,
                help=f"Cap on the tokens the model writes per draft / refine call [env "
                f"{config.ENV_NUM_PREDICT}, default {config.DEFAULT_DRAFT_NUM_PREDICT} / {config.DEFAULT_REFINE_NUM_PREDICT}]."
                + config.setting_span("num_predict"),
            ),
            llm_options,
            qdrant_options,
            working_dir_option,
            quiet_option,
            json_option,
            click.option(
                "--log-file",
                type=click.Path(dir_okay=False),
                default=None,
                help="Also append log lines (warnings, failures, the summary) to this file.",
            ),
        ]
        for deco in reversed(decorators):
            f = deco(f)
        return f

    return apply


def strict_exit(code: int, unusable: int, strict: bool) -> int:
    """``--strict``: input skipped as unusable (not a citation without an abstract) makes a
    successful run exit 1, and says so."""
    if strict and unusable and code == 0:
        click.echo(f"--strict: {unusable:,} input rows or records unusable: exit 1", err=True)
        return 1
    return code


def workspace(**opts: Any) -> Any:
    """The library object a command works with, from its parsed options."""
    from fastbmrag import RAG

    return RAG.from_options(opts)
