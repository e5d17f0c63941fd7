"""Model providers by name: the one table ``NAME/MODEL`` agent specs are read from.

deedbench's own are ``openai``, ``openai-compatible`` (any server at a base URL) and
``anthropic``. A package adds one without editing deedbench: a module holding a
`ModelProvider` and an entry point in the group ``deedbench.providers`` naming it, whose
name is the entry's. As Inspect's model APIs do, a provider imports its SDK only when it
makes an agent (its `ModelAgent` class imports the SDK when created), so listing the
providers, checking settings and recording a run import no SDK; and the agent class names
the key's environment variable (`default_key_env`), once.

deedbench's own are listed here (as its executors are, in `deedbench.executors.kinds`), not
as entry points of its pyproject.toml: installed metadata lists a group's entry points
sorted by name, while help and errors list providers in this order, and a source tree run
with PYTHONPATH has no metadata at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.cache import Cache
from deedbench.agents.limiter import Limiter
from deedbench.agents.model import ModelAgent
from deedbench.agents.openai_agent import OpenAIAgent, OpenAICompatibleAgent
from deedbench.engine import plugins
from deedbench.errors import AgentSpecError
from deedbench.records import AgentSettings

__all__ = [
    "BUILTIN",
    "GROUP",
    "ModelProvider",
    "is_provider",
    "model_provider",
    "provider_names",
]

GROUP = "deedbench.providers"


@dataclass(frozen=True)
class ModelProvider:
    """One model API: agents of class `agent`, whose `protocol` is the provider's name.

    `sdk` is the package its agents import when made and `install` what pip installs to
    get it, both said when it is missing; `needs_base_url` for a protocol with no home
    server of its own (any OpenAI-compatible one).
    """

    agent: type[ModelAgent]
    sdk: str
    install: str
    needs_base_url: bool = False

    @property
    def name(self) -> str:
        return self.agent.protocol

    @property
    def key_env(self) -> str:
        """The environment variable its key is read from when a run names none."""
        return self.agent.default_key_env

    def make(
        self, model: str, settings: AgentSettings, cache: Cache | None, limiter: Limiter
    ) -> ModelAgent:
        """An agent of `model` (its SDK imported now); AgentSpecError for a base URL it
        lacks or an SDK that is not installed, before any call is made."""
        if self.needs_base_url and not settings.base_url:
            raise AgentSpecError(
                f"{self.name} agents need --base-url (e.g. http://localhost:8000/v1)"
            )
        try:
            return self.agent(
                model,
                base_url=settings.base_url,
                api_key_env=settings.api_key_env,
                params=settings.params,
                cache=cache,
                limiter=limiter,
                retry=settings.retry,
            )
        except ModuleNotFoundError as exc:
            if exc.name != self.sdk:
                raise
            raise AgentSpecError(
                f"{self.name} agents need the {self.sdk!r} package: pip install {self.install!r}"
            ) from None


BUILTIN: dict[str, ModelProvider] = {
    provider.name: provider
    for provider in (
        ModelProvider(OpenAIAgent, sdk="openai", install="deedbench[openai]"),
        ModelProvider(
            OpenAICompatibleAgent, sdk="openai", install="deedbench[openai]", needs_base_url=True
        ),
        ModelProvider(AnthropicAgent, sdk="anthropic", install="deedbench[anthropic]"),
    )
}


def provider_names() -> list[str]:
    """Every provider's name: deedbench's, then other packages' in name order (none of
    theirs imported, so help and errors cost no import)."""
    return [*BUILTIN, *_installed()]


def is_provider(name: str) -> bool:
    """Whether `name` is a provider's (deedbench's own without reading any metadata)."""
    return name in BUILTIN or name in _installed()


def model_provider(name: str) -> ModelProvider:
    """The provider called `name`; AgentSpecError naming the valid ones otherwise."""
    if name in BUILTIN:
        return BUILTIN[name]
    installed = _installed()
    if name not in installed:
        valid = ", ".join(provider_names())
        raise AgentSpecError(f"unknown model provider {name!r}. Valid model providers: {valid}")
    return _load(name, installed[name])


@cache
def _installed() -> Mapping[str, str]:
    """Other packages' providers, name -> "module:attr", read once per process (a run asks
    for each episode whether its agent is a model); deedbench's own names are not theirs
    to take."""
    return plugins.entries(GROUP, BUILTIN)


def _load(name: str, target: str) -> ModelProvider:
    provider = plugins.load(target, f"model provider {name!r} ({target})", AgentSpecError)
    if not isinstance(provider, ModelProvider) or provider.name != name:
        raise AgentSpecError(
            f"model provider {name!r} ({target}) is no ModelProvider named {name!r}"
        )
    return provider
