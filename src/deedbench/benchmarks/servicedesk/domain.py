"""A service-desk domain: what the desk's machinery needs to know about one business.

The machinery (episodes, the scripted and model-played customers, the oracle, the
scorer, replay, validation, rescoring) is the same for every desk. A `Domain`
supplies the rest: its tools (each stating its own role: what it does, whose it
is, what a proposal of its change names) and how its data loads, its procedure
(`Procedure`: which tools identify the customer, read personal data, ...), which
lists compare as multisets, its own policy rules, and how its customers talk
(`Customer`). What the two say of the tools is checked against each other when
the domain is made: a `BenchmarkError` names every disagreement.

A desk whose customer has tools of their own (τ²'s dual control: telecom's phone,
banking's app) lists them among its tools as the user's (``side="user"``), with the
customer's database (`load_user`; none: the customer's tools act on the desk's), and
`sync`, what keeps the two sides consistent after every call (the phone follows the
network). A domain whose tools are methods of a toolkit over its database (τ²'s)
says how to make that toolkit from an episode's world (`bind`, `bind_user`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from deedbench.benchmarks.servicedesk.procedure import Procedure, procedure_spec
from deedbench.benchmarks.servicedesk.task import CHANGE, Action, UserInstructions
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import Tool
from deedbench.errors import BenchmarkError
from deedbench.records import Message
from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure

__all__ = ["IDENTITY_WORDS", "Answer", "Customer", "Domain", "Identity", "PolicyCheck"]

PolicyCheck = Callable[[Sequence[Message], DeskWorld], list[Violation]]
"""A domain's own policy rules: violations in a transcript, given the world before it
(read it; an episode's changes never reach it)."""


def _named(text: str) -> frozenset[str]:
    """The fields a format string names (``"{first_name} {last_name}"``)."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(text) if name)


@dataclass(frozen=True)
class Identity:
    """One way a customer says who they are.

    The texts are format strings over the customer's details (`UserInstructions.identity`:
    ``{email}``, ``{first_name}``, ``{user_id}`` ...).
    """

    says: str
    """What the scripted customer says when asked: ``"my email is {email}"``."""
    gives: str
    """What the model-played customer is told to give: ``"your email, {email}"``."""
    asked_as: str
    """How the oracle asks for it: ``"the email address on your account"``."""
    lookup: str | None = None
    """The authentication tool the oracle calls with it, with the customer's details of the
    names of its arguments (None: the desk takes the id as said)."""
    cue: str | None = None
    """A word that, in a task's free-text instruction, asks for this way (τ-bench's tasks)."""

    @property
    def details(self) -> frozenset[str]:
        """The details the texts name."""
        return _named(self.says) | _named(self.gives)

    def introduction(self, instructions: UserInstructions) -> str:
        """What the scripted customer says."""
        return self.says.format_map(instructions.identity)

    def instruction(self, instructions: UserInstructions) -> str:
        """What the model-played customer is told to give."""
        return self.gives.format_map(instructions.identity)


@dataclass(frozen=True)
class Answer:
    """A question the scripted customer answers from the arguments of the change it wants."""

    asks: re.Pattern[str]
    """Matched against the agent's message, lower-cased, which must end with a question mark."""
    needs: str
    """The argument the change must have for this answer."""
    reply: Callable[[Mapping[str, Any]], str]
    """The answer, from the change's arguments."""


IDENTITY_WORDS = (
    "email",
    "e-mail",
    "zip",
    "postal code",
    "your name",
    "full name",
    "user id",
    "verify",
    "identify",
)
"""How a desk's agent asks a customer who they are, in retail and airline alike."""


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
    asks_identity: tuple[str, ...] = IDENTITY_WORDS
    """The words that, in the agent's message, ask the scripted customer who they are
    (``"email"``, ``"verify"``), in lower case, each matched at the start of a word."""
    answers: Sequence[Answer] = ()
    """The questions the scripted customer answers, the first that fits first."""
    persona: str | None = None
    """Who the model-played customer is told they are, over their details
    (``"{first_name} {last_name}"``; None: not told)."""

    def __post_init__(self) -> None:
        if not any(i.cue is None for i in self.identities.values()):
            raise ValueError("a customer needs one way of identifying without a cue (the default)")


@dataclass(frozen=True)
class Domain:
    """Tools, data loading, procedure, the lists compared as multisets, the customers."""

    name: str
    load: Callable[[Path], Tables]
    tools: Sequence[Tool[..., Any]]
    """Every tool of the desk, the agent's and (dual control) the customer's own, each
    saying whose it is (`Tool.side`)."""
    procedure: Procedure = field(default_factory=Procedure)
    unordered: frozenset[str] = frozenset()
    customer: Customer | None = None
    """How the desk's scripted customer and oracle talk (None: the domain's tasks come
    with their own user, as τ²'s do)."""
    kinds: Mapping[str, str] = field(default_factory=dict)
    """The kind of want each write tool serves, for tasks built from gold actions (others:
    `CHANGE`)."""
    policy_check: PolicyCheck | None = None
    """The domain's own policy rules."""
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

    def __post_init__(self) -> None:
        problems = self.procedure.problems(self.agent_tools)
        for side in (self.agent_tools, self.user_tools):
            names = [t.name for t in side]
            problems += [f"two tools named {n!r}" for n in sorted(set(names)) if names.count(n) > 1]
        if self.customer is not None:
            problems += self._identity_problems(self.customer)
        if problems:
            raise BenchmarkError(f"the {self.name} domain: " + "; ".join(problems))

    def _identity_problems(self, customer: Customer) -> list[str]:
        found = []
        for way, identity in customer.identities.items():
            if identity.lookup is not None and identity.lookup not in self.procedure.auth_tools:
                found.append(
                    f"identity {way!r} looks the customer up with {identity.lookup!r}, "
                    "which is none of the procedure's auth_tools"
                )
        return found

    @cached_property
    def agent_tools(self) -> list[Tool[..., Any]]:
        """The tools the agent is given."""
        return [t for t in self.tools if t.side == "agent"]

    @cached_property
    def user_tools(self) -> list[Tool[..., Any]]:
        """The tools the customer has (dual control); the agent never sees them."""
        return [t for t in self.tools if t.side == "user"]

    @cached_property
    def procedure_spec(self) -> ProcedureSpec:
        """What the procedure rules read: the agent's tools' roles and the procedure's."""
        return procedure_spec(self.procedure, self.agent_tools)

    def violations(self, messages: Sequence[Message], before: DeskWorld) -> list[Violation]:
        """The procedure's rules and the domain's own broken in `messages`, by message."""
        found = check_procedure(messages, self.procedure_spec, self.procedure.rules)
        if self.policy_check is not None:
            found += self.policy_check(messages, before)
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

    def lookup_arguments(self, instructions: UserInstructions) -> dict[str, str]:
        """The arguments of the customer's authentication call: their details of the names
        the tool takes, in its order."""
        names = self._takes(self.identity(instructions).lookup)
        return {name: instructions.identity[name] for name in names}

    def missing_details(self, instructions: UserInstructions) -> list[str]:
        """The details the customer lacks of those their way of identifying needs (its texts'
        and its authentication tool's) and the model-played customer is told (`persona`)."""
        identity = self.identity(instructions)
        needed = identity.details | set(self._takes(identity.lookup))
        needed |= _named(self.talk.persona or "")
        return sorted(needed - instructions.identity.keys())

    def _takes(self, tool_name: str | None) -> list[str]:
        """The arguments of the agent's tool `tool_name`, in order (None: no tool, none)."""
        tool = next((t for t in self.agent_tools if t.name == tool_name), None)
        return [] if tool is None else list(tool.parameters["properties"])

    def keys(self, action: Action) -> list[str]:
        """The values a proposal must name for the customer to recognise the change: its
        key-id arguments (the tool's `keys`), or every argument of a tool that writes
        nothing."""
        names = self.procedure_spec.write_tools.get(action.name, tuple(action.kwargs))
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
