"""Generation parameters: what a model agent sends besides the conversation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["GenerationParams"]


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
