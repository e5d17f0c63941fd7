"""A service-desk domain: what the desk's machinery needs to know about one business.

The machinery (episodes, the scripted and model-played customers, the oracle, the
scorer, replay, validation, rescoring) is the same for every desk. A `Domain`
supplies the rest: its tools and how its data loads, its procedure (which tools
write, authenticate, read personal data, hand over), which lists compare as
multisets, its own policy rules, and how its customers talk (`Customer`).

A desk whose customer has tools of their own (τ²'s dual control: telecom's phone,
banking's app) names them in `user_tools`, with the customer's database
(`load_user`; none: the customer's tools act on the desk's), and `sync`, what keeps
the two sides consistent after every call (the phone follows the network). A
domain whose tools are methods of a toolkit over its database (τ²'s) says how to
make that toolkit from an episode's world (`bind`, `bind_user`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deedbench.benchmarks.servicedesk.task import CHANGE, Action, UserInstructions
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import BenchmarkError, Message, Tool
from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure

__all__ = ["Answer", "Customer", "Domain", "Identity", "PolicyCheck"]

PolicyCheck = Callable[[Sequence[Message], Mapping[str, Any]], list[Violation]]
"""A domain's own policy rules: violations in a transcript, given the database before it."""


@dataclass(frozen=True)
class Identity:
    """One way a customer says who they are.

    The texts are format strings over the fields of the task's `UserInstructions`
    (``{email}``, ``{first_name}``, ``{user_id}`` ...).
    """

    says: str
    """What the scripted customer says when asked: ``"my email is {email}"``."""
    gives: str
    """What the model-played customer is told to give: ``"your email, {email}"``."""
    asked_as: str
    """How the oracle asks for it: ``"the email address on your account"``."""
    lookup: str | None = None
    """The authentication tool the oracle calls with it (None: the desk takes the id as said)."""
    lookup_args: tuple[str, ...] = ()
    """The instruction fields passed to `lookup`, as arguments of the same names, in order."""
    cue: str | None = None
    """A word that, in a task's free-text instruction, asks for this way (τ-bench's tasks)."""

    def introduction(self, instructions: UserInstructions) -> str:
        """What the scripted customer says."""
        return self.says.format_map(dict(instructions))

    def instruction(self, instructions: UserInstructions) -> str:
        """What the model-played customer is told to give."""
        return self.gives.format_map(dict(instructions))


@dataclass(frozen=True)
class Answer:
    """A question the scripted customer answers from the arguments of the change it wants."""

    asks: re.Pattern[str]
    """Matched against the agent's message, lower-cased, which must end with a question mark."""
    needs: str
    """The argument the change must have for this answer."""
    reply: Callable[[Mapping[str, Any]], str]
    """The answer, from the change's arguments."""


@dataclass(frozen=True)
class Customer:
    """How a desk's customers talk: the words the scripted customer, the model-played one
    and the oracle use, none of which the machinery hard-codes."""

    desk: str
    """Whom the model-played customer writes to: ``"an online shop's help desk"``."""
    prompt_version: str
    """The version of the model-played customer's prompt, recorded with a run."""
    identities: Mapping[str, Identity]
    """The ways a customer identifies themselves, by `UserInstructions.identify_by`, in
    the order the oracle offers them."""
    verbs: Mapping[str, tuple[str, ...]]
    """The words a proposal must use to be about a change, by the write tool's first
    word (``"cancel_pending_order"``: ``"cancel"``); the ids alone would let a customer
    agree to cancelling the order it wanted to return."""
    answers: Sequence[Answer] = ()
    """The questions the scripted customer answers, the first that fits first."""

    def __post_init__(self) -> None:
        if not any(i.cue is None for i in self.identities.values()):
            raise ValueError("a customer needs one way of identifying without a cue (the default)")


@dataclass(frozen=True)
class Domain:
    """Tools, data loading, procedure rules, the lists compared as multisets, the customers."""

    name: str
    load: Callable[[Path], Tables]
    tools: Sequence[Tool]
    procedure: ProcedureSpec
    unordered: frozenset[str] = frozenset()
    customer: Customer | None = None
    """How the desk's scripted customer and oracle talk (None: the domain's tasks come
    with their own user, as τ²'s do)."""
    kinds: Mapping[str, str] = field(default_factory=dict)
    """The kind of want each write tool serves, for tasks built from gold actions (others:
    `CHANGE`)."""
    procedure_rules: tuple[str, ...] | None = None
    """The generic procedure rules that apply (None: all)."""
    policy_check: PolicyCheck | None = None
    """The domain's own policy rules."""
    user_tools: Sequence[Tool] = ()
    """The tools the customer has (dual control); the agent never sees them."""
    load_user: Callable[[Path], Mapping[str, Any]] | None = None
    """The customer's own database (None: their tools act on the desk's database)."""
    tables: frozenset[str] | None = None
    """The entries of the database that are tables of records (None: all)."""
    user_tables: frozenset[str] | None = None
    """Likewise for the customer's database."""
    bind: Callable[[DeskWorld], Any] | None = None
    """What the desk's tools take as their first argument, made from an episode's world
    (a toolkit over it); None: the world itself."""
    bind_user: Callable[[DeskWorld], Any] | None = None
    """Likewise for the customer's tools."""
    sync: Callable[[Any, Any], None] | None = None
    """Run after every successful call, on either side, with the desk's and the customer's
    bound states: what keeps the two consistent."""

    def violations(self, messages: Sequence[Message], base: Mapping[str, Any]) -> list[Violation]:
        found = check_procedure(messages, self.procedure, self.procedure_rules)
        if self.policy_check is not None:
            found += self.policy_check(messages, base)
        return sorted(found, key=lambda v: v.message_index)

    @property
    def talk(self) -> Customer:
        """How the customers talk; a `BenchmarkError` for a domain whose tasks bring their own
        user (the scripted customer and the oracle need it)."""
        if self.customer is None:
            raise BenchmarkError(f"the {self.name} domain says nothing of how its customers talk")
        return self.customer

    def identity(self, instructions: UserInstructions) -> Identity:
        return self.talk.identities[instructions.identify_by]

    def introduction(self, instructions: UserInstructions) -> str:
        """What the scripted customer says to identify itself."""
        return self.identity(instructions).introduction(instructions)

    def keys(self, action: Action) -> list[str]:
        """The values a proposal must name for the customer to recognise the change: its
        key-id arguments (`ProcedureSpec.write_tools`), or every argument of a tool the
        procedure does not list."""
        names = self.procedure.write_tools.get(action.name, tuple(action.kwargs))
        values: list[str] = []
        for name in names:
            value = action.kwargs.get(name)
            if isinstance(value, list):
                values += [str(v) for v in value]
            elif value is not None:
                values.append(str(value))
        return values

    def kind(self, tool_name: str) -> str:
        return self.kinds.get(tool_name, CHANGE)
