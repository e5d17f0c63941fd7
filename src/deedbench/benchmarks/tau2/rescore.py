"""Rescoring τ²'s own result files: τ²'s reward recomputed and checked, procedure added.

What ``tau2 evaluate-trajs`` does, on deedbench's evaluator: every simulation of a
τ² result file (`results.read_results`) is scored again, on the tasks the file
recorded (or, `fresh_tasks`, the data's current tasks of the same ids, as
``--fresh-tasks`` does; a task the data lacks keeps the file's), replaying the
trajectory leniently as τ²'s re-grader does (``strict_replay=False``): a recorded
tool output that the tools now give differently (a file older than the tools) is
noted, never fatal. Each simulation gets the procedure verdicts of live episodes.

A task judged on NL assertions takes the judge's verdicts given (`verdicts`, from
``--judge``), else those the file recorded in its ``reward_info``; with neither,
the simulation "needs judge" and is not scored. `reproduced` means the recomputed
``reward_info`` equals the file's in the reward and in every component (the keys of
`COMPONENTS`); each simulation that differs says where. pass^k is computed as τ²'s
leaderboard computes it (`tau2_pass_hat_k`), over the simulations scored, beside
the same figure from the file's own rewards.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from deedbench.benchmarks.tau2.airline import AIRLINE
from deedbench.benchmarks.tau2.banking import RETRIEVAL_VARIANTS, BankingDomain, banking_domain
from deedbench.benchmarks.tau2.data import domain_folder
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.evaluator import SCORED_ENDINGS, tau2_trajectory
from deedbench.benchmarks.tau2.judge import run_judge
from deedbench.benchmarks.tau2.results import (
    Tau2Info,
    Tau2Results,
    Tau2Simulation,
    simulation_messages,
    task_num_actions,
)
from deedbench.benchmarks.tau2.results_stream import StreamedResults
from deedbench.benchmarks.tau2.retail import RETAIL
from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.scorer import Tau2Scorer
from deedbench.benchmarks.tau2.shown import domain_texts, world_session
from deedbench.benchmarks.tau2.source.texts import load_texts
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.benchmarks.tau2.telecom import TELECOM, TELECOM_WORKFLOW
from deedbench.engine import Agent, AgentContext
from deedbench.errors import BenchmarkError, InfrastructureError
from deedbench.records import Attribution, Message, Score, Usage
from deedbench.stats import PassK, tau2_pass_hat_k

__all__ = [
    "COMPONENTS",
    "VERDICT_RULES",
    "Judged",
    "Rescored",
    "SimulationVerdict",
    "Status",
    "Tau2RescoreReport",
    "Tau2Rescorer",
    "benchmark_of",
    "judge_simulations",
    "rescore_results",
    "rescore_with",
    "tau2_domain",
]

COMPONENTS = (
    "reward",
    "reward_basis",
    "reward_breakdown",
    "db_check",
    "env_assertions",
    "action_checks",
    "communicate_checks",
    "nl_assertions",
)
"""The fields of τ²'s ``reward_info`` a rescore must reproduce (``info`` holds notes)."""

Status = Literal["rescored", "needs_judge", "infrastructure_error", "not_rescored"]

VERDICT_RULES = frozenset(
    {"tau2", "DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"}
    | {"needs_judge", "evaluator_error"}
)
"""The evidence of τ²'s own verdict; every other rule a score cites is a procedure rule."""


def benchmark_of(domain: Tau2Domain) -> tuple[str, dict[str, str]]:
    """The deedbench benchmark that runs `domain`, and the options that select it."""
    if domain is TELECOM_WORKFLOW:
        return "tau2-telecom", {"policy": "workflow"}
    if isinstance(domain, BankingDomain):
        return "tau2-banking", {"retrieval": domain.retrieval}
    return f"tau2-{domain.name}", {}


def tau2_domain(info: Tau2Info) -> tuple[Tau2Domain, str | None]:
    """The deedbench domain a τ² result file names, and a note when it is not the one the
    file ran (τ³'s banking under a retrieval variant deedbench cannot run: its retrieval
    tools only read, so the verdict is the same under ``no_knowledge``, which τ²'s own
    offline re-grade uses too)."""
    name = info.domain
    if name == "banking_knowledge":
        variant = info.retrieval_config or "alltools"
        if variant in RETRIEVAL_VARIANTS:
            return banking_domain(variant), None
        note = (
            f"the file's retrieval variant {variant!r} needs a model or a sandbox; rescored "
            "under no_knowledge (retrieval tools only read: the verdict is the same)"
        )
        return banking_domain("no_knowledge"), note
    domains = {d.tau2_name: d for d in (AIRLINE, RETAIL, TELECOM, TELECOM_WORKFLOW)}
    if name not in domains:
        raise BenchmarkError(
            f"τ² domain {name!r} is not one deedbench scores; it scores "
            f"{', '.join([*domains, 'banking_knowledge'])}"
        )
    return domains[name], None


class SimulationVerdict(BaseModel):
    """One simulation, rescored. `status`: rescored; needs_judge (NL assertions and no
    verdicts); infrastructure_error (τ² leaves it out of every metric, so does this);
    not_rescored (a voice simulation, or one that cannot be read: `error` says why)."""

    index: int
    id: str
    task_id: str
    trial: int | None
    termination: str
    status: Status = "rescored"
    error: str | None = None
    recorded_reward: float | None = None
    reward: float | None = None
    reproduced: bool = False
    differs: list[str] = Field(default_factory=list)
    nl_from: Literal["file", "judge"] | None = None
    replay_notes: list[str] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    attribution: Attribution | None = None


@dataclass
class Rescored:
    """A simulation's verdict and deedbench's score of it (None when not scored)."""

    verdict: SimulationVerdict
    score: Score | None
    messages: list[Message]


class Tau2RescoreReport(BaseModel):
    """`rules` counts simulations with recorded reward 1 that broke each rule at least once."""

    domain: str
    benchmark: str
    tasks_from: Literal["file", "data"]
    tasks_kept_from_file: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    simulations: int
    rescored: int
    reproduced: int
    needs_judge: int
    infrastructure_errors: int
    not_rescored: int
    nl_from_file: int
    nl_from_judge: int
    replayed_with_differences: int
    num_trials: int
    pass_hat_k: dict[int, float]
    recorded_pass_hat_k: dict[int, float]
    passing: int
    passing_with_violations: int
    rules: dict[str, int]
    failures: dict[str, int] = Field(default_factory=dict)
    """The simulations rescored as not passing, by whose failure each was, as the run the
    file imports as counts them (`interop.tau2_import.import_results` fills it in, with
    `deedbench report`'s computation; empty from `report` alone)."""
    judge_reading: str | None = None
    """How the judge's replies were read (`judge.JUDGE_READINGS`), when a judge was asked."""
    fault_kinds: dict[str, int] = Field(default_factory=dict)
    """How many of those simulations each kind of fault was found in (as `failures`)."""
    run_pass_hat_k: list[PassK] = Field(default_factory=list)
    """pass^k of τ²'s reward as `deedbench report` gives it for the imported run (k up to
    the most trials of any task, each k over the tasks with that many): filled in with
    `failures`. `pass_hat_k` is τ²'s leaderboard's (k up to the fewest trials)."""
    verdicts: list[SimulationVerdict]

    @property
    def differing(self) -> list[SimulationVerdict]:
        return [v for v in self.verdicts if v.status == "rescored" and not v.reproduced]


class Tau2Rescorer:
    """Scores the simulations of one τ² result file; each task's start and gold replay
    are made once, however many simulations share it."""

    def __init__(
        self,
        results: Tau2Results | StreamedResults,
        data_dir: Path | None,
        *,
        fresh_tasks: bool = False,
    ) -> None:
        self.results = results
        self.domain, note = tau2_domain(results.info)
        self.notes = [note] if note else []
        self.benchmark, self.options = benchmark_of(self.domain)
        marker = "tasks" if self.domain.tau2_name == "banking_knowledge" else "tasks.json"
        folder = domain_folder(data_dir, self.domain.folder_name, marker, "rescore tau2")
        try:  # τ²'s texts where a source is found: the judge's prompt, what unlocking shows
            self.texts = domain_texts(self.domain, folder, None)
        except BenchmarkError as exc:
            self.texts = load_texts(None)
            self.notes.append(f"{exc}: deedbench's own wording is used")
        session = world_session(self.texts, self.domain)
        self.data = Tau2Data(self.domain, folder, self.benchmark, None, session)
        recorded = {}
        for number, raw in enumerate(results.tasks):
            task = _task(raw, number)
            recorded[task.id] = task
        self.kept_from_file: list[str] = []
        if fresh_tasks:
            current = self.data.tasks
            self.kept_from_file = [t for t in recorded if t not in current]
            recorded = {t: current.get(t, task) for t, task in recorded.items()}
        self.tasks = recorded
        self.actions = {str(raw.get("id")): task_num_actions(raw) for raw in results.tasks}
        """Each task's gold action count as τ²'s metrics count it (the file's tasks: τ²'s
        metrics read them, fresh or not)."""
        self.fresh_tasks = fresh_tasks
        self.scorer = Tau2Scorer(self.data, self.tasks, solo=results.info.solo)
        self.policy = Message(role="system", content=results.info.environment_info.policy)

    def needs_judge(self, simulation: Tau2Simulation) -> list[str]:
        """The NL assertions `simulation` is judged on, if its task's reward needs a judge."""
        task = self.tasks.get(simulation.task_id)
        if task is None or not task.needs_judge or task.evaluation_criteria is None:
            return []
        return list(task.evaluation_criteria.nl_assertions or [])

    def trajectory(self, simulation: Tau2Simulation) -> list[Message]:
        """The simulation's messages as an episode records them: the policy, then τ²'s."""
        return [self.policy, *simulation_messages(simulation)]

    def rescore(
        self,
        index: int,
        simulation: Tau2Simulation,
        verdicts: list[NLAssertionCheck] | None = None,
    ) -> Rescored:
        recorded = simulation.reward_info
        verdict = SimulationVerdict(
            index=index,
            id=simulation.id,
            task_id=simulation.task_id,
            trial=simulation.trial,
            termination=simulation.termination_reason,
            recorded_reward=_reward(recorded),
        )
        task = self.tasks.get(simulation.task_id)
        if simulation.voice:
            return self._not(verdict, "a voice (full-duplex) simulation: deedbench scores text")
        if task is None:
            return self._not(verdict, f"task {simulation.task_id!r} is not among the file's tasks")
        try:
            messages = self.trajectory(simulation)
        except (ValueError, KeyError, TypeError) as exc:
            return self._not(verdict, f"its messages cannot be read: {exc}")
        if simulation.termination_reason == "infrastructure_error":
            verdict.status = "infrastructure_error"
            return Rescored(verdict, None, messages)
        if verdicts is not None:
            verdict.nl_from = "judge"
        elif task.needs_judge and recorded and recorded.get("nl_assertions") is not None:
            verdicts = [NLAssertionCheck.model_validate(c) for c in recorded["nl_assertions"]]
            verdict.nl_from = "file"
        score = self.scorer.score_task(
            task, messages, simulation.termination_reason, verdicts, strict=False
        )
        verdict.violations = [
            f"{e.rule}: {e.excerpt}" for e in score.evidence if e.rule not in VERDICT_RULES
        ]
        verdict.attribution = score.attribution
        if score.outcome == "needs_judge":
            verdict.status = "needs_judge"
            verdict.nl_from = None
            return Rescored(verdict, score, messages)
        if score.outcome == "evaluator_error":
            reason = next(e.excerpt for e in score.evidence if e.rule == "evaluator_error")
            return self._not(verdict, reason, score, messages)
        details = score.details or {}
        ours = details["reward_info"]
        verdict.reward = ours["reward"]
        verdict.replay_notes = list(details.get("replay_notes", []))
        verdict.differs = _differs(ours, recorded)
        verdict.reproduced = not verdict.differs
        return Rescored(verdict, score, messages)

    @staticmethod
    def _not(
        verdict: SimulationVerdict,
        reason: str,
        score: Score | None = None,
        messages: list[Message] | None = None,
    ) -> Rescored:
        verdict.status = "not_rescored"
        verdict.error = reason
        return Rescored(verdict, score, messages or [])

    def report(self, rescored: list[Rescored]) -> Tau2RescoreReport:
        verdicts = [r.verdict for r in rescored]
        scored = [v for v in verdicts if v.status == "rescored"]
        passing = [v for v in scored if v.recorded_reward == 1.0]
        broke = [v for v in passing if v.violations]
        rules = Counter(
            rule for v in broke for rule in {line.split(":")[0] for line in v.violations}
        )
        counted = [v for v in verdicts if v.status != "infrastructure_error"]
        num_trials = self.results.info.num_trials
        return Tau2RescoreReport(
            domain=self.results.info.domain,
            benchmark=self.benchmark,
            tasks_from="data" if self.fresh_tasks else "file",
            tasks_kept_from_file=self.kept_from_file,
            notes=self.notes,
            simulations=len(verdicts),
            rescored=len(scored),
            reproduced=sum(v.reproduced for v in scored),
            needs_judge=sum(v.status == "needs_judge" for v in verdicts),
            infrastructure_errors=sum(v.status == "infrastructure_error" for v in verdicts),
            not_rescored=sum(v.status == "not_rescored" for v in verdicts),
            nl_from_file=sum(v.nl_from == "file" for v in scored),
            nl_from_judge=sum(v.nl_from == "judge" for v in scored),
            replayed_with_differences=sum(bool(v.replay_notes) for v in scored),
            num_trials=num_trials,
            pass_hat_k=tau2_pass_hat_k(
                _outcomes(scored, lambda v: v.reward), num_trials, self.actions
            ),
            recorded_pass_hat_k=tau2_pass_hat_k(
                _outcomes(
                    [v for v in counted if v.recorded_reward is not None],
                    lambda v: v.recorded_reward,
                ),
                num_trials,
                self.actions,
            ),
            passing=len(passing),
            passing_with_violations=len(broke),
            rules=dict(rules.most_common()),
            verdicts=verdicts,
        )


def rescore_results(
    results: Tau2Results,
    data_dir: Path | None,
    *,
    fresh_tasks: bool = False,
    judged: Judged | None = None,
) -> tuple[Tau2RescoreReport, list[Rescored]]:
    """Every simulation of `results` rescored, with the judge's verdicts where `judged`
    has them (`judge_simulations`)."""
    return rescore_with(Tau2Rescorer(results, data_dir, fresh_tasks=fresh_tasks), judged)


def rescore_with(
    rescorer: Tau2Rescorer,
    judged: Judged | None = None,
    *,
    keep: bool = True,
    each: Callable[[SimulationVerdict], None] | None = None,
) -> tuple[Tau2RescoreReport, list[Rescored]]:
    """`rescore_results` on a rescorer already made (the judge needed it first). A judge's
    verdicts are each simulation's own (by its place in the file, never its id: a file may
    repeat an id) and count only for the assertions they answer; a simulation the judge
    failed on is an infrastructure error, in no rate. `keep` False keeps each
    simulation's verdict alone (not its score and messages: a report needs no more, and a
    file's simulations then pass one at a time); `each` is told of every verdict as it
    comes."""
    rescored = []
    for number, simulation in enumerate(rescorer.results.simulations):
        verdicts = judged.verdicts_for(number, rescorer.needs_judge(simulation)) if judged else None
        found = rescorer.rescore(number, simulation, verdicts)
        failure = judged.failures.get(number) if judged is not None else None
        if failure is not None and found.verdict.status == "needs_judge":
            found.verdict.status = "infrastructure_error"
            found.verdict.error = f"the judge failed: {failure}"
            found = Rescored(found.verdict, None, found.messages)
        rescored.append(found if keep else Rescored(found.verdict, None, []))
        if each is not None:
            each(found.verdict)
    report = rescorer.report(rescored)
    if judged is not None:
        report.judge_reading = judged.reading
    return report, rescored


@dataclass
class Judged:
    """What the judge said of the simulations it was asked about, each by its place in the
    file (`verdicts`: the assertions asked and the verdicts on them), and how its replies
    were read."""

    verdicts: dict[int, tuple[tuple[str, ...], list[NLAssertionCheck]]]
    failures: dict[int, str]
    usage: list[Usage]
    reading: str = "strict"

    def verdicts_for(self, index: int, assertions: list[str]) -> list[NLAssertionCheck] | None:
        """The verdicts on simulation `index`, if the judge answered exactly `assertions`."""
        found = self.verdicts.get(index)
        if found is None or list(found[0]) != list(assertions):
            return None
        return found[1]


async def judge_simulations(
    rescorer: Tau2Rescorer,
    model: Agent,
    *,
    concurrency: int = 8,
    reading: str = "strict",
) -> Judged:
    """Ask `model` (τ²'s prompt, τ²'s reply format) about every simulation that needs a
    judge and whose file records no verdicts, as τ² judges: only episodes the agent or
    the user ended. A reply that is not a verdict on exactly the assertions asked (read
    `reading`: `judge.JUDGE_READINGS`) is asked again, then is the judge's failure."""
    gate = asyncio.Semaphore(concurrency)
    judged = Judged({}, {}, [], reading)

    async def one(index: int, simulation: Tau2Simulation) -> None:
        assertions = rescorer.needs_judge(simulation)
        messages = tau2_trajectory(rescorer.trajectory(simulation))
        context = AgentContext(
            f"{simulation.task_id}:judge:{index}", "default", 0, simulation.seed or 0
        )
        async with gate:
            try:
                checks, usage, _ = await run_judge(
                    model, messages, assertions, context, rescorer.texts.prompts, reading=reading
                )
            except InfrastructureError as exc:
                judged.failures[index] = str(exc)
                return
        judged.verdicts[index] = (tuple(assertions), checks)
        if usage is not None:
            judged.usage.append(usage)

    asked = [
        (i, s)
        for i, s in enumerate(rescorer.results.simulations)
        if not s.voice
        and s.termination_reason in SCORED_ENDINGS
        and rescorer.needs_judge(s)
        and (s.reward_info or {}).get("nl_assertions") is None
    ]
    await asyncio.gather(*(one(i, s) for i, s in asked))
    return judged


def _task(raw: dict[str, Any], number: int) -> Tau2Task:
    from pydantic import ValidationError

    try:
        task = Tau2Task.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        name = raw.get("id", f"#{number}") if isinstance(raw, dict) else f"#{number}"
        raise BenchmarkError(
            f"the result file's task {name}: field {where}: {first['msg']}"
        ) from None
    task.raw = raw
    return task


def _reward(recorded: dict[str, Any] | None) -> float | None:
    value = (recorded or {}).get("reward")
    return float(value) if isinstance(value, int | float) else None


def _differs(ours: dict[str, Any], recorded: dict[str, Any] | None) -> list[str]:
    """The components of τ²'s verdict where ours and the file's disagree."""
    if recorded is None:
        return ["reward_info (the file records none)"]
    return [
        key
        for key in COMPONENTS
        if json.dumps(ours.get(key), sort_keys=True)
        != json.dumps(recorded.get(key), sort_keys=True)
    ]


def _outcomes(verdicts: list[SimulationVerdict], reward: Any) -> dict[str, list[bool]]:
    found: dict[str, list[bool]] = {}
    for verdict in verdicts:
        value = reward(verdict)
        found.setdefault(verdict.task_id, []).append(abs(value - 1.0) <= 1e-6)
    return found
