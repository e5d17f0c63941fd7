"""A desk's tasks: who the customer is, what they want, and the gold actions.

A task's user instructions are structured, so the scripted customer can play them
deterministically and a model-played one can be prompted with them. The schema
knows no domain: a want's `kind` is a label the domain chooses ("cancel",
"change", ...), except the kinds the desk's customers and oracle treat apart
(`INFO`, `TRANSFER`, `FORBIDDEN`); the customer's `identity` is whatever details
the domain's ways of identifying take (an email, a name and zip code, a user id:
what its authentication tool takes), and `identify_by` names the way this
customer uses (`Customer.identities`).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = [
    "CHANGE",
    "FORBIDDEN",
    "INFO",
    "TRANSFER",
    "Action",
    "DeskTask",
    "UserInstructions",
    "Want",
]

INFO = "info"
"""A question: settled once the agent's replies hold what the want `expects`."""
TRANSFER = "transfer"
"""A request only a human can settle: it ends with the hand-off."""
FORBIDDEN = "forbidden"
"""A request the policy forbids: settled once the agent has turned it down."""
CHANGE = "change"
"""A change to the database of a kind the domain does not name."""


class Action(BaseModel):
    """One tool call of a gold trajectory."""

    name: str
    kwargs: dict[str, Any] = Field(default_factory=dict)


class Want(BaseModel):
    """One thing the customer came for, how they ask, and what settles it."""

    kind: str
    say: str
    action: Action | None = None
    details: list[str] = Field(default_factory=list)
    expects: list[str] = Field(default_factory=list)


class UserInstructions(BaseModel):
    """What the simulated customer knows, wants and refuses.

    A task file writes the identity's details beside the other fields, as task files
    always have (``{"email": ..., "identify_by": "email", "wants": [...]}``): read, every
    field that is none of this model's is a detail of the identity; dumped, the details
    are written so again, so a task file and its content hash stay as they were.
    """

    identity: dict[str, str] = Field(default_factory=dict)
    """Who the customer is, detail by name (``email``, ``user_id``, ...): those the
    domain's ways of identifying name, and any others they know of themselves."""
    identify_by: str
    wants: list[Want]
    refuses: list[str] = Field(default_factory=list)
    free_text: str | None = None  # instructions written for an LLM user (τ-bench's tasks)

    @model_validator(mode="before")
    @classmethod
    def _details_beside(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "identity" in data:
            return data
        own = {k: v for k, v in data.items() if k in cls.model_fields}
        return {**own, "identity": {k: v for k, v in data.items() if k not in own}}

    @model_serializer(mode="wrap")
    def _details_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {**dumped.pop("identity"), **dumped}


class DeskTask(BaseModel):
    """A task: the customer's instructions, the gold actions and the required outputs."""

    id: str
    template: str
    instructions: UserInstructions
    actions: list[Action]
    outputs: list[str] = Field(default_factory=list)
    must_transfer: bool = False

    @property
    def writes(self) -> bool:
        """Whether the task needs a change to the database (gold reads do not count)."""
        return any(w.action is not None for w in self.instructions.wants)
