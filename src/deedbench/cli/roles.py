"""The models of the commands, by role: each role's flags made into its settings (for
`run`, and for the judges of `audit`, `rescore` and `import`), the settings a resume
compares, the dry run that builds them as the run would, and the judges' old flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import console, fail, parse_pairs, warn
from deedbench.errors import DeedbenchError, RunAborted
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.agents import Providers
    from deedbench.agents.roles import ModelChoice
    from deedbench.engine import Agent, Benchmark, RunStore
    from deedbench.records import AgentSettings, RunConfig

__all__ = [
    "JudgeApiKeyEnvOption",
    "JudgeArgOption",
    "JudgeBaseUrlOption",
    "JudgeMaxTokensOption",
    "JudgeTemperatureOption",
    "OldApiKeyEnvOption",
    "OldBaseUrlOption",
    "deprecated_flag",
    "describe_settings",
    "dry_run",
    "given_settings",
    "judge_agent",
    "judge_choice",
    "model_args",
    "model_settings",
    "planned_settings",
    "role_lines",
    "role_options",
]

JudgeBaseUrlOption = Annotated[str | None, typer.Option(help="Endpoint of the judge.")]
JudgeApiKeyEnvOption = Annotated[
    str | None, typer.Option(help="Variable holding the judge's API key.")
]
JudgeTemperatureOption = Annotated[
    float | None, typer.Option(help="Temperature of the judge (default 0, as τ²'s).")
]
JudgeMaxTokensOption = Annotated[
    int | None, typer.Option(min=1, help="Output token limit of the judge.")
]
JudgeArgOption = Annotated[
    list[str] | None,
    typer.Option("-J", "--judge-arg", help="Any other parameter KEY=VALUE of the judge."),
]
OldBaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="Deprecated: --judge-base-url.", hidden=True)
]
OldApiKeyEnvOption = Annotated[
    str | None,
    typer.Option("--api-key-env", help="Deprecated: --judge-api-key-env.", hidden=True),
]


def model_settings(
    role: str,
    spec: str,
    choice: ModelChoice | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> AgentSettings:
    """What the model in `role` ("agent", "user", "judge", "audit judge") is built from,
    from the command line's flags for it: every command makes each role's settings here,
    through the function a study file and the Python API use too
    (`deedbench.agents.roles.role_settings`)."""
    from deedbench.agents.roles import role_settings

    return role_settings(role, spec, choice, defaults=defaults)


def judge_agent(
    spec: str, choice: ModelChoice, providers: Providers, *, role: str = "judge"
) -> tuple[Agent, AgentSettings]:
    """A judge (τ²'s NL judge for `rescore` and `import`; the audit's judge) as a model
    agent from the registry, so it shares the cache, retries, rate limits and usage
    accounting of every agent, and the settings it was built with; a spec that is no
    model is exit 2."""
    from deedbench.agents import is_model_spec, resolve_agent
    from deedbench.agents.providers import model_provider, provider_names
    from deedbench.agents.roles import ROLES

    prefix, _, rest = spec.partition("/")
    if not is_model_spec(spec) and not (prefix == "python" and ":" in rest):
        flag = ROLES[role].flag("base_url")
        models = [
            f"{name}/MODEL" + (f" (with {flag})" if model_provider(name).needs_base_url else "")
            for name in provider_names()
        ]
        raise fail(
            f"--judge takes a model: {', '.join(models)}, or python/MODULE:ATTRIBUTE; got {spec!r}"
        )
    settings = model_settings(role, spec, choice)
    try:  # a judge is no baseline; an AgentSpecError is exit 2
        return resolve_agent(spec, None, settings, providers), settings
    except RunAborted as exc:
        raise fail(str(exc), code=1) from None


def model_args(pairs: list[str], flag: str) -> dict[str, object]:
    """-M (-U, -J) values are JSON where they parse as JSON (numbers, booleans, objects),
    else text."""
    import json

    result: dict[str, object] = {}
    for key, text in parse_pairs(pairs, flag).items():
        try:
            result[key] = json.loads(text)
        except json.JSONDecodeError:
            result[key] = text
        except RecursionError:
            raise fail(f"{flag} {key}: the JSON value is nested too deeply") from None
    return result


def judge_choice(
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    max_tokens: int | None,
    args: list[str] | None,
    *,
    old_base_url: str | None = None,
    old_api_key_env: str | None = None,
) -> ModelChoice:
    """A judge's settings from its flags (``--judge-base-url``, ``--judge-api-key-env``,
    ``--judge-temperature``, ``--judge-max-tokens``, ``-J``); the deprecated
    ``--base-url`` and ``--api-key-env`` of the commands whose only model is a judge are
    taken where the new flag is not given, with a warning."""
    from deedbench.agents.roles import ModelChoice

    for old, value, new in (
        ("--base-url", old_base_url, "--judge-base-url"),
        ("--api-key-env", old_api_key_env, "--judge-api-key-env"),
    ):
        if value is not None:
            deprecated_flag(old, new)
    base_url = base_url if base_url is not None else old_base_url
    api_key_env = api_key_env if api_key_env is not None else old_api_key_env
    return ModelChoice(
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        max_tokens=max_tokens,
        extra=model_args(args or [], "-J"),
    )


def deprecated_flag(old: str, new: str) -> None:
    """Say that `old` is deprecated in favour of `new`: a DeprecationWarning (for code
    that runs the CLI in-process) and a line on stderr (for the user at a terminal)."""
    import warnings

    message = f"{old} is deprecated: use {new} (the same setting; {old} goes in a later release)"
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    warn(message)


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
