"""A deedbench benchmark published as a verifiers environment (``load_environment``).

verifiers' classic API (``vf.MultiTurnEnv``: a dataset of prompts, `env_response` after
each model turn, stop conditions, a `Rubric`), as verifiers 0.3 has it (``pip install
'deedbench[verifiers]'``, tested with 0.3.1; 0.4 keeps only its new stack). A row of the
dataset is one planned episode; its n-th rollout (a group, for GRPO) is the episode n
plans of epochs later, so each has its own key and seed. Each rollout
is one episode played through the seam (`Environment`, `Rollout`): its prompt is the
first turn the model is shown, its tools the specs deedbench sends, each `env_response`
what the episode gives back to the model's message (tool results, the user's reply),
and the rollout stops when the episode ends. The rubric's reward is the episode's, as
`deedbench run` scores it; the whole score is left in ``state["deedbench"]``.

verifiers is imported when `load_environment` is called; this module imports nothing of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from deedbench.engine.rollout import Rollout
from deedbench.environment.chat import action, chat_message
from deedbench.environment.environment import Environment, outcome_info
from deedbench.errors import UsageError
from deedbench.records import EpisodeRecord, Message

__all__ = ["load_environment"]


def load_environment(
    benchmark: str = "tac",
    *,
    options: Mapping[str, str] | None = None,
    play: str = "agent",
    partner: str | None = None,
    conditions: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    epochs: int | None = None,
    seed: int = 0,
    **kwargs: Any,
) -> Any:
    """`benchmark`'s episodes as a ``vf.MultiTurnEnv``: one dataset row per planned episode
    (sample, condition, epoch), the other arguments `Environment`'s, `kwargs` verifiers'."""
    try:
        import verifiers as vf
        from datasets import Dataset
    except ImportError:
        raise UsageError(
            "the verifiers adapter needs verifiers' classic API: pip install 'deedbench[verifiers]'"
        ) from None
    if not hasattr(vf, "MultiTurnEnv"):
        raise UsageError(
            f"verifiers {getattr(vf, '__version__', '?')} has no MultiTurnEnv: "
            "pip install 'deedbench[verifiers]'"
        )
    environment = Environment(
        benchmark,
        options=options,
        play="user" if play == "user" else "agent",
        player="outside/verifiers",
        partner=partner,
        conditions=conditions,
        samples=samples,
        epochs=epochs,
        seed=seed,
    )
    rows = [
        {
            "prompt": [{"role": "user", "content": environment.built.samples[k.sample_id].input}],
            "answer": "",
            "info": {"sample_id": k.sample_id, "condition": k.condition, "epoch": k.epoch},
        }
        for k in environment.config.episode_keys()
    ]

    def reward(state: Any, **_: Any) -> float:
        found = state.get("deedbench") or {}
        return float(found.get("reward", 0.0))

    rubric = vf.Rubric(funcs=[reward], weights=[1.0])
    return _env_class(vf)(environment, dataset=Dataset.from_list(rows), rubric=rubric, **kwargs)


def _env_class(vf: Any) -> Any:
    """The `MultiTurnEnv` subclass, made once verifiers is imported."""

    class DeedbenchMultiTurnEnv(vf.MultiTurnEnv):  # type: ignore[misc]
        """One deedbench episode per rollout, stepped through the seam."""

        def __init__(self, environment: Environment, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.deedbench = environment
            self._laps: dict[tuple[str, str, int], itertools.count[int]] = {}

        async def setup_state(self, state: Any) -> None:
            info = state["info"]
            row = (info["sample_id"], info["condition"], info["epoch"])
            lap = next(self._laps.setdefault(row, itertools.count()))
            epoch = info["epoch"] + lap * self.deedbench.config.epochs  # a row's n-th rollout
            rollout = self.deedbench.open(info["sample_id"], info["condition"], epoch)
            state["deedbench_rollout"] = rollout
            step = await rollout.start()
            if isinstance(step, EpisodeRecord):
                self._ended(state, step)
                return
            state["prompt"] = _messages(vf, step.messages)
            state["tool_defs"] = [_tool(vf, spec) for spec in step.tools]
            state["deedbench_shown"] = len(step.messages)

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            rollout: Rollout = state["deedbench_rollout"]
            answer = _plain(messages[-1])
            step = await rollout.act(action(answer, f"call_{rollout.turns}"))
            if isinstance(step, EpisodeRecord):
                self._ended(state, step)
                return []
            shown = state["deedbench_shown"]
            state["deedbench_shown"] = len(step.messages)
            return _messages(vf, step.messages[shown + 1 :])  # after the model's own

        def _ended(self, state: Any, record: EpisodeRecord) -> None:
            info = outcome_info(self.deedbench.config, record)
            info.pop("record")
            state["deedbench"] = info
            state["final_env_response"] = []

    return DeedbenchMultiTurnEnv


def _plain(message: Any) -> Any:
    """A verifiers message as a plain dict (its models dump; dicts stay)."""
    return message.model_dump() if hasattr(message, "model_dump") else message


def _messages(vf: Any, messages: Sequence[Message] | tuple[Message, ...]) -> list[Any]:
    """Messages as verifiers' own message types."""
    made = []
    for message in messages:
        chat = chat_message(message)
        if message.role == "tool":
            made.append(vf.ToolMessage(tool_call_id=chat["tool_call_id"], content=chat["content"]))
        elif message.role == "assistant":
            calls = [
                vf.ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
            ]
            made.append(vf.AssistantMessage(content=message.content, tool_calls=calls or None))
        elif message.role == "system":
            made.append(vf.SystemMessage(content=message.content))
        else:
            made.append(vf.UserMessage(content=message.content))
    return made


def _tool(vf: Any, spec: dict[str, Any]) -> Any:
    function = spec["function"]
    return vf.Tool(
        name=function["name"],
        description=function.get("description", ""),
        parameters=function.get("parameters", {}),
    )
