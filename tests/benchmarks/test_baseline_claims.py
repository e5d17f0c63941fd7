"""Every baseline's one-line claim is true where it is printed: each figure a benchmark
claims for a baseline (`Benchmark.baseline_claims`) is what a run of that baseline gives,
on the benchmark's own data with its default options, and its purpose line quotes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import _shared
from deedbench.benchmarks import benchmark_class, benchmarks, load_benchmark
from deedbench.engine import AgentContext, Benchmark, run_episode

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
DATA = {  # benchmarks whose data is not built in: where the tests find it
    "taubench-retail": SHARED / "taubench" / "retail",
    "taubench-airline": SHARED / "taubench" / "airline",
}
CLAIMED = [
    (name, baseline)
    for name in sorted(benchmarks())
    for baseline in benchmark_class(name).baseline_claims
]


def _bench(name: str) -> Benchmark:
    data = DATA.get(name)
    if data is not None and not data.is_dir():
        _shared.need("taubench")
        pytest.fail(f"{name}'s data is not at {data}")
    return load_benchmark(name, {"data": str(data)} if data else {})


def _rates(bench: Benchmark, baseline: str) -> dict[str, float]:
    """Each metric over one epoch of every sample in every condition."""
    make = bench.baselines()[baseline]

    async def play() -> list[dict[str, float]]:
        found = []
        for condition in bench.conditions:
            for sample in bench.samples():
                setup = bench.setup(sample, condition, 0)
                context = AgentContext(sample.id, condition, 1, 0)
                transcript = await run_episode(make(), setup, context)
                found.append(bench.score(sample, transcript).values)
        return found

    values = asyncio.run(play())
    rates = {}
    for metric in bench.report.metrics:
        counted = [v[metric.value] for v in values if metric.counts(v) and metric.value in v]
        if counted:
            rates[metric.name] = sum(counted) / len(counted)
    return rates


def test_claims_are_made_where_they_can_be_checked() -> None:
    assert {name for name, _ in CLAIMED} >= {"tac", "retail", "taubench-retail", "taubench-airline"}
    for name, baseline in CLAIMED:
        assert baseline in benchmark_class(name).baseline_names, (name, baseline)


@pytest.mark.parametrize(("name", "baseline"), CLAIMED)
def test_a_baselines_claim_is_what_its_run_gives(name: str, baseline: str) -> None:
    bench = _bench(name)
    claims = bench.baseline_claims[baseline]
    rates = _rates(bench, baseline)
    for metric, claimed in claims.items():
        assert rates[metric] == pytest.approx(claimed), (name, baseline, metric, rates[metric])
    purpose = bench.baseline_purposes[baseline]
    for metric, claimed in claims.items():
        if 0 < claimed < 1:  # a figure between the ends is quoted, as the run prints it
            assert f"{claimed:.1%}" in purpose, (name, baseline, metric)
