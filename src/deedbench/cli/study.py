"""`deedbench study FILE`: a whole study (runs of benchmarks x agents) in one command."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deedbench.cli.app import (
    NoCacheOption,
    PricesOption,
    QuietOption,
    StoreOption,
    Tally,
    app,
    console,
    did_you_mean,
    errors,
    fail,
    load_prices,
    open_store,
    progress_bar,
    resolve_store,
)
from deedbench.cli.runs import WideOption
from deedbench.printable import printable, safe

if TYPE_CHECKING:
    from deedbench.engine import RunStore
    from deedbench.executors.kinds import ExecutorKind, Placement
    from deedbench.records import EpisodeRecord
    from deedbench.reports.cost import PriceTable
    from deedbench.study import PlannedRun, RunOutcome, StudyPlan

__all__ = ["study"]


@app.command()
def study(
    file: Annotated[
        Path, typer.Argument(help="The study file (TOML; see docs/studies-and-ray.md).")
    ],
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print the plan: runs, episodes, model calls and cost expected."
        ),
    ] = False,
    executor: Annotated[
        str | None,
        typer.Option(
            help="Where episodes run: local (this process), ray (a cluster), or one another "
            "package registers that runs studies (default: the file's)."
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="The Ray cluster (default: the file's, else Ray's own default)."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Ray worker processes (default: one per CPU of the cluster)."),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Model calls in flight per endpoint across the study, and episodes in flight "
            "per run (default: the file's, else 16).",
        ),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the HTML report of all its runs.")
    ] = None,
    prices: PricesOption = None,
    no_cache: NoCacheOption = False,
    quiet: QuietOption = False,
    wide: WideOption = False,
    store: StoreOption = None,
) -> None:
    """Run a study: every (benchmark, agent) run of FILE at once, then one table; running
    it again resumes it."""
    from deedbench.errors import ExecutorError
    from deedbench.executors.kinds import Placement
    from deedbench.secrets import register_secret
    from deedbench.study import StudyError, plan_study

    chosen = None if executor is None else _study_kind(executor)  # before the file is read
    price_table = load_prices(prices)
    store_path = resolve_store(store)
    with _store_for(store_path) as runs:
        try:
            plan = plan_study(file, runs, price_table)
        except StudyError as exc:
            for problem in exc.problems:
                errors.print(
                    f"[red]error:[/red] {safe(did_you_mean(problem.render(exc.path)))}",
                    highlight=False,
                    soft_wrap=True,
                )
            raise typer.Exit(2) from None
        for run in plan.runs:  # what is printed is redacted of the keys the runs read
            for variable in run.config.key_variables:
                register_secret(os.environ.get(variable))
        kind = chosen or _study_kind(plan.study.executor)
        placement = Placement(
            concurrency or plan.study.concurrency,
            workers or plan.study.workers,
            ray_address or plan.study.ray_address,
        )
        if dry_run:
            _print_plan(plan, runs, kind, placement.concurrency, wide=wide, prices=prices)
            _check_builds(plan)
            return
    try:
        kind.check()
    except ExecutorError as exc:
        raise fail(str(exc)) from None
    for run in plan.runs:  # what each run's models are shown, where it came from
        for notice in run.bench.notices():
            errors.print(f"note: {run.run_id}: {notice}", highlight=False, markup=False)
    with open_store(store_path) as runs:
        outcomes = _launch(plan, runs, store_path, kind, placement, cache=not no_cache)
        failed = _report(
            plan, runs, outcomes, price_table=plan.prices, html=html, wide=wide, quiet=quiet
        )
    if failed:
        raise typer.Exit(1)


def _study_kind(name: str) -> ExecutorKind:
    """The executor kind a study runs on, by name; a clear exit for one that is unknown or
    runs no study."""
    from deedbench.errors import ExecutorError
    from deedbench.executors.kinds import executor_kind

    try:
        return executor_kind(name, study=True)
    except ExecutorError as exc:
        raise fail(str(exc)) from None


@contextlib.contextmanager
def _store_for(path: Path) -> Iterator[RunStore]:
    """The store to plan against; one that does not exist is read as an empty one, so
    an invalid study or a dry run creates nothing."""
    if not path.exists():
        with tempfile.TemporaryDirectory() as folder, open_store(Path(folder) / "empty.db") as runs:
            yield runs
        return
    with open_store(path, reading=True) as runs:
        yield runs


def _check_builds(plan: StudyPlan) -> None:
    """Build each run's models as the study would (a bad spec, a missing SDK or key: what
    the study would refuse, refused, after the plan is printed); every run that does not
    build is named, then exit 1 for a missing key (as the study exits), else 2."""
    from deedbench.errors import DeedbenchError, RunAborted
    from deedbench.recipes import RunRecipe

    code = 0
    for run in plan.runs:
        try:
            RunRecipe(run.config, cache=False, benchmark=run.bench).build(None, 1)
        except DeedbenchError as exc:
            aborted = isinstance(exc, RunAborted)
            code = max(code, 1 if aborted else 2)
            errors.print(
                f"[red]error:[/red] run {safe(run.run_id)}: {safe(str(exc))}",
                highlight=False,
                soft_wrap=True,
            )
    if code:
        raise typer.Exit(code)


def _print_plan(
    plan: StudyPlan,
    runs: RunStore,
    kind: ExecutorKind,
    concurrency: int,
    *,
    wide: bool,
    prices: Path | None,
) -> None:
    from rich.table import Table

    from deedbench.reports.tables import TablePrinter
    from deedbench.study import estimate_runs

    estimates = estimate_runs(plan.runs, runs, plan.prices)
    table = Table(title=f"study {safe(plan.study.name)}: the plan", title_justify="left")
    for column in ("run", "benchmark", "agent"):  # ids, never wrapped
        table.add_column(column, no_wrap=True)
    for column in ("conditions x epochs", "episodes", "model calls", "cost (USD)"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("estimated from")
    total_episodes = total_calls = 0.0
    total_cost: float | None = 0.0
    for estimate in estimates:
        run = estimate.run
        state = "finished" if run.finished else ("resumed" if run.exists else "new")
        cost = estimate.cost_usd
        table.add_row(
            safe(run.run_id),
            safe(run.benchmark.key),
            safe(run.config.agent),
            f"{len(run.config.conditions)} x {run.config.epochs}",
            f"{estimate.to_run:,} of {run.planned:,} ({state})",
            f"{estimate.calls:,.0f}" if estimate.roles else "none",
            "none" if not estimate.roles else (f"{cost:,.2f}" if cost is not None else "unknown"),
            "\n".join(safe(f"{r.role}: {r.basis}") for r in estimate.roles) or "-",
        )
        total_episodes += estimate.to_run
        total_calls += estimate.calls
        if estimate.roles:
            total_cost = None if cost is None or total_cost is None else total_cost + cost
    # run; then episodes, cost, agent, model calls, benchmark, conditions x epochs, basis
    tables = TablePrinter(console, wide=wide)
    tables.print(table, rank=[4, 6, 2, 5, 1, 3, 7])
    # the totals in words, not as a table's row: a part of a table too wide for the
    # terminal would show that row with its label alone
    where = kind.place
    money = "cost unknown" if total_cost is None else f"${total_cost:,.2f}"
    console.print(
        f"{len(estimates)} runs {where}: {total_episodes:,.0f} episodes, {total_calls:,.0f} "
        f"model calls, {money} in all; at most {concurrency} model calls in flight per "
        "endpoint. Calls and tokens per episode come from the runs the store holds (the same "
        "model first), else from the benchmark's first baseline played here (one call per "
        f"turn, 4 characters a token: a floor). {safe(_price_sources(plan, prices))} "
        "Nothing was run.",
        highlight=False,
    )
    tables.close(f"deedbench study {_quoted(plan.path)} --dry-run")


def _price_sources(plan: StudyPlan, prices: Path | None) -> str:
    """Where the plan's prices come from, first found first: the study's own, the file
    --prices gave, deedbench's table."""
    from deedbench.reports.cost import PriceTable

    study = plan.study
    own = [a.spec for a in study.agents if a.price is not None]
    if study.user is not None and study.user.price is not None:
        own.append(study.user.spec)
    sources = [f"the study's own ({', '.join(own)})"] if own else []
    if prices is not None:
        sources.append(f"those of {prices}")
    sources.append(f"deedbench's table of {PriceTable.load().as_of}")
    return f"Prices: {', then '.join(sources)}."


def _launch(
    plan: StudyPlan,
    runs: RunStore,
    store_path: Path,
    kind: ExecutorKind,
    placement: Placement,
    *,
    cache: bool,
) -> list[RunOutcome]:
    """Run the study, turning failures before the start and signals into clear exits."""
    from deedbench.errors import (
        AgentSpecError,
        BenchmarkError,
        ExecutorError,
        RunAborted,
        StoreError,
    )
    from deedbench.study import run_study

    started: list[bool] = []
    resume = f"deedbench study {_quoted(plan.path)} --store {store_path}"

    async def go() -> list[RunOutcome]:
        from deedbench.reports.cost import record_cost

        main = asyncio.current_task()
        assert main is not None
        with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        configs = {run.run_id: run.config for run in plan.runs}
        tally = Tally(
            sum(run.planned for run in plan.runs),
            sum(runs.count(run.run_id).get("scored", 0) for run in plan.runs),
        )

        def advance(run_id: str, record: EpisodeRecord) -> None:
            tally.advance(
                record.usage.values(),
                error=record.status != "scored",
                cost=record_cost(record, configs[run_id], plan.prices),
            )
            progress.advance(tasks[run_id])  # type: ignore[arg-type]

        with progress_bar() as progress:
            tasks: dict[str, object] = {}

            def begin(pending: list[PlannedRun]) -> None:
                started.append(True)
                for run in plan.runs:
                    done = runs.count(run.run_id).get("scored", 0)
                    tasks[run.run_id] = progress.add_task(
                        safe(run.run_id), total=run.planned, completed=done
                    )
                todo = sum(r.planned - r.scored for r in plan.runs if not r.finished)
                console.print(
                    f"study [bold]{safe(plan.study.name)}[/bold]: {len(pending)} of "
                    f"{len(plan.runs)} runs to run, {todo:,} episodes "
                    f"({kind.where}; store {safe(store_path)})",
                    highlight=False,
                )

            outcomes = await run_study(
                plan,
                runs,
                executor=kind.name,
                placement=placement,
                cache=cache,
                on_started=begin,
                on_record=advance,
            )
        tally.finish()
        return outcomes

    try:
        return asyncio.run(go())
    except (AgentSpecError, BenchmarkError, StoreError, ExecutorError) as exc:
        if not started:
            raise fail(str(exc)) from None
        raise fail(f"{exc}\nthe study stopped; resume with: {resume}", code=1) from None
    except RunAborted as exc:  # a missing key, found while preparing
        raise fail(str(exc), code=1) from None
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        signalled = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated"
        if started:
            lines = [_progress(runs, run.run_id, run.planned) for run in plan.runs]
            sys.stderr.write(
                printable(f"{signalled}: " + "; ".join(lines) + f". Resume with:\n  {resume}\n")
            )
        else:
            sys.stderr.write(f"{signalled} before the study started: nothing was stored\n")
        raise typer.Exit(130 if isinstance(exc, KeyboardInterrupt) else 143) from None


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _progress(runs: RunStore, run_id: str, total: int) -> str:
    counts = runs.count(run_id)
    failed = counts.get("error", 0)
    text = f"{run_id} {counts.get('scored', 0)} of {total} scored"
    return text + (f", {failed} failed" if failed else "")


def _report(
    plan: StudyPlan,
    runs: RunStore,
    outcomes: list[RunOutcome],
    *,
    price_table: PriceTable,
    html: Path | None,
    wide: bool,
    quiet: bool = False,
) -> bool:
    """The comparison table of each benchmark's runs (agents x conditions), the HTML
    report of all of them, and what failed; True when something did."""
    from deedbench.audit import load_audits
    from deedbench.reports.compare import compare_runs
    from deedbench.reports.summary import RunTally
    from deedbench.reports.terminal import legend, render_comparison

    summaries, figures, audits = [], {}, {}
    for entry, planned in plan.by_benchmark():
        if not planned:
            continue
        group = []
        for run in planned:
            tally = RunTally.stored(run.config, runs)
            figures[run.run_id] = tally
            audits[run.run_id] = load_audits(runs, run.run_id)
            group.append(tally.summary(price_table, audits=audits[run.run_id]))
        summaries += group
        console.print(f"\n[bold]{safe(entry.key)}[/bold]", highlight=False)
        ids = " ".join(_quoted(Path(run.run_id)) for run in planned)
        command = f"deedbench compare {ids} --store {_quoted(runs.path)}"
        lines = [] if quiet else legend(group[0])
        render_comparison(
            compare_runs(group, figures), console, wide=wide, command=command, legend=lines
        )
    if html is not None:
        from deedbench.cli.report import html_transcripts
        from deedbench.reports.export import OutputError, atomic_write
        from deedbench.reports.html import render_html

        records = {s.run.run_id: html_transcripts(runs, s.run) for s in summaries}
        try:
            with atomic_write(html) as out:
                out.write(render_html(summaries, records, audits, figures))
        except OutputError as exc:
            raise fail(str(exc)) from None
        console.print(f"wrote {html}", highlight=False, markup=False)
    failed = False
    for outcome in outcomes:
        counts = runs.count(outcome.run.run_id)
        if outcome.failure is not None:
            failed = True
            errors.print(
                f"[red]run {safe(outcome.run.run_id)} stopped:[/red] {safe(outcome.failure)}",
                highlight=False,
                soft_wrap=True,
            )
        elif counts.get("error") and not counts.get("scored"):
            failed = True
            errors.print(
                f"[red]run {safe(outcome.run.run_id)}: every episode failed[/red] "
                f"({counts['error']} errors; `deedbench report {safe(outcome.run.run_id)}` "
                "lists them)",
                highlight=False,
                soft_wrap=True,
            )
    if failed:
        errors.print(
            f"fix the cause, then resume with: deedbench study {safe(_quoted(plan.path))}",
            highlight=False,
            soft_wrap=True,
        )
    return failed
