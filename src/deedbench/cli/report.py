"""`deedbench report`: a run's figures as tables or JSON."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from deedbench.cli.app import (
    PricesOption,
    StoreOption,
    app,
    console,
    fail,
    load_prices,
    resolve_store,
)


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="The run to report on.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    prices: PricesOption = None,
    store: StoreOption = None,
) -> None:
    """Show a run's rates: overall and by each grouping, with intervals and chance."""
    from deedbench.engine import RunStore, StoreError
    from deedbench.reports import render_summary, summarize

    path = resolve_store(store)
    if not path.exists():
        raise fail(f"no run store at {path}")
    with RunStore(path) as runs:
        try:
            config = runs.require_run(run_id)
        except StoreError as exc:
            raise fail(str(exc)) from None
        summary = summarize(config, runs.episodes(run_id), load_prices(prices))
    if as_json:
        sys.stdout.write(summary.model_dump_json(indent=2) + "\n")
    else:
        render_summary(summary, console)
