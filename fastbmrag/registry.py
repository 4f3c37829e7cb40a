"""Every operation of fastbmrag, declared once (:data:`OPERATIONS`): the function that runs it
and the doors that offer it. The Python API's methods (:class:`fastbmrag.RAG`), the command
line's commands and the page's API endpoints are made from this table: a new operation is one
row here and one function in the package of its concern. What an operation can be told is
declared on its options (:mod:`fastbmrag.declared`), which every door reads; what it returns is
its function's result, which each door renders.

Modules are named, not imported: an operation's module is imported when it is first called, so
that ``import fastbmrag`` and ``fastbmrag --help`` stay fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: its name, the function that runs it (``module:function``; a workspace
    operation takes the workspace first), and its doors: a method of :class:`fastbmrag.RAG`
    (``method``), a command of the command line (``command``: its name and ``module:attribute``)
    and an endpoint of the page (``route``); ``options``: the dataclass that declares what it
    can be told (:mod:`fastbmrag.declared`)."""

    name: str
    run: str = ""  # "" : a command over library functions that needs no workspace
    command: tuple[str, str] | None = None
    route: str = ""  # "/api/status" (GET), "POST /api/query"
    method: bool = True
    options: str = ""  # "module:Class": its declared options, where it takes them

    def declared(self) -> Any:
        """Its options' dataclass (None where it takes none)."""
        return _resolve(self.options) if self.options else None

    def function(self) -> Any:
        """The function that runs it, imported now."""
        return _resolve(self.run)


def _resolve(where: str) -> Any:
    module, attr = where.split(":")
    return getattr(importlib.import_module(module), attr)


INDEX = "fastbmrag.index.operations"
QUERY = "fastbmrag.query.command"
EXPLORE = "fastbmrag.explore.commands"
ADMIN = "fastbmrag.store.admin"
UPDATE = "fastbmrag.index.options:UpdateOptions"
ASKED = "fastbmrag.query.options:QueryOptions"  # the edges' filters, and what a question is told
QUESTION = "fastbmrag.query.options:AskOptions"  # a question and what it is told

OPERATIONS = (  # in the order the page's endpoints are listed
    # indexing: papers in, PubMed fetched and synced
    Operation("insert_paper", f"{INDEX}:insert_paper", ("update", "fastbmrag.cli.update:update"),
              options=UPDATE),
    Operation("fetch", f"{INDEX}:fetch", ("fetch", "fastbmrag.cli.fetch:fetch")),
    Operation("sync", f"{INDEX}:sync", ("sync", "fastbmrag.cli.fetch:sync"), options=UPDATE),
    # the collection
    Operation("status", f"{ADMIN}:status", ("status", "fastbmrag.cli.status:status"),
              route="/api/status", options=f"{ADMIN}:StatusOptions"),
    Operation("update_running", f"{ADMIN}:update_running"),
    Operation("check_store", f"{ADMIN}:check_store"),
    Operation("delete", f"{ADMIN}:delete", ("delete", "fastbmrag.cli.delete:delete")),
    Operation("export", f"{ADMIN}:export", ("export", "fastbmrag.cli.export:export"),
              options=f"{ADMIN}:ExportOptions"),
    Operation("overview", f"{EXPLORE}:overview", route="/api/overview"),
    Operation("find_entities", f"{EXPLORE}:find_entities", route="/api/entities",
              options=f"{EXPLORE}:FindOptions"),
    # questions
    Operation("query", f"{QUERY}:ask", ("query", "fastbmrag.cli.query:query"),
              route="POST /api/query", options=QUESTION),
    # the graph itself, no model call
    Operation("node_keys", f"{EXPLORE}:node_keys"),
    Operation("entity", f"{EXPLORE}:entity", ("entity", "fastbmrag.cli.graph:entity"),
              route="/api/entity", options=f"{EXPLORE}:EntityOptions"),
    Operation("narrower", f"{EXPLORE}:narrower"),
    Operation("edges", f"{EXPLORE}:edges", options=ASKED),
    Operation("neighbours", f"{EXPLORE}:neighbours", route="/api/neighbours",
              options=f"{EXPLORE}:NeighbourOptions"),
    Operation("graph", f"{EXPLORE}:graph", options=ASKED),
    Operation("path", f"{EXPLORE}:path", ("path", "fastbmrag.cli.graph:path"),
              route="/api/path", options=f"{EXPLORE}:PathOptions"),
    Operation("contradictions", f"{EXPLORE}:contradictions",
              ("contradictions", "fastbmrag.cli.graph:contradictions"),
              route="/api/contradictions", options=f"{EXPLORE}:ContradictionOptions"),
    Operation("digest", f"{EXPLORE}:digest", ("digest", "fastbmrag.cli.digest:digest"),
              route="/api/digest", options=f"{EXPLORE}:DigestOptions"),
    Operation("watch", f"{EXPLORE}:watch", ("watch", "fastbmrag.cli.digest:watch")),
    Operation("unwatch", f"{EXPLORE}:unwatch"),
    Operation("watched", f"{EXPLORE}:watched"),
    # commands over library functions that need no collection
    Operation("convert", command=("convert", "fastbmrag.cli.convert:convert"), method=False),
    Operation("normalize", command=("normalize", "fastbmrag.cli.normalize:normalize"),
              method=False),
    Operation("vocab", command=("vocab", "fastbmrag.cli.vocab:vocab"), method=False),
    Operation("serve", command=("serve", "fastbmrag.cli.serve:serve"), method=False),
)  # fmt: skip

# command name -> "module:attribute" of its click command
COMMANDS = {op.command[0]: op.command[1] for op in OPERATIONS if op.command}


def operation(name: str) -> Operation:
    """The operation of this name."""
    return next(op for op in OPERATIONS if op.name == name)
