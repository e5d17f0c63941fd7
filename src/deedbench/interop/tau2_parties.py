"""Who acted in a run, as τ²'s result files and leaderboard name them: the agent and the
user as τ²'s ``AgentInfo`` / ``UserInfo`` (implementation, model, its arguments)."""

from __future__ import annotations

import json
from typing import Any

from deedbench.benchmarks.tau2.results import Tau2Party
from deedbench.records import AgentSettings, RunConfig

__all__ = [
    "agent_identity",
    "agent_party",
    "is_model",
    "model_name",
    "user_identity",
    "user_party",
    "who",
]

_NOT_MODELS = ("baseline", "python")  # agent kinds that are no provider's model
_GENERATION = ("temperature", "max_tokens", "top_p", "seed", "reasoning_effort")


def model_name(spec: str) -> str:
    """What τ²'s ``llm`` field names: a provider's model without deedbench's provider
    prefix (``openai/gpt-4o``: ``gpt-4o``); any other agent by its whole spec."""
    kind, _, model = spec.partition("/")
    return spec if kind in _NOT_MODELS or not model else model


def is_model(spec: str) -> bool:
    return spec.partition("/")[0] not in _NOT_MODELS


def _llm_args(settings: AgentSettings | None) -> dict[str, Any] | None:
    """The generation parameters sent with each call (τ²'s ``llm_args``)."""
    if settings is None:
        return None
    params = settings.params
    found = {name: getattr(params, name) for name in _GENERATION}
    return {k: v for k, v in found.items() if v is not None} | dict(params.extra)


def agent_party(config: RunConfig) -> Tau2Party:
    spec = config.agent
    kind = spec.partition("/")[0]
    implementation = "llm_agent" if is_model(spec) else f"deedbench_{kind}_agent"
    return Tau2Party(
        implementation=implementation,
        llm=model_name(spec),
        llm_args=_llm_args(config.agent_settings),
    )


def user_party(config: RunConfig) -> Tau2Party:
    if config.user is None:
        return Tau2Party(implementation="deedbench_scripted_user")
    return Tau2Party(
        implementation="user_simulator",
        llm=model_name(config.user.spec),
        llm_args=_llm_args(config.user.settings),
    )


def who(party: Tau2Party, spec: str | None) -> str:
    if spec is None:
        return "deedbench's scripted user"
    args = json.dumps(party.llm_args, sort_keys=True) if party.llm_args else "no parameters"
    return f"{spec} ({args})"


def agent_identity(config: RunConfig) -> str:
    return who(agent_party(config), config.agent)


def user_identity(config: RunConfig) -> str:
    return who(user_party(config), config.user.spec if config.user else None)
