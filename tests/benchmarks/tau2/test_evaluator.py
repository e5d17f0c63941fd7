"""deedbench's τ² evaluator against τ²'s own ``evaluate_simulation``, verdict for verdict.

For every task of each domain, the trajectories of `_trajectories.variants` (gold,
dropped, reordered, extra, malformed, hallucinated, user mistakes, early stop, max
steps, unsaid, judged no) are scored by both; the whole ``reward_info`` must be
equal: the reward, every component, every check and its justification. Where τ²'s
evaluator raises (an assertion function failing on a state the trajectory never
reached), deedbench's must raise the same error.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

import pytest

from deedbench.benchmarks.tau2.banking import banking_domain
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.evaluator import evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck

from . import _reference
from ._trajectories import trajectory, variants
from .mock_domain import MOCK

pytestmark = pytest.mark.reference("tau2")


def _scripted_judge(verdicts: list[bool] | None) -> Any:
    def judge(messages: Any, assertions: list[str]) -> list[NLAssertionCheck]:
        chosen = verdicts or [True] * len(assertions)
        return [
            NLAssertionCheck(nl_assertion=a, met=v, justification="scripted")
            for a, v in zip(assertions, chosen, strict=False)
        ]

    return judge


TASKS = int(os.environ.get("DEEDBENCH_TAU2_TASKS", "3"))
"""Tasks per domain whose variants are scored (the gold trajectory of every other task is
scored too). τ²'s evaluator takes about a second an episode on airline and retail, so CI
takes 3 (12 took 6 min on airline); ``DEEDBENCH_TAU2_TASKS=1000`` takes them all, with
every task's gold trajectory."""
GOLD_STRIDE = 1 if TASKS >= 1000 else 2


def _compare(
    domain: Tau2Domain, tau2_name: str, split: str | None, env_kwargs: dict[str, Any] | None = None
) -> list[str]:
    data = Tau2Data(domain, _reference.domain_data(tau2_name), f"tau2-{domain.name}", split)
    cases = []
    for number, task in enumerate(data.tasks.values()):
        made = [{**case, "hashes": "none"} for case in variants(task)]  # the reward alone
        cases += made if number < TASKS else made[:1] if number % GOLD_STRIDE == 0 else []
    theirs = {result["id"]: result for result in _reference.evaluate(tau2_name, cases, env_kwargs)}
    found = []
    for case in cases:
        task = data.tasks[case["task"]["id"]]
        other = theirs[case["id"]]
        try:
            ours = evaluate(
                data,
                task,
                trajectory(data, task, case),
                case.get("termination", "user_stop"),
                solo=bool(case.get("solo")),
                judge=_scripted_judge(case.get("nl")),
            ).reward.tau2_json()
        except Exception as exc:  # τ²'s evaluator raises on some trajectories: so must ours
            raised = f"{type(exc).__name__}: {exc}"
            if other.get("crash") != raised:
                found.append(f"{case['id']}: deedbench raised {raised}, τ² {other}")
            continue
        if "crash" in other:
            found.append(f"{case['id']}: τ² raised {other['crash']}, deedbench gave {ours}")
            continue
        if json.dumps(ours, sort_keys=True) != json.dumps(other["reward_info"], sort_keys=True):
            found.append(f"{case['id']}: deedbench {ours} τ² {other['reward_info']}")
    return found


def test_mock_verdicts_equal_tau2s() -> None:
    found = _compare(MOCK, "mock", None)
    assert not found, "\n".join(found[:10])


@pytest.mark.parametrize(
    ("module", "name", "tau2_name"),
    [
        ("airline", "AIRLINE", "airline"),
        ("retail", "RETAIL", "retail"),
        ("telecom", "TELECOM", "telecom"),
    ],
)
def test_domain_verdicts_equal_tau2s(module: str, name: str, tau2_name: str) -> None:
    domain = getattr(importlib.import_module(f"deedbench.benchmarks.tau2.{module}"), name)
    found = _compare(domain, tau2_name, "base")
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:10])


def test_banking_verdicts_equal_tau2s() -> None:
    """τ³'s banking, its knowledge search off on both sides (the gold actions never
    search; the searches themselves are test_banking_retrieval's)."""
    domain = banking_domain("no_knowledge")
    found = _compare(domain, "banking_knowledge", "base", {"retrieval_variant": "no_knowledge"})
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:10])
