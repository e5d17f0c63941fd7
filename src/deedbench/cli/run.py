"""`deedbench list` and `deedbench run`: plan a run, resume it, run its episodes."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import (
    RUN_ID_RULE,
    ApiKeyEnvOption,
    BaseUrlOption,
    NoCacheOption,
    PricesOption,
    QuietOption,
    StoreOption,
    Tally,
    agent_purpose,
    app,
    check_run_id,
    console,
    data_option,
    fail,
    load_prices,
    open_store,
    parse_pairs,
    progress_bar,
    resolve_store,
)
from deedbench.cli.roles import (
    model_args,
)
from deedbench.cli.runs import WideOption
from deedbench.errors import DeedbenchError, PlanError, RunAborted, RunError
from deedbench.printable import printable, safe
from deedbench.records import MAX_EPOCHS

if TYPE_CHECKING:
    from deedbench.engine import Benchmark, RunStore
    from deedbench.executors.kinds import ExecutorKind, Placement
    from deedbench.records import EpisodeRecord, RunConfig
    from deedbench.reports.cost import PriceTable
    from deedbench.reports.summary import RunSummary, RunTally

__all__ = ["list_command", "run"]


@app.command("list")
def list_command(wide: WideOption = False) -> None:
    """List benchmarks and the agents each can run."""
    from rich.table import Table

    from deedbench.agents import agent_kinds
    from deedbench.benchmarks import benchmark_class, benchmarks
    from deedbench.errors import BenchmarkError
    from deedbench.printable import safe
    from deedbench.reports.tables import TablePrinter

    printer = TablePrinter(console, wide=wide)

    table = Table(title="Benchmarks", title_justify="left")
    table.add_column("benchmark", no_wrap=True)
    table.add_column("description")
    table.add_column("conditions", no_wrap=True)
    table.add_column("epochs", no_wrap=True, justify="right")
    table.add_column("agents")
    loaded = {}
    for name in benchmarks():
        try:  # the class is enough: some need --data to load
            loaded[name] = benchmark_class(name)
        except BenchmarkError as exc:  # another package's, broken: said, and the rest listed
            table.add_row(safe(name), safe(str(exc)), "", "", "")
            continue
        bench = loaded[name]
        table.add_row(
            name,
            bench.description,
            ", ".join(bench.conditions),
            str(bench.default_epochs),
            "\n".join(agent_kinds(bench)),
        )
    printer.print(table, rank=[2, 4, 1, 3])  # conditions and agents before the prose
    options = Table(title="Benchmark options (-T KEY=VALUE)", title_justify="left")
    for column in ("benchmark", "option", "type", "default", "meaning"):
        options.add_column(column, no_wrap=column != "meaning")
    for name, cls in loaded.items():
        for spec in cls.option_specs:
            default = "" if spec.default is None else str(spec.default)
            options.add_row(name, spec.name, spec.type_name, default, spec.help)
    printer.print(options, labels=2, rank=[4, 3, 2])
    printer.close("deedbench list")


@app.command()
def run(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="Agent spec, e.g. baseline/random or openai/gpt-4o."),
    ] = None,
    condition: Annotated[
        str | None,
        typer.Option(help="Comma-separated conditions (default: all); a repeat counts once."),
    ] = None,
    epochs: Annotated[
        int | None,
        typer.Option(min=1, max=MAX_EPOCHS, help="Epochs (default: the benchmark's)."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Episodes in flight, and model calls per provider.")
    ] = 16,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Processes sharing the run (and --concurrency): a model run with many calls "
            "in flight is CPU-bound in the SDK, so use up to one per core (default 1: this "
            "process; with --executor ray, one per CPU of the cluster).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="Where episodes run: local (this process), workers (local processes), ray "
            "(a cluster), or one another package registers."
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(help="--executor ray: the cluster (default: Ray's, else a local one)."),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Run seed (default 0).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N samples.")] = None,
    samples: Annotated[
        list[str] | None,
        typer.Option(
            "--samples",
            help="Only these samples, by id, separated by commas (repeatable): τ²'s --task-ids "
            "for any benchmark.",
        ),
    ] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Name the run; an existing id resumes it.")
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option("--data", "--scenarios", help="Data to load instead of the built-in set."),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("-T", help="Benchmark option KEY=VALUE (repeatable).")
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Output token limit per call.")] = None,
    top_p: Annotated[float | None, typer.Option(help="Nucleus sampling.")] = None,
    model_seed: Annotated[
        int | None,
        typer.Option(help="Seed sent to the model (default: each episode's derived seed)."),
    ] = None,
    reasoning_effort: Annotated[
        str | None, typer.Option(help="Reasoning effort, where the model takes one.")
    ] = None,
    model_arg: Annotated[
        list[str] | None,
        typer.Option(
            "-M", "--model-arg", help="Any other model parameter KEY=VALUE (JSON values parsed)."
        ),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="A model playing the simulated user, e.g. openai/gpt-4.1 (-T user=llm:SPEC).",
        ),
    ] = None,
    user_base_url: Annotated[
        str | None, typer.Option(help="Endpoint of the model-played user.")
    ] = None,
    user_api_key_env: Annotated[
        str | None, typer.Option(help="Variable holding the model-played user's API key.")
    ] = None,
    user_temperature: Annotated[
        float | None, typer.Option(help="Temperature of the model-played user (default 0).")
    ] = None,
    user_max_tokens: Annotated[
        int | None, typer.Option(min=1, help="Output token limit of the model-played user.")
    ] = None,
    user_model_arg: Annotated[
        list[str] | None,
        typer.Option(
            "-U", "--user-arg", help="Any other parameter KEY=VALUE of the model-played user."
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="A model judging episodes (τ²'s NL assertions), e.g. openai/gpt-4.1 "
            "(-T judge=SPEC).",
        ),
    ] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="Endpoint of the judge.")] = None,
    judge_api_key_env: Annotated[
        str | None, typer.Option(help="Variable holding the judge's API key.")
    ] = None,
    judge_temperature: Annotated[
        float | None, typer.Option(help="Temperature of the judge (default 0, as τ²'s).")
    ] = None,
    judge_max_tokens: Annotated[
        int | None, typer.Option(min=1, help="Output token limit of the judge.")
    ] = None,
    judge_model_arg: Annotated[
        list[str] | None,
        typer.Option("-J", "--judge-arg", help="Any other parameter KEY=VALUE of the judge."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Seconds before a model call times out (every role; default 120)."),
    ] = None,
    max_attempts: Annotated[
        int | None, typer.Option(min=1, help="Attempts per model call (every role; default 8).")
    ] = None,
    max_retry_seconds: Annotated[
        float | None,
        typer.Option(help="Total seconds one call may spend retrying (every role; default 300)."),
    ] = None,
    no_cache: NoCacheOption = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Plan the run and build its models as the run would, print the plan, and "
            "write nothing: what the run would refuse is refused.",
        ),
    ] = False,
    prices: PricesOption = None,
    quiet: QuietOption = False,
    store: StoreOption = None,
) -> None:
    """Run an agent through a benchmark, or resume a run by its id."""
    from deedbench.agents.roles import ModelChoice
    from deedbench.cli import roles
    from deedbench.engine import plan_run, resume_run
    from deedbench.executors.kinds import Placement

    kind = _executor(executor, workers)
    if agent is not None and kind.name == "local" and not dry_run:
        from deedbench.agents.preload import import_sdk_early

        import_sdk_early(agent)  # this process builds the agent: import its SDK meanwhile
    elif agent is not None and kind.name == "workers" and not dry_run:  # the fork server does
        from deedbench.engine.workers import start_fork_server
        from deedbench.recipes import modules_to_preload

        start_fork_server(modules_to_preload(benchmark, [agent]))
    from deedbench.benchmarks import load_benchmark
    from deedbench.reports import render_summary
    from deedbench.reports.tables import print_command

    if ray_address is not None and kind.name != "ray":
        raise fail("--ray-address needs --executor ray")
    store_path = resolve_store(store)
    price_table = load_prices(prices)  # a bad price file is found before the run, not after
    if run_id is not None and not RUN_ID_RULE.fullmatch(run_id) and not store_path.exists():
        check_run_id(run_id)  # a new run: refused before the store is created
    shared = ModelChoice(
        timeout=timeout, max_attempts=max_attempts, max_retry_seconds=max_retry_seconds
    )
    choices = {
        "agent": ModelChoice(
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            max_tokens=max_tokens,
            top_p=top_p,
            seed=model_seed,
            reasoning_effort=reasoning_effort,
            extra=model_args(model_arg or [], "-M"),
        ),
        "user": ModelChoice(
            base_url=user_base_url,
            api_key_env=user_api_key_env,
            temperature=user_temperature,
            max_tokens=user_max_tokens,
            extra=model_args(user_model_arg or [], "-U"),
        ),
        "judge": ModelChoice(
            base_url=judge_base_url,
            api_key_env=judge_api_key_env,
            temperature=judge_temperature,
            max_tokens=judge_max_tokens,
            extra=model_args(judge_model_arg or [], "-J"),
        ),
    }
    chosen_samples = _sample_ids(samples)
    dry_without_store = dry_run and not store_path.exists()  # a dry run creates no store
    with nullcontext(None) if dry_without_store else open_store(store_path) as runs:
        existing = runs.get_run(run_id) if run_id and runs is not None else None
        if run_id is not None and existing is None:
            check_run_id(run_id)  # ids of runs made before the rule still resume
        if existing is not None and existing.imported_from is not None:
            raise fail(
                f"run {existing.run_id!r} was imported from {existing.imported_from}: its "
                "episodes are the file's, so it has none to run; start a new run with another "
                "--run-id"
            )
        options = parse_pairs(option or [], "-T")
        try:
            options |= roles.role_options(benchmark, user=user, judge=judge, given=options)
            if data is not None:
                options[data_option(benchmark)] = str(data)
            if existing is not None:  # what is given must agree with the record
                options = {**existing.benchmark_options, **options}
            bench = load_benchmark(benchmark, options)
            chosen = _conditions(condition, bench.conditions)
            if existing is not None:
                assert runs is not None
                config = resume_run(
                    runs,
                    existing.run_id,
                    bench,
                    agent=agent,
                    conditions=chosen,
                    epochs=epochs,
                    seed=seed,
                    limit=limit,
                    samples=chosen_samples,
                    **roles.given_settings(existing, choices, shared),
                )
            else:
                if agent is None:
                    raise fail("--agent is required for a new run (see `deedbench list`)")
                config = plan_run(
                    bench,
                    agent,
                    run_id=run_id,
                    conditions=chosen,
                    epochs=epochs,
                    seed=0 if seed is None else seed,
                    limit=limit,
                    samples=chosen_samples,
                    **roles.planned_settings(bench, agent, choices, shared),
                )
        except PlanError as exc:
            if existing is not None:
                raise fail(str(exc)) from None
            raise fail(f"{exc}: plan a smaller run (or several)") from None
        except DeedbenchError as exc:  # bad input, or a resume that contradicts the record
            raise fail(str(exc)) from None
        for notice in bench.notices():  # what the models are shown, where it came from
            sys.stderr.write(printable(f"note: {notice}\n"))
        if dry_run:
            roles.dry_run(config, bench, resumed=existing is not None, runs=runs)
            return
        assert runs is not None
        placement = Placement(concurrency, workers, ray_address)
        launch = _Launch(config, bench, runs, store_path, price_table, no_cache=no_cache)
        resume = _resume_command(benchmark, config.run_id, store_path)
        try:
            launch.go(kind, placement, new=existing is None)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            signalled = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated"
            if launch.started or existing is not None:
                progress = _progress(runs, config.run_id, config.planned_episodes)
                sys.stderr.write(printable(f"{signalled}: {progress}. Resume with:\n  {resume}\n"))
            else:
                sys.stderr.write(f"{signalled} before the run started: nothing was stored\n")
            raise typer.Exit(130 if isinstance(exc, KeyboardInterrupt) else 143) from None
        except RunError as exc:
            if not launch.started:  # a missing key (1), or an agent that cannot be built
                raise fail(str(exc), code=1 if isinstance(exc, RunAborted) else 2) from None
            progress = _progress(runs, config.run_id, config.planned_episodes)
            raise fail(
                f"{exc}\nrun stopped: {progress}; fix the cause, then resume with: {resume}",
                code=1,
            ) from None
        except DeedbenchError as exc:  # a run executed elsewhere, a bad spec: nothing written
            raise fail(str(exc)) from None
        groupings = config.report.run_summary_groupings()
        summary = launch.summary(groupings)
    render_summary(
        summary,
        console,
        groupings=groupings,
        quiet=quiet,
        purpose=agent_purpose(config),
    )
    console.print(f"run id: {config.run_id}", highlight=False, markup=False)
    where = "" if store is None else f" --store {shlex.quote(str(store))}"
    print_command(console, f"deedbench report {config.run_id}{where}")
    if summary.errors and not summary.scored:
        raise fail(
            f"every episode failed ({summary.errors} errors, listed above); fix the cause, then "
            f"resume with: {resume}",
            code=1,
        )


def _executor(name: str, workers: int | None) -> ExecutorKind:
    """The executor `--executor` names; `local` with more than one worker is `workers`
    (as `--workers N` always meant)."""
    from deedbench.errors import ExecutorError
    from deedbench.executors.kinds import executor_kind

    if name == "local" and workers is not None and workers > 1:
        name = "workers"
    try:
        kind = executor_kind(name)
        kind.check()
    except ExecutorError as exc:
        raise fail(str(exc)) from None
    return kind


def _progress(runs: RunStore, run_id: str, total: int) -> str:
    """How far a stopped run got, in words that say what they count."""
    counts = runs.count(run_id)
    text = f"{counts.get('scored', 0)} of {total} episodes scored"
    failed = counts.get("error", 0)
    return text + (f", {failed} failed (run again on resume)" if failed else "")


def _resume_command(benchmark: str, run_id: str, store: Path) -> str:
    parts = ["deedbench", "run", benchmark, "--run-id", run_id, "--store", str(store)]
    return " ".join(shlex.quote(p) for p in parts)


class _Launch:
    """The run's asynchronous part, its progress shown: an engine `Launch` on the executor
    `kind` makes, the benchmark already built passed on (built once in this process).

    The launch prepares the recipe where episodes will run before it records the run, so
    a bad spec or a missing key stops everything first; `started` tells the failures after
    that apart. SIGTERM stops the run as Ctrl-C does (what finished is stored), surfacing
    as CancelledError.

    A new run's figures are tallied as its records arrive, so that the closing summary
    computes its statistics at once instead of reading the run back from the store.
    """

    def __init__(
        self,
        config: RunConfig,
        benchmark: Benchmark[Any],
        runs: RunStore,
        store: Path,
        prices: PriceTable,
        *,
        no_cache: bool,
    ):
        from deedbench.recipes import RunRecipe

        self.config = config
        self.recipe = RunRecipe(config, cache=not no_cache, benchmark=benchmark)
        self.runs = runs
        self.store = store
        self.prices = prices
        self.started = False
        self.tallied: RunTally | None = None  # a new run's records, as they arrive

    def go(self, kind: ExecutorKind, placement: Placement, *, new: bool) -> None:
        asyncio.run(self._go(kind, placement, new))

    async def _go(self, kind: ExecutorKind, placement: Placement, new: bool) -> None:
        from deedbench.agents.preload import import_early
        from deedbench.engine import Launch
        from deedbench.reports.cost import record_cost
        from deedbench.reports.summary import RunTally

        main = asyncio.current_task()
        assert main is not None
        with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        config, runs = self.config, self.runs
        total, done = config.planned_episodes, runs.count(config.run_id).get("scored", 0)
        tally = Tally(total, done)
        # numpy (the closing summary's arithmetic, 0.1 s) is imported on a thread while
        # this process mostly waits: from the first record when other processes run the
        # episodes, else once every episode left has started. (Sooner, the import holds
        # up the episodes' event loop: measured, a slower run phase.)
        elsewhere = kind.name != "local"
        numpy_after = 1 if elsewhere else max(1, total - done - placement.concurrency)
        recorded = 0
        with progress_bar() as progress:
            task = progress.add_task(kind.label(placement), total=total, completed=done, stats="")

            def advance(record: EpisodeRecord) -> None:
                nonlocal recorded
                recorded += 1
                if recorded == numpy_after:
                    import_early("numpy", "numpy.random")
                tally.advance(
                    record.usage.values(),
                    error=record.status != "scored",
                    cost=record_cost(record, config, self.prices),
                )
                progress.update(task, advance=1, stats=tally.stats())
                if self.tallied is not None:
                    self.tallied.add(record)

            def begin() -> None:
                self.started = True
                if new:
                    self.tallied = RunTally(config)
                console.print(
                    f"{'starting' if new else 'resuming'} run [bold]{safe(config.run_id)}"
                    f"[/bold]: {total - done} of {total} episodes to run (store "
                    f"{safe(self.store)})",
                    highlight=False,
                )

            launch = Launch(config, runs, self.recipe, on_record=advance)
            await launch.run(kind.for_run(placement, self.recipe, runs), on_started=begin)
        tally.finish()

    def summary(self, groupings: list[str]) -> RunSummary:
        """The figures of the whole run as stored, broken down by `groupings` only: from
        the records tallied on the way when they are all of it (a new run, every record
        seen once), else read back."""
        from deedbench.reports.summary import RunTally

        config, tally = self.config, self.tallied
        if tally is None or tally.added != sum(self.runs.count(config.run_id).values()):
            tally = RunTally.stored(config, self.runs)
        return tally.summary(self.prices, groupings=groupings)


def _sample_ids(given: list[str] | None) -> list[str] | None:
    """The sample ids `--samples` names (None: every sample)."""
    if given is None:
        return None
    ids = [i.strip() for text in given for i in text.split(",") if i.strip()]
    if not ids:
        raise fail("--samples names no sample: give ids separated by commas")
    return list(dict.fromkeys(ids))


def _conditions(text: str | None, valid: tuple[str, ...]) -> list[str] | None:
    """The conditions named in `--condition` (None: all of them); the engine checks that
    each is one of the benchmark's."""
    if text is None:
        return None
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    if not chosen:
        raise fail(f"unknown condition(s) {text!r}. Valid conditions: {', '.join(valid)}")
    return chosen
