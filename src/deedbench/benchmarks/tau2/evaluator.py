"""τ²'s evaluator, on deedbench's environments: one trajectory in, τ²'s `Tau2Reward` out.

It scores as τ²'s ``evaluate_simulation`` with its default evaluation (``ALL``):

- only an episode the agent or the user ended scores; any other ending is 0;
- a task without criteria scores 1;
- DB: the trajectory's state-changing calls replayed from the task's start, and the
  gold actions replayed from the same start (no sync between them; one that raises is
  skipped), then both databases compared by τ²'s hash;
- ENV_ASSERTION: the task's assertion functions, run on the replayed environment;
- ACTION: each gold action matched by some call of either side, order-free, on its
  ``compare_args``;
- COMMUNICATE: each required string, lower-cased, inside some assistant message,
  lower-cased with its commas removed;
- NL_ASSERTION: a judge's verdict on each assertion, asked only when the basis names
  it (`Judge`); with no judge the episode needs one (`NeedsJudge`), and is never
  scored without it.

The reward is the product of the components in the basis; every component's checks
are kept either way. Replays share the task's start with the live episode, so a
comparison of databases reads only the records either side touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.environment import SkippedGoldAction, Tau2Environment, same_db
from deedbench.benchmarks.tau2.reward import (
    ActionCheck,
    CommunicateCheck,
    DBCheck,
    EnvAssertionCheck,
    NLAssertionCheck,
    Tau2Reward,
)
from deedbench.benchmarks.tau2.tasks import RewardType, Tau2Task
from deedbench.engine import ToolKind
from deedbench.records import Message

__all__ = [
    "SCORED_ENDINGS",
    "Judge",
    "NeedsJudge",
    "Tau2Evaluation",
    "evaluate",
    "tau2_trajectory",
]

SCORED_ENDINGS = frozenset({"agent_stop", "user_stop"})
"""τ²'s termination reasons whose episodes are scored at all."""

Judge = Callable[[Sequence[Message], list[str]], list[NLAssertionCheck]]
"""Reads a trajectory and the task's assertions; gives one verdict per assertion."""

_ENV_BASIS = frozenset({"DB", "ENV_ASSERTION"})


class NeedsJudge(Exception):
    """The task's reward needs τ²'s LLM judge, and none was given."""


@dataclass
class Tau2Evaluation:
    """The verdict and what the replays found on the way."""

    reward: Tau2Reward
    skipped_gold: list[SkippedGoldAction] = field(default_factory=list)
    replay_notes: list[str] = field(default_factory=list)
    environment: Tau2Environment | None = None
    """The trajectory's environment after its replay (None when none was replayed)."""
    gold: Tau2Environment | None = None
    """The task's environment after the gold replay, which the trajectory's is compared with."""


def tau2_trajectory(messages: Sequence[Message]) -> list[Message]:
    """The messages τ² scores: everything but the system prompt."""
    return [message for message in messages if message.role != "system"]


def evaluate(
    data: Tau2Data,
    task: Tau2Task,
    messages: Sequence[Message],
    termination: str,
    *,
    solo: bool = False,
    judge: Judge | None = None,
    strict: bool = True,
) -> Tau2Evaluation:
    """τ²'s verdict on `messages`, the episode's whole trajectory (the task's opening
    conversation included, as τ² records it), ended by `termination` (τ²'s reason).

    `strict` replays as a live evaluation does (a replayed write answering other than
    recorded raises `ReplayMismatch`); lenient, as τ² re-grades old result files.
    """
    trajectory = tau2_trajectory(messages)
    if termination not in SCORED_ENDINGS:
        note = f"Simulation terminated prematurely. Termination reason: {termination}"
        return Tau2Evaluation(Tau2Reward(reward=0.0, reward_basis=None, info={"note": note}))
    criteria = task.evaluation_criteria
    if criteria is None:
        return Tau2Evaluation(
            Tau2Reward(reward=1.0, reward_basis=None, info={"note": "No evaluation criteria"})
        )
    basis = list(criteria.reward_basis)
    env_part, skipped, notes, replayed = _environment(data, task, trajectory, solo, strict)
    action_part = _actions(task, trajectory, _tool_kinds(data))
    communicate_part = _communicate(task, trajectory)
    nl_part: Tau2Reward | None = None
    if "NL_ASSERTION" in basis:
        nl_part = _nl_assertions(task, trajectory, judge)

    reward = 1.0
    breakdown: dict[RewardType, float] = {}
    parts: list[tuple[frozenset[str], Tau2Reward | None]] = [
        (_ENV_BASIS, env_part),
        (frozenset({"ACTION"}), action_part),
        (frozenset({"NL_ASSERTION"}), nl_part),
        (frozenset({"COMMUNICATE"}), communicate_part),
    ]
    for names, part in parts:
        if part is None or not names & set(basis):
            continue
        breakdown.update(part.reward_breakdown or {})
        reward *= part.reward
    verdict = Tau2Reward(
        reward=reward,
        db_check=env_part.db_check,
        env_assertions=env_part.env_assertions,
        action_checks=action_part.action_checks,
        nl_assertions=nl_part.nl_assertions if nl_part is not None else None,
        communicate_checks=communicate_part.communicate_checks,
        reward_basis=basis,
        reward_breakdown=breakdown,
        info={
            "env": env_part.info,
            "nl": nl_part.info if nl_part is not None else None,
            "communicate": communicate_part.info,
            "action": action_part.info,
        },
    )
    gold = data.gold_end(task).environment if replayed is not None else None
    return Tau2Evaluation(verdict, skipped, notes, replayed, gold)


def _environment(
    data: Tau2Data, task: Tau2Task, trajectory: list[Message], solo: bool, strict: bool
) -> tuple[Tau2Reward, list[SkippedGoldAction], list[str], Tau2Environment | None]:
    criteria = task.evaluation_criteria
    assert criteria is not None
    if criteria.actions is None and criteria.env_assertions is None:
        return (
            Tau2Reward(
                reward=1.0,
                db_check=DBCheck(db_match=True, db_reward=1.0),
                info={"note": "No expected actions or env assertions"},
            ),
            [],
            [],
            None,
        )
    predicted = data.initialised(task, solo)
    predicted.replay(trajectory, strict=strict)
    gold = data.gold_end(task)
    skipped = list(gold.skipped)
    match = same_db(predicted.agent_world, gold.environment.agent_world, gold.agent_texts) and (
        predicted.user_world is predicted.agent_world
        or same_db(predicted.user_world, gold.environment.user_world, gold.user_texts)
    )
    db_reward = 1.0 if match else 0.0
    checks = []
    assertion_reward = 1.0
    for assertion in criteria.env_assertions or []:
        met = predicted.assertion(
            assertion.env_type, assertion.func_name, assertion.arguments, assertion.assert_value
        )
        check = EnvAssertionCheck(env_assertion=assertion, met=met, reward=1.0 if met else 0.0)
        checks.append(check)
        assertion_reward *= check.reward
    reward = 1.0
    breakdown: dict[RewardType, float] = {}
    if "DB" in criteria.reward_basis:
        breakdown["DB"] = db_reward
        reward *= db_reward
    if "ENV_ASSERTION" in criteria.reward_basis:
        breakdown["ENV_ASSERTION"] = assertion_reward
        reward *= assertion_reward
    verdict = Tau2Reward(
        reward=reward,
        db_check=DBCheck(db_match=match, db_reward=db_reward),
        env_assertions=checks,
        reward_basis=list(criteria.reward_basis),
        reward_breakdown=breakdown,
    )
    return verdict, skipped, list(predicted.replay_notes), predicted


def _tool_kinds(data: Tau2Data) -> dict[str, ToolKind]:
    """Each listed tool's kind, the customer's overriding the desk's (as τ² merges them)."""
    desk = data.domain.desk
    kinds = {t.name: t.kind for t in desk.agent_tools if t.listed}
    kinds.update({t.name: t.kind for t in desk.user_tools if t.listed})
    return kinds


def _actions(task: Tau2Task, trajectory: list[Message], kinds: dict[str, ToolKind]) -> Tau2Reward:
    criteria = task.evaluation_criteria
    assert criteria is not None
    if not criteria.actions:
        return Tau2Reward(
            reward=1.0, info={"note": "No actions to evaluate"}, reward_breakdown={"ACTION": 1.0}
        )
    calls = [
        call
        for message in trajectory
        if message.role in ("assistant", "user")
        for call in message.tool_calls
    ]
    checks = []
    for action in criteria.actions:
        found = any(action.matches(call.name, _arguments(call.args)) for call in calls)
        checks.append(
            ActionCheck(
                action=action,
                action_match=found,
                action_reward=1.0 if found else 0.0,
                tool_type=kinds.get(action.name),
            )
        )
    reward = 1.0 if all(check.action_match for check in checks) else 0.0
    return Tau2Reward(reward=reward, action_checks=checks, reward_breakdown={"ACTION": reward})


def _arguments(args: dict[str, Any] | None) -> dict[str, Any]:
    return args if args is not None else {}


def _communicate(task: Tau2Task, trajectory: list[Message]) -> Tau2Reward:
    criteria = task.evaluation_criteria
    assert criteria is not None
    if not criteria.communicate_info:
        return Tau2Reward(
            reward=1.0,
            info={"note": "No communicate_info to evaluate"},
            reward_breakdown={"COMMUNICATE": 1.0},
        )
    spoken = [
        message.content
        for message in trajectory
        if message.role == "assistant" and message.content and message.content.strip()
    ]
    checks = []
    for info in criteria.communicate_info:
        said = next(
            (text for text in spoken if info.lower() in text.lower().replace(",", "")), None
        )
        if said is not None:
            justification = f"Information '{info}' communicated in the message:\n '{said}'"
        else:
            justification = f"Information '{info}' not communicated."
        checks.append(
            CommunicateCheck(info=info, met=said is not None, justification=justification)
        )
    reward = 1.0 if all(check.met for check in checks) else 0.0
    return Tau2Reward(
        reward=reward, communicate_checks=checks, reward_breakdown={"COMMUNICATE": reward}
    )


def _nl_assertions(task: Tau2Task, trajectory: list[Message], judge: Judge | None) -> Tau2Reward:
    criteria = task.evaluation_criteria
    assert criteria is not None
    if not criteria.nl_assertions:
        return Tau2Reward(
            reward=1.0,
            nl_assertions=[],
            info={"note": "No nl_assertions to evaluate"},
            reward_breakdown={"NL_ASSERTION": 1.0},
        )
    if judge is None:
        raise NeedsJudge(f"task {task.id} is judged on NL assertions and no judge was given")
    checks = judge(trajectory, list(criteria.nl_assertions))
    reward = 1.0 if all(check.met for check in checks) else 0.0
    return Tau2Reward(
        reward=reward, nl_assertions=checks, reward_breakdown={"NL_ASSERTION": reward}
    )
