"""Whose failure a service-desk episode was: the task's, the simulated customer's, or the agent's.

Task faults come from the task alone, once per task, no model and no episode needed,
so `validate` lists them before anything is spent:

- ``task.gold_raises``: a gold action returns an error on replay (the gold end state
  is not what its author meant);
- ``task.gold_breaks_policy``: the gold actions break a rule of the domain's policy
  that needs no dialogue (the airline's eligibility rules, one change per order, one
  customer): an agent that follows the policy cannot reach the gold end state;
- ``task.output_unsupported``: a required output that is no number (a number may be
  worked out from others) appears in no tool result of the gold actions and not in the
  instruction: no agent can find it;
- ``task.instruction_contradicts_gold``: the instruction names ids of a kind (orders,
  reservations, users) and the gold actions, which name ids of that kind, name none of
  the instruction's.

Customer faults come from the transcript (`scoring.attribution`): details the customer
made up, a stop with a wanted change undone right after the agent asked something, a
yes to a change the customer never asked for (where their instruction says to refuse
such changes). Agent faults are the failing parts of the verdict: the database, the
required outputs, the ending, each procedure rule broken.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.llm_user import STOP
from deedbench.benchmarks.servicedesk.replay import replay_transcript
from deedbench.benchmarks.servicedesk.task import Action, DeskTask
from deedbench.benchmarks.servicedesk.user import action_done
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.records import Attribution, Evidence, Fault, Message, ToolCall, party_of
from deedbench.scoring.attribution import (
    CONTRADICTS_GOLD,
    EARLY_STOP,
    GOLD_BREAKS_POLICY,
    GOLD_RAISES,
    INVENTED_DETAIL,
    OUTPUT_UNSUPPORTED,
    REFUSED_WANTED,
    UNWANTED_ACCEPTED,
    accepted_unwanted,
    contradicted_ids,
    early_stop,
    invented_details,
    refused_wanted,
    unsupported_outputs,
)
from deedbench.scoring.procedure import ONE_CHANGE_PER_ORDER, ONE_USER, check_procedure

__all__ = ["TASK_CHECKS", "USER_CHECKS", "DeskAttribution"]

TASK_CHECKS = (GOLD_RAISES, GOLD_BREAKS_POLICY, OUTPUT_UNSUPPORTED, CONTRADICTS_GOLD)
USER_CHECKS = (INVENTED_DETAIL, EARLY_STOP, REFUSED_WANTED, UNWANTED_ACCEPTED)
_GOLD_RULES = (ONE_USER, ONE_CHANGE_PER_ORDER)
"""The generic rules a gold action list can break by itself (identification first is the
dialogue's business: a gold list holds no look-up of the customer)."""


class DeskAttribution:
    """Attributes the episodes of one desk; each task's faults are found once."""

    def __init__(self, base: Tables, domain: Domain, *, scripted_user: bool = True) -> None:
        self.base = base
        self.domain = domain
        self.scripted_user = scripted_user
        """Whether the customer is deedbench's script, which knows the structured instruction
        (the gold actions' ids included); a model-played customer knows its free text."""
        self._task_faults: dict[str, list[Fault]] = {}
        self._writes = frozenset(domain.procedure_spec.write_tools)

    def task_faults(self, task: DeskTask) -> list[Fault]:
        """What is wrong with the task itself (see the module's docstring)."""
        found = self._task_faults.get(task.id)
        if found is None:
            found = self._task_faults[task.id] = self._find_task_faults(task)
        return found

    def _find_task_faults(self, task: DeskTask) -> list[Fault]:
        tools = self.domain.agent_tools
        _, errors, transcript = replay_transcript(self.base, task.actions, tools)
        found = [
            Fault(
                kind=GOLD_RAISES,
                excerpt=f"gold action #{e.index} {e.name}({json.dumps(e.kwargs)}): {e.error}",
            )
            for e in errors
        ]
        rules = [r for r in _GOLD_RULES if self._applies(r)]
        broken = check_procedure(transcript, self.domain.procedure_spec, rules=rules)
        if self.domain.policy_check is not None:
            broken += self.domain.policy_check(transcript, DeskWorld(self.base))
        found += [Fault(kind=GOLD_BREAKS_POLICY, excerpt=str(v)) for v in broken]
        instruction = _instruction_text(task, structured=False)
        results = " ".join(m.content for m in transcript if m.role == "tool")
        found += unsupported_outputs(task.outputs, results, instruction)
        found += contradicted_ids(instruction, (a.kwargs for a in task.actions))
        return found

    def _applies(self, rule: str) -> bool:
        rules = self.domain.procedure.rules
        return rules is None or rule in rules

    def attribute(
        self,
        task: DeskTask,
        messages: Sequence[Message],
        values: Mapping[str, float],
        evidence: Sequence[Evidence],
        succeeded: bool,
        stopped: bool,
    ) -> Attribution:
        """The faults of one episode and, unless it `succeeded`, whose failure it was
        (`stopped`: the customer ended it)."""
        faults = list(self.task_faults(task))
        faults += invented_details(messages, _instruction_text(task, self.scripted_user))
        faults += early_stop(
            messages,
            STOP,
            stopped,
            lambda seen: self._undone(task, seen),
            lambda text: self._named(task, text),
        )
        faults += refused_wanted(messages, lambda text: self._proposed(task, text))
        if task.instructions.refuses:
            faults += accepted_unwanted(messages, self._is_write, lambda c: _wanted(task, c))
        attribution = Attribution(faults=faults, checks=[*TASK_CHECKS, *USER_CHECKS])
        if not succeeded:
            attribution.faults += _agent_faults(values, evidence)
            attribution.party = party_of(attribution.faults)
        return attribution

    def _is_write(self, call: ToolCall) -> bool:
        return call.name in self._writes

    def _wanted_changes(self, task: DeskTask) -> list[Action]:
        """The changes the customer's instruction asks for."""
        return [
            w.action
            for w in task.instructions.wants
            if w.action is not None and w.action.name in self._writes
        ]

    def _proposed(self, task: DeskTask, text: str) -> list[str]:
        """The wanted changes an agent's message names in full: every argument's value."""
        said = text.lower()
        return [
            _change(a)
            for a in self._wanted_changes(task)
            if all(v.lower() in said for v in _values(a))
        ]

    def _named(self, task: DeskTask, text: str) -> list[str]:
        """The wanted changes an agent's message names by their key ids."""
        said = text.lower()
        return [
            _change(a)
            for a in self._wanted_changes(task)
            if all(v.lower() in said for v in self.domain.keys(a))
        ]

    def _undone(self, task: DeskTask, seen: Sequence[Message]) -> list[str]:
        return [_change(a) for a in self._wanted_changes(task) if not action_done(seen, a)]


def _agent_faults(values: Mapping[str, float], evidence: Sequence[Evidence]) -> list[Fault]:
    """The failing parts of the desk's verdict, quoted from its evidence."""
    found = []
    parts = (
        ("agent.database", "outcome_tau", "outcome"),
        ("agent.outputs", "outputs_compat", "outputs"),
    )
    for kind, value, rule in parts:
        if values.get(value, 1.0) < 1.0:
            quotes = [e.excerpt for e in evidence if e.rule == rule][:3]
            found.append(Fault(kind=kind, excerpt="; ".join(quotes) or f"{value} is 0"))
    for item in evidence:
        if item.rule == "reward_tau":
            found.append(Fault(kind="agent.ending", excerpt=item.excerpt))
        elif item.rule not in (None, "outcome", "outputs"):
            found.append(
                Fault(
                    kind=f"agent.procedure.{item.rule}",
                    excerpt=item.excerpt,
                    message_index=item.message_index,
                )
            )
    return found


def _instruction_text(task: DeskTask, structured: bool) -> str:
    """What the customer was told: the structured instruction (and τ-bench's free text), or,
    for a model-played customer of a task that has one, the free text alone."""
    ins = task.instructions
    if ins.free_text and not structured:
        return ins.free_text
    parts = [ins.free_text or "", *ins.identity.values()]
    for want in ins.wants:
        parts += [want.say, *want.details, *want.expects]
        if want.action is not None:
            parts.append(json.dumps(want.action.kwargs))
    return " ".join(parts)


def _wanted(task: DeskTask, call: ToolCall) -> bool:
    """A call the customer asked for: one of the gold writes by name, its ids the same."""
    arguments: dict[str, Any] = call.args or {}
    return any(
        _same_target(action, arguments) for action in task.actions if action.name == call.name
    )


def _same_target(action: Action, arguments: Mapping[str, Any]) -> bool:
    keys = [k for k in action.kwargs if k.endswith("_id")]
    return all(arguments.get(k) == action.kwargs[k] for k in keys)


def _change(action: Action) -> str:
    return f"{action.name}({json.dumps(action.kwargs)})"


def _values(action: Action) -> list[str]:
    """An action's argument values as text, lists flattened."""
    found: list[str] = []
    for value in action.kwargs.values():
        items = value if isinstance(value, list) else [value]
        found += [str(v) for v in items if isinstance(v, str | int | float)]
    return found
