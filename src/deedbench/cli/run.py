"""`deedbench list` and `deedbench run`: plan a run, resume it, run its episodes."""

from __future__ import annotations

import asyncio
import json
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deedbench.cli.app import (
    RUN_ID_RULE,
    ApiKeyEnvOption,
    BaseUrlOption,
    NoCacheOption,
    PricesOption,
    StoreOption,
    app,
    check_run_id,
    console,
    data_option,
    fail,
    load_prices,
    parse_pairs,
    progress_bar,
    resolve_store,
    task_options,
)
from deedbench.engine.episode import RunAborted
from deedbench.engine.printable import printable, safe

if TYPE_CHECKING:
    from deedbench.agents import Providers
    from deedbench.engine import Agent, Benchmark, RunConfig, RunStore


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
    options = Table(title="Benchmark options (-T KEY=VALUE)", title_justify="left")
    for column in ("benchmark", "option", "meaning"):
        options.add_column(column)
    for name in BENCHMARKS:
        for key, meaning in getattr(benchmark_class(name), "option_help", {}).items():
            options.add_row(name, key, meaning)
    console.print(options)


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
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            help="Processes sharing the run (and --concurrency): a model run with many calls "
            "in flight is CPU-bound in the SDK, so use up to one per core.",
        ),
    ] = 1,
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
        typer.Option("-M", help="Any other model parameter KEY=VALUE (JSON values parsed)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a model call times out.")] = 120.0,
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per model call.")] = 8,
    max_retry_seconds: Annotated[
        float, typer.Option(help="Total seconds one call may spend retrying.")
    ] = 300.0,
    no_cache: NoCacheOption = False,
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

    store_path = resolve_store(store)
    price_table = load_prices(prices)  # a bad price file is found before the run, not after
    if run_id is not None and not RUN_ID_RULE.fullmatch(run_id) and not store_path.exists():
        check_run_id(run_id)  # a new run: refused before the store is created
    with RunStore(store_path) as runs:
        existing = runs.get_run(run_id) if run_id else None
        if run_id is not None and existing is None:
            check_run_id(run_id)  # ids of runs made before the rule still resume
        options = parse_pairs(option or [], "-T") | task_options(split, tasks)
        try:
            if data is not None:
                options[data_option(benchmark)] = str(data)
            if existing is not None:
                if options and options != existing.benchmark_options:
                    raise fail(
                        f"run {existing.run_id!r} was created with benchmark options "
                        f"{existing.benchmark_options} (got {options}). Resume without -T and "
                        "--data, or start a new run id."
                    )
                options = existing.benchmark_options
            bench = load_benchmark(benchmark, options)
        except BenchmarkError as exc:
            raise fail(str(exc)) from None
        if existing is not None:
            config = existing
            _check_resume(config, bench, agent, condition, epochs, seed, limit)
        else:
            if agent is None:
                raise fail("--agent is required for a new run (see `deedbench list`)")
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
            raise fail(str(exc)) from None
        except RunAborted as exc:
            raise fail(str(exc), code=1) from None
        if existing is None:
            try:
                runs.create_run(config)
            except StoreError as exc:
                raise fail(str(exc)) from None
        done = len(runs.scored_keys(config.run_id))
        total = len(config.episode_keys())
        verb = "resuming" if existing else "starting"
        console.print(
            f"{verb} run [bold]{safe(config.run_id)}[/bold]: {total - done} of {total} episodes "
            f"to run (store {safe(store_path)})",
            highlight=False,
        )
        try:
            if workers > 1:
                _run_in_workers(config, bench, store_path, no_cache, concurrency, workers, total)
            else:
                _run_with_progress(
                    config, bench, agent_impl, providers, runs, total, done, concurrency
                )
        except KeyboardInterrupt:
            runs.flush()
            sys.stderr.write(
                printable(
                    f"interrupted: {_progress(runs, config.run_id, total)}. Resume with:\n"
                    f"  {_resume_command(benchmark, config.run_id, store_path)}\n"
                )
            )
            raise typer.Exit(130) from None
        except RunAborted as exc:
            raise fail(
                f"{exc}\nrun stopped: {_progress(runs, config.run_id, total)}; fix the cause, "
                f"then resume with: {_resume_command(benchmark, config.run_id, store_path)}",
                code=1,
            ) from None
        summary = summarize(config, runs.episodes(config.run_id), price_table)
    render_summary(summary, console, groupings=["category", "template"])
    console.print(
        f"run id: {config.run_id}  (details: deedbench report {config.run_id})",
        highlight=False,
        markup=False,
    )
    if summary.errors and not summary.scored:
        raise fail(
            f"every episode failed ({summary.errors} errors, listed above); fix the cause, then "
            f"resume with: {_resume_command(benchmark, config.run_id, store_path)}",
            code=1,
        )


def _progress(runs: RunStore, run_id: str, total: int) -> str:
    """How far a stopped run got, in words that say what they count."""
    counts = runs.count(run_id)
    text = f"{counts.get('scored', 0)} of {total} episodes scored"
    failed = counts.get("error", 0)
    return text + (f", {failed} failed (run again on resume)" if failed else "")


def _resume_command(benchmark: str, run_id: str, store: Path) -> str:
    parts = ["deedbench", "run", benchmark, "--run-id", run_id, "--store", str(store)]
    return " ".join(shlex.quote(p) for p in parts)


def _parse_model_args(pairs: list[str]) -> dict[str, object]:
    """-M values are JSON where they parse as JSON (numbers, booleans, objects), else text."""
    result: dict[str, object] = {}
    for key, text in parse_pairs(pairs, "-M").items():
        try:
            result[key] = json.loads(text)
        except json.JSONDecodeError:
            result[key] = text
        except RecursionError:
            raise fail(f"-M {key}: the JSON value is nested too deeply") from None
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
    from deedbench.engine import run as run_episodes

    with progress_bar() as progress:
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


def _run_in_workers(
    config: RunConfig,
    bench: Benchmark,
    store_path: Path,
    no_cache: bool,
    concurrency: int,
    workers: int,
    total: int,
) -> None:
    """The run in forked worker processes, each with its own agent; progress from the store."""
    from deedbench.agents import Providers, ResponseCache
    from deedbench.engine import run_in_processes

    def build() -> tuple[Benchmark, Agent, Callable[[], Awaitable[None]]]:
        share = max(1, concurrency // workers)
        providers = Providers(None if no_cache else ResponseCache(store_path), share)
        return bench, _build_agent(config, bench, providers), providers.aclose

    # auto_refresh off: no refresh thread may be running when the workers are forked
    with progress_bar(auto_refresh=False) as progress:
        task = progress.add_task(f"episodes ({workers} workers)", total=total)

        def show(stored: int) -> None:
            progress.update(task, completed=stored)
            progress.refresh()

        run_in_processes(
            config, store_path, build, workers=workers, concurrency=concurrency, on_progress=show
        )


def _conditions(text: str | None, valid: tuple[str, ...]) -> list[str]:
    if text is None:
        return list(valid)
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in valid]
    if unknown or not chosen:
        raise fail(
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
        raise fail(
            f"run {config.run_id!r} was created with "
            + "; ".join(conflicts)
            + ". Resume without those flags, or start a new run id."
        )


def _new_run_id(benchmark: str) -> str:
    return f"{benchmark}-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
