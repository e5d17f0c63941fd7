"""The runner, driven with a benchmark defined here: the engine knows no benchmark."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import tracemalloc
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from deedbench.agents import FunctionAgent
from deedbench.engine import (
    AgentContext,
    Benchmark,
    EpisodeCache,
    EpisodeSetup,
    EpisodeTranscript,
    InProcessExecutor,
    Launch,
    RunStore,
    ToolBox,
    new_run_config,
    run,
    runner,
    tool,
)
from deedbench.engine.executor import Built
from deedbench.engine.runner import pending_keys
from deedbench.errors import InfrastructureError, RunAborted, StoreError
from deedbench.records import (
    EpisodeKey,
    EpisodeRecord,
    Message,
    MetricSpec,
    ReportSpec,
    RunConfig,
    Sample,
    Score,
    ToolCall,
    Usage,
    episode_seed,
)


@dataclass
class Tally:
    """The world of one tiny episode: a counter."""

    value: int = 0


@tool(writes=True)
def bump(counter: Tally, by: int = 1) -> str:
    """Add to the counter.

    Args:
        by: How much to add.
    """
    counter.value += by
    return f"counter is {counter.value}"


class TinyBenchmark(Benchmark):
    """Three samples, two conditions, one tool; scores the counter's final value."""

    name = "tiny"
    description = "bump a counter"
    conditions = ("plain", "spicy")
    default_epochs = 2
    report = ReportSpec(
        metrics=[MetricSpec(name="bumped", value="bumped")], primary="bumped", group_by=["kind"]
    )

    def samples(self) -> list[Sample]:
        return [
            Sample(id=f"s{i}", input=f"bump by {i + 1}", metadata={"kind": f"k{i % 2}"}, chance=0.5)
            for i in range(3)
        ]

    def data_hash(self) -> str:
        return "tiny-1"

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup:
        return EpisodeSetup(
            messages=[
                Message(role="system", content=f"condition {condition}"),
                Message(role="user", content=sample.input),
            ],
            toolbox=ToolBox([bump], Tally()),
        )

    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        value = transcript.state.value
        return Score(outcome="bumped" if value else "idle", values={"bumped": float(value > 0)})


def bump_once(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message | str:
    """Bump by the sample's number (read from the request), then say done."""
    if messages[-1].role == "tool":
        return "done"
    by = int(messages[-1].content.split()[-1])
    call = ToolCall(id=f"{context.sample_id}-1", name="bump", arguments=json.dumps({"by": by}))
    return Message(role="assistant", tool_calls=[call])


class Recorder:
    """Wraps a turn function and counts the turns of each episode."""

    def __init__(self, fn: Any = bump_once) -> None:
        self.fn = fn
        self.turns: Counter[EpisodeKey] = Counter()
        self.contexts: dict[EpisodeKey, AgentContext] = {}

    def __call__(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        key = EpisodeKey(context.sample_id, context.condition, context.epoch)
        self.turns[key] += 1
        self.contexts[key] = context
        return self.fn(messages, tools, context)


def make_config(benchmark: Benchmark, *, run_id: str = "r1", seed: int = 0) -> RunConfig:
    return new_run_config(
        run_id=run_id,
        benchmark=benchmark,
        agent="python/tests:tiny",
        agent_params={},
        conditions=list(benchmark.conditions),
        epochs=2,
        seed=seed,
        samples=benchmark.samples(),
    )


def execute(
    config: RunConfig, benchmark: Benchmark, agent: Any, store: RunStore, **kwargs: Any
) -> list[EpisodeKey]:
    """The keys of the episodes the run finished, in the order they finished."""
    finished: list[EpisodeKey] = []
    also = kwargs.pop("on_record", lambda record: None)

    def note(record: EpisodeRecord) -> None:
        finished.append(record.key)
        also(record)

    started = asyncio.run(run(config, benchmark, agent, store, on_record=note, **kwargs))
    assert started == len(finished)
    return finished


def scored_keys(store: RunStore, run_id: str = "r1") -> set[EpisodeKey]:
    return {r.key for r in store.episodes(run_id) if r.status == "scored"}


@pytest.fixture
def bench() -> TinyBenchmark:
    return TinyBenchmark()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "runs.db") as opened:
        yield opened


def by_key(store: RunStore, run_id: str = "r1") -> dict[EpisodeKey, EpisodeRecord]:
    records = list(store.episodes(run_id))
    result = {r.key: r for r in records}
    assert len(result) == len(records), "more than one record for an episode"
    return result


def test_new_run_config_describes_the_benchmark(bench: TinyBenchmark) -> None:
    config = make_config(bench, seed=5)
    assert config.benchmark == "tiny"
    assert config.data_hash == "tiny-1"
    assert config.sample_ids == ["s0", "s1", "s2"]
    assert config.report == TinyBenchmark.recorded_report()  # with what readers need of it
    assert config.report.conditions == list(TinyBenchmark.conditions)
    assert config.seed == 5
    assert config.planned_episodes == 3 * 2 * 2
    assert len(set(config.episode_keys())) == 12


def test_runs_every_episode_once(bench: TinyBenchmark, store: RunStore) -> None:
    config = make_config(bench)
    store.create_run(config)
    agent = Recorder()
    attempted = execute(config, bench, FunctionAgent(agent), store)
    keys = list(config.episode_keys())
    assert sorted(attempted) == sorted(keys)
    # Two turns each (bump, then "done"): every episode ran exactly once.
    assert agent.turns == dict.fromkeys(keys, 2)
    records = by_key(store)
    assert set(records) == set(keys)
    for key, record in records.items():
        sample_number = int(key.sample_id[1:]) + 1
        assert record.status == "scored"
        assert record.termination == "agent_finished"
        assert record.steps == 2
        assert record.score is not None and record.score.outcome == "bumped"
        assert record.messages[0].content == f"condition {key.condition}"
        assert record.messages[3].content == f"counter is {sample_number}"
        assert record.metadata == {"kind": f"k{int(key.sample_id[1:]) % 2}"}
        assert record.chance == 0.5
        assert record.error is None


def test_second_run_does_nothing(bench: TinyBenchmark, store: RunStore) -> None:
    config = make_config(bench)
    execute(config, bench, FunctionAgent(bump_once), store)
    before = {k: r.model_dump() for k, r in by_key(store).items()}
    agent = Recorder()
    assert execute(config, bench, FunctionAgent(agent), store) == []
    assert agent.turns == {}
    assert {k: r.model_dump() for k, r in by_key(store).items()} == before


def test_partial_store_resumes_only_missing_episodes(
    bench: TinyBenchmark, store: RunStore, tmp_path: Path
) -> None:
    config = make_config(bench)
    execute(config, bench, FunctionAgent(bump_once), store)
    with RunStore(tmp_path / "partial.db") as partial:
        keys = list(config.episode_keys())
        for key in keys[:5]:
            partial.add("r1", by_key(store)[key])
        partial.flush()
        agent = Recorder()
        attempted = execute(config, bench, FunctionAgent(agent), partial)
        assert sorted(attempted) == sorted(keys[5:])
        assert set(agent.turns) == set(attempted)
        assert set(by_key(partial)) == set(config.episode_keys())


def test_agent_crash_is_an_error_record_retried_next_run(
    bench: TinyBenchmark, store: RunStore
) -> None:
    config = make_config(bench)

    def crashes_on_s1(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        if context.sample_id == "s1":
            raise RuntimeError("agent bug on s1")
        return bump_once(messages, tools, context)

    execute(config, bench, FunctionAgent(crashes_on_s1), store)
    records = by_key(store)
    assert len(records) == 12
    failed = {k for k, r in records.items() if r.status == "error"}
    assert failed == {k for k in config.episode_keys() if k.sample_id == "s1"}
    for key in failed:
        record = records[key]
        assert record.error is not None and "RuntimeError: agent bug on s1" in record.error
        assert record.termination == "infrastructure_error"
        assert record.score is None
    assert scored_keys(store) == set(config.episode_keys()) - failed

    agent = Recorder()
    attempted = execute(config, bench, FunctionAgent(agent), store)
    assert set(attempted) == failed
    assert set(agent.turns) == failed
    records = by_key(store)
    assert len(records) == 12
    assert all(r.status == "scored" for r in records.values())
    assert store.count("r1") == {"scored": 12}


def test_infrastructure_error_keeps_transcript_and_is_retried(
    bench: TinyBenchmark, store: RunStore
) -> None:
    config = make_config(bench)

    def outage_after_tool(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        if context.condition == "spicy" and messages[-1].role == "tool":
            raise InfrastructureError("provider down")
        return bump_once(messages, tools, context)

    execute(config, bench, FunctionAgent(outage_after_tool), store)
    records = by_key(store)
    spicy = {k for k in config.episode_keys() if k.condition == "spicy"}
    assert {k for k, r in records.items() if r.status == "error"} == spicy
    for key in spicy:
        record = records[key]
        assert record.error == "provider down"
        assert record.termination == "infrastructure_error"
        assert record.steps == 1
        assert [m.role for m in record.messages] == ["system", "user", "assistant", "tool"]
        assert record.score is None

    assert set(execute(config, bench, FunctionAgent(bump_once), store)) == spicy
    assert store.count("r1") == {"scored": 12}


def test_run_aborted_stops_the_run_without_error_records(
    bench: TinyBenchmark, store: RunStore
) -> None:
    """A RunAborted dooms every episode alike: it stops the run and is never recorded."""
    config = make_config(bench)

    def aborts_on_s2(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        if context.sample_id == "s2":
            raise RunAborted("bad credentials")
        return bump_once(messages, tools, context)

    with pytest.raises(RunAborted, match="bad credentials"):
        execute(config, bench, FunctionAgent(aborts_on_s2), store, concurrency=1)
    # What finished before the abort is kept; the aborted episodes leave no error record.
    records = by_key(store)
    assert records
    assert all(r.status == "scored" for r in records.values())
    assert all(key.sample_id != "s2" for key in records)


def test_concurrency_is_bounded(bench: TinyBenchmark, store: RunStore) -> None:
    in_flight = 0
    peak = 0

    async def slow(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return bump_once(messages, tools, context)

    config = make_config(bench)
    execute(config, bench, FunctionAgent(slow), store, concurrency=3)
    assert peak == 3  # 12 episodes: never more than 3 at once, and 3 were used
    assert store.count("r1") == {"scored": 12}

    peak = 0
    config = make_config(bench, run_id="r2")
    execute(config, bench, FunctionAgent(slow), store, concurrency=1)
    assert peak == 1


def test_the_first_request_goes_out_before_the_other_episodes_are_built(
    bench: TinyBenchmark, store: RunStore
) -> None:
    """With room for every episode at once, the first one's request does not wait until
    all of them have built theirs: a request needs a pass of the event loop (as a write
    to a ready socket does), and the runner gives it one after starting each episode."""
    log: list[tuple[str, str]] = []

    async def sends(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        episode = f"{context.sample_id}/{context.condition}/{context.epoch}"
        if messages[-1].role != "tool":
            log.append(("built", episode))
            await asyncio.sleep(0)
            log.append(("sent", episode))
        return bump_once(messages, tools, context)

    execute(make_config(bench), bench, FunctionAgent(sends), store, concurrency=12)
    first = log[0][1]
    built_first = [event for event in log[: log.index(("sent", first))] if event[0] == "built"]
    assert len(built_first) <= 2, log  # was all 12 before the first request went out
    assert store.count("r1") == {"scored": 12}


def test_seed_in_context_is_the_episode_seed(bench: TinyBenchmark, store: RunStore) -> None:
    config = make_config(bench, seed=1234)
    agent = Recorder()
    execute(config, bench, FunctionAgent(agent), store)
    records = by_key(store)
    for key in config.episode_keys():
        expected = episode_seed(1234, key)
        assert agent.contexts[key].seed == expected
        assert records[key].seed == expected
        assert agent.contexts[key] == AgentContext(
            key.sample_id, key.condition, key.epoch, expected
        )


def random_bumper(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message | str:
    """A deterministic agent whose choices depend only on the episode's seed."""
    rng = random.Random(context.seed)
    if len(messages) > 6:
        return f"stopped at {rng.random():.6f}"
    call = ToolCall(
        id=f"call-{rng.randrange(10**6)}",
        name="bump",
        arguments=json.dumps({"by": rng.randrange(100)}),
    )
    return Message(
        role="assistant",
        content=f"bumping {rng.random():.6f}",
        tool_calls=[call],
        usage=Usage(input_tokens=len(messages), output_tokens=1),
    )


def comparable(record: EpisodeRecord) -> dict[str, Any]:
    """A record without its wall-clock fields."""
    return record.model_dump(exclude={"started_at", "duration_s"})


def test_same_seed_gives_identical_records(bench: TinyBenchmark, tmp_path: Path) -> None:
    results = []
    for name in ("a", "b"):
        with RunStore(tmp_path / f"{name}.db") as store:
            config = make_config(bench, seed=99)
            execute(config, bench, FunctionAgent(random_bumper), store, concurrency=4)
            results.append({k: comparable(r) for k, r in by_key(store).items()})
    first, second = results
    assert len(first) == 12
    assert first == second
    # The agent's choices differ between episodes, so the comparison is not vacuous.
    assert len({json.dumps(r["messages"]) for r in first.values()}) == 12

    with RunStore(tmp_path / "c.db") as store:
        config = make_config(bench, seed=100)
        execute(config, bench, FunctionAgent(random_bumper), store)
        other = {k: comparable(r) for k, r in by_key(store).items()}
    assert all(other[k]["messages"] != first[k]["messages"] for k in first)


def test_usage_is_summed_by_role(bench: TinyBenchmark, store: RunStore) -> None:
    config = make_config(bench)
    execute(config, bench, FunctionAgent(random_bumper), store)
    for record in by_key(store).values():
        turns = [m for m in record.messages if m.role == "assistant" and m.usage is not None]
        assert len(turns) == 3
        assert record.usage["assistant"].input_tokens == sum(
            m.usage.input_tokens for m in turns if m.usage
        )
        assert record.usage["assistant"].output_tokens == 3
        assert set(record.usage) == {"assistant"}


# --- the driver: streaming plans, locks, answers committed as they come --------------------


class Enough(Exception):
    """Raised from on_record to end a run early."""


def test_memory_follows_the_concurrency_not_the_plan(bench: TinyBenchmark, store: RunStore) -> None:
    """600,000 planned episodes, 60 run: nothing is allocated per planned episode."""
    config = make_config(bench).model_copy(update={"epochs": 100_000})
    in_flight = peak = finished = 0

    async def counted(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0)
        in_flight -= 1
        return bump_once(messages, tools, context)

    def stop_at_sixty(record: EpisodeRecord) -> None:
        nonlocal finished
        finished += 1
        if finished == 60:
            raise Enough

    tracemalloc.start()
    try:
        with pytest.raises(Enough):
            asyncio.run(
                run(
                    config,
                    bench,
                    FunctionAgent(counted),
                    store,
                    concurrency=4,
                    on_record=stop_at_sixty,
                )
            )
        _, high = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert high < 5_000_000, f"{high:,} bytes at the peak"
    assert peak <= 4
    assert 60 <= sum(store.count("r1").values()) <= 64  # what finished is stored
    keys = pending_keys(config.model_copy(update={"epochs": 10**12}), store)
    assert next(keys).epoch == 11  # lazy: the first missing episode, at once


def test_a_run_locked_elsewhere_is_refused_and_nothing_runs(
    bench: TinyBenchmark, store: RunStore, tmp_path: Path
) -> None:
    config = make_config(bench)
    agent = Recorder()
    refused = pytest.raises(StoreError, match=rf"'r1' is being executed by pid {os.getpid()}")
    with RunStore(tmp_path / "runs.db") as other, other.lock_run("r1"), refused:
        execute(config, bench, FunctionAgent(agent), store)
    assert agent.turns == {}
    assert execute(config, bench, FunctionAgent(agent), store)  # free again


def lock_of(path: Path, run_id: str = "r1") -> tuple[int, float] | None:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(
            "SELECT pid, heartbeat_at FROM run_locks WHERE run_id = ?", (run_id,)
        ).fetchone()


async def slow_bump(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message | str:
    await asyncio.sleep(0.02)
    return bump_once(messages, tools, context)


def test_the_driver_keeps_its_lock_alive_and_releases_it(
    bench: TinyBenchmark, store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.05)
    beats: list[float] = []

    def look(record: EpisodeRecord) -> None:
        row = lock_of(tmp_path / "runs.db")
        assert row is not None and row[0] == os.getpid()
        beats.append(row[1])

    execute(
        make_config(bench), bench, FunctionAgent(slow_bump), store, concurrency=1, on_record=look
    )
    assert len(set(beats)) > 1  # refreshed while it ran
    assert lock_of(tmp_path / "runs.db") is None


def test_a_run_whose_lock_was_taken_over_stops(
    bench: TinyBenchmark, store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.05)
    path = tmp_path / "runs.db"

    def take_over(record: EpisodeRecord) -> None:
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("UPDATE run_locks SET pid = 1, host = 'elsewhere'")

    with pytest.raises(StoreError, match="'r1' was taken over by another process"):
        execute(
            make_config(bench), bench, FunctionAgent(slow_bump), store, concurrency=1,
            on_record=take_over,
        )  # fmt: skip
    assert 1 <= store.count("r1")["scored"] < 12  # what finished before is kept


class CachingAgent:
    """Pays for an 'answer' per turn through the cache it was built with, then waits (as a
    model call would), so the driver gets to commit between turns."""

    def __init__(self, cache: EpisodeCache | None, store: Path) -> None:
        self.cache = cache
        self.store = store
        self.committed_before_next_turn: list[bool] = []
        self.paid = 0

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        assert self.cache is not None
        turn = sum(m.role == "assistant" for m in messages)
        key = f"{context.sample_id}-{context.condition}-{context.epoch}-{turn}"
        if turn:  # the previous turn's answer is in the store before this turn
            previous = key[: -len(str(turn))] + str(turn - 1)
            with closing(sqlite3.connect(self.store)) as db:
                found = db.execute("SELECT 1 FROM responses WHERE key = ?", (previous,))
                self.committed_before_next_turn.append(found.fetchone() is not None)
        if self.cache.get(key) is None:
            self.paid += 1
            self.cache.put(key, "fake", "model", {"turn": turn}, context)
        await asyncio.sleep(0.005)
        reply = bump_once(messages, tools, context)
        return reply if isinstance(reply, Message) else Message(role="assistant", content=reply)


@dataclass
class CachingRecipe:
    benchmark: TinyBenchmark
    store: Path
    name: str = "caching"
    uses_cache: bool = True
    agents: list[CachingAgent] = field(default_factory=list)

    def build(self, cache: EpisodeCache | None, concurrency: int) -> Built:
        agent = CachingAgent(cache, self.store)
        self.agents.append(agent)
        return Built(self.benchmark, agent)


def test_answers_are_committed_as_they_come_and_shipped_to_a_resumed_episode(
    bench: TinyBenchmark, store: RunStore, tmp_path: Path
) -> None:
    def go(config: RunConfig) -> CachingAgent:
        recipe = CachingRecipe(bench, tmp_path / "runs.db")

        async def execute_it() -> int:
            # no lookup: shipped answers only
            return await Launch(config, store, recipe).run(InProcessExecutor(2))

        assert asyncio.run(execute_it()) == 12
        [agent] = recipe.agents
        return agent

    first = go(make_config(bench))
    assert first.paid == 24
    assert first.committed_before_next_turn == [True] * 12
    answers = store.responses_for(episode_seed(0, EpisodeKey("s1", "plain", 1)))
    assert sorted(e.key for e in answers) == ["s1-plain-1-0", "s1-plain-1-1"]
    again = go(make_config(bench, run_id="r2"))  # same seed: the same episodes' answers
    assert again.paid == 0
