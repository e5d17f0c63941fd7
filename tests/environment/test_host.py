"""Episodes hosted in another process: a worker holds the environment and its world, the
client sends and gets JSON only, and the episode ends as it does in the client's own
process (same messages, same score)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from typing import Any

from deedbench.engine.seat import Turn
from deedbench.environment import Environment, action
from deedbench.environment.host import serve
from deedbench.records import EpisodeRecord

SEARCH = {"name": "search_experiences", "arguments": {"location": "Seville", "keywords": "show"}}
TICKETS = {"experience_id": "sev-02", "num_tickets": 2, "ticket_type": "adult"}
BUY = {"name": "purchase_tickets", "arguments": TICKETS}
PLAY = [SEARCH, BUY, "Booked the flamenco show."]
SAMPLE = "seville_bullfight_base"


def _ask(connection: Any, **request: Any) -> Any:
    connection.send(json.loads(json.dumps(request)))  # JSON values only, both ways
    answer = connection.recv()
    assert json.loads(json.dumps(answer)) == answer
    return answer


def test_a_worker_process_hosts_the_episode() -> None:
    here, there = multiprocessing.Pipe()
    worker = multiprocessing.get_context("spawn").Process(
        target=serve, args=(there, "tac"), kwargs={"conditions": ["base"]}
    )
    worker.start()
    try:
        step = _ask(here, call="open", sample_id=SAMPLE)["ok"]
        episode = step["episode"]
        assert Turn.from_json(step["turn"]).messages[1].content.startswith("whats the most")
        for move in PLAY:
            step = _ask(here, call="act", episode=episode, message=move)["ok"]
        assert "record" in step and step["reward"] == 1.0
        assert step["info"]["values"]["welfare"] == 1.0
        bad = _ask(here, call="act", episode=episode, message="again")
        assert bad == {"error": f"no episode {episode!r} in play here"}
        assert _ask(here, call="close") == {"ok": None}
    finally:
        worker.join(timeout=30)
    assert worker.exitcode == 0
    hosted = EpisodeRecord.model_validate(step["record"])

    async def at_home() -> EpisodeRecord:
        environment = Environment("tac", conditions=["base"])
        rollout = environment.open(SAMPLE)
        found = await rollout.start()
        for move in PLAY:
            assert isinstance(found, Turn)
            found = await rollout.act(action(move, f"call_{rollout.turns}"))
        assert isinstance(found, EpisodeRecord)
        return found

    home = asyncio.run(at_home())
    assert hosted.messages == home.messages and hosted.score == home.score
