"""Runs of τ²'s domains as a submission to τ²-bench's leaderboard.

One run per τ² domain (of tau2-airline, tau2-retail, tau2-telecom, tau2-banking)
becomes what τ²'s ``prepare_submission`` makes, and what its validator checks:

    DIR/submission.json                   τ²'s ``Submission`` (its leaderboard schema)
    DIR/trajectories/<domain>_results.json   τ²'s ``Results``, one JSON file per domain

Before anything is written the runs must meet the leaderboard's rules (`tau2_rules`),
and a `UsageError` names the run and the rule otherwise. Who acted is named as τ²
names it (`tau2_parties`).

The figures (pass^1 to pass^4 as percentages, the mean agent cost) are computed
from the written files as τ²'s ``get_metrics`` computes them, to the last bit
(`tau2_figures`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.judge import DEFAULT_JUDGE
from deedbench.benchmarks.tau2.results import (
    TAU2_ENDINGS,
    Tau2Info,
    Tau2Results,
    Tau2Simulation,
    tau2_messages,
    write_results,
)
from deedbench.benchmarks.tau2.scorer import TAU2_TERMINATIONS
from deedbench.engine import RunStore
from deedbench.errors import OutputError, UsageError
from deedbench.interop.tau2_figures import DomainFigures as _DomainFigures
from deedbench.interop.tau2_figures import tau2_figures as _tau2_figures
from deedbench.interop.tau2_parties import agent_party, is_model, model_name, user_party, who
from deedbench.interop.tau2_rules import (
    check_episodes,
    check_run,
    check_together,
    leaderboard_benchmark,
)
from deedbench.interop.tau2_texts import check_texts, shown_texts, texts_note
from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig, Usage
from deedbench.reports.cost import PriceTable
from deedbench.version import __version__

__all__ = [
    "SUBMISSION_FILE",
    "TAU2_VERSION",
    "TRAJECTORIES_DIR",
    "ExportedDomain",
    "SubmissionDetails",
    "SubmissionExport",
    "export_submission",
]

TAU2_VERSION = "1.0.1"
"""The τ²-bench release whose protocol and evaluator deedbench reproduces."""
SUBMISSION_FILE = "submission.json"
TRAJECTORIES_DIR = "trajectories"
_DOMAIN_ORDER = ("retail", "airline", "telecom", "banking_knowledge")  # τ²'s DOMAINS
_ORGANIZATIONS = {"openai": "OpenAI", "anthropic": "Anthropic"}
_NAMESPACE = uuid.UUID("6f1f6f36-5d5e-4d55-9c0e-7461752d6578")  # simulation ids
_MOVED = {
    "DomainFigures": "tau2_figures",
    "LEADERBOARD_BENCHMARKS": "tau2_rules",
    "MIN_TRIALS": "tau2_rules",
    "tau2_figures": "tau2_figures",
}


def __getattr__(name: str) -> Any:
    """The names that moved to modules of their own, for a release, with a warning."""
    if name in _MOVED:
        from importlib import import_module

        home = f"deedbench.interop.{_MOVED[name]}"
        warnings.warn(
            f"deedbench.interop.tau2_export.{name} has moved: import it from {home}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module(home), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class SubmissionDetails:
    """What the submission schema asks for and a run does not hold."""

    model_name: str | None = None
    """default: the agent's model, as the trajectories name it"""
    model_org: str | None = None
    """default: from the agent's provider (openai: OpenAI, anthropic: Anthropic)"""
    submitting_org: str | None = None
    """default: the model's organization"""
    contact_email: str | None = None
    contact_name: str | None = None


@dataclass(frozen=True)
class ExportedDomain:
    """One domain's trajectory file, the run it came from, and its figures."""

    domain: str
    run_id: str
    path: Path
    figures: _DomainFigures


@dataclass
class SubmissionExport:
    """What `export_submission` wrote, and what its reader should be told."""

    folder: Path
    submission: Path
    domains: list[ExportedDomain] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- the files -------------------------------------------------------------------------

_ENDINGS = {str(ending): name for name, ending in TAU2_ENDINGS.items()}


def _ending(termination: str) -> str:
    """τ²'s termination reason for a deedbench ending. The provider's limits τ² has no
    name for (a reply cut at its token limit or stopped by a content filter) and any
    other end the agent's turn could not go on from are τ²'s ``agent_error``: like every
    ending but a stop, it scores 0 in both."""
    return TAU2_TERMINATIONS.get(termination) or _ENDINGS.get(termination) or "agent_error"


def _cost(spec: str | None, usage: Usage | None, prices: PriceTable) -> float | None:
    """What a side's calls cost at list price (None: no model, or a model without a
    price). Every call counts, deedbench's cached answers too: the leaderboard asks what
    a trajectory costs to run."""
    if spec is None or not is_model(spec):
        return None
    price = prices.find(spec)
    return price.cost(usage or Usage()) if price is not None else None


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def _simulation(
    config: RunConfig, bench: Tau2Benchmark, record: EpisodeRecord, prices: PriceTable
) -> Tau2Simulation:
    trial = record.epoch - 1
    score = record.score
    details = score.details if score is not None and score.details else {}
    return Tau2Simulation.model_validate(
        {
            "id": str(uuid.uuid5(_NAMESPACE, f"{config.run_id}/{record.sample_id}/{trial}")),
            "task_id": record.sample_id,
            "timestamp": _iso(record.started_at),
            "start_time": _iso(record.started_at),
            "end_time": _iso(record.started_at + record.duration_s),
            "duration": record.duration_s,
            "termination_reason": _ending(record.termination),
            "agent_cost": _cost(config.agent, record.usage.get("assistant"), prices),
            "user_cost": _cost(
                config.user.spec if config.user else None, record.usage.get("user"), prices
            ),
            "reward_info": details["reward_info"],
            "messages": tau2_messages(record.messages),
            "trial": trial,
            "seed": record.seed,
            "mode": "half_duplex",
            "policy": bench.task_policy(bench.tasks[record.sample_id]),
            "info": {
                "deedbench": {
                    "run_id": config.run_id,
                    "epoch": record.epoch,
                    "termination": record.termination,
                    "outcome": score.outcome if score is not None else None,
                }
            },
        }
    )


def _results(
    store: RunStore, config: RunConfig, bench: Tau2Benchmark, prices: PriceTable
) -> Tau2Results:
    """The run as τ²'s ``Results``: the split's tasks as τ² reads them, every trial of
    each, in the order of trials, then tasks."""
    tasks = list(bench.tasks.values())
    options = {k: v for k, v in config.benchmark_options.items() if k != "data"}
    info = Tau2Info.model_validate(
        {
            "git_commit": "",
            "num_trials": config.epochs,
            "max_steps": bench.values["max_steps"],
            "max_errors": bench.values["max_errors"],
            "user_info": user_party(config).model_dump(),
            "agent_info": agent_party(config).model_dump(),
            "environment_info": {"domain_name": bench.domain.tau2_name, "policy": bench.policy},
            "seed": config.seed,
            "retrieval_config": bench.values.get("retrieval"),
            "deedbench": {
                "version": __version__,
                "run_id": config.run_id,
                "benchmark": config.benchmark,
                "options": options,
                "agent": config.agent,
                "user": config.user.spec if config.user else "scripted",
            },
        }
    )
    condition = config.conditions[0]
    keys = [EpisodeKey(t.id, condition, e) for e in range(1, config.epochs + 1) for t in tasks]
    records = store.records(config.run_id, keys)
    simulations = [_simulation(config, bench, r.redacted(), prices) for r in records]
    if len(simulations) != len(keys):  # a record damaged since it was checked
        raise UsageError(
            f"run {config.run_id!r}: {len(keys) - len(simulations)} of its records cannot "
            "be read (see the warnings above)"
        )
    return Tau2Results(
        timestamp=config.created_at,
        info=info,
        tasks=[t.raw for t in tasks],
        simulations=simulations,
    )


# --- the submission --------------------------------------------------------------------


def export_submission(
    store: RunStore,
    run_ids: Sequence[str],
    folder: Path,
    details: SubmissionDetails | None = None,
    prices: PriceTable | None = None,
    today: date | None = None,
    own_wording: bool = False,
) -> SubmissionExport:
    """Write `folder` (which must be new or empty) as τ²'s leaderboard asks, from one run
    per τ² domain; `UsageError` naming the run and the rule when the runs do not meet
    the leaderboard's rules, `OutputError` when the folder cannot be written (an empty
    folder that cannot be written to is refused, never replaced). Nothing is left in
    `folder` unless all of it was written."""
    details = details or SubmissionDetails()
    if not run_ids:
        raise UsageError("give one run per τ² domain")
    configs = [store.require_run(run_id) for run_id in run_ids]
    for config in configs:
        check_run(config)
    check_together(configs)
    check_texts(configs, own_wording)
    first = configs[0]
    llm = model_name(first.agent)
    organization = details.model_org or _ORGANIZATIONS.get(first.agent.partition("/")[0])
    if not organization:
        raise UsageError(
            f"who made {first.agent}? give --model-org (deedbench knows openai's and "
            "anthropic's models only)"
        )
    _check_folder(folder)
    benches = [leaderboard_benchmark(config) for config in configs]
    for config, bench in zip(configs, benches, strict=True):
        check_episodes(store, config, bench)
    prices = prices or PriceTable.load()
    export = SubmissionExport(folder=folder, submission=folder / SUBMISSION_FILE)
    export.warnings += _warnings(first, benches, details.model_name, llm)
    runs = sorted(
        zip(configs, benches, strict=True),
        key=lambda pair: _DOMAIN_ORDER.index(pair[1].domain.tau2_name),
    )
    existed = folder.is_dir()
    building = _scratch(folder, existed)
    try:
        for config, bench in runs:
            domain = bench.domain.tau2_name
            name = f"{domain}_results.json"
            results = _results(store, config, bench, prices)
            write_results(results, building / TRAJECTORIES_DIR / name)
            export.domains.append(
                ExportedDomain(
                    domain=domain,
                    run_id=config.run_id,
                    path=folder / TRAJECTORIES_DIR / name,
                    figures=_tau2_figures(results),
                )
            )
        submission = _submission(
            configs, [b for _, b in runs], export.domains, details, llm, organization, today
        )
        text = json.dumps(submission, indent=2, ensure_ascii=False) + "\n"
        (building / SUBMISSION_FILE).write_text(text, encoding="utf-8")
        if existed:
            _move_into(building, folder)
        else:
            os.rename(building, folder)  # a new folder: all of it, at once
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise OutputError(f"cannot write the submission into {folder}: {exc}") from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return export


def _check_folder(folder: Path) -> None:
    if folder.exists() and not (folder.is_dir() and not any(folder.iterdir())):
        raise OutputError(
            f"cannot write the submission into {folder}: it exists and is not an empty "
            "folder (τ²'s validator reads every file in trajectories/); name a new one"
        )
    if not folder.parent.is_dir():
        raise OutputError(
            f"cannot write the submission into {folder}: the folder {folder.parent} does not exist"
        )


def _scratch(folder: Path, existed: bool) -> Path:
    """A hidden folder to build the submission in: inside `folder` when it exists (so an
    empty folder it cannot write is refused here, before anything is written, and the
    folder the user made stays theirs), else beside it, as a new folder's mode."""
    where = folder if existed else folder.parent
    try:
        building = Path(tempfile.mkdtemp(dir=where, prefix=f".{folder.name}."))
        mask = os.umask(0)
        os.umask(mask)
        building.chmod(0o777 & ~mask)
    except OSError as exc:
        reason = "it cannot be written to" if existed else str(exc)
        raise OutputError(f"cannot write the submission into {folder}: {reason}") from None
    return building


def _move_into(building: Path, folder: Path) -> None:
    """The built files moved into the existing `folder`, the trajectories first and the
    submission last (what τ²'s validator starts from), each by one rename; on a failure,
    those moved are taken out again."""
    moved: list[Path] = []
    try:
        for name in (TRAJECTORIES_DIR, SUBMISSION_FILE):
            os.rename(building / name, folder / name)
            moved.append(folder / name)
        building.rmdir()
    except OSError:
        for path in moved:
            os.rename(path, building / path.name)
        raise


def _warnings(
    config: RunConfig, benches: Sequence[Tau2Benchmark], model_name: str | None, llm: str
) -> list[str]:
    found = []
    kind = config.agent.partition("/")[0]
    if kind == "baseline":
        found.append(
            f"the agent of run {config.run_id!r} is {config.agent}, a deedbench baseline: "
            "this is no model's submission"
        )
    elif config.user is None:
        found.append(
            "the user was deedbench's scripted user, not a model playing τ²'s user "
            "simulator, as the leaderboard's figures are made"
        )
    for bench in benches:
        judge = _judge(bench)
        if judge is not None and judge != DEFAULT_JUDGE:
            found.append(
                f"{bench.domain.tau2_name}'s NL assertions were judged by {judge}, not by "
                f"τ²'s judge ({DEFAULT_JUDGE}); the methodology's notes say so"
            )
    if model_name is not None and model_name != llm:
        found.append(
            f"the model name {model_name!r} is not the model the trajectories name ({llm!r}): "
            "τ²'s validator will say so"
        )
    return found


def _judge(bench: Tau2Benchmark) -> str | None:
    """The model that judged the NL assertions of a domain that has some."""
    judge: str | None = bench.values.get("judge")
    return judge if judge and any(t.needs_judge for t in bench.tasks.values()) else None


def _submission(
    configs: Sequence[RunConfig],
    benches: Sequence[Tau2Benchmark],
    domains: Sequence[ExportedDomain],
    details: SubmissionDetails,
    llm: str,
    organization: str,
    today: date | None,
) -> dict[str, Any]:
    first = configs[0]
    settings = first.agent_settings
    user = user_party(first)
    submission = {
        "model_name": details.model_name or llm,
        "model_organization": organization,
        "submitting_organization": details.submitting_org or organization,
        "submission_date": (today or date.today()).isoformat(),
        "submission_type": "custom",
        "modality": "text",
        "contact_info": {"email": details.contact_email, "name": details.contact_name},
        "results": {d.domain: d.figures.model_dump() for d in domains},
        "is_new": False,
        "trajectories_available": True,
        "trajectory_files": {d.domain: d.path.name for d in domains},
        "methodology": {
            "evaluation_date": max((d for c in configs if (d := _day(c.created_at))), default=None),
            "tau2_bench_version": TAU2_VERSION,
            "user_simulator": user.llm,
            "notes": _notes(configs, benches, domains),
            "verification": {
                "modified_prompts": True
                if any(shown_texts(c) is None for c in configs)
                else (False if _as_tau2_prompts(first) else None),
                "omitted_questions": False,
                "details": _verification(first),
            },
        },
        "reasoning_effort": settings.params.reasoning_effort if settings else None,
    }
    cleaned: dict[str, Any] = _without_none(submission)
    return cleaned


def _without_none(value: Any) -> Any:
    """As τ²'s ``model_dump_json(exclude_none=True)`` writes a submission."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    return value


def _day(created_at: str) -> str | None:
    try:
        return datetime.fromisoformat(created_at).date().isoformat()
    except ValueError:
        return None


def _notes(
    configs: Sequence[RunConfig],
    benches: Sequence[Tau2Benchmark],
    domains: Sequence[ExportedDomain],
) -> str:
    first = configs[0]
    agent = agent_party(first)
    kind = first.agent.partition("/")[0]
    if is_model(first.agent):
        acted = f"The agent: {who(agent, first.agent)}, with τ²'s agent instruction and policy."
    elif kind == "baseline":
        acted = f"The agent: {first.agent}, a deedbench baseline (no model)."
    else:
        acted = f"The agent: {first.agent}, the submitter's own."
    if first.user is not None:
        user = (
            f"The user: a model playing τ²'s user simulator (its v{TAU2_VERSION} prompt), "
            f"{who(user_party(first), first.user.spec)}."
        )
    else:
        user = (
            "The user: deedbench's scripted user (no model), which states the task's "
            "reason, consents, performs the task's gold user actions and stops: not τ²'s "
            "user simulator."
        )
    judged = sorted({j for b in benches if (j := _judge(b)) is not None})
    judge = (
        f" NL assertions judged by {', '.join(judged)} (τ²'s own judge: {DEFAULT_JUDGE})."
        if judged
        else ""
    )
    ran = "; ".join(
        f"{d.domain}: run {d.run_id} ({c.epochs} trials, max {b.values['max_steps']} steps, "
        f"{b.values['max_errors']} errors)"
        for d, (c, b) in zip(domains, _by_domain(configs, benches, domains), strict=True)
    )
    return (
        f"Made with deedbench {__version__}: its reimplementation of τ²-bench "
        f"v{TAU2_VERSION}'s half-duplex protocol and evaluator (τ²'s reward, as "
        f"evaluate_simulation computes it), not τ²'s own code, on τ²'s base-split tasks. "
        f"{acted} {user}{judge}{texts_note(configs)} Runs: {ran}."
    )


def _by_domain(
    configs: Sequence[RunConfig],
    benches: Sequence[Tau2Benchmark],
    domains: Sequence[ExportedDomain],
) -> Iterable[tuple[RunConfig, Tau2Benchmark]]:
    pairs = {c.run_id: (c, b) for c, b in zip(configs, benches, strict=True)}
    return [pairs[d.run_id] for d in domains]


def _as_tau2_prompts(config: RunConfig) -> bool:
    """A model agent given τ²'s system prompt, and a model playing τ²'s user simulator."""
    return is_model(config.agent) and config.user is not None


def _verification(config: RunConfig) -> str:
    said = []
    if is_model(config.agent):
        if shown_texts(config) is not None:
            said.append(
                "the agent read τ²'s agent instruction, policy and tool descriptions and "
                f"schemas, read from τ²'s own source ({shown_texts(config)})"
            )
        else:
            said.append(
                "the agent read τ²'s policy, but deedbench's own wording of τ²'s agent "
                "instruction and tool descriptions (no τ² source was found)"
            )
    else:
        said.append(f"the agent ({config.agent}) is no model given τ²'s prompt")
    if config.user is not None:
        said.append(f"the user simulator read τ²'s v{TAU2_VERSION} prompt")
    else:
        said.append(
            "no user simulator prompt was used: deedbench's scripted user played the customer"
        )
    text = "; ".join(said)
    return text[0].upper() + text[1:] + ". Every task of the base split was run."
