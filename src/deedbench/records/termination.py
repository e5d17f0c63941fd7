"""Why an episode ended: the names recorded with every episode."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Termination"]


class Termination(StrEnum):
    """Why an episode ended; recorded with every episode.

    The three endings after the provider's limits (`OUTPUT_TRUNCATED`: a reply cut at
    its output token limit; `CONTENT_FILTERED`: a reply stopped by its content filter;
    `CONTEXT_EXCEEDED`: a prompt over its context window) are no choice of the agent's:
    the episode is scored on what happened before, and reports count them apart.
    `INVALID_ACTION`: the benchmark's rules cannot carry out what the agent did (τ-bench's
    own run stops on arguments that are no JSON object). `AGENT_ERROR` and `USER_ERROR`:
    a message that breaks the half-duplex protocol (text and tool calls together, or
    nothing), which ends a τ² episode as its sender's fault. `INTERRUPTED`: whoever played a
    side from outside stopped the episode (a person's Ctrl-C); like an infrastructure error,
    it is kept with what was played, counted in no rate and played again on resume.
    """

    AGENT_FINISHED = "agent_finished"
    USER_STOPPED = "user_stopped"
    TRANSFERRED = "transferred"
    MAX_STEPS = "max_steps"
    TOO_MANY_TOOL_ERRORS = "too_many_tool_errors"
    INVALID_ACTION = "invalid_action"
    OUTPUT_TRUNCATED = "output_truncated"
    CONTENT_FILTERED = "content_filtered"
    CONTEXT_EXCEEDED = "context_exceeded"
    INFRASTRUCTURE_ERROR = "infrastructure_error"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"
    INTERRUPTED = "interrupted"

    @property
    def unscored(self) -> bool:
        """Whether the episode ended with nothing to score: an infrastructure error, or an
        interruption by whoever played a side from outside (both run again on resume)."""
        return self in (Termination.INFRASTRUCTURE_ERROR, Termination.INTERRUPTED)
