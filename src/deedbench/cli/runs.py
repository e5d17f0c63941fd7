"""`deedbench runs`: the store's runs, newest first, read without a transcript.

Counts come from the episode summaries' index, and token usage and each run's primary
rate per condition are summed by SQLite from the summaries (`RunStore.counts`,
`RunStore.call_usage`, `RunStore.scored_totals`), so listing a store of 100,000 episodes
parses no record. A run is running while its executor's heartbeat is fresh (the store's
`executing`), as the viewer tells it; else finished when every planned episode is stored,
else stopped.
"""

from __future__ import annotations

import json
import sys
from difflib import get_close_matches
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
from deedbench.engine.run_locks import executing
from deedbench.printable import safe

if TYPE_CHECKING:
    from rich.table import Table

    from deedbench.engine import RunStore
    from deedbench.records import RunConfig, Usage
    from deedbench.reports.cost import PriceTable
    from deedbench.stats import Rate

__all__ = ["WideOption", "primary_rates", "run_cost", "runs"]

# Every command that prints tables takes it: at a narrow terminal a table shows the columns
# that fit, most important first (reports.terminal.TablePrinter); --wide shows them all.
WideOption = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Show every column, those that do not fit continuing in another table "
        "(default: the most important columns that fit the terminal).",
    ),
]


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
    wide: WideOption = False,
    store: StoreOption = None,
) -> None:
    """List the store's runs, newest first: state, primary rate, agent, episodes and cost."""
    table = load_prices(prices)
    path = existing_store(store)
    with open_store(path) as stored:
        counts = stored.counts()
        usage = stored.call_usage()
        every = list(stored.configs())
        configs = [
            config
            for config in every
            if (benchmark is None or config.benchmark == benchmark)
            and (agent is None or config.agent == agent)
        ]
        live = executing(stored)
        rates = primary_rates(stored, configs)
    rows = [
        _row(
            config,
            counts.get(config.run_id, {}),
            usage.get(config.run_id, []),
            table,
            live.get(config.run_id),
            rates.get(config.run_id, {}),
        )
        for config in configs
    ]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    if not rows:
        only = " matching the filters" if benchmark or agent else ""
        near = [  # a filter naming what no run has: the nearest that one has
            f"--{flag} {found[0]}"
            for flag, given, known in (
                ("benchmark", benchmark, {c.benchmark for c in every}),
                ("agent", agent, {c.agent for c in every}),
            )
            if given
            and given not in known
            and (found := get_close_matches(given, sorted(known), n=1))
        ]
        hint = f" (did you mean {' '.join(near)}?)" if near else ""
        console.print(f"no runs{only} in {path}{hint}", highlight=False, markup=False)
        return
    command = ["deedbench runs"]
    command += [f"--benchmark {benchmark}"] if benchmark else []
    command += [f"--agent {agent}"] if agent else []
    command += [f"--store {store}"] if store else []
    _render(rows, wide=wide, command=" ".join(command))


def primary_rates(runs: RunStore, configs: list[RunConfig]) -> dict[str, dict[str, Rate]]:
    """Each run's primary rate per condition, with Wilson's interval, from the episodes
    `report` counts (scored, and those whose `given` value is 1 if the metric has one);
    the bootstrap's interval is `report`'s."""
    from deedbench.stats import rate

    rates: dict[str, dict[str, Rate]] = {}
    for config in configs:
        metric = config.report.metric(config.report.primary)
        totals = runs.scored_totals(config.run_id, metric.value, metric.given)
        found = {condition: rate(k, n) for condition, (n, k) in totals.items()}
        rates[config.run_id] = {c: found.get(c, rate(0, 0)) for c in config.conditions}
    return rates


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
    executor: str | None,
    rates: dict[str, Rate],
) -> dict[str, Any]:
    stored = sum(counts.values())
    state = (
        "running" if executor else "finished" if stored >= config.planned_episodes else "stopped"
    )
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
        "state": state,
        "executor": executor,
        "primary": config.report.primary,
        "rates": [{"condition": c, **r.model_dump()} for c, r in rates.items()],
    }


def _render(rows: list[dict[str, Any]], *, wide: bool, command: str) -> None:
    """The runs' table (state and primary rate first), what each primary rate is, and the
    commands that read a run. Where benchmark and agent do not fit in columns of their
    own, they go under the run's id."""
    from deedbench.reports.terminal import TablePrinter, print_command, say

    tables = TablePrinter(console, wide=wide)
    table, rank = _table(rows, stacked=False)
    if not (wide or tables.fits(table)):
        table, rank = _table(rows, stacked=True)
    tables.print(table, rank=rank)
    primaries: dict[str, dict[str, None]] = {}  # metric: the benchmarks it heads
    for row in rows:
        primaries.setdefault(row["primary"], {})[row["benchmark"]] = None
    heads = "; ".join(f"{', '.join(found)}: {metric}" for metric, found in primaries.items())
    say(console, f"primary rate: each run's headline metric per condition ({heads})")
    say(console, "a run's figures (the bootstrap interval too), and one episode:")
    print_command(console, "deedbench report RUN")
    print_command(console, "deedbench show RUN SAMPLE")
    tables.close(command)


def _table(rows: list[dict[str, Any]], *, stacked: bool) -> tuple[Table, list[int]]:
    """The runs' table and its columns' rank (state, primary rate, agent, benchmark,
    episodes, errors, cost, created, epochs); `stacked`: benchmark and agent on a line
    under the run's id."""
    from deedbench.reports.format import interval
    from deedbench.reports.terminal import new_table
    from deedbench.stats import Rate

    table = new_table("Runs, newest first")
    table.add_column("run\nbenchmark agent" if stacked else "run", no_wrap=True)
    if not stacked:
        for column in ("benchmark", "agent"):
            table.add_column(column, no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("primary rate [Wilson 95%]", no_wrap=True)
    for column in ("episodes", "errors", "epochs"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    rates = [
        {r["condition"]: interval(Rate.model_validate(r)) for r in row["rates"]} for row in rows
    ]
    named = max((len(c) for found in rates for c in found), default=0)
    figures = max((len(r) for found in rates for r in found.values()), default=0)
    for row, found in zip(rows, rates, strict=True):
        cost = row["cost_usd"]
        run = [row["run_id"] + (f"\n  {row['benchmark']} {row['agent']}" if stacked else "")]
        cells = run if stacked else [*run, row["benchmark"], row["agent"]]
        cells += [
            row["state"],
            "\n".join(f"{c:<{named}}  {r:>{figures}}" for c, r in found.items()),
            f"{row['scored']:,} of {row['planned']:,}",
            f"{row['errors']:,}",
            str(row["epochs"]),
            row["created_at"][:19].replace("T", " "),
            "unknown" if cost is None else f"${cost:.4f}" if row["model_calls"] else "none",
        ]
        table.add_row(*map(safe, cells))
    rank = [1, 2, 3, 4, 7, 6, 5] if stacked else [3, 4, 2, 1, 5, 6, 9, 8, 7]
    return table, rank
