"""`deedbench view`: serve the run store to a local browser, live, read-only."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Annotated

import typer

from deedbench.cli.app import (
    PricesOption,
    StoreOption,
    app,
    console,
    errors,
    existing_store,
    fail,
    load_prices,
    warn,
)
from deedbench.printable import safe

__all__ = ["INSTALL_HINT", "view"]

INSTALL_HINT = "pip install 'deedbench[view]'"


@app.command()
def view(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = 7575,
    host: Annotated[
        str, typer.Option(help="Address to listen on; other than loopback needs --expose.")
    ] = "127.0.0.1",
    expose: Annotated[
        bool,
        typer.Option(
            "--expose",
            help="Allow a --host other machines can reach: they can read every transcript.",
        ),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="<host>",
            help="A name (or address) browsers may reach the viewer by, beyond this "
            "machine's own; repeat for more; *.example.com for every name under it.",
        ),
    ] = None,
    figures_cache: Annotated[
        Path | None,
        typer.Option(
            metavar="<file>",
            help="File that keeps computed figures between starts "
            "[default: $XDG_CACHE_HOME or ~/.cache, deedbench/view-summaries.db].",
        ),
    ] = None,
    prices: PricesOption = None,
    store: StoreOption = None,
) -> None:
    """Serve the store's runs to a browser, updated while runs are written (read-only)."""
    if find_spec("starlette") is None or find_spec("uvicorn") is None:
        raise fail(f"deedbench view needs the view extra; install it with: {INSTALL_HINT}")
    from deedbench.errors import StoreError
    from deedbench.view import ServeError, StoreReader, serve
    from deedbench.view.server import allowed_hosts, is_loopback
    from deedbench.view.summaries import SummaryCache, default_cache

    try:
        hosts = allowed_hosts(host, allowed_host or [])
    except ValueError as exc:
        raise fail(f"--allowed-host {exc}") from None
    if not is_loopback(host):
        if not expose:
            raise fail(
                f"--host {host} lets other machines read every transcript in the store; "
                "add --expose to serve it there anyway"
            )
        errors.print(
            f"[yellow]warning:[/yellow] serving on {safe(host)}: anyone who can reach this "
            "address can read every run and transcript in the store (there is no login). "
            f"Requests must name it as one of: {safe(', '.join(hosts))} (add others with "
            "--allowed-host)",
            highlight=False,
            markup=True,
            soft_wrap=True,
        )
    path = existing_store(store)
    table = load_prices(prices)
    try:
        reader = StoreReader(path, on_corrupt=warn)
    except StoreError as exc:
        raise fail(str(exc)) from None

    def ready(url: str) -> None:
        console.print(
            f"deedbench view: serving {path} at {url} (read-only; Ctrl-C to stop)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        console.file.flush()

    cache = SummaryCache(figures_cache or default_cache(), on_problem=warn)
    try:
        serve(reader, table, host, port, ready, hosts=hosts, cache=cache)
    except ServeError as exc:
        raise fail(str(exc)) from None
