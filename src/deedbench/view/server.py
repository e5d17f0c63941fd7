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
import re
import socket
from collections.abc import Callable, Sequence
from contextlib import suppress

import uvicorn

from deedbench.reports.cost import PriceTable
from deedbench.view.app import create_app
from deedbench.view.source import StoreReader
from deedbench.view.summaries import SummaryCache

__all__ = ["ServeError", "allowed_hosts", "host_name", "is_loopback", "serve"]

_NAME = re.compile(
    r"(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?"
)


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


def host_name(text: str) -> str:
    """A name or address as Host headers give it (lower case, an IPv6 address in
    brackets); `*.example.com` stands for every name under example.com. ValueError for
    anything else (a port, a URL, `*` alone)."""
    name = text.strip().lower()
    with suppress(ValueError):
        address = ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
        return f"[{address}]" if address.version == 6 else str(address)
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"{text!r} is not a host name or address (give one without port or scheme; "
            "*.example.com for every name under example.com)"
        )
    return name


def allowed_hosts(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The names requests may give in their Host header; any other gets a 400, so a page
    elsewhere that rebinds its own name to this server's address (DNS rebinding) reads
    nothing. On loopback: 127.0.0.1, localhost and the address bound. Exposed, also this
    machine's names (host name, fully qualified name, localhost forms) and the addresses
    they resolve to. And, either way, `extra` (`--allowed-host`)."""
    names = {"127.0.0.1", "localhost", host}
    if not is_loopback(host):
        machine = {socket.gethostname(), socket.getfqdn()}
        names |= {"::1", "localhost.localdomain", *machine}
        for name in machine:
            with suppress(OSError):
                names |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    return sorted({host_name(name) for name in [*names, *extra] if name})


def serve(
    reader: StoreReader,
    prices: PriceTable,
    host: str,
    port: int,
    ready: Callable[[str], None],
    *,
    hosts: Sequence[str],
    cache: SummaryCache,
) -> None:
    """Serve the store until interrupted, to requests that name one of `hosts`; `ready`
    gets the URL once it is listening."""
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
    app, catalog = create_app(reader, prices, hosts, cache)
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
