"""deedbench's model-free TAC baselines as Inspect models: ``--model deedbench/relevance``.

Inspect's own mock model counts tokens with tiktoken's ``o200k_base`` file whenever its
outputs carry no usage, and that file is downloaded on first use; these models need no
file and no network. Each turn converts Inspect's conversation to deedbench's messages,
asks the baseline (`deedbench.benchmarks.tac.baselines.BASELINES`) for its next turn, and
returns it with its tool calls and an explicit zero usage, so Inspect counts nothing.

The baselines read an `AgentContext` seed (`random` picks with it; every baseline's tool
call ids carry it). Under deedbench's own tasks it is the episode seed the task's setup
derived and stored (`SEED_KEY`), so a baseline plays each sample exactly as
``deedbench run tac --agent baseline/NAME`` with the same ``-T seed``. Under any other
task it is derived from Inspect's ``--seed`` (0 when not given) and the first user
message, the same for every epoch of a sample.
"""

from __future__ import annotations

import hashlib
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from deedbench.benchmarks.tac.baselines import BASELINES, TacBaseline
from deedbench.engine import AgentContext
from deedbench.interop.convert import from_inspect, to_inspect, tool_spec_from_inspect

__all__ = ["SEED_KEY", "BaselineModel", "baseline_seed", "deedbench_baselines"]

SEED_KEY = "deedbench_seed"  # in each sample's store: the episode seed deedbench derived


def baseline_seed(request: str, run_seed: int | None) -> int:
    """The seed outside deedbench's tasks: 63 bits fixed by Inspect's seed and the request."""
    text = f"{run_seed or 0}|{request}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


class BaselineModel(ModelAPI):
    """One TAC baseline, named by the model name: ``deedbench/random``, ``.../relevance``,
    ``.../welfare`` or ``.../refuse``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in BASELINES:
            valid = ", ".join(f"deedbench/{name}" for name in BASELINES)
            raise ValueError(f"Unknown deedbench model 'deedbench/{model_name}'; valid: {valid}")
        if model_args:
            raise ValueError(
                f"deedbench/{model_name} takes no model args (-M); got: {', '.join(model_args)}"
            )
        self.agent = TacBaseline(BASELINES[model_name])

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        messages = [from_inspect(m) for m in input]
        stored = store().get(SEED_KEY)
        if stored is None:
            request = next((m.text for m in input if isinstance(m, ChatMessageUser)), "")
            seed = baseline_seed(request, config.seed)
        else:
            seed = int(stored)
        # A model is not told which sample, condition or epoch it serves: only the seed.
        context = AgentContext(sample_id="", condition="", epoch=0, seed=seed)
        specs = [tool_spec_from_inspect(t) for t in tools]
        turn = await self.agent.next_turn(messages, specs, context)
        converted = to_inspect(turn)
        assert isinstance(converted, ChatMessageAssistant)  # an agent's turn is the assistant's
        reply = converted.model_copy(update={"model": self.model_name, "source": "generate"})
        return ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=reply, stop_reason="tool_calls" if turn.tool_calls else "stop"
                )
            ],
            usage=ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0),
        )


@modelapi(name="deedbench")
def deedbench_baselines() -> type[ModelAPI]:
    """Registers the ``deedbench/`` model names with Inspect (as its own providers do)."""
    return BaselineModel
