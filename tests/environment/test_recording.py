"""Episodes played from outside with a store are a run: recorded, resumed where they
stopped, each record stored once; an interruption keeps what was played."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deedbench.engine import RunStore
from deedbench.engine.seat import Turn
from deedbench.environment import Environment, action
from deedbench.errors import UsageError
from deedbench.records import EpisodeRecord

SEARCH = action({"name": "search_experiences", "arguments": {"location": "x", "keywords": "y"}})


async def _play(environment: Environment, episodes: int) -> list[EpisodeRecord]:
    """Look once and book nothing, `episodes` times, one after another."""
    found = []
    for _ in range(episodes):
        rollout = environment.open()
        step = await rollout.start()
        while isinstance(step, Turn):
            looked = any(m.role == "tool" for m in step.messages)
            step = await rollout.act(action("Nothing suits you.") if looked else SEARCH)
        found.append(step)
    return found


def test_a_recorded_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    samples = ["seville_bullfight_base", "melbourne_cup_base", "oahu_dolphin_swim_base"]
    with RunStore(tmp_path / "runs.db") as store:

        async def first() -> str:
            async with Environment(
                "tac", player="human/ada", samples=samples, conditions=["base"], epochs=1,
                store=store, run_id="ada-tac",
            ) as environment:  # fmt: skip
                await _play(environment, 2)
                return environment.run_id

        run_id = asyncio.run(first())
        config = store.require_run(run_id)
        assert config.agent == "human/ada" and config.sample_ids == samples
        assert store.count(run_id) == {"scored": 2}

        async def second() -> list[EpisodeRecord]:
            async with Environment(
                "tac", player="human/ada", store=store, run_id="ada-tac"
            ) as environment:
                played = await _play(environment, 1)
                with pytest.raises(UsageError, match="no episode left"):
                    environment.open()
                return played

        resumed = asyncio.run(second())
        again = Environment("tac", player="human/ada", store=store, run_id="ada-tac")
        try:
            with pytest.raises(UsageError, match="stored scored already"):
                again.open("seville_bullfight_base", "base", 1)
        finally:
            asyncio.run(again.aclose())
        assert [r.sample_id for r in resumed] == ["oahu_dolphin_swim_base"]
        stored = {r.sample_id: r for r in store.episodes(run_id)}
        assert sorted(stored) == sorted(samples)
        assert all(
            r.score is not None and r.score.values["welfare"] == 1.0 for r in stored.values()
        )


def test_an_interrupted_episode_keeps_what_was_played(tmp_path: Path) -> None:
    """A stop at the turn asked for ends the episode as interrupted: an error record with
    the messages played, in no rate, played again when the run resumes."""
    with RunStore(tmp_path / "runs.db") as store:

        async def stop() -> EpisodeRecord:
            async with Environment(
                "tac", player="human/bo", samples=["melbourne_cup_base"], conditions=["base"],
                epochs=1, store=store, run_id="bo",
            ) as environment:  # fmt: skip
                rollout = environment.open()
                await rollout.start()
                await rollout.act(SEARCH)
                return await rollout.interrupt("Ctrl-C")

        record = asyncio.run(stop())
        assert (record.status, record.termination) == ("error", "interrupted")
        assert record.error == "Ctrl-C" and record.score is None
        assert [m.role for m in record.messages] == ["system", "user", "assistant", "tool"]
        assert [r.termination for r in store.episodes("bo")] == ["interrupted"]

        async def again() -> list[EpisodeRecord]:
            async with Environment("tac", player="human/bo", store=store, run_id="bo") as env:
                return await _play(env, 1)

        assert [r.status for r in asyncio.run(again())] == ["scored"]
        assert store.count("bo") == {"scored": 1}


def test_a_recorded_run_is_held_by_one_writer(tmp_path: Path) -> None:
    from deedbench.errors import StoreError

    with RunStore(tmp_path / "runs.db") as store, RunStore(tmp_path / "runs.db") as other:
        environment = Environment("tac", player="human/cy", store=store, run_id="cy")
        try:
            with pytest.raises(StoreError, match="is being executed"):
                Environment("tac", player="human/cy", store=other, run_id="cy")
        finally:
            asyncio.run(environment.aclose())


def test_a_turn_crosses_a_process_boundary_as_json() -> None:
    """What a host sends (the turn) and gets back (the answer) are JSON values: the turn
    read back is the turn, and an answer made from JSON steps the episode on."""
    import json

    from deedbench.records import Message

    async def go() -> None:
        environment = Environment("tac", conditions=["base"])
        rollout = environment.open("seville_bullfight_base")
        turn = await rollout.start()
        assert isinstance(turn, Turn)
        wire = json.loads(json.dumps(turn.to_json()))
        assert Turn.from_json(wire) == turn
        answer = json.loads(json.dumps(SEARCH.model_dump(mode="json")))
        step = await rollout.act(Message.model_validate(answer))
        assert isinstance(step, Turn) and step.messages[-1].role == "tool"
        await rollout.cancel()
        await environment.aclose()

    asyncio.run(go())
