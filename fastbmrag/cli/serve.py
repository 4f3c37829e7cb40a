"""`fastbmrag serve`: the local web page over a collection."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import click

from fastbmrag.cli.common import IntRange, collection_option, qdrant_options, working_dir_option
from fastbmrag.errors import ConfigError


def is_local(host: str) -> bool:
    """Whether ``host`` binds to this machine only (loopback)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@collection_option()
@working_dir_option
@qdrant_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--public",
    is_flag=True,
    help="Allow binding to an address other people can reach (the page has no authentication).",
)
def serve(host: str, port: int, public: bool, **opts: Any) -> None:
    """Serve a page to ask questions, read cited answers and explore the graph, on this
    machine (read-only; the collection can be updated meanwhile with a Qdrant server, or
    between updates with the embedded store).

    \b
    Example:
      fastbmrag serve -c endometriosis            # then open http://127.0.0.1:8000
    """
    if not is_local(host) and not public:
        raise ConfigError(
            f"Binding to {host} would let others on the network use the page, which has no "
            "authentication: add --public if that is what you want, or keep --host 127.0.0.1"
        )
    import uvicorn

    from fastbmrag import RAG, create_app

    rag = RAG.from_options(opts)
    with rag.ledger() as coll:  # fails now, not on the first request: no such collection
        name = coll.name
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise ConfigError(
            f"Cannot serve on {host}:{port}: {err.strerror or err}: choose another --port, or "
            "stop the program that uses it"
        ) from None
    if public:
        click.echo(
            f"Warning: serving collection '{name}' on {host}:{port} to anyone who can reach it, "
            "with no authentication.",
            err=True,
        )
    click.echo(f"Serving collection '{name}' on http://{host}:{port} (Ctrl-C to stop)", err=True)
    # the names this machine answers to (a page of another site resolved here gets 400)
    hosts = None if public else [host.strip("[]"), "localhost", "127.0.0.1", "::1", "[::1]"]
    app = create_app(rag, allowed_hosts=hosts)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
