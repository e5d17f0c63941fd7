"""The rules of τ²-bench's leaderboard, which a run must meet before it is exported as a
submission (`tau2_export`); each broken rule is a `UsageError` naming the run and the
rule: a leaderboard domain (not telecom's workflow policy, not solo mode), the ``base``
split, at least 4 trials, every task of the split run that many times and scored, the
data unchanged since the run, one run per domain, and one agent and one user (model and
settings) across them, as τ²'s ``validate_submission_traj_set`` demands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deedbench.benchmarks import benchmark_class, load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.judge import DEFAULT_JUDGE
from deedbench.engine import RunStore
from deedbench.errors import BenchmarkError, UsageError
from deedbench.interop.tau2_parties import agent_identity, user_identity
from deedbench.records import EpisodeRecord, RunConfig

__all__ = [
    "LEADERBOARD_BENCHMARKS",
    "MIN_TRIALS",
    "check_episodes",
    "check_run",
    "check_together",
    "domain_name",
    "leaderboard_benchmark",
]

MIN_TRIALS = 4
"""The leaderboard's trials per task: it shows pass^1 to pass^4."""
LEADERBOARD_BENCHMARKS = ("tau2-airline", "tau2-retail", "tau2-telecom", "tau2-banking")
_SCORED = ("pass", "fail", "pass_broke_procedure")


def _option(config: RunConfig, name: str) -> Any:
    """An option as the run gave it, else its benchmark's default (no data read)."""
    if name in config.benchmark_options:
        return config.benchmark_options[name]
    specs = {o.name: o for o in benchmark_class(config.benchmark).option_specs}
    return specs[name].default if name in specs else None


def check_run(config: RunConfig) -> None:
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


def check_together(configs: Sequence[RunConfig]) -> None:
    """One run per domain; one agent and one user across them."""
    seen: dict[str, RunConfig] = {}
    first = configs[0]
    for config in configs:
        domain = domain_name(config)
        if domain in seen:
            raise UsageError(
                f"runs {seen[domain].run_id!r} and {config.run_id!r} are both of τ²'s "
                f"{domain}; a submission takes one run per domain"
            )
        seen[domain] = config
        for role, mine, theirs in (
            ("agent", agent_identity(config), agent_identity(first)),
            ("user", user_identity(config), user_identity(first)),
        ):
            if mine != theirs:
                raise UsageError(
                    f"runs {first.run_id!r} and {config.run_id!r} differ in their {role} "
                    f"({theirs} and {mine}); τ²'s leaderboard takes one agent and one user "
                    "simulator, with the same settings, across its domains"
                )


def domain_name(config: RunConfig) -> str:
    """τ²'s name of the domain a leaderboard benchmark's run is of (no data read)."""
    return {
        "tau2-airline": "airline",
        "tau2-retail": "retail",
        "tau2-telecom": "telecom",
        "tau2-banking": "banking_knowledge",
    }[config.benchmark]


def leaderboard_benchmark(config: RunConfig) -> Tau2Benchmark:
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


def check_episodes(store: RunStore, config: RunConfig, bench: Tau2Benchmark) -> None:
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
