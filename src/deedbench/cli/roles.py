"""The models of `deedbench run`, by role: flags to each role's settings, the settings a
resume compares, and the dry run that builds them as the run would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deedbench.cli.app import console, fail, model_settings
from deedbench.errors import DeedbenchError, RunAborted
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.agents.roles import ModelChoice
    from deedbench.engine import Benchmark, RunStore
    from deedbench.records import AgentSettings, RunConfig

__all__ = [
    "describe_settings",
    "dry_run",
    "given_settings",
    "planned_settings",
    "role_lines",
    "role_options",
]


def role_options(
    benchmark: str, *, user: str | None, judge: str | None, given: dict[str, str]
) -> dict[str, str]:
    """The benchmark options `--user SPEC` and `--judge SPEC` stand for (``user=llm:SPEC``,
    ``judge=SPEC``); an error when the benchmark has no such role, or -T gives it too."""
    from deedbench.benchmarks import benchmark_class

    declared = {o.name for o in benchmark_class(benchmark).option_specs}
    found = {}
    for flag, name, spec, value in (
        ("--user", "user", user, f"llm:{user}"),
        ("--judge", "judge", judge, judge),
    ):
        if spec is None:
            continue
        if name not in declared:
            what = "model-played user" if name == "user" else "judge"
            raise fail(f"{flag}: benchmark {benchmark!r} has no {what}")
        if name in given and given[name].removeprefix("user/") != value:
            raise fail(f"{flag} {spec} and -T {name}={given[name]} disagree: give one of them")
        found[name] = str(value)
    return found


_ROLE_FLAGS = {"user": "--user-*, -U", "judge": "--judge-*, -J"}


def planned_settings(
    bench: Benchmark[Any],
    agent: str,
    choices: dict[str, ModelChoice],
    shared: ModelChoice,
) -> dict[str, AgentSettings | None]:
    """Each model role's settings for a new run (`plan_run`'s keywords), made from the
    flags by the one function every way of making a run uses (`role_settings`); the
    flags of a role the run has no model in are an error, not ignored."""
    from deedbench.agents import is_model_spec

    specs = {
        "agent": agent if is_model_spec(agent) else None,
        "user": bench.user_model_spec(),
        "judge": bench.judge_model_spec(),
    }
    found: dict[str, AgentSettings | None] = {}
    for role, spec in specs.items():
        choice = choices[role]
        if spec is None:
            if role != "agent" and not choice.is_empty():
                option = "user=llm:SPEC" if role == "user" else "judge=SPEC"
                raise fail(
                    f"{_ROLE_FLAGS[role]} set the {role}'s model, but the run has none "
                    f"(give one with --{role} SPEC, or -T {option})"
                )
            found[role] = None
            continue
        merged = choice.model_copy(update=shared.model_dump(exclude_defaults=True))
        defaults = bench.generation_defaults if role == "agent" else None
        found[role] = model_settings(role, spec, merged, defaults=defaults)
    return {
        "settings": found["agent"],
        "user_settings": found["user"],
        "judge_settings": found["judge"],
    }


def given_settings(
    existing: RunConfig, choices: dict[str, ModelChoice], shared: ModelChoice
) -> dict[str, AgentSettings | None]:
    """What the flags give of each role's settings on a resume (`resume_run` compares
    each with the record): a role's own flags, and the flags every role shares for the
    roles the run has a model in."""
    recorded = existing.role_settings
    found: dict[str, AgentSettings | None] = {}
    for role, choice in choices.items():
        merged = choice
        if role in recorded:
            merged = choice.model_copy(update=shared.model_dump(exclude_defaults=True))
        found[role] = None if merged.is_empty() else merged.given()
    return {
        "settings": found["agent"],
        "user_settings": found["user"],
        "judge_settings": found["judge"],
    }


def dry_run(
    config: RunConfig, bench: Benchmark[Any], *, resumed: bool, runs: RunStore | None
) -> None:
    """Print the plan, then build the run's models as the run would: what it would refuse
    (a bad spec, a base URL or a key missing, an SDK not installed) is refused, with the
    run's exit code (1 for a key missing, else 2)."""
    from deedbench.recipes import RunRecipe

    done = runs.count(config.run_id).get("scored", 0) if resumed and runs is not None else 0
    total = config.planned_episodes
    console.print(
        f"dry run: {'resume' if resumed else 'start'} run {safe(config.run_id)} of "
        f"{safe(config.benchmark)}: {total - done:,} of {total:,} episodes to run "
        f"({len(config.sample_ids):,} samples x {len(config.conditions)} conditions x "
        f"{config.epochs} epochs); nothing written",
        highlight=False,
    )
    for line in role_lines(config):
        console.print(f"  {safe(line)}", highlight=False)
    try:
        RunRecipe(config, cache=False, benchmark=bench).build(None, 1)
    except RunAborted as exc:  # a key missing: as the run exits
        raise fail(str(exc), code=1) from None
    except DeedbenchError as exc:
        raise fail(str(exc)) from None


def role_lines(config: RunConfig) -> list[str]:
    """One line per model role of a run: its spec and its recorded settings."""
    lines = [] if config.agent_settings is not None else [f"agent {config.agent}"]
    for role, (spec, settings) in config.role_settings.items():
        lines.append(f"{role} {spec}: {describe_settings(settings)}")
    return lines


def describe_settings(settings: AgentSettings) -> str:
    """A model's settings in a line: endpoint, key variable, what is sent."""
    sent = {
        k: v
        for k, v in settings.params.model_dump(exclude={"extra"}).items()
        if v is not None and k != "timeout"
    }
    sent |= settings.params.extra
    endpoint = settings.base_url or "the provider's own"
    parts = [f"endpoint {endpoint}"]
    if settings.api_key_env:
        parts.append(f"key from ${settings.api_key_env}")
    parts.append(", ".join(f"{k} {v}" for k, v in sent.items()) or "provider defaults")
    return "; ".join(parts)
