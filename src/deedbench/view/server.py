"""Serving the viewer: a socket bound here, uvicorn answering on it until Ctrl-C.

The socket is bound and listening before uvicorn starts, so port 0 gives a free port
whose number is printed when a browser can already connect; a port in use is a `ServeError`.
Starlette and uvicorn were chosen as the smallest well-kept pieces made for this: an
ASGI toolkit that runs plain functions in a thread pool (the store is read with
blocking SQLite calls, which never stall the event loop), and the reference ASGI
server, with graceful shutdown on Ctrl-C. They are the optional `view` extra, imported
only by `deedbench view`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

import uvicorn

from deedbench.reports.cost import PriceTable
from deedbench.view.app import create_app
from deedbench.view.source import StoreReader

__all__ = ["ServeError", "is_loopback", "serve"]


class ServeError(Exception):
    """The server cannot start (a port in use, a host it cannot bind), said in one line."""


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach `host`: localhost or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    reader: StoreReader,
    prices: PriceTable,
    host: str,
    port: int,
    ready: Callable[[str], None],
) -> None:
    """Serve the store until interrupted; `ready` gets the URL once it is listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    hosts = ["127.0.0.1", "localhost"] if is_loopback(host) else ["*"]
    if is_loopback(host) and host not in hosts:
        hosts.append(host)
    app, catalog = create_app(reader, prices, hosts)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    ready(f"http://{shown}:{bound}/")
    try:
        server.run(sockets=[sock])
    finally:
        catalog.close()
        sock.close()
