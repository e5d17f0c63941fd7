"""`deedbench runs`: the store's runs, newest first, read without a transcript.

Counts come from the episode summaries' index, and token usage and each run's primary
rate per condition are summed by SQLite from the summaries (`RunStore.counts`,
`RunStore.call_usage`, `RunStore.scored_totals`), so listing a store of 100,000 episodes
parses no record. A run is running while its executor's heartbeat is fresh (the store's
`executing`), as the viewer tells it; imported when it was made from another tool's
results (`RunConfig.imported_from`: nothing to run); else finished when every planned
episode is stored, else stopped.
"""

from __future__ import annotations

import json
import sys
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import (
    PricesOption,
    QuietOption,
    StoreOption,
    app,
    console,
    existing_store,
    fail,
    load_prices,
    open_store,
    require_run,
    warn,
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
# that fit, most important first (reports.tables.TablePrinter); --wide shows them all.
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
    quiet: QuietOption = False,
    wide: WideOption = False,
    delete: Annotated[
        list[str] | None,
        typer.Option(
            "--delete",
            help="Delete this run (repeat for more) with its episodes, audits and figures, "
            "instead of listing; a run a live process is executing is refused.",
            show_default=False,
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Delete without asking (needed off a terminal).")
    ] = False,
    figures_cache: Annotated[
        Path | None,
        typer.Option(
            "--figures-cache",
            help="With --delete: the viewer's file of figures, if `view` was given one "
            "[default: $XDG_CACHE_HOME or ~/.cache, deedbench/view-summaries.db].",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
) -> None:
    """List the store's runs, newest first: state, primary rate, agent, episodes and cost;
    or delete runs (--delete)."""
    if delete:
        _delete(delete, yes=yes, figures_cache=figures_cache, store=store)
        return
    table = load_prices(prices)
    path = existing_store(store)
    with open_store(path, reading=True) as stored:
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
    _render(rows, wide=wide, quiet=quiet, command=" ".join(command))


def _delete(
    run_ids: list[str], *, yes: bool, figures_cache: Path | None, store: Path | None
) -> None:
    """Delete runs whole (`engine.whole_runs.delete_run`), after saying what goes, and the
    figures the viewer keeps of them."""
    from deedbench.engine.whole_runs import delete_run
    from deedbench.view.summaries import SummaryCache, default_cache

    path = existing_store(store)
    run_ids = list(dict.fromkeys(run_ids))
    with open_store(path) as stored:
        for run_id in run_ids:
            require_run(stored, run_id)  # a typo names the nearest run
        counts = stored.counts()
        what = "; ".join(
            f"{run_id} ({sum(counts.get(run_id, {}).values()):,} episodes)" for run_id in run_ids
        )
        if not yes:
            if not (sys.stdin.isatty() and console.is_terminal):
                raise fail(f"--delete would delete {what} from {path}: add --yes to do it")
            if not typer.confirm(f"Delete {what} from {path}? This cannot be undone"):
                raise fail("nothing deleted")
        for run_id in run_ids:
            done = delete_run(stored, run_id)  # StoreError (being executed): exit 2
            SummaryCache(figures_cache or default_cache(), on_problem=warn).forget(path, run_id)
            console.print(
                f"deleted run {done.run_id} from {path}: {done.episodes:,} episodes, "
                f"{done.audits:,} audits",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


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
    if executor:
        state = "running"
    elif config.imported_from is not None:  # its episodes are its file's: none to run
        state = "imported"
    else:
        state = "finished" if stored >= config.planned_episodes else "stopped"
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


def _render(rows: list[dict[str, Any]], *, wide: bool, quiet: bool, command: str) -> None:
    """The runs' table (state and primary rate first), then (unless `quiet`) its legend:
    what each primary rate is and the commands that read a run. Where benchmark and agent
    do not fit in columns of their own, they go under the run's id."""
    from deedbench.reports.tables import TablePrinter, print_command, say

    tables = TablePrinter(console, wide=wide)
    table, rank = _table(rows, stacked=False)
    if not (wide or tables.fits(table)):
        table, rank = _table(rows, stacked=True, width=console.width)
    tables.print(table, rank=rank)
    if quiet:
        tables.close(command)
        return
    primaries: dict[str, dict[str, None]] = {}  # metric: the benchmarks it heads
    for row in rows:
        primaries.setdefault(row["primary"], {})[row["benchmark"]] = None
    heads = "; ".join(f"{', '.join(found)}: {metric}" for metric, found in primaries.items())
    say(console, f"primary rate: each run's headline metric per condition ({heads})")
    say(console, "a run's figures (the bootstrap interval too), and one episode:")
    print_command(console, "deedbench report RUN")
    print_command(console, "deedbench show RUN SAMPLE")
    tables.close(command)


def _table(rows: list[dict[str, Any]], *, stacked: bool, width: int = 0) -> tuple[Table, list[int]]:
    """The runs' table and its columns' rank (state, primary rate, agent, benchmark,
    episodes, errors, cost, created, epochs); `stacked`: benchmark and agent on a line
    under the run's id, folded where a long agent spec would leave no room at `width`
    columns for the state and the primary rate (which come first, as the README says)."""
    from deedbench.reports.format import interval
    from deedbench.reports.tables import new_table
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
    states = max((len(row["state"]) for row in rows), default=0)
    # what the first column may take beside state and rate (two spaces between columns)
    room = max(width - states - (named + 2 + figures) - 4, 20)
    for row, found in zip(rows, rates, strict=True):
        cost = row["cost_usd"]
        under = f"{row['benchmark']} {row['agent']}"
        lines = _folded(under, max(room - 2, len(row["run_id"]) - 2, 16))
        run = [
            row["run_id"] + "".join(f"\n  {line}" for line in lines) if stacked else row["run_id"]
        ]
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


def _folded(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken after a space, a slash or a
    dash where it can be (an agent spec: ``openai-compatible/Qwen/Qwen2.5-72B``)."""
    lines = []
    while len(text) > width:
        cut = max(text.rfind(sep, 0, width) for sep in (" ", "/", "-"))
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:]
    return [*lines, text]
