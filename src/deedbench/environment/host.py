"""Episodes hosted in another process: an `Environment` answering calls made of JSON values.

A trainer's process need not hold the world: a host (a worker process, a Ray actor,
anything that passes JSON both ways) keeps the `Environment` and its rollouts by id and
answers `open` and `act`; the client holds only episode ids. What crosses is a turn
(`Turn.to_json`) one way and an assistant message (`Message` as JSON, or any action
`chat.action` reads) the other; the finished episode comes back as its record's JSON,
its reward and the rest of what `outcome_info` tells. `serve` runs a host over a
`multiprocessing` connection; a Ray actor would wrap the class (its methods are async).
"""

from __future__ import annotations

import asyncio
import itertools
from multiprocessing.connection import Connection
from typing import Any

from deedbench.engine.rollout import Rollout, Step
from deedbench.environment.chat import action
from deedbench.environment.environment import Environment, outcome_info
from deedbench.errors import DeedbenchError, UsageError
from deedbench.records import EpisodeRecord

__all__ = ["EnvironmentHost", "serve"]


class EnvironmentHost:
    """An `Environment` built here from `benchmark` and `environment` (its keywords), whose
    episodes are opened and stepped by calls of JSON values."""

    def __init__(self, benchmark: str, **environment: Any) -> None:
        self.environment = Environment(benchmark, **environment)
        self._rollouts: dict[str, Rollout] = {}
        self._ids = itertools.count(1)

    async def open(
        self,
        sample_id: str | None = None,
        condition: str | None = None,
        epoch: int | None = None,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """Start an episode: ``{"episode": ID, "turn": ...}``, or its end (`act`'s)."""
        rollout = self.environment.open(sample_id, condition, epoch, seed)
        episode = f"e{next(self._ids)}"
        self._rollouts[episode] = rollout
        return self._step(episode, await rollout.start())

    async def act(self, episode: str, message: Any) -> dict[str, Any]:
        """Answer an episode's turn: the next ``{"episode", "turn"}``, or ``{"episode",
        "record", "reward", "info"}`` once it ends."""
        rollout = self._rollouts.get(episode)
        if rollout is None:
            raise UsageError(f"no episode {episode!r} in play here")
        return self._step(episode, await rollout.act(action(message, f"call_{rollout.turns}")))

    async def close(self) -> None:
        for rollout in self._rollouts.values():
            await rollout.cancel()
        self._rollouts.clear()
        await self.environment.aclose()

    def _step(self, episode: str, step: Step) -> dict[str, Any]:
        if not isinstance(step, EpisodeRecord):
            return {"episode": episode, "turn": step.to_json()}
        del self._rollouts[episode]
        info = outcome_info(self.environment.config, step)
        info.pop("record")
        return {
            "episode": episode,
            "record": step.model_dump(mode="json"),
            "reward": info.pop("reward"),
            "info": info,
        }


def serve(connection: Connection, benchmark: str, **environment: Any) -> None:
    """Host `benchmark`'s episodes over `connection` until it closes or says ``close``:
    each request ``{"call": "open" | "act" | "close", ...arguments}`` gets one answer,
    ``{"ok": result}`` or ``{"error": message}``."""

    async def loop() -> None:
        host = EnvironmentHost(benchmark, **environment)
        try:
            while True:
                try:
                    request = await asyncio.to_thread(connection.recv)
                except EOFError:
                    return
                call = request.pop("call")
                if call == "close":
                    connection.send({"ok": None})
                    return
                try:
                    if call == "open":
                        result = await host.open(**request)
                    elif call == "act":
                        result = await host.act(request["episode"], request["message"])
                    else:
                        raise UsageError(f"no call {call!r}: open, act or close")
                except DeedbenchError as exc:
                    connection.send({"error": str(exc)})
                    continue
                connection.send({"ok": result})
        finally:
            await host.close()

    asyncio.run(loop())
