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

Only an episode whose τ-bench reward is below 1 has a party. Its causes come from what
failed: for the database, the episode's calls are lined up with the gold actions
(`scoring.causes`) and each departure whose repair alone removes some of what differs
(table, record, field, the episode's value against the gold's) is a cause, answered for by
whoever performed, or failed to perform, the call: the customer where the agent's value is
one they stated and their instruction does not hold, or where they ended the conversation
while the agent was at work; the task where the gold action raises (the gold cannot do
what the episode did) or departs from the instruction the episode followed. A required
output never said is the agent's, unless the customer left first or the output has no
source (`task.output_unsupported`). Faults found that caused nothing (a detail made up
that no call used, a gold action of the task that breaks a rule) are kept, not counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.llm_user import STOP
from deedbench.benchmarks.servicedesk.replay import (
    SKIPPED,
    FailedGoldAction,
    replay,
    replay_transcript,
)
from deedbench.benchmarks.servicedesk.task import Action, DeskTask
from deedbench.benchmarks.servicedesk.tau_toolbox import TauToolBox, agent_replies
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.records import Attribution, Fault, Message, ToolCall, answered_calls, party_of
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
    invented_details,
    refused_wanted,
    refuses,
    unsupported,
    unsupported_outputs,
)
from deedbench.scoring.causes import (
    Act,
    Call,
    Departure,
    GoldStep,
    answerable,
    departures,
    explain,
)
from deedbench.scoring.dialogue import (
    early_stop,
    in_text,
    stop_quote,
    withheld_identity,
)
from deedbench.scoring.procedure import ONE_CHANGE_PER_ORDER, ONE_USER, check_procedure, quote
from deedbench.scoring.state import world_differences

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
        self._errors: dict[str, list[FailedGoldAction]] = {}
        self._database_text: str | None = None

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
        found += unsupported_outputs(task.outputs, results, instruction, database=self._database())
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
        gold: DeskWorld,
        done: bool,
        stopped: bool = False,
    ) -> Attribution:
        """The faults of one episode and, if its τ-bench reward is below 1, its causes and
        whose failure it was (`gold`: the task's gold world; `done`: the episode ended as
        τ-bench's end; `stopped`: the customer ended it, with or without a stop message)."""
        observed = list(self.task_faults(task))
        observed += invented_details(messages, _instruction_text(task, self.scripted_user))
        if task.instructions.refuses:
            observed += accepted_unwanted(messages, self._is_write, lambda c: _wanted(task, c))
        attribution = Attribution(faults=observed, checks=[*TASK_CHECKS, *USER_CHECKS])
        if values.get("reward_tau", 0.0) >= 1.0:
            return attribution
        causes = self._causes(task, list(messages), values, gold, done, stopped)
        attribution.faults = causes + observed
        attribution.party = party_of(causes) if causes else "agent"
        return attribution

    def _causes(
        self,
        task: DeskTask,
        messages: list[Message],
        values: Mapping[str, float],
        gold: DeskWorld,
        done: bool,
        ended: bool,
    ) -> list[Fault]:
        stopped = early_stop(
            messages, STOP, ended=ended, names_change=lambda text: bool(self._named(task, text))
        )
        causes: list[Fault] = []
        instruction = _instruction_text(task, self.scripted_user)
        if values.get("outcome_tau", 1.0) < 1.0:
            causes += self._state_causes(task, messages, gold, stopped, instruction)
        if not done and not causes:
            return [
                Fault(
                    kind="agent.ending",
                    excerpt="the episode ended otherwise than by the customer's stop or a "
                    "transfer, which τ-bench scores 0",
                    cause=True,
                )
            ]
        if values.get("outputs_compat", 1.0) < 1.0:
            said = " ".join(agent_replies(messages)).lower().replace(",", "")
            unsourced = set(self._unsupported(task))
            wrote = any(
                not a.failed and a.call.name in self._writes for a in answered_calls(messages)
            )
            denied = None if wrote else withheld_identity(messages, instruction)
            for output in task.outputs:
                if output.lower() in said:
                    continue
                if denied is not None:
                    causes.append(
                        _fault(
                            "user.withheld_identity",
                            f"the user said they do not have their user id (message {denied}: "
                            f"{quote(messages[denied].content, 100)}), which their instruction "
                            f"gives them, and never gave it; the agent never said {output!r}",
                            denied,
                        )
                    )
                elif stopped is not None:
                    causes.append(
                        _fault(
                            EARLY_STOP,
                            f"the customer ended the conversation "
                            f"({stop_quote(messages, stopped)}) while the agent was still at "
                            f"work, before it said {output!r}",
                            min(stopped, len(messages) - 1),
                        )
                    )
                elif output in unsourced and (not causes or not _numeric_text(output)):
                    causes.append(
                        _fault(
                            OUTPUT_UNSUPPORTED,
                            f"required output {output!r} is in no result of the gold actions, "
                            "the instruction or the database, and no number worked out from "
                            "theirs",
                            None,
                        )
                    )
                else:
                    causes.append(_fault("agent.outputs", f"never stated: {output!r}", None))
        return causes

    def _state_causes(
        self,
        task: DeskTask,
        messages: list[Message],
        gold: DeskWorld,
        stopped: int | None,
        instruction: str,
    ) -> list[Fault]:
        acts = [
            Act(
                index=a.index,
                side="agent",
                name=a.call.name,
                arguments=a.call.args or {},
                failed=a.failed,
                writes=a.call.name in self._writes,
            )
            for a in answered_calls(messages)
            if messages[a.index].role == "assistant" and a.call.name not in SKIPPED
        ]
        errors = {e.index: e.error for e in self._gold_errors(task)}
        steps = [
            GoldStep(
                index=i,
                side="agent",
                name=action.name,
                arguments=dict(action.kwargs),
                raises=i in errors,
                error=errors.get(i, ""),
            )
            for i, action in enumerate(task.actions)
            if action.name in self._writes
        ]

        def judge(calls: list[Call]) -> frozenset[str]:
            world = DeskWorld(self.base)
            box = TauToolBox(self.domain.agent_tools, world)
            for number, (_, name, arguments) in enumerate(calls):
                if name in self._writes:
                    box.call(ToolCall.decoded(f"replay-{number}", name, arguments))
            return frozenset(world_differences(world, gold))

        lined_up = departures(acts, steps, _same_call)
        found = explain(acts, lined_up, judge)
        if not found:
            left = sorted(judge([a.call() for a in acts]))
            return [_fault("agent.database", "; ".join(left[:4]) or "the database differs", None)]
        departed = {d.gold.index for d in lined_up if d.gold is not None}
        done = [s.index for s in steps if not s.raises and s.index not in departed]
        forbidden = self._forbidden_gold(task, messages, [d for d in found if d.kind == "missing"])
        if forbidden:
            return forbidden
        refusals = refused_wanted(messages, lambda text: self._proposed(task, text))
        causes = []
        for departure in found:
            gold_step = departure.gold
            said_no = [
                r
                for r in refusals
                if departure.kind == "missing"
                and gold_step is not None
                and _change(task.actions[gold_step.index]) in r.excerpt
            ]
            if said_no:
                causes.append(said_no[0].model_copy(update={"cause": True}))
                continue
            causes.append(
                answerable(
                    departure,
                    acts=acts,
                    messages=messages,
                    instruction=instruction,
                    stopped_at=stopped,
                    asked=lambda tool, arguments, after: False,
                    last_done_gold=max(done, default=-1),
                )
            )
        return causes

    def _forbidden_gold(
        self, task: DeskTask, messages: list[Message], missing: list[Departure]
    ) -> list[Fault]:
        """The gold writes the episode never made that the domain's policy forbids given what
        the customer said in this episode, where the agent turned a change down: no agent
        that keeps to the policy reaches such a gold, so the failure is the task's."""
        check = self.domain.policy_check
        if (
            check is None
            or not missing
            or not any(m.role == "assistant" and refuses(m.content) for m in messages)
        ):
            return []
        said = [Message(role="user", content=m.content) for m in messages if m.role == "user"]
        system = [m for m in messages if m.role == "system"]
        _, _, gold = replay_transcript(self.base, task.actions, self.domain.agent_tools)
        transcript = [*system, *said, *gold]
        broken: dict[int, str] = {}
        for violation in check(transcript, DeskWorld(self.base)):
            for call in transcript[violation.message_index].tool_calls:
                if call.id.startswith("gold-"):
                    broken.setdefault(int(call.id.removeprefix("gold-")), violation.detail)
        found = []
        for departure in missing:
            step = departure.gold
            if step is None or step.index not in broken:
                continue
            found.append(
                _fault(
                    GOLD_BREAKS_POLICY,
                    f"gold action #{step.index} {step.shown()} breaks the policy given what the "
                    f"customer said ({broken[step.index]}), and the agent turned a change down: "
                    f"{'; '.join(departure.explains[:3])}",
                    None,
                )
            )
        return found

    def _gold_errors(self, task: DeskTask) -> list[FailedGoldAction]:
        found = self._errors.get(task.id)
        if found is None:
            _, found = replay(self.base, task.actions, self.domain.agent_tools)
            self._errors[task.id] = found
        return found

    def _unsupported(self, task: DeskTask) -> list[str]:
        if not task.outputs:
            return []
        _, _, transcript = replay_transcript(self.base, task.actions, self.domain.agent_tools)
        results = " ".join(m.content for m in transcript if m.role == "tool")
        arguments = " ".join(json.dumps(a.kwargs) for a in task.actions)
        instruction = _instruction_text(task, structured=False)
        sources = f"{results} {arguments} {instruction}"
        return unsupported(task.outputs, sources, self._database())

    def _database(self) -> str:
        """The desk's database as text, where a required fact may be found."""
        if self._database_text is None:
            self._database_text = json.dumps(self.base, default=str)
        return self._database_text

    def _named(self, task: DeskTask, text: str) -> list[str]:
        """The gold changes a message names: by tool, by every key id of theirs, or by an
        amount or id among their arguments."""
        said = text.lower()
        return [
            _change(a)
            for a in task.actions
            if a.name in self._writes
            and (
                a.name in said
                or all(v.lower() in said for v in self.domain.keys(a) or ["\0"])
                or any(_telling_value(v) and in_text(v, text) for v in a.kwargs.values())
            )
        ]

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


def _numeric_text(text: str) -> bool:
    """A required output that is a number: its lack of a source is weak evidence (it may be
    worked out from more numbers than the check adds up), so it is a cause of the failure
    only where nothing else failed."""
    return re.fullmatch(r"[$]?-?[\d,]+(?:\.\d+)?%?", text.strip()) is not None


def _telling_value(value: Any) -> bool:
    """An argument a message can be said to name: an amount of two digits or more, or an
    identifier (a string with a digit, five characters or more)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return abs(value) >= 10
    return isinstance(value, str) and len(value) >= 5 and any(ch.isdigit() for ch in value)


def _same_call(step: GoldStep, act: Act) -> bool:
    return step.name == act.name and step.arguments == act.arguments


def _fault(kind: str, excerpt: str, index: int | None) -> Fault:
    return Fault(kind=kind, excerpt=excerpt, message_index=index, cause=True)


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
