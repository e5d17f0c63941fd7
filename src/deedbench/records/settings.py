"""How a model agent is set up, as a run records it: generation parameters, endpoint, the
variable its key is read from (never the key), and retry bounds.

These travel typed from the command line (or the Python API) through the run's
`RunConfig` to the agent that a recipe builds, in whatever process runs the episodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deedbench.errors import UsageError

__all__ = ["AgentSettings", "GenerationParams", "RetryPolicy"]


class GenerationParams(BaseModel):
    """Sampling settings. None means "not sent": the provider's default applies.

    `seed` None sends each episode's own derived seed where the protocol takes one
    (OpenAI-compatible); `extra` passes anything else through (``-M key=value``).
    """

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    reasoning_effort: str | None = None
    timeout: float = 120.0
    extra: dict[str, Any] = Field(default_factory=dict)

    def over(self, defaults: dict[str, Any]) -> GenerationParams:
        """These settings, with `defaults` filling what was not set."""
        values = self.model_dump()
        for key, value in defaults.items():
            if key in values and values[key] is None:
                values[key] = value
        return GenerationParams.model_validate(values)

    def problems(self) -> dict[str, str]:
        """Each setting no provider takes, by name, with what it takes instead.

        A run records these without judging them (a stored run must always read back),
        so `check` is asked before a run: a timeout of -1 s or a temperature of nan would
        otherwise fail every call, and every episode would end as an infrastructure error.
        """
        found = _outside("temperature", self.temperature, "a finite number of 0 or more", 0)
        found |= _outside("top_p", self.top_p, "a finite number from 0 to 1", 0, 1)
        found |= _outside(
            "timeout", self.timeout, "a finite number of seconds above 0", 0, above=True
        )
        if self.max_tokens is not None and self.max_tokens < 1:
            found["max_tokens"] = f"max_tokens = {self.max_tokens}: a whole number of 1 or more"
        return found


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds on retrying one call: attempts, total seconds, and the backoff curve."""

    max_attempts: int = 8
    max_seconds: float = 300.0
    initial_wait: float = 1.0
    max_wait: float = 60.0


class AgentSettings(BaseModel):
    """What a model agent is built from, as recorded in the run (never the key itself).

    `api_key_env` None means the protocol's usual variable (OPENAI_API_KEY...);
    `deedbench.agents.settings_for` fills it in, so the record names the variable read.
    """

    base_url: str | None = None
    api_key_env: str | None = None
    params: GenerationParams = Field(default_factory=GenerationParams)
    max_attempts: int = 8
    max_retry_seconds: float = 300.0
    retry_initial_wait: float = 1.0
    retry_max_wait: float = 60.0

    def problems(self) -> dict[str, str]:
        """The generation settings' problems (`GenerationParams.problems`) and the retry
        bounds', by setting name."""
        found = self.params.problems()
        if self.max_attempts < 1:
            found["max_attempts"] = f"max_attempts = {self.max_attempts}: 1 or more"
        found |= _outside(
            "max_retry_seconds", self.max_retry_seconds, "a finite number of seconds, 0 or more", 0
        )
        return found

    def check(self) -> AgentSettings:
        """These settings, or a `UsageError` naming each setting no provider takes."""
        found = self.problems()
        if found:
            raise UsageError("; ".join(found.values()))
        return self

    @property
    def retry(self) -> RetryPolicy:
        """The retry bounds these settings record, as the agent applies them."""
        return RetryPolicy(
            max_attempts=self.max_attempts,
            max_seconds=self.max_retry_seconds,
            initial_wait=self.retry_initial_wait,
            max_wait=self.retry_max_wait,
        )


def _outside(
    name: str,
    value: float | None,
    allowed: str,
    low: float,
    high: float = math.inf,
    *,
    above: bool = False,
) -> dict[str, str]:
    """{name: message} when `value` is given and is not finite, below `low` (or at it, if
    it must be `above`) or above `high`."""
    if value is None or (
        math.isfinite(value) and (value > low if above else value >= low) and value <= high
    ):
        return {}
    return {name: f"{name} = {value}: {allowed}"}
