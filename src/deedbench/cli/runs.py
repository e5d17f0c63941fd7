"""`deedbench runs`: the store's runs, newest first, read without a transcript.

Counts come from the episode summaries' index and token usage is summed by SQLite from the
summaries (`RunStore.counts`, `RunStore.call_usage`), so listing a store of 100,000
episodes parses no record.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import (
    PricesOption,
    StoreOption,
    app,
    console,
    existing_store,
    load_prices,
    open_store,
)
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.engine import RunConfig, Usage
    from deedbench.reports.cost import PriceTable

__all__ = ["run_cost", "runs"]


@app.command()
def runs(
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
    benchmark: Annotated[
        str | None, typer.Option(help="Only runs of this benchmark (e.g. tac).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="Only runs of this agent (e.g. baseline/random).")
    ] = None,
    prices: PricesOption = None,
    store: StoreOption = None,
) -> None:
    """List the store's runs, newest first: agent, conditions, episodes and cost."""
    table = load_prices(prices)
    with open_store(existing_store(store)) as stored:
        counts = stored.counts()
        usage = stored.call_usage()
        rows = [
            _row(config, counts.get(config.run_id, {}), usage.get(config.run_id, []), table)
            for config in stored.configs()
            if (benchmark is None or config.benchmark == benchmark)
            and (agent is None or config.agent == agent)
        ]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    if not rows:
        only = " matching the filters" if benchmark or agent else ""
        console.print(f"no runs{only} in {existing_store(store)}", highlight=False, markup=False)
        return
    _render(rows)


def run_cost(
    config: RunConfig, calls: list[tuple[str, bool, Usage]], prices: PriceTable
) -> float | None:
    """USD the run's billed model calls cost (0 without model calls); None when a model
    has no price (unknown, never zero)."""
    from deedbench.reports.cost import role_models

    models = role_models(config)
    cost = 0.0
    for role, billed, usage in calls:
        price = prices.find(models.get(role, "unknown"))
        if price is None:
            return None
        if billed:
            cost += price.cost(usage)
    return cost


def _row(
    config: RunConfig,
    counts: dict[str, int],
    calls: list[tuple[str, bool, Usage]],
    prices: PriceTable,
) -> dict[str, Any]:
    return {
        "run_id": config.run_id,
        "benchmark": config.benchmark,
        "agent": config.agent,
        "conditions": config.conditions,
        "epochs": config.epochs,
        "scored": counts.get("scored", 0),
        "errors": counts.get("error", 0),
        "planned": config.planned_episodes,
        "created_at": config.created_at,
        "model_calls": sum(usage.calls for _, _, usage in calls),
        "cost_usd": run_cost(config, calls, prices),
    }


def _render(rows: list[dict[str, Any]]) -> None:
    from rich import box
    from rich.table import Table

    from deedbench.reports.terminal import print_table

    table = Table(title="Runs, newest first", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("run", "benchmark", "agent", "conditions"):
        table.add_column(column)
    for column in ("epochs", "scored", "errors", "planned"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    for row in rows:
        cost = row["cost_usd"]
        table.add_row(
            safe(row["run_id"]),
            safe(row["benchmark"]),
            safe(row["agent"]),
            safe(", ".join(row["conditions"])),
            str(row["epochs"]),
            f"{row['scored']:,}",
            f"{row['errors']:,}",
            f"{row['planned']:,}",
            safe(row["created_at"][:19].replace("T", " ")),
            "unknown" if cost is None else (f"${cost:.4f}" if row["model_calls"] else "-"),
        )
    print_table(console, table)
    console.print(
        "details: deedbench report RUN  (one episode: deedbench show RUN SAMPLE)",
        highlight=False,
        markup=False,
    )
