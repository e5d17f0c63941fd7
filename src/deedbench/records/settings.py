"""How a model agent is set up, as a run records it: generation parameters, endpoint, the
variable its key is read from (never the key), and retry bounds.

These travel typed from the command line (or the Python API) through the run's
`RunConfig` to the agent that a recipe builds, in whatever process runs the episodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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

    @property
    def retry(self) -> RetryPolicy:
        """The retry bounds these settings record, as the agent applies them."""
        return RetryPolicy(
            max_attempts=self.max_attempts,
            max_seconds=self.max_retry_seconds,
            initial_wait=self.retry_initial_wait,
            max_wait=self.retry_max_wait,
        )
