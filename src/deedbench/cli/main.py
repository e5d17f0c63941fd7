"""The `deedbench` command line."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from deedbench.engine.benchmark import BenchmarkError
from deedbench.engine.episode import RunAborted

if TYPE_CHECKING:
    from deedbench.agents import Providers
    from deedbench.engine import Agent, Benchmark, RunConfig, RunStore
    from deedbench.reports.cost import PriceTable

app = typer.Typer(
    name="deedbench",
    help="Judge AI agents by what they do: run benchmarks, score actions, report honestly.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Piped output (CI logs, files) gets wide lines instead of rich's 80-column default.
console = Console() if sys.stdout.isatty() else Console(width=140)
errors = Console(stderr=True)

DEFAULT_STORE = "deedbench.db"
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="A price table (JSON, same shape as the shipped one) whose entries win.",
        exists=True,
        dir_okay=False,
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help=f"Run store (SQLite). Default: $DEEDBENCH_STORE or ./{DEFAULT_STORE}.",
        show_default=False,
    ),
]


def _store_path(store: Path | None) -> Path:
    return store or Path(os.environ.get("DEEDBENCH_STORE", DEFAULT_STORE))


def _fail(message: str, code: int = 2) -> typer.Exit:
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _fail(f"{flag} expects KEY=VALUE, got {pair!r}")
        result[key.strip()] = value.strip()
    return result


@app.command("list")
def list_command() -> None:
    """List benchmarks and the agents each can run."""
    from rich.table import Table

    from deedbench.agents import agent_kinds
    from deedbench.benchmarks import BENCHMARKS, benchmark_class

    table = Table(title="Benchmarks", title_justify="left")
    for column in ("benchmark", "description", "conditions", "epochs", "agents"):
        table.add_column(column)
    for name in BENCHMARKS:
        bench = benchmark_class(name)  # the class is enough: some need --data to load
        table.add_row(
            name,
            bench.description,
            ", ".join(bench.conditions),
            str(bench.default_epochs),
            "\n".join(agent_kinds(bench)),
        )
    console.print(table)


@app.command()
def run(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="Agent spec, e.g. baseline/random or openai/gpt-4o."),
    ] = None,
    condition: Annotated[
        str | None, typer.Option(help="Comma-separated conditions (default: all).")
    ] = None,
    epochs: Annotated[
        int | None, typer.Option(min=1, help="Epochs (default: the benchmark's).")
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Episodes in flight, and model calls per provider.")
    ] = 16,
    seed: Annotated[int | None, typer.Option(help="Run seed (default 0).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N samples.")] = None,
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
    split: Annotated[
        str | None, typer.Option(help="τ-bench data: which tasks file (test, dev, train).")
    ] = None,
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="τ-bench data: task indexes, e.g. 0,5,9-12.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Model endpoint (required for openai-compatible).")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable that holds the API key.")
    ] = None,
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
        typer.Option("-M", help="Any other model parameter KEY=VALUE (JSON values parsed)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a model call times out.")] = 120.0,
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per model call.")] = 8,
    max_retry_seconds: Annotated[
        float, typer.Option(help="Total seconds one call may spend retrying.")
    ] = 300.0,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
    ] = False,
    user_base_url: Annotated[
        str | None, typer.Option(help="Endpoint of a model-played user (-T user=llm:SPEC).")
    ] = None,
    user_api_key_env: Annotated[
        str | None, typer.Option(help="Variable holding the model-played user's API key.")
    ] = None,
    user_temperature: Annotated[
        float, typer.Option(help="Temperature of a model-played user.")
    ] = 0.0,
    prices: PricesOption = None,
    store: StoreOption = None,
) -> None:
    """Run an agent through a benchmark, or resume a run by its id."""
    from deedbench.agents import (
        AgentSettings,
        AgentSpecError,
        GenerationParams,
        Providers,
        ResponseCache,
        is_model_spec,
    )
    from deedbench.benchmarks import load_benchmark
    from deedbench.engine import BenchmarkError, RunStore, StoreError, new_run_config
    from deedbench.reports import render_summary, summarize

    store_path = _store_path(store)
    with RunStore(store_path) as runs:
        existing = runs.get_run(run_id) if run_id else None
        options = _parse_pairs(option or [], "-T") | _task_options(split, tasks)
        try:
            if data is not None:
                options[_data_option(benchmark)] = str(data)
            if existing is not None:
                if options and options != existing.benchmark_options:
                    raise _fail(
                        f"run {existing.run_id!r} was created with benchmark options "
                        f"{existing.benchmark_options} (got {options}). Resume without -T and "
                        "--data, or start a new run id."
                    )
                options = existing.benchmark_options
            bench = load_benchmark(benchmark, options)
        except BenchmarkError as exc:
            raise _fail(str(exc)) from None
        if existing is not None:
            config = existing
            _check_resume(config, bench, agent, condition, epochs, seed, limit)
        else:
            if agent is None:
                raise _fail("--agent is required for a new run (see `deedbench list`)")
            settings: dict[str, object] = {}
            if is_model_spec(agent):
                params = GenerationParams(
                    temperature=temperature,
                    max_tokens=max_tokens,
                    top_p=top_p,
                    seed=model_seed,
                    reasoning_effort=reasoning_effort,
                    timeout=timeout,
                    extra=_parse_model_args(model_arg or []),
                ).over(bench.generation_defaults)
                settings = (
                    AgentSettings(
                        base_url=base_url,
                        api_key_env=api_key_env,
                        params=params,
                        max_attempts=max_attempts,
                        max_retry_seconds=max_retry_seconds,
                    )
                    .for_spec(agent)
                    .model_dump()
                )
            user_spec = bench.user_model_spec()
            user = {}
            if user_spec is not None:
                user_settings = AgentSettings(
                    base_url=user_base_url,
                    api_key_env=user_api_key_env,
                    params=GenerationParams(temperature=user_temperature, timeout=timeout),
                    max_attempts=max_attempts,
                    max_retry_seconds=max_retry_seconds,
                ).for_spec(user_spec)
                user = {
                    "spec": user_spec,
                    "settings": user_settings.model_dump(),
                    "prompt_version": getattr(bench, "user_prompt_version", None),
                }
            config = new_run_config(
                run_id=run_id or _new_run_id(benchmark),
                benchmark=bench,
                agent=agent,
                agent_params=settings,
                conditions=_conditions(condition, bench.conditions),
                epochs=epochs or bench.default_epochs,
                seed=0 if seed is None else seed,
                samples=bench.samples()[:limit] if limit else bench.samples(),
                user=user,
            )
        providers = Providers(None if no_cache else ResponseCache(store_path), concurrency)
        try:
            agent_impl = _build_agent(config, bench, providers)
        except AgentSpecError as exc:
            raise _fail(str(exc)) from None
        except RunAborted as exc:
            raise _fail(str(exc), code=1) from None
        if existing is None:
            try:
                runs.create_run(config)
            except StoreError as exc:
                raise _fail(str(exc)) from None
        done = len(runs.scored_keys(config.run_id))
        total = len(config.episode_keys())
        verb = "resuming" if existing else "starting"
        console.print(
            f"{verb} run [bold]{config.run_id}[/bold]: {total - done} of {total} episodes to run "
            f"(store {store_path})"
        )
        try:
            _run_with_progress(config, bench, agent_impl, providers, runs, total, done, concurrency)
        except KeyboardInterrupt:
            runs.flush()
            stored = len(runs.scored_keys(config.run_id))
            sys.stderr.write(
                f"interrupted: {stored} of {total} episodes stored. Resume with:\n"
                f"  {_resume_command(benchmark, config.run_id, store_path)}\n"
            )
            raise typer.Exit(130) from None
        except RunAborted as exc:
            stored = len(runs.scored_keys(config.run_id))
            raise _fail(
                f"{exc}\nrun stopped: {stored} of {total} episodes stored; fix the cause, "
                f"then resume with: {_resume_command(benchmark, config.run_id, store_path)}",
                code=1,
            ) from None
        summary = summarize(config, runs.episodes(config.run_id), _prices(prices))
    render_summary(summary, console, groupings=["category", "template"])
    console.print(f"run id: {config.run_id}  (details: deedbench report {config.run_id})")


def _prices(path: Path | None) -> PriceTable:
    from pydantic import ValidationError

    from deedbench.reports.cost import PriceTable

    try:
        return PriceTable.load(path)
    except (ValidationError, ValueError) as exc:
        raise _fail(f"{path}: not a price table: {exc}") from None


def _task_options(split: str | None, tasks: str | None) -> dict[str, str]:
    """--split and --tasks are shorthands for the benchmark options of the same names."""
    chosen = {"split": split, "tasks": tasks}
    return {k: v for k, v in chosen.items() if v is not None}


def _resume_command(benchmark: str, run_id: str, store: Path) -> str:
    parts = ["deedbench", "run", benchmark, "--run-id", run_id, "--store", str(store)]
    return " ".join(shlex.quote(p) for p in parts)


def _data_option(benchmark: str) -> str:
    from deedbench.benchmarks import benchmark_class

    cls = benchmark_class(benchmark)
    if cls.data_option is None:
        raise BenchmarkError(f"benchmark {benchmark!r} takes no --data")
    return cls.data_option


def _parse_model_args(pairs: list[str]) -> dict[str, object]:
    """-M values are JSON where they parse as JSON (numbers, booleans, objects), else text."""
    result: dict[str, object] = {}
    for key, text in _parse_pairs(pairs, "-M").items():
        try:
            result[key] = json.loads(text)
        except json.JSONDecodeError:
            result[key] = text
    return result


def _build_agent(config: RunConfig, bench: Benchmark, providers: Providers) -> Agent:
    from deedbench.agents import AgentSettings, is_model_spec, resolve_agent

    if config.user:
        settings = AgentSettings.model_validate(config.user["settings"])
        bench.use_user_model(resolve_agent(config.user["spec"], bench, settings, providers))
    if not is_model_spec(config.agent):
        return resolve_agent(config.agent, bench)
    settings = AgentSettings.model_validate(config.agent_params)
    return resolve_agent(config.agent, bench, settings, providers)


def _run_with_progress(
    config: RunConfig,
    bench: Benchmark,
    agent: Agent,
    providers: Providers,
    runs: RunStore,
    total: int,
    done: int,
    concurrency: int,
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from deedbench.engine import run as run_episodes

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("episodes", total=total, completed=done)

        async def run_then_close() -> None:
            try:
                await run_episodes(
                    config,
                    bench,
                    agent,
                    runs,
                    concurrency=concurrency,
                    on_record=lambda _record: progress.advance(task),
                )
            finally:
                await providers.aclose()  # model agents hold connections

        asyncio.run(run_then_close())


def _conditions(text: str | None, valid: tuple[str, ...]) -> list[str]:
    if text is None:
        return list(valid)
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in valid]
    if unknown or not chosen:
        raise _fail(
            f"unknown condition(s) {unknown or text!r}. Valid conditions: {', '.join(valid)}"
        )
    return chosen


def _check_resume(
    config: RunConfig,
    bench: Benchmark,
    agent: str | None,
    condition: str | None,
    epochs: int | None,
    seed: int | None,
    limit: int | None,
) -> None:
    """A resumed run keeps its configuration: a conflicting flag is an error, never ignored."""
    conflicts = []
    if agent is not None and agent != config.agent:
        conflicts.append(f"agent {config.agent!r} (got {agent!r})")
    if condition is not None and _conditions(condition, bench.conditions) != config.conditions:
        conflicts.append(f"conditions {','.join(config.conditions)} (got {condition})")
    if epochs is not None and epochs != config.epochs:
        conflicts.append(f"epochs {config.epochs} (got {epochs})")
    if seed is not None and seed != config.seed:
        conflicts.append(f"seed {config.seed} (got {seed})")
    if limit is not None and limit != len(config.sample_ids):
        conflicts.append(f"{len(config.sample_ids)} samples (got --limit {limit})")
    if bench.name != config.benchmark:
        conflicts.append(f"benchmark {config.benchmark!r} (got {bench.name!r})")
    elif bench.data_hash() != config.data_hash:
        conflicts.append(f"data {config.data_hash} (the data now hashes to {bench.data_hash()})")
    if conflicts:
        raise _fail(
            f"run {config.run_id!r} was created with "
            + "; ".join(conflicts)
            + ". Resume without those flags, or start a new run id."
        )


def _new_run_id(benchmark: str) -> str:
    return f"{benchmark}-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


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

    path = _store_path(store)
    if not path.exists():
        raise _fail(f"no run store at {path}")
    with RunStore(path) as runs:
        try:
            config = runs.require_run(run_id)
        except StoreError as exc:
            raise _fail(str(exc)) from None
        summary = summarize(config, runs.episodes(run_id), _prices(prices))
    if as_json:
        sys.stdout.write(summary.model_dump_json(indent=2) + "\n")
    else:
        render_summary(summary, console)


@app.command()
def validate(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    data: Annotated[
        Path | None, typer.Option("--data", help="Data to check instead of the built-in set.")
    ] = None,
    split: Annotated[str | None, typer.Option(help="τ-bench data: which tasks file.")] = None,
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="τ-bench data: task indexes.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per task.")] = False,
) -> None:
    """Check a benchmark's tasks: gold actions, reachable goals, oracle and idle agents."""
    from deedbench.benchmarks import load_benchmark

    try:
        options = _task_options(split, tasks)
        if data is not None:
            options[_data_option(benchmark)] = str(data)
        checks = load_benchmark(benchmark, options).validate()
    except BenchmarkError as exc:
        raise _fail(str(exc)) from None
    failed = [c for c in checks if c.problems]
    if as_json:
        for check in checks:
            sys.stdout.write(json.dumps(check.model_dump(mode="json")) + "\n")
    else:
        for check in failed:
            console.print(f"[red]{check.task}[/red]: " + "; ".join(check.problems), highlight=False)
        console.print(f"{len(checks) - len(failed)} of {len(checks)} tasks pass", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command()
def rescore(
    kind: Annotated[str, typer.Argument(help="The result format: taubench.")],
    file: Annotated[Path, typer.Argument(help="A τ-bench result file (JSON list of records).")],
    data: Annotated[
        list[Path],
        typer.Option(
            "--data",
            help="The τ-bench data folder; repeat it to take each file from the first folder "
            "that has it (e.g. older users, current flights).",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Replay τ-bench results: its reward recomputed and checked, procedure verdicts added."""
    from deedbench.benchmarks.taubench.domains import domain_for
    from deedbench.benchmarks.taubench.rescore import rescore_file

    if kind != "taubench":
        raise _fail(f"unknown result format {kind!r}. Valid formats: taubench")
    try:
        report = rescore_file(file, data, domain_for(data))
    except BenchmarkError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return
    console.print(
        f"{report.records} records; τ-bench's recorded reward components reproduced for "
        f"{report.reproduced}; {report.passing} passing (reward 1), of which "
        f"{report.passing_with_violations} broke a procedure rule",
        highlight=False,
    )
    for rule, count in report.rules.items():
        console.print(f"  {rule}: {count} passing trajectories", highlight=False)
        quote = next(
            v
            for r in report.verdicts
            if r.recorded_reward == 1.0
            for v in r.violations
            if v.startswith(rule + ":")
        )
        console.print(f"    e.g. {escape(quote[:300])}", highlight=False)
    mismatched = [v for v in report.verdicts if not v.reproduced]
    for verdict in mismatched[:10]:
        console.print(
            f"  [red]not reproduced[/red]: task {verdict.task_id} trial {verdict.trial}: "
            f"recorded r_actions={verdict.recorded_r_actions} "
            f"r_outputs={verdict.recorded_r_outputs}, recomputed {verdict.r_actions} / "
            f"{verdict.r_outputs}",
            highlight=False,
        )


def main() -> None:
    app()
