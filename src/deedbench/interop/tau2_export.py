"""Runs of τ²'s domains as a submission to τ²-bench's leaderboard.

One run per τ² domain (of tau2-airline, tau2-retail, tau2-telecom, tau2-banking)
becomes what τ²'s ``prepare_submission`` makes, and what its validator checks:

    DIR/submission.json                   τ²'s ``Submission`` (its leaderboard schema)
    DIR/trajectories/<domain>_results.json   τ²'s ``Results``, one JSON file per domain

Before anything is written the runs must meet the leaderboard's rules, and a
`UsageError` names the run and the rule otherwise: a leaderboard domain (not
telecom's workflow policy, not solo mode), the ``base`` split, at least 4 trials,
every task of the split run that many times and scored (no infrastructure error
left, no episode waiting for a judge), the data unchanged since the run, one run
per domain, and one agent and one user (model and settings) across them, as τ²'s
``validate_submission_traj_set`` demands.

The figures (pass^1 to pass^4 as percentages, the mean agent cost) are computed
from the written files as τ²'s ``get_metrics`` computes them, to the last bit:
its ``validate_submission_metrics`` compares them with its own by equality. That
means τ²'s order of summation, too (`tau2_figures`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks import benchmark_class, load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.judge import DEFAULT_JUDGE
from deedbench.benchmarks.tau2.results import (
    TAU2_ENDINGS,
    Tau2Info,
    Tau2Party,
    Tau2Results,
    Tau2Simulation,
    task_num_actions,
    tau2_messages,
    write_results,
)
from deedbench.benchmarks.tau2.scorer import TAU2_TERMINATIONS
from deedbench.engine import RunStore
from deedbench.errors import BenchmarkError, OutputError, UsageError
from deedbench.interop.tau2_texts import check_texts, shown_texts, texts_note
from deedbench.records import AgentSettings, EpisodeKey, EpisodeRecord, RunConfig, Usage
from deedbench.reports.cost import PriceTable
from deedbench.stats import tau2_pass_hat_k
from deedbench.version import __version__

__all__ = [
    "LEADERBOARD_BENCHMARKS",
    "MIN_TRIALS",
    "SUBMISSION_FILE",
    "TAU2_VERSION",
    "TRAJECTORIES_DIR",
    "DomainFigures",
    "ExportedDomain",
    "SubmissionDetails",
    "SubmissionExport",
    "export_submission",
    "tau2_figures",
]

TAU2_VERSION = "1.0.1"
"""The τ²-bench release whose protocol and evaluator deedbench reproduces."""
SUBMISSION_FILE = "submission.json"
TRAJECTORIES_DIR = "trajectories"
MIN_TRIALS = 4
"""The leaderboard's trials per task: it shows pass^1 to pass^4."""
LEADERBOARD_BENCHMARKS = ("tau2-airline", "tau2-retail", "tau2-telecom", "tau2-banking")
_DOMAIN_ORDER = ("retail", "airline", "telecom", "banking_knowledge")  # τ²'s DOMAINS
_ORGANIZATIONS = {"openai": "OpenAI", "anthropic": "Anthropic"}
_NOT_MODELS = ("baseline", "python")  # agent kinds that are no provider's model
_SCORED = ("pass", "fail", "pass_broke_procedure")
_NAMESPACE = uuid.UUID("6f1f6f36-5d5e-4d55-9c0e-7461752d6578")  # simulation ids
_GENERATION = ("temperature", "max_tokens", "top_p", "seed", "reasoning_effort")


class DomainFigures(BaseModel):
    """τ²'s ``DomainResults``: pass^1 to pass^4 in percent, the mean agent cost in USD
    (None: unknown), the retrieval variant (banking_knowledge only)."""

    pass_1: float | None = None
    pass_2: float | None = None
    pass_3: float | None = None
    pass_4: float | None = None
    cost: float | None = None
    retrieval_config: str | None = None


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
    figures: DomainFigures


@dataclass
class SubmissionExport:
    """What `export_submission` wrote, and what its reader should be told."""

    folder: Path
    submission: Path
    domains: list[ExportedDomain] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- the figures, as τ²'s get_metrics computes them ------------------------------------


def tau2_figures(results: Tau2Results) -> DomainFigures:
    """One result file's figures as τ²'s ``get_metrics`` gives them, to the last bit:
    pass^k as `stats.tau2_pass_hat_k` computes it (infrastructure errors left out, a
    success within 1e-6 of 1, τ²'s order of summation), and the cost as pandas' mean of
    ``agent_cost`` over the simulations in the file's order, unknown ones left out (None
    when all are).
    """
    import numpy as np

    banking = results.info.domain == "banking_knowledge"
    retrieval = (results.info.retrieval_config or None) if banking else None
    sims = [s for s in results.simulations if s.termination_reason != "infrastructure_error"]
    if not sims:  # τ²'s metrics of nothing: no pass^k, a cost of 0
        return DomainFigures(cost=0.0, retrieval_config=retrieval)
    outcomes: dict[str, list[bool]] = {}
    for sim in sims:
        reward = float((sim.reward_info or {})["reward"])
        outcomes.setdefault(sim.task_id, []).append(1 - 1e-6 <= reward <= 1 + 1e-6)
    actions = {str(task.get("id")): task_num_actions(task) for task in results.tasks}
    rates = tau2_pass_hat_k(outcomes, results.info.num_trials, actions)
    passes = {k: value * 100 for k, value in rates.items()}
    costs = [s.agent_cost for s in sims]
    known = sum(c is not None for c in costs)
    cost = None
    if known:
        total = np.array([c if c is not None else 0.0 for c in costs], dtype=np.float64).sum()
        cost = float(total / known)
    return DomainFigures(
        pass_1=passes.get(1),
        pass_2=passes.get(2),
        pass_3=passes.get(3),
        pass_4=passes.get(4),
        cost=cost,
        retrieval_config=retrieval,
    )


# --- who acted -------------------------------------------------------------------------


def _model_name(spec: str) -> str:
    """What τ²'s ``llm`` field names: a provider's model without deedbench's provider
    prefix (``openai/gpt-4o``: ``gpt-4o``); any other agent by its whole spec."""
    kind, _, model = spec.partition("/")
    return spec if kind in _NOT_MODELS or not model else model


def _is_model(spec: str) -> bool:
    return spec.partition("/")[0] not in _NOT_MODELS


def _llm_args(settings: AgentSettings | None) -> dict[str, Any] | None:
    """The generation parameters sent with each call (τ²'s ``llm_args``)."""
    if settings is None:
        return None
    params = settings.params
    found = {name: getattr(params, name) for name in _GENERATION}
    return {k: v for k, v in found.items() if v is not None} | dict(params.extra)


def _agent(config: RunConfig) -> Tau2Party:
    spec = config.agent
    kind = spec.partition("/")[0]
    implementation = "llm_agent" if _is_model(spec) else f"deedbench_{kind}_agent"
    return Tau2Party(
        implementation=implementation,
        llm=_model_name(spec),
        llm_args=_llm_args(config.agent_settings),
    )


def _user(config: RunConfig) -> Tau2Party:
    if config.user is None:
        return Tau2Party(implementation="deedbench_scripted_user")
    return Tau2Party(
        implementation="user_simulator",
        llm=_model_name(config.user.spec),
        llm_args=_llm_args(config.user.settings),
    )


def _who(party: Tau2Party, spec: str | None) -> str:
    if spec is None:
        return "deedbench's scripted user"
    args = json.dumps(party.llm_args, sort_keys=True) if party.llm_args else "no parameters"
    return f"{spec} ({args})"


# --- the rules -------------------------------------------------------------------------


def _option(config: RunConfig, name: str) -> Any:
    """An option as the run gave it, else its benchmark's default (no data read)."""
    if name in config.benchmark_options:
        return config.benchmark_options[name]
    specs = {o.name: o for o in benchmark_class(config.benchmark).option_specs}
    return specs[name].default if name in specs else None


def _check_run(config: RunConfig) -> None:
    """The rules a run's configuration alone must meet."""
    run = f"run {config.run_id!r}"
    if config.benchmark not in LEADERBOARD_BENCHMARKS:
        raise UsageError(
            f"{run} is a run of {config.benchmark}; τ²'s leaderboard takes runs of "
            f"{', '.join(LEADERBOARD_BENCHMARKS)}"
        )
    if _option(config, "policy") == "workflow":
        raise UsageError(
            f"{run} used telecom's workflow policy (-T policy=workflow); τ²'s leaderboard "
            "takes telecom with its manual policy"
        )
    if _option(config, "mode") == "solo":
        raise UsageError(
            f"{run} ran in solo mode (-T mode=solo); τ²'s leaderboard takes conversations "
            "with a user"
        )
    split = _option(config, "split")
    if split != "base":
        raise UsageError(
            f"{run} ran the {split!r} split; τ²'s leaderboard takes the base split "
            "(-T split=base, the default)"
        )
    if config.epochs < MIN_TRIALS:
        raise UsageError(
            f"{run} ran each task {config.epochs} time(s) (--epochs {config.epochs}); τ²'s "
            f"leaderboard needs {MIN_TRIALS} trials per task (--epochs {MIN_TRIALS})"
        )


def _check_together(configs: Sequence[RunConfig]) -> None:
    """One run per domain; one agent and one user across them."""
    seen: dict[str, RunConfig] = {}
    first = configs[0]
    for config in configs:
        domain = _domain_name(config)
        if domain in seen:
            raise UsageError(
                f"runs {seen[domain].run_id!r} and {config.run_id!r} are both of τ²'s "
                f"{domain}; a submission takes one run per domain"
            )
        seen[domain] = config
        for role, mine, theirs in (
            ("agent", _agent_identity(config), _agent_identity(first)),
            ("user", _user_identity(config), _user_identity(first)),
        ):
            if mine != theirs:
                raise UsageError(
                    f"runs {first.run_id!r} and {config.run_id!r} differ in their {role} "
                    f"({theirs} and {mine}); τ²'s leaderboard takes one agent and one user "
                    "simulator, with the same settings, across its domains"
                )


def _agent_identity(config: RunConfig) -> str:
    return _who(_agent(config), config.agent)


def _user_identity(config: RunConfig) -> str:
    return _who(_user(config), config.user.spec if config.user else None)


def _domain_name(config: RunConfig) -> str:
    """τ²'s name of the domain a leaderboard benchmark's run is of (no data read)."""
    return {
        "tau2-airline": "airline",
        "tau2-retail": "retail",
        "tau2-telecom": "telecom",
        "tau2-banking": "banking_knowledge",
    }[config.benchmark]


def _benchmark(config: RunConfig) -> Tau2Benchmark:
    run = f"run {config.run_id!r}"
    try:
        bench = load_benchmark(config.benchmark, config.benchmark_options)
    except BenchmarkError as exc:
        raise UsageError(f"{run}: its benchmark cannot be rebuilt here: {exc}") from None
    if not isinstance(bench, Tau2Benchmark):  # a third party's package took the name
        raise UsageError(f"{run}: {config.benchmark} is not deedbench's τ² benchmark here")
    if bench.data_hash() != config.data_hash:
        raise UsageError(
            f"{run} was made on other τ² data than {bench.folder} holds now (its data hash "
            "differs); export it where its data is as it was, or run it again"
        )
    return bench


def _check_episodes(store: RunStore, config: RunConfig, bench: Tau2Benchmark) -> None:
    """Every task of the split, every trial, stored and scored."""
    run = f"run {config.run_id!r}"
    tasks = list(bench.split_tasks)  # every task of the split, whichever -T tasks chose
    planned = set(config.sample_ids)
    uncovered = [t for t in tasks if t not in planned]
    if uncovered:
        covered = len(tasks) - len(uncovered)
        raise UsageError(
            f"{run} covers {covered} of the {len(tasks)} tasks of {config.benchmark}'s base "
            f"split (it misses task {_some(uncovered)}); τ²'s leaderboard needs every task: "
            "run them all (no --limit, no -T tasks)"
        )
    found: dict[tuple[str, int], EpisodeRecord] = {}
    for summary in store.summaries(config.run_id):  # the scores, without the transcripts
        found[(summary.sample_id, summary.epoch)] = summary
    wanted = [(t, e) for e in range(1, config.epochs + 1) for t in tasks]
    resume = f"deedbench run {config.benchmark} --run-id {config.run_id} --store {store.path}"
    missing = [key for key in wanted if key not in found]
    if missing:
        raise UsageError(
            f"{run} is not finished: {len(missing)} of its {len(wanted)} episodes are not "
            f"stored ({_episodes(missing)}); finish it first: {resume}"
        )
    failed = [key for key in wanted if found[key].status == "error"]
    if failed:
        raise UsageError(
            f"{run} has {len(failed)} episode(s) that ended in an infrastructure error "
            f"({_episodes(failed)}); run them again first: {resume}"
        )
    for outcome in ("needs_judge", "evaluator_error"):
        hit = [k for k in wanted if _outcome(found[k]) == outcome]
        if not hit:
            continue
        if outcome == "needs_judge":
            advice = (
                "τ²'s NL-assertion tasks (retail's, banking's task_102) are scored by a "
                f"judge: run the domain again with -T judge=SPEC (τ²'s: {DEFAULT_JUDGE})"
            )
        else:
            task, epoch = hit[0]
            advice = (
                "τ²'s evaluator cannot score these trajectories either, and the leaderboard "
                f"has no place for an unscored trial (why: deedbench show {config.run_id} "
                f"{task} --epoch {epoch})"
            )
        raise UsageError(
            f"{run} has {len(hit)} episode(s) scored {outcome!r} ({_episodes(hit)}): {advice}"
        )
    unscored = [k for k in wanted if _outcome(found[k]) not in _SCORED]
    if unscored:
        raise UsageError(f"{run} has {len(unscored)} unscored episode(s) ({_episodes(unscored)})")


def _outcome(record: EpisodeRecord) -> str | None:
    return record.score.outcome if record.score is not None else None


def _some(items: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _episodes(keys: Sequence[tuple[str, int]]) -> str:
    return _some([f"task {t} epoch {e}" for t, e in keys])


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
    if spec is None or not _is_model(spec):
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
            "user_info": _user(config).model_dump(),
            "agent_info": _agent(config).model_dump(),
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
    the leaderboard's rules, `OutputError` when the folder cannot be written. Nothing is
    left in `folder` unless all of it was written. A run whose models were shown
    deedbench's own wording of τ²'s texts (no τ² source) is refused, unless `own_wording`,
    which writes that difference into the methodology's notes."""
    details = details or SubmissionDetails()
    if not run_ids:
        raise UsageError("give one run per τ² domain")
    configs = [store.require_run(run_id) for run_id in run_ids]
    for config in configs:
        _check_run(config)
    _check_together(configs)
    check_texts(configs, own_wording)
    first = configs[0]
    llm = _model_name(first.agent)
    organization = details.model_org or _ORGANIZATIONS.get(first.agent.partition("/")[0])
    if not organization:
        raise UsageError(
            f"who made {first.agent}? give --model-org (deedbench knows openai's and "
            "anthropic's models only)"
        )
    _check_folder(folder)
    benches = [_benchmark(config) for config in configs]
    for config, bench in zip(configs, benches, strict=True):
        _check_episodes(store, config, bench)
    prices = prices or PriceTable.load()
    export = SubmissionExport(folder=folder, submission=folder / SUBMISSION_FILE)
    export.warnings += _warnings(first, benches, details.model_name, llm)
    runs = sorted(
        zip(configs, benches, strict=True),
        key=lambda pair: _DOMAIN_ORDER.index(pair[1].domain.tau2_name),
    )
    building = _scratch(folder)
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
                    figures=tau2_figures(results),
                )
            )
        submission = _submission(
            configs, [b for _, b in runs], export.domains, details, llm, organization, today
        )
        text = json.dumps(submission, indent=2, ensure_ascii=False) + "\n"
        (building / SUBMISSION_FILE).write_text(text, encoding="utf-8")
        os.rename(building, folder)  # onto a missing or empty folder: all of it, at once
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


def _scratch(folder: Path) -> Path:
    """A folder beside `folder` to build the submission in, as a new folder's mode."""
    try:
        building = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        mask = os.umask(0)
        os.umask(mask)
        building.chmod(0o777 & ~mask)
    except OSError as exc:
        raise OutputError(f"cannot write the submission into {folder}: {exc}") from None
    return building


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
    user = _user(first)
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
    agent = _agent(first)
    kind = first.agent.partition("/")[0]
    if _is_model(first.agent):
        acted = f"The agent: {_who(agent, first.agent)}, with τ²'s agent instruction and policy."
    elif kind == "baseline":
        acted = f"The agent: {first.agent}, a deedbench baseline (no model)."
    else:
        acted = f"The agent: {first.agent}, the submitter's own."
    if first.user is not None:
        user = (
            f"The user: a model playing τ²'s user simulator (its v{TAU2_VERSION} prompt), "
            f"{_who(_user(first), first.user.spec)}."
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
    return _is_model(config.agent) and config.user is not None


def _verification(config: RunConfig) -> str:
    said = []
    if _is_model(config.agent):
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
