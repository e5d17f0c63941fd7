"""The models of a run, by role, and the one way each role's settings are made.

A run uses up to three models, each in a role: the agent, the simulated user a model
plays (``-T user=llm:SPEC``, or ``--user SPEC``) and τ²'s NL judge (``-T judge=SPEC``, or
``--judge SPEC``); ``deedbench audit --judge`` adds a fourth, the audit's judge. Each role
takes the same settings, given the same way wherever a run is made:

- on ``deedbench run``: ``--base-url``, ``--api-key-env``, ``--temperature``,
  ``--max-tokens``, ``-M KEY=VALUE`` for the agent; the same with ``--user-`` or
  ``--judge-`` in front (``-U``, ``-J``) for the other two;
- in a study file: the keys of ``[[agents]]``, ``[user]`` and ``[judge]``
  (``base_url``, ``api_key_env``, ``temperature``, ``max_tokens``, ``extra``, ...);
- in Python: a `ModelChoice` given to `role_settings`.

`ModelChoice` holds what was given for one role (None: not given). `role_settings` turns
it into the `AgentSettings` a run records: the role's own defaults filled in (τ²'s user
and judge run at temperature 0, as τ² runs them), the variable the key is read from and
the endpoint the SDK would otherwise take from the environment written down, every
setting no provider takes refused, and a provider that needs a base URL refused without
one, the message naming the role's own flag.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deedbench.agents.providers import is_provider, model_provider
from deedbench.agents.registry import settings_for
from deedbench.errors import UsageError
from deedbench.records import AgentSettings

__all__ = ["ROLES", "ModelChoice", "Role", "role_settings"]


@dataclass(frozen=True)
class Role:
    """One role a model plays: `name` as reports print it; `usage`, the key its calls
    are counted under in an episode's usage; `flags`, the prefix of its flags on the
    command that sets it; `table`, where a study file sets it (None: nowhere); `defaults`, the
    generation settings it takes when none are given."""

    name: str
    usage: str
    flags: str
    table: str | None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def flag(self, setting: str) -> str:
        """The flag of one of its settings: ``--judge-base-url`` for the judge's base URL."""
        return f"{self.flags}{setting.replace('_', '-')}"


ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role("agent", "assistant", "--", "[[agents]]"),
        Role("user", "user", "--user-", "[user]", {"temperature": 0.0}),
        Role("judge", "judge", "--judge-", "[judge]", {"temperature": 0.0}),
        Role("audit judge", "audit_judge", "--judge-", None),
    )
}

# The environment variable each SDK reads its endpoint from when it is given none: written
# into the record, so a run says where its calls went and a resume goes there again.
_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}

_PARAMS = ("temperature", "max_tokens", "top_p", "seed", "reasoning_effort", "timeout")
_TOP = ("base_url", "api_key_env", "max_attempts", "max_retry_seconds")


class ModelChoice(BaseModel):
    """The settings given for one role's model; None (or no `extra`) is "not given": the
    role's default, or the provider's, applies."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None  # sent to the model (default: each episode's derived seed)
    reasoning_effort: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)  # any other request parameter
    timeout: float | None = None
    max_attempts: int | None = None
    max_retry_seconds: float | None = None

    def given(self) -> AgentSettings:
        """Only what was given, as settings whose fields set are those: what a resume
        compares with the recorded run (`AgentSettings.model_dump(exclude_unset=True)`)."""
        params: dict[str, Any] = {
            name: value for name in _PARAMS if (value := getattr(self, name)) is not None
        }
        if self.extra:
            params["extra"] = dict(self.extra)
        top: dict[str, Any] = {
            name: value for name in _TOP if (value := getattr(self, name)) is not None
        }
        if params:
            top["params"] = params
        return AgentSettings.model_validate(top)

    def is_empty(self) -> bool:
        """Whether nothing at all was given."""
        return not self.given().model_dump(exclude_unset=True)


def role_settings(
    role: str,
    spec: str,
    choice: ModelChoice | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> AgentSettings:
    """The settings a run records for the model `spec` in `role` ("agent", "user",
    "judge", "audit judge"), from what `choice` gives: `defaults` (a benchmark's
    generation defaults, for the agent), else the role's own, fill what was not given;
    the key's variable and, for OpenAI and Anthropic, the endpoint the SDK would read
    from the environment are named. A `UsageError` names each setting no provider takes,
    and a provider that needs a base URL given none."""
    found = ROLES[role]
    settings = AgentSettings.model_validate(
        (choice or ModelChoice()).given().model_dump(exclude_unset=True)
    )
    params = settings.params.over({**found.defaults, **(defaults or {})})
    settings = settings.model_copy(update={"params": params})
    protocol = spec.partition("/")[0]
    if is_provider(protocol):
        if not settings.base_url and model_provider(protocol).needs_base_url:
            study = f"; in a study file, base_url in {found.table}" if found.table else ""
            raise UsageError(
                f"the {role}'s model {spec} needs a base URL: {found.flag('base_url')} URL "
                f"(e.g. http://localhost:8000/v1{study})"
            )
        variable = _BASE_URL_ENV.get(protocol)
        if not settings.base_url and variable and os.environ.get(variable):
            settings = settings.model_copy(update={"base_url": os.environ[variable]})
    return settings_for(spec, settings)
