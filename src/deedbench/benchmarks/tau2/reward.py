"""τ²'s verdict on one episode (its ``RewardInfo``), field for field.

The reward is the product of the components the task's ``reward_basis`` names; the
verdict keeps every component's checks beside it, whether or not they count, so a
report can say which one failed. Its JSON (`Tau2Reward.tau2_json`) is what τ²'s
own result files hold under ``reward_info``, which is how deedbench's verdict is
compared with τ²'s, and written back into τ²'s format.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks.tau2.tasks import EnvCall, GoldAction, RewardType
from deedbench.engine import ToolKind

__all__ = [
    "ActionCheck",
    "CommunicateCheck",
    "DBCheck",
    "EnvAssertionCheck",
    "NLAssertionCheck",
    "Tau2Reward",
]


class DBCheck(BaseModel):
    """Whether both databases hash as the gold replay's do."""

    db_match: bool
    db_reward: float


class EnvAssertionCheck(BaseModel):
    env_assertion: EnvCall
    met: bool
    reward: float


class ActionCheck(BaseModel):
    """Whether some call of the trajectory matched one gold action."""

    action: GoldAction
    action_match: bool
    action_reward: float
    tool_type: ToolKind | None = None


class CommunicateCheck(BaseModel):
    info: str
    met: bool
    justification: str


class NLAssertionCheck(BaseModel):
    """One judged assertion, as the judge answered it."""

    nl_assertion: str
    met: bool
    justification: str


class Tau2Reward(BaseModel):
    """τ²'s ``RewardInfo``: the reward, each component's checks, and what counted."""

    reward: float
    db_check: DBCheck | None = None
    env_assertions: list[EnvAssertionCheck] | None = None
    action_checks: list[ActionCheck] | None = None
    nl_assertions: list[NLAssertionCheck] | None = None
    communicate_checks: list[CommunicateCheck] | None = None
    reward_basis: list[RewardType] | None = None
    reward_breakdown: dict[RewardType, float] | None = None
    info: dict[str, Any] | None = None

    def tau2_json(self) -> dict[str, Any]:
        """The verdict as τ²'s result files hold it."""
        return self.model_dump(mode="json")

    def failed_components(self) -> list[str]:
        """The components of the basis that scored below 1, in τ²'s order."""
        breakdown = self.reward_breakdown or {}
        return [name for name, value in breakdown.items() if value < 1.0]
