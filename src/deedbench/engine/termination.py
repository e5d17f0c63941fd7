"""Why an episode ended: the names recorded with every episode."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Termination"]


class Termination(StrEnum):
    """Why an episode ended; recorded with every episode."""

    AGENT_FINISHED = "agent_finished"
    USER_STOPPED = "user_stopped"
    TRANSFERRED = "transferred"
    MAX_STEPS = "max_steps"
    TOO_MANY_TOOL_ERRORS = "too_many_tool_errors"
    INVALID_ACTION = "invalid_action"  # a benchmark's rules cannot carry out the agent's action
    INFRASTRUCTURE_ERROR = "infrastructure_error"
