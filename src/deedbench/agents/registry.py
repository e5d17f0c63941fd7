"""Agent specs: the strings users pass to ``--agent``, resolved to agents.

- ``baseline/NAME``: a model-free agent of the chosen benchmark.
- ``openai/MODEL``, ``openai-compatible/MODEL`` (with a base URL), ``anthropic/MODEL``:
  a model behind an official SDK, imported only when used; another package's provider
  by its name (`deedbench.agents.providers`).
- ``python/MODULE:ATTRIBUTE``: an importable agent object, agent class (called with no
  arguments) or turn function (wrapped in `FunctionAgent`), for your own agents and tests;
  the working folder is importable (``python/cheapest:cheapest`` beside cheapest.py).
- ``a2a/URL``: a remote agent that speaks the A2A protocol (`A2AAgent`).
- ``human/NAME`` and ``outside/NAME`` name a side played from outside (``deedbench play``,
  `deedbench.environment`); they are recorded, never resolved here.

A run records each model agent's settings (`AgentSettings`, typed in its `RunConfig`), so
a resumed run rebuilds exactly the agent it started with.
"""

from __future__ import annotations

from typing import Any

from deedbench.agents.a2a_agent import A2AAgent
from deedbench.agents.cache import Cache
from deedbench.agents.function import FunctionAgent
from deedbench.agents.limiter import CallLimits, Limiter, SharedLimits
from deedbench.agents.model import ModelAgent
from deedbench.agents.providers import (
    BUILTIN,
    ModelProvider,
    is_provider,
    model_provider,
    provider_names,
)
from deedbench.engine import Agent, Benchmark
from deedbench.engine.python_specs import import_target
from deedbench.errors import AgentSpecError
from deedbench.records import AgentSettings

__all__ = [
    "MODEL_PROTOCOLS",
    "Providers",
    "agent_kinds",
    "is_model_spec",
    "resolve_agent",
    "settings_for",
]

# deedbench's own providers as (agent module, agent class, SDK): what may be imported
# before a run needs it (on a thread, by a fork server); another package's provider is
# imported when used.
MODEL_PROTOCOLS = {
    name: (provider.agent.__module__, provider.agent.__name__, provider.sdk)
    for name, provider in BUILTIN.items()
}


def settings_for(spec: str, settings: AgentSettings) -> AgentSettings:
    """`settings` with `api_key_env` filled in with the protocol's usual variable when it
    is not set, so the run records the variable actually read; a `UsageError` naming each
    setting no provider takes (a timeout of -1, a temperature of nan), before a run
    that would fail every call with it."""
    protocol = spec.partition("/")[0]
    settings.check()
    if settings.api_key_env or not is_provider(protocol):
        return settings
    return settings.model_copy(update={"api_key_env": model_provider(protocol).key_env})


class Providers:
    """Run-wide resources shared by every model agent: the cache and a limiter per provider.

    `limits` shares the limiters beyond these agents (a study's runs share one per
    endpoint); by default they are these agents' own, capped at `concurrency`.
    """

    def __init__(
        self, cache: Cache | None = None, concurrency: int = 16, limits: CallLimits | None = None
    ) -> None:
        self.cache = cache
        self.concurrency = concurrency
        self.limits = limits if limits is not None else SharedLimits(concurrency)
        self.agents: list[ModelAgent] = []  # every model agent made here, to close at the end
        self.remote: list[A2AAgent] = []  # and every remote agent

    async def aclose(self) -> None:
        """Close every agent's connections (inside the loop that used them)."""
        for agent in self.agents:
            await agent.aclose()
        for remote in self.remote:
            await remote.aclose()

    def limiter(self, protocol: str, base_url: str | None) -> Limiter:
        return self.limits.limiter(protocol, base_url)


def agent_kinds(benchmark: Benchmark[Any] | type[Benchmark[Any]] | None = None) -> list[str]:
    """The specs a user can pass, for help and error messages (a class will do)."""
    kinds = []
    if benchmark is not None:
        kinds += [f"baseline/{name}" for name in benchmark.baseline_names]
    kinds += [f"{protocol}/MODEL" for protocol in provider_names()]
    kinds.append("a2a/URL")
    kinds.append("python/MODULE:ATTRIBUTE")
    return kinds


def is_model_spec(spec: str) -> bool:
    prefix, _, model = spec.partition("/")
    return bool(model) and is_provider(prefix)


def resolve_agent(
    spec: str,
    benchmark: Benchmark[Any] | None,
    settings: AgentSettings | None = None,
    providers: Providers | None = None,
) -> Agent:
    """The agent a spec names; baselines belong to a benchmark, so without one (a judge,
    say) only model and python specs resolve."""
    prefix, _, rest = spec.partition("/")
    if prefix == "baseline" and benchmark is not None:
        baselines = benchmark.baselines()
        if rest in baselines:
            return baselines[rest]()
    elif rest and is_provider(prefix):
        provider = model_provider(prefix)
        return _model_agent(provider, rest, settings or AgentSettings(), providers or Providers())
    elif prefix == "python" and ":" in rest:
        return _import_agent(rest)
    elif prefix == "a2a" and rest:
        agent = A2AAgent(rest)
        (providers or Providers()).remote.append(agent)
        return agent
    elif prefix in ("human", "outside") and rest:
        raise AgentSpecError(
            f"agent {spec!r} is played from outside: `deedbench play` (or "
            "deedbench.environment) plays and resumes its runs"
        )
    valid = ", ".join(agent_kinds(benchmark))
    where = f" for benchmark {benchmark.name!r}" if benchmark is not None else ""
    raise AgentSpecError(f"unknown agent {spec!r}{where}. Valid agents: {valid}")


def _model_agent(
    provider: ModelProvider, model: str, settings: AgentSettings, providers: Providers
) -> ModelAgent:
    limiter = providers.limiter(provider.name, settings.base_url)
    agent = provider.make(model, settings, providers.cache, limiter)
    providers.agents.append(agent)
    return agent


def _import_agent(target: str) -> Agent:
    try:
        found: Any = import_target(target)
    except (ImportError, AttributeError) as exc:
        raise AgentSpecError(f"cannot import agent python/{target}: {exc}") from None
    if isinstance(found, type):
        found = found()  # an agent class, called with no arguments
    elif not hasattr(found, "next_turn"):
        return FunctionAgent(found)
    agent: Agent = found  # Any until here: what the spec names is taken for an agent
    return agent
