"""`fastbmrag serve`: a local web page to ask questions, read cited answers and explore the graph.

An ASGI app (Starlette) over the library object :class:`fastbmrag.RAG`: a JSON API and one
page of plain HTML, CSS and JavaScript (cytoscape.js ships inside the package: the page needs no
internet). It only reads the collection. With the embedded store, while an update holds the
shard, the API answers 503 with ``retry`` and the page says so and tries again.

    GET  /                       the page
    GET  /api/status             what the collection holds (``max_failed``)
    GET  /api/options            the query options the page's filters offer: label, input,
                                 default, range or choices, help (QueryOptions' declarations)
    GET  /api/overview           the start page: counts, last update, the most connected genes,
                                 diseases and chemicals, recent papers, example questions
    GET  /api/entities?text=IL1&limit=10   completion: entities by name or id prefix
    POST /api/query              {"question": ..., and any option of `fastbmrag query` by its
                                  QueryOptions name: "entities": [...], "since": 2015, ...}
    GET  /api/entity?name=IL1B   an entity's card (``&findings_only=true`` here and on path,
                                 contradictions and digest: only what the papers found;
                                 ``&designs=rct,meta-analysis&organisms=human`` here and on
                                 path and contradictions: only these papers)
    GET  /api/neighbours?name=IL1B&limit=30   the edges touching an entity
    GET  /api/path?start=A&end=B&max_hops=3
    GET  /api/contradictions?entity=IL1B
    GET  /api/digest?since=last  what the runs since then changed (`fastbmrag digest --format json`)

The API's endpoints are the registry's (:mod:`fastbmrag.registry`): each runs one operation of
the workspace, a GET's query string read against the operation's declared options
and a POST's JSON body alike (:func:`arguments`: the fields' names and types; the operation
checks their values, as at every door).

Errors are JSON, ``{"error": ...}``: 400 for a bad parameter (named by its field), a POST that
is not ``application/json`` or a body over 64 KB, 404 / 405 for a path or method the API does not
have, 503 while the store is held or the model server is down. Served by `fastbmrag serve`, it
answers only Host headers naming this machine (400 otherwise) unless ``--public``.
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin, get_type_hints

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from fastbmrag import config
from fastbmrag.declared import declared
from fastbmrag.errors import (
    FastbmragError,
    InputError,
    LLMUnavailable,
    ModelNotFound,
    StoreBusy,
)
from fastbmrag.papers.model import without_controls
from fastbmrag.query import QueryOptions
from fastbmrag.registry import OPERATIONS, Operation

if TYPE_CHECKING:
    from fastbmrag.api import RAG

STATIC = Path(__file__).parent / "static"


INPUTS = {list: "list", bool: "flag", int: "number", float: "number"}  # a value's kind -> input


def query_form() -> dict[str, dict[str, Any]]:
    """What the page's filters may take, from :class:`QueryOptions`' declarations: each
    option a request may set, with its label and input (``list``, ``number``, ``choice``,
    ``flag``, ``text``), default, range (``low``/``high``, ``whole``) or ``choices`` and help:
    the page builds its form from this, so that it offers what the library accepts."""
    out: dict[str, dict[str, Any]] = {}
    defaults = QueryOptions()
    hints = get_type_hints(QueryOptions)
    for f, opt in declared(QueryOptions):
        if opt.page:
            value = getattr(defaults, f.name)
            kind = _kind(hints[f.name])
            kind = list if get_origin(kind) is tuple else kind
            out[f.name] = {
                "label": opt.label or f.name.replace("_", " ").capitalize(),
                "input": "choice" if opt.choices and kind is str else INPUTS.get(kind, "text"),
                "default": list(value) if isinstance(value, tuple) else value,
                "low": opt.low, "high": opt.high, "whole": opt.whole,
                "choices": list(opt.choices), "help": opt.help,
            }  # fmt: skip
    return out
MAX_TEXT = 1000  # characters of a question or a name


def _text(value: Any, name: str) -> str:
    """A non-empty text of at most MAX_TEXT characters; what is not UTF-8 in it (a JSON escape
    of a lone surrogate) becomes U+FFFD."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise InputError(f"'{name}' must be a non-empty text of at most {MAX_TEXT} characters")
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace").strip()


MAX_BODY = 64 * 1024  # bytes of a request body: a question and its options


async def json_body(request: Request) -> Any:
    """The request's JSON body: ``application/json`` (a cross-site form cannot send it without
    the browser asking first), at most :data:`MAX_BODY` bytes (InputError, or ValueError for a
    body that is no JSON)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise InputError("The request body must be JSON, sent as Content-Type: application/json")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise InputError(f"The request body is over {MAX_BODY // 1024} KB: send a question")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise InputError(f"The request body is over {MAX_BODY // 1024} KB: send a question")
    if _depth(body) > MAX_DEPTH:  # a question and its options nest 2 deep; the parser
        raise InputError(  # would follow it as far as the interpreter's stack happens to allow
            "The request body nests too deeply: send a JSON object of a question and its options"
        )
    return json.loads(body)


MAX_DEPTH = 32  # arrays and objects a request body may nest
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _depth(body: bytes) -> int:
    """How deep a JSON text's arrays and objects nest (brackets in strings left out)."""
    outside = re.sub(rb'"(?:\\.|[^"\\])*"', b"", body)
    brackets = outside.translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for c in brackets:
        depth += 1 if c in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


class JSON(JSONResponse):
    """The API's answers, every text without control characters (a collection built before
    they were removed from papers may hold a bidi override, which would reorder the page)."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, default=_plain)
        return without_controls(text).encode("utf-8")  # raw in JSON: only bidi ones remain


def _plain(value: Any) -> Any:
    """What JSON writes of a value it has no form for: a query's result, its layout; a numpy
    number, its value."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value.item() if hasattr(value, "item") else str(value)


def arguments(options: Any, given: dict[str, Any], where: str, *, texts: bool) -> dict[str, Any]:
    """An operation's arguments from a request, read against its declared ``options`` (None:
    it takes none): a GET's query string, each parameter's texts (``texts``: read as the type
    of its field, as the command line reads its flags), or a POST's JSON object. A parameter
    the operation does not declare, or does not take from a request, is refused, as is a
    required one left out: nothing is ignored, so that a filter the operation does not take
    cannot pass for one it applied. The operation checks the values, in the words of every
    door; here each text is held to :data:`MAX_TEXT` characters."""
    taken = {f.name: (f, opt) for f, opt in declared(options) if opt.page} if options else {}
    unknown = sorted(set(given) - set(taken))
    if unknown:
        takes = f"it takes {', '.join(taken)}" if taken else "it takes no parameter"
        raise InputError(f"Unknown parameter(s) of {where}: {', '.join(unknown)}; {takes}")
    hints = get_type_hints(options) if options else {}
    out: dict[str, Any] = {}
    for name, (f, opt) in taken.items():
        value = given.get(name)
        if texts:
            raws = [r for r in value or () if r != ""]
            value = _read(raws, name, _kind(hints[name])) if raws else None
        if value not in (None, "", [], ()):
            out[name] = _texts(value, name)
        elif f.default is MISSING and f.default_factory is MISSING:
            raise InputError(f"'{name}' is required: {opt.help}")
    return out


def _kind(hint: Any) -> Any:
    """A field's type, None aside: ``int | None`` -> int."""
    if type(None) in get_args(hint):
        return next(a for a in get_args(hint) if a is not type(None))
    return hint


def _read(raws: list[str], name: str, kind: Any) -> Any:
    """A query parameter's texts as its field's type: a list (repeated or comma-separated),
    true or false, a whole number, a number (a text that is none is left to the operation,
    which refuses it in the words of every door) or a text."""
    if get_origin(kind) is tuple:
        return tuple(v.strip() for raw in raws for v in raw.split(",") if v.strip())
    raw = raws[-1]
    if kind is bool and raw in ("true", "false"):
        return raw == "true"
    if kind in (int, float):
        try:
            return kind(raw)
        except ValueError:  # the operation refuses it as the Python API would: "got 'abc'"
            return raw
    return raw


def _texts(value: Any, name: str) -> Any:
    """``value`` with each of its texts (itself, or a list's) held to :data:`MAX_TEXT`."""
    if isinstance(value, str):
        return _text(value, name)
    if isinstance(value, list | tuple):
        return [_text(v, name) if isinstance(v, str) else v for v in value]
    return value


def said(err: FastbmragError) -> str:
    """The message of ``err``, an option it names quoted as the API names it: ``'top_k'``; an
    operation it advises as the page offers it (an entity's card: a search on the page); the
    true/false a field takes spelled as JSON and a query string spell it."""
    text = err.said(lambda field: f"'{field}'", _on_the_page)
    return text.replace(" must be True or False, got ", " must be true or false, got ")


def _on_the_page(name: str, args: tuple[str, ...]) -> str:
    if name == "entity" and args:
        return f"a search for {args[0]!r} on this page"
    return f"'{name}'"


def create_app(rag: RAG, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over ``rag`` (opened for reading on each request). ``allowed_hosts``: the Host
    headers it answers (another site's name resolved to this machine, DNS rebinding, gets 400);
    None: any."""

    async def call(fn: Any, *args: Any, **kwargs: Any) -> Response:
        try:
            return JSON(await run_in_threadpool(fn, *args, **kwargs))
        except StoreBusy as err:  # an update holds the store: say which, since when, how far
            running = await run_in_threadpool(rag.update_running)
            error = f"{running}; the page asks again when it is done" if running else said(err)
            return JSON({"error": error, "retry": True}, status_code=503)
        except (LLMUnavailable, ModelNotFound) as err:
            return JSON({"error": said(err), "retry": False}, status_code=503)
        except FastbmragError as err:
            return JSON({"error": said(err)}, status_code=400)
        except Exception as err:  # a bug: JSON still, the traceback in the crash log
            log = config.crash_log(err)
            return JSON(
                {"error": f"internal error ({type(err).__name__}); the traceback is in {log}"},
                status_code=500,
            )

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def options(request: Request) -> Response:
        return JSON(query_form())

    def endpoint(op: Operation) -> Any:
        method = getattr(rag, op.name)
        options = op.declared()

        async def handle(request: Request) -> Response:
            where = request.url.path
            try:
                if request.method == "POST":  # the operation's parameters, as a JSON object
                    body = await json_body(request)
                    if not isinstance(body, dict):
                        raise InputError(
                            f"The request body must be a JSON object of the parameters of {where}"
                        )
                    values = arguments(options, body, where, texts=False)
                else:
                    query = request.query_params
                    given = {name: query.getlist(name) for name in query}
                    values = arguments(options, given, where, texts=True)
            except (ValueError, InputError) as err:
                message = str(err) if isinstance(err, InputError) else "The body is not JSON"
                return JSON({"error": message}, status_code=400)
            return await call(method, **values)

        return handle

    api = [
        Route(path, endpoint(op), methods=[method])
        for op in OPERATIONS if op.route
        for method, path in [op.route.split(" ") if " " in op.route else ("GET", op.route)]
    ]  # fmt: skip
    api.append(Route("/api/options", options))

    async def http_error(request: Request, exc: Exception) -> Response:
        """An unknown API path or method answers JSON too, naming what there is."""
        assert isinstance(exc, HTTPException)
        where = request.url.path
        if not where.startswith("/api/"):
            return PlainTextResponse(exc.detail, exc.status_code, exc.headers)
        if exc.status_code == 404:
            known = ", ".join(r.path for r in api)
            error = f"No API endpoint {where}: there are {known}"
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            error = f"{request.method} is not allowed on {where}: use {allowed}"
        else:
            error = exc.detail
        return JSON({"error": error}, exc.status_code, exc.headers)

    hosts = (
        [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []
    )
    return Starlette(
        routes=[
            Route("/", page),
            *api,
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=hosts,
        exception_handlers={HTTPException: http_error},
    )
