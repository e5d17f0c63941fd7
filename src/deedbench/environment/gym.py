"""deedbench's benchmarks as Gymnasium environments (``pip install 'deedbench[gym]'``).

`DeedbenchEnv` plays one side of a benchmark's episodes (`Environment`) through
Gymnasium's API. An observation is what a model in that seat is shown: ``{"party",
"messages", "tools"}``, the messages in OpenAI's chat format and the tool specs as
deedbench sends them. An action is the assistant message that answers it (a dict in
the same format, a `Message`, or plain text: `chat.action`). The reward comes when the
episode ends, the benchmark's own (τ²'s reward, TAC's welfare), with everything else
the score holds in `info` (the reward's components, the procedure verdicts,
``reward_verified``, the evidence, the record). An episode ended by the step limit is
``truncated``; any other end ``terminated``.

`register` names one environment per benchmark, ``deedbench/NAME-v0`` (agent side)
and, where the benchmark has a simulated user, ``deedbench/NAME-user-v0`` (user side),
for ``gymnasium.make``. Each environment runs its episodes on an event loop of its
own; in async code use `Environment` and `Rollout` directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import gymnasium

from deedbench.engine.rollout import Rollout, Step
from deedbench.engine.seat import Turn
from deedbench.environment.chat import action, chat_message
from deedbench.environment.environment import Environment, outcome_info
from deedbench.records import EpisodeRecord, Message, Termination

__all__ = ["Action", "DeedbenchEnv", "Observation", "register"]

_T = TypeVar("_T")


class Observation(gymnasium.Space[dict[str, Any]]):
    """A turn as Gymnasium sees it: ``{"party", "messages", "tools"}``."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and {"party", "messages", "tools"} <= set(x)

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        raise NotImplementedError("observations are conversations; they are not sampled")


class Action(gymnasium.Space[Any]):
    """An assistant message: a chat-format dict, a `Message`, or text."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict | str | Message)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        raise NotImplementedError("actions are messages; they are not sampled")


class DeedbenchEnv(gymnasium.Env[dict[str, Any], Any]):
    """One side of `benchmark`'s episodes, stepped through Gymnasium's API; every keyword
    is `Environment`'s (``play="user"``, ``partner=``, ``options=``, ``store=``, ...).

    ``reset(seed=, options={"sample_id", "condition", "epoch"})`` starts an episode: the
    one named, else the plan's next; `seed` is the episode's seed (else derived from the
    run seed, as in a run).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012  (Gymnasium's attribute)

    def __init__(self, benchmark: str, **environment: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self.environment = Environment(benchmark, **environment)
        self.observation_space = Observation()
        self.action_space = Action()
        self._rollout: Rollout | None = None
        self._ended: EpisodeRecord | None = None  # an episode over before its first turn
        self._shown: dict[int, tuple[Message, dict[str, Any]]] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if self._rollout is not None and not self._rollout.done:
            self._run(self._rollout.cancel())
        chosen = options or {}
        self._rollout = self.environment.open(
            chosen.get("sample_id"), chosen.get("condition"), chosen.get("epoch"), seed
        )
        self._shown.clear()
        step = self._run(self._rollout.start())
        self._ended = step if isinstance(step, EpisodeRecord) else None
        if isinstance(step, EpisodeRecord):
            return {"party": self.environment.play, "messages": [], "tools": []}, {"ended": True}
        return self._observe(step), self._info(step)

    def step(self, action_: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        rollout = self._rollout
        if rollout is None:
            raise RuntimeError("call reset() before step()")
        if self._ended is not None:
            return self._finish(self._ended)
        step: Step = self._run(rollout.act(action(action_, f"call_{rollout.turns}")))
        if isinstance(step, EpisodeRecord):
            return self._finish(step)
        return self._observe(step), 0.0, False, False, self._info(step)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        if self._rollout is not None and not self._rollout.done:
            self._run(self._rollout.cancel())
        self._run(self.environment.aclose())
        self._loop.close()
        super().close()

    def _run(self, work: Coroutine[Any, Any, _T]) -> _T:
        return self._loop.run_until_complete(work)

    def _finish(
        self, record: EpisodeRecord
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        config = self.environment.config
        info = outcome_info(config, record)
        limit = record.termination == Termination.MAX_STEPS
        observation: dict[str, Any] = {"party": self.environment.play, "messages": [], "tools": []}
        return observation, info["reward"], not limit, limit, info

    def _observe(self, turn: Turn) -> dict[str, Any]:
        """The turn in chat format, each message converted once while the turns show it."""
        shown: dict[int, tuple[Message, dict[str, Any]]] = {}
        messages = []
        for message in turn.messages:
            found = self._shown.get(id(message))
            if found is None or found[0] is not message:
                found = (message, chat_message(message))
            shown[id(message)] = found
            messages.append(found[1])
        self._shown = shown
        return {"party": turn.party, "messages": messages, "tools": list(turn.tools)}

    def _info(self, turn: Turn) -> dict[str, Any]:
        context = turn.context
        return {"sample_id": context.sample_id, "condition": context.condition,
                "epoch": context.epoch, "seed": context.seed}  # fmt: skip


def register() -> list[str]:
    """Register ``deedbench/NAME-v0`` for each benchmark (and ``deedbench/NAME-user-v0``
    where it has a simulated user) with Gymnasium; the ids registered."""
    from deedbench.benchmarks import benchmark_class, benchmarks

    ids = []
    for name in benchmarks():
        sides: list[tuple[str, dict[str, str]]] = [("", {})]
        if any(o.name == "user" for o in benchmark_class(name).option_specs):
            sides.append(("-user", {"play": "user"}))
        for suffix, extra in sides:
            env_id = f"deedbench/{name}{suffix}-v0"
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id,
                    entry_point="deedbench.environment.gym:DeedbenchEnv",
                    kwargs={"benchmark": name, **extra},
                    disable_env_checker=True,
                )
            ids.append(env_id)
    return ids
