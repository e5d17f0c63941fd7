"""Planning a run and resuming one: the configuration a run records, and the checks that
keep a resumed run the run it was.

`plan_run` makes a new run's `RunConfig` from a benchmark and the choices made for it
(the defaults filled in: every condition, the benchmark's epochs, every sample); the
caller records it (`RunStore.create_run`) and executes it. `resume_run` reads a recorded
run back and checks that what the caller asks for now agrees with what was recorded: a
resumed run keeps its configuration, so a contradicting setting is a `ResumeError` naming
each one, never a silent change. The command line and the Python API plan and resume
through these two.
"""

from __future__ import annotations

import platform
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from difflib import get_close_matches
from typing import Any

from deedbench.engine.benchmark import Benchmark
from deedbench.engine.store import RunStore
from deedbench.errors import BenchmarkError, PlanError, ResumeError
from deedbench.records import (
    FORMAT,
    AgentParams,
    AgentSettings,
    GenerationParams,
    ModelRole,
    ModelUser,
    RunConfig,
    Sample,
)
from deedbench.version import __version__

__all__ = ["JUDGE_DEFAULTS", "new_run_config", "plan_run", "resume_run", "select_samples"]

JUDGE_DEFAULTS = AgentSettings(params=GenerationParams(temperature=0.0))
"""A judge's settings where none are given (and where a run recorded none): τ²'s, at
temperature 0."""


def new_run_config(
    *,
    run_id: str,
    benchmark: Benchmark[Any],
    agent: str,
    agent_params: AgentParams,
    conditions: list[str],
    epochs: int,
    seed: int,
    samples: list[Sample],
    user: ModelUser | None = None,
    judge: ModelRole | None = None,
) -> RunConfig:
    """The configuration recorded for a new run, every choice given; PlanError when its
    plan is beyond the bounds (`records.MAX_EPOCHS`, `records.MAX_PLANNED_EPISODES`)."""
    config = RunConfig(
        run_id=run_id,
        benchmark=benchmark.name,
        benchmark_options=benchmark.options,
        data_hash=benchmark.data_hash(),
        data_files=benchmark.data_files(),
        agent=agent,
        agent_params=agent_params,
        user=user,
        conditions=conditions,
        epochs=epochs,
        seed=seed,
        sample_ids=[s.id for s in samples],
        report=benchmark.recorded_report(),
        scorer=benchmark.scorer_spec(),
        judge=judge,
        deedbench_version=__version__,
        python_version=platform.python_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        format=FORMAT,
    )
    config.check_plan()
    return config


def plan_run(
    benchmark: Benchmark[Any],
    agent: str,
    *,
    run_id: str | None = None,
    settings: AgentSettings | None = None,
    conditions: Sequence[str] | None = None,
    epochs: int | None = None,
    seed: int = 0,
    limit: int | None = None,
    user_settings: AgentSettings | None = None,
    judge_settings: AgentSettings | None = None,
    samples: Sequence[str] | None = None,
) -> RunConfig:
    """A new run of `agent` (a spec, recorded as it is) on `benchmark`.

    `settings` are a model agent's (recorded typed, so whatever runs the episodes builds
    the same agent); `conditions` default to all of the benchmark's (each named once),
    `epochs` to its default, the samples to all of them (`samples`: those ids, in the
    benchmark's order, `select_samples`; `limit`: the first N);
    `run_id` to the benchmark's name with the time and a random suffix. When the
    benchmark has a model-played user, it is recorded with `user_settings`; when an
    option asks for a judging model (τ²'s ``judge``), with `judge_settings` (default:
    temperature 0, as τ² judges). Make each with `deedbench.agents.roles.role_settings`,
    which fills in what the run should record (the key's variable, the endpoint).
    BenchmarkError names unknown conditions; PlanError a plan beyond the bounds.
    """
    user_spec = benchmark.user_model_spec()
    user = None
    if user_spec is not None:
        user = ModelUser(
            spec=user_spec,
            settings=user_settings or AgentSettings(),
            prompt_version=benchmark.user_prompt_version,
        )
    judge_spec = benchmark.judge_model_spec()
    judge = None
    if judge_spec is not None:
        judge = ModelRole(spec=judge_spec, settings=judge_settings or JUDGE_DEFAULTS)
    chosen = select_samples(benchmark, samples)
    return new_run_config(
        run_id=run_id or _new_run_id(benchmark.declared_name or benchmark.name),
        benchmark=benchmark,
        agent=agent,
        agent_params=settings if settings is not None else {},
        conditions=_chosen(conditions, benchmark),
        epochs=epochs or benchmark.default_epochs,
        seed=seed,
        samples=chosen[:limit] if limit else chosen,
        user=user,
        judge=judge,
    )


def select_samples(benchmark: Benchmark[Any], ids: Sequence[str] | None) -> list[Sample]:
    """The benchmark's samples whose ids are `ids` (None: all of them), in the benchmark's
    order; an id it has no sample of is a BenchmarkError naming it and the nearest id."""
    samples = benchmark.samples()
    if ids is None:
        return samples
    known = {s.id for s in samples}
    unknown = [i for i in dict.fromkeys(ids) if i not in known]
    if unknown or not ids:
        near = {i: found[0] for i in unknown if (found := get_close_matches(i, known, n=1))}
        hint = "".join(f" ({i!r}: did you mean {n!r}?)" for i, n in near.items())
        first = ", ".join(s.id for s in samples[:3])
        raise BenchmarkError(
            f"no sample {', '.join(map(repr, unknown)) or 'named'} in {benchmark.name} "
            f"({len(samples)} samples: {first}, ...){hint}"
        )
    wanted = set(ids)
    return [s for s in samples if s.id in wanted]


def resume_run(
    store: RunStore,
    run_id: str,
    benchmark: Benchmark[Any],
    *,
    agent: str | None = None,
    conditions: Sequence[str] | None = None,
    epochs: int | None = None,
    seed: int | None = None,
    limit: int | None = None,
    settings: AgentSettings | None = None,
    user_settings: AgentSettings | None = None,
    judge_settings: AgentSettings | None = None,
    samples: Sequence[str] | None = None,
) -> RunConfig:
    """The recorded configuration of `run_id`, to execute what it still misses.

    `benchmark` must be the one the run was recorded with: same name, options and data
    (its hash). Each other argument given must agree with the record (None: whatever
    was recorded); of the settings of each model (the agent's, the user's, the judge's)
    the fields set are compared (`ModelChoice.given` sets only what was given).
    StoreError when there is no such run; ResumeError naming every setting that
    disagrees; PlanError when the recorded plan is beyond today's bounds.
    """
    config = store.require_run(run_id)
    conflicts = []
    recorded = config.role_settings
    for role, given in (("agent", settings), ("user", user_settings), ("judge", judge_settings)):
        if given is None:
            continue
        was = recorded[role][1] if role in recorded else _unrecorded(role, config)
        for name, old, new in _differences(was.model_dump(), given.model_dump(exclude_unset=True)):
            conflicts.append(f"{role} {name} {old!r} (got {new!r})")
    if agent is not None and agent != config.agent:
        conflicts.append(f"agent {config.agent!r} (got {agent!r})")
    if conditions is not None and _chosen(conditions, benchmark) != config.conditions:
        conflicts.append(f"conditions {','.join(config.conditions)} (got {','.join(conditions)})")
    if epochs is not None and epochs != config.epochs:
        conflicts.append(f"epochs {config.epochs} (got {epochs})")
    if seed is not None and seed != config.seed:
        conflicts.append(f"seed {config.seed} (got {seed})")
    if limit is not None and limit != len(config.sample_ids):
        conflicts.append(f"{len(config.sample_ids)} samples (got limit {limit})")
    if samples is not None and set(samples) != set(config.sample_ids):
        shown = ",".join(config.sample_ids[:5]) + ("..." if len(config.sample_ids) > 5 else "")
        conflicts.append(f"samples {shown} (got {','.join(samples)})")
    if benchmark.name != config.benchmark:
        conflicts.append(f"benchmark {config.benchmark!r} (got {benchmark.name!r})")
    else:
        if benchmark.options != config.benchmark_options:
            conflicts.append(
                f"benchmark options {config.benchmark_options} (got {benchmark.options})"
            )
        if benchmark.data_hash() != config.data_hash:
            data_hash = benchmark.data_hash()
            conflicts.append(f"data {config.data_hash} (the data now hashes to {data_hash})")
    if conflicts:
        raise ResumeError(
            f"run {config.run_id!r} was created with "
            + "; ".join(conflicts)
            + ". Resume without those settings, or start a new run id."
        )
    try:
        config.check_plan()  # recorded by a version without bounds
    except PlanError as exc:
        raise PlanError(f"run {config.run_id!r} cannot be resumed: {exc}") from None
    return config


def _unrecorded(role: str, config: RunConfig) -> AgentSettings:
    """What a run recorded nothing of a role ran with: a judge of a run recorded before
    judges were, with `JUDGE_DEFAULTS`; a role the run has no model in, with nothing
    (any setting given for it is a difference)."""
    if role == "judge" and "judge" in config.benchmark_options:
        return JUDGE_DEFAULTS
    return AgentSettings.model_construct()


def _differences(
    recorded: Mapping[str, Any], given: Mapping[str, Any], prefix: str = ""
) -> Iterator[tuple[str, Any, Any]]:
    """(setting, recorded value, given value) for each setting given that differs."""
    for key, new in given.items():
        name = f"{prefix}{key}".removeprefix("params.")
        old = recorded.get(key)
        if isinstance(new, Mapping) and isinstance(old, Mapping) and key != "extra":
            yield from _differences(old, new, f"{prefix}{key}.")
        elif old != new:
            yield name, old, new


def _chosen(conditions: Sequence[str] | None, benchmark: Benchmark[Any]) -> list[str]:
    """The conditions named, each once, in the order first named (None: all of them)."""
    valid = benchmark.conditions
    if conditions is None:
        return list(valid)
    chosen = list(dict.fromkeys(conditions))
    unknown = [c for c in chosen if c not in valid]
    if unknown or not chosen:
        raise BenchmarkError(
            f"unknown condition(s) {unknown or list(conditions)!r}. "
            f"Valid conditions: {', '.join(valid)}"
        )
    return chosen


def _new_run_id(benchmark: str) -> str:
    """A fresh id that keeps the run-id rule: the benchmark's own name (a python/MODULE:ATTR
    class that declares none by its ATTR), characters outside the rule made dashes."""
    name = benchmark.rpartition(":")[2] if benchmark.startswith("python/") else benchmark
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._") or "run"
    return f"{stem}-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
