"""Failure attribution on τ²: a customer's device faults on telecom's phone found exactly,
clean controls never blamed, τ²'s faulty gold actions listed by validate as task faults."""

from __future__ import annotations

import pytest

from deedbench.benchmarks import load_benchmark

from . import _reference
from ._faults import cases

pytestmark = pytest.mark.reference("tau2")


def test_device_faults_that_fail_the_episode_are_its_causes_and_controls_never_blamed() -> None:
    labelled = cases(tasks=4)
    wrong = [(c.name, c.task, c.injected, c.found) for c in labelled if c.found != c.injected]
    assert not wrong, wrong
    assert {c.name for c in labelled} == {"clean", "device_unrequested", "device_not_done"}
    assert all(c.party == "user" for c in labelled if c.name == "device_not_done")
    assert all(c.party is None for c in labelled if c.name == "clean")


def test_validate_lists_each_tasks_own_faults() -> None:
    bench = load_benchmark("tau2-retail", {"data": str(_reference.TAU2)})
    checks = {c.task: c for c in bench.validate()}
    raising = [f for c in checks.values() for f in c.faults if f.kind == "task.gold_raises"]
    assert (
        len(raising) == 18
        and len(
            {c.task for c in checks.values() if any(f.kind == "task.gold_raises" for f in c.faults)}
        )
        == 15
    )  # τ² issue #499
    assert any(t == "105" and c.faults for t, c in checks.items())
    unsupported = [
        f for c in checks.values() for f in c.faults if f.kind == "task.output_unsupported"
    ]
    assert all(
        f"task.output_unsupported: {f.excerpt}"
        in " ".join(p for c in checks.values() for p in c.problems)
        for f in unsupported
    )
