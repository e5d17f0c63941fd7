"""Whose failure a τ² episode was: the task's, the simulated customer's, or the agent's.

The kinds are the service desk's (`servicedesk.attribution`), read in τ²'s terms:

- task faults, once per task: gold actions that raise (τ² skips them: issue #499's 18
  in 15 retail tasks), gold actions that break a rule of the domain's policy needing no
  dialogue, required information (``communicate_info``, no number) that no result of the
  gold actions holds, an instruction naming ids (orders, reservations, users) none of
  which the gold actions touch where they touch ids of that kind, and a gold trajectory
  that does not score 1 under τ²'s own evaluator;
- customer faults, from the transcript: made-up details, a stop with a change they want
  undone right after the agent asked something, and on a phone (dual control) a device
  action nobody asked for or one agreed to and never performed;
- agent faults: the failing components of τ²'s verdict and each procedure rule broken.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.evaluator import evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck, Tau2Reward
from deedbench.benchmarks.tau2.tasks import GoldAction, Tau2Task
from deedbench.benchmarks.tau2.telecom.device_actions import ACTIONS, asked_actions
from deedbench.benchmarks.tau2.user import USER_STOP
from deedbench.benchmarks.tau2.validate import gold_conversation
from deedbench.records import (
    Attribution,
    Evidence,
    Fault,
    Message,
    ToolCall,
    answered_calls,
    party_of,
)
from deedbench.scoring.affirmation import classify_reply
from deedbench.scoring.attribution import (
    CONTRADICTS_GOLD,
    EARLY_STOP,
    GOLD_BREAKS_POLICY,
    GOLD_RAISES,
    ID_KINDS,
    INVENTED_DETAIL,
    OUTPUT_UNSUPPORTED,
    contradicted_ids,
    details_in,
    early_stop,
    invented_details,
    unsupported_outputs,
)
from deedbench.scoring.procedure import ONE_CHANGE_PER_ORDER, ONE_USER, check_procedure, quote

__all__ = [
    "DEVICE_NOT_DONE",
    "DEVICE_UNREQUESTED",
    "GOLD_FAILS",
    "TASK_CHECKS",
    "USER_CHECKS",
    "Tau2Attribution",
]

GOLD_FAILS = "task.gold_fails"
DEVICE_UNREQUESTED = "user.device_unrequested"
DEVICE_NOT_DONE = "user.device_not_done"
TASK_CHECKS = (GOLD_RAISES, GOLD_BREAKS_POLICY, OUTPUT_UNSUPPORTED, CONTRADICTS_GOLD, GOLD_FAILS)
USER_CHECKS = (INVENTED_DETAIL, EARLY_STOP, DEVICE_UNREQUESTED, DEVICE_NOT_DONE)
_GOLD_RULES = (ONE_USER, ONE_CHANGE_PER_ORDER)
_VERDICT_RULES = frozenset({"tau2", "DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"})


class Tau2Attribution:
    """Attributes the episodes of one τ² domain's data; each task's faults found once."""

    def __init__(self, data: Tau2Data) -> None:
        self.data = data
        self._task_faults: dict[str, tuple[Tau2Task, list[Fault]]] = {}
        desk = data.domain.desk
        self._writes = frozenset(desk.procedure_spec.write_tools)
        phone = data.domain.user_toolkit is not None and not data.domain.shares_db
        self._device_writes = frozenset(t.name for t in desk.user_tools if t.writes and phone)
        """The writing tools of the customer's own device (dual control: telecom's phone)."""

    def task_faults(self, task: Tau2Task) -> list[Fault]:
        """What is wrong with the task itself (see the module's docstring)."""
        cached = self._task_faults.get(task.id)
        if cached is None or cached[0] != task:
            cached = self._task_faults[task.id] = (task, self._find_task_faults(task))
        return cached[1]

    def _find_task_faults(self, task: Tau2Task) -> list[Fault]:
        gold = self.data.gold_end(task)
        found = [
            Fault(
                kind=GOLD_RAISES,
                excerpt=f"gold action #{s.index} {s.name}({json.dumps(s.arguments)}) raises, "
                f"and τ² skips it: {s.error}",
            )
            for s in gold.skipped
        ]
        conversation = gold_conversation(self.data, task)
        domain = self.data.domain.desk
        applies = domain.procedure.rules
        rules = [r for r in _GOLD_RULES if applies is None or r in applies]
        seen = [m for m in conversation if m.visible_to_agent]
        broken = check_procedure(seen, domain.procedure_spec, rules=rules)
        if domain.policy_check is not None:
            broken += domain.policy_check(seen, self.data.before())
        found += [Fault(kind=GOLD_BREAKS_POLICY, excerpt=str(v)) for v in broken]
        found += self._gold_fails(task, conversation)
        instruction = str(task.user_scenario)
        results = " ".join(m.content for m in conversation if m.role == "tool")
        criteria = task.evaluation_criteria
        infos = (criteria.communicate_info or []) if criteria is not None else []
        found += unsupported_outputs(infos, results, instruction, noun="information")
        found += contradicted_ids(instruction, (a.arguments for a in task.gold))
        return found

    def _gold_fails(self, task: Tau2Task, conversation: list[Message]) -> list[Fault]:
        """The gold trajectory scored by τ²'s own rules (NL assertions taken as met)."""
        judge = _all_met
        try:
            found = evaluate(self.data, task, conversation, "user_stop", judge=judge).reward
        except Exception as exc:  # τ²'s evaluator cannot score the task's own gold either
            return [Fault(kind=GOLD_FAILS, excerpt=f"{type(exc).__name__}: {exc}")]
        if found.reward >= 1.0:
            return []
        failed = ", ".join(found.failed_components()) or "the reward"
        return [
            Fault(
                kind=GOLD_FAILS,
                excerpt=f"the task's own gold trajectory scores {found.reward:g} ({failed} fails)",
            )
        ]

    def attribute(
        self,
        task: Tau2Task,
        messages: Sequence[Message],
        reward: Tau2Reward | None,
        evidence: Sequence[Evidence],
        succeeded: bool,
    ) -> Attribution:
        """The faults of one episode (`messages`: the whole transcript) and, unless it
        `succeeded`, whose failure it was."""
        faults = list(self.task_faults(task))
        spoken = [m for m in messages if not (m.role == "user" and m.tool_calls)]
        faults += invented_details(spoken, str(task.user_scenario))
        faults += early_stop(
            messages,
            USER_STOP,
            False,
            lambda seen: self._undone(task, seen),
            lambda text: self._named(task, text),
        )
        if self._device_writes:
            faults += self._device_faults(messages)
        attribution = Attribution(faults=faults, checks=[*TASK_CHECKS, *USER_CHECKS])
        if not succeeded:
            attribution.faults += _agent_faults(reward, evidence)
            attribution.party = party_of(attribution.faults)
        return attribution

    def _named(self, task: Tau2Task, text: str) -> list[str]:
        """The gold changes an agent's message names by the ids among their arguments."""
        said = details_in(text)
        found = []
        for gold in task.gold:
            ids = {d for d in details_in(json.dumps(gold.arguments)) if d[0] in ID_KINDS}
            if gold.requestor == "assistant" and ids and ids <= said:
                found.append(_change(gold))
        return found

    def _undone(self, task: Tau2Task, seen: Sequence[Message]) -> list[str]:
        done = [a.call for a in answered_calls(seen) if not a.failed]
        return [
            _change(g)
            for g in task.gold
            if g.requestor == "assistant" and g.name in self._writes and not _matched(g, done)
        ]

    def _device_faults(self, messages: Sequence[Message]) -> list[Fault]:
        """Device actions the customer took that the agent had not asked for (since the
        customer last did that action), and device actions they said yes to and never
        performed after that yes."""
        found: list[Fault] = []
        asked: dict[str, int] = {}  # action -> the agent's message that asked for it
        agreed: dict[str, int] = {}  # action -> the customer's yes to it
        tools = {tool: action for action, (_, names) in ACTIONS.items() for tool in names}
        done = {(a.index, a.call.name) for a in answered_calls(messages) if not a.failed}
        for index, message in enumerate(messages):
            if message.role == "user" and message.tool_calls:
                for call in message.tool_calls:
                    if call.name not in self._device_writes:
                        continue
                    action = tools.get(call.name, call.name)
                    if action not in asked:
                        found.append(
                            Fault(
                                kind=DEVICE_UNREQUESTED,
                                excerpt=f"the customer called {call.name} ({action}), which "
                                "the agent had not asked for",
                                message_index=index,
                            )
                        )
                    if (index, call.name) in done:
                        asked.pop(action, None)
                        agreed.pop(action, None)
            elif message.role == "user" and message.content.strip():
                if classify_reply(message.content) == "yes":
                    agreed.update({action: index for action in asked if action not in agreed})
            elif message.role == "assistant" and message.content.strip():
                named = [
                    t
                    for t in self._device_writes
                    if re.search(rf"(?<!\w){t}(?!\w)", message.content)
                ]
                for action in [*asked_actions(message.content), *named]:
                    asked.setdefault(tools.get(action, action), index)
        for action, at in agreed.items():
            found.append(
                Fault(
                    kind=DEVICE_NOT_DONE,
                    excerpt=f"the customer agreed to {action} ({quote(messages[at].content, 80)}, "
                    f"asked at message {asked[action]}) and never did it",
                    message_index=at,
                )
            )
        return found


def _agent_faults(reward: Tau2Reward | None, evidence: Sequence[Evidence]) -> list[Fault]:
    """The failing components of τ²'s verdict, and each procedure rule broken."""
    found = []
    if reward is not None:
        for name in reward.failed_components():
            quotes = [e.excerpt for e in evidence if e.rule == name][:3]
            found.append(
                Fault(kind=f"agent.{name.lower()}", excerpt="; ".join(quotes) or f"{name} is 0")
            )
        if reward.reward_basis is None and reward.reward < 1.0:
            note = str((reward.info or {}).get("note", "the episode ended prematurely"))
            found.append(Fault(kind="agent.ending", excerpt=note))
    for item in evidence:
        if item.rule and item.rule not in _VERDICT_RULES | {"needs_judge", "evaluator_error"}:
            found.append(
                Fault(
                    kind=f"agent.procedure.{item.rule}",
                    excerpt=item.excerpt,
                    message_index=item.message_index,
                )
            )
    return found


def _change(gold: GoldAction) -> str:
    return f"{gold.name}({json.dumps(gold.arguments)})"


def _matched(gold: GoldAction, calls: Sequence[ToolCall]) -> bool:
    return any(gold.matches(c.name, c.args or {}) for c in calls)


def _all_met(messages: Sequence[Message], assertions: list[str]) -> list[NLAssertionCheck]:
    return [NLAssertionCheck(nl_assertion=a, met=True, justification="assumed") for a in assertions]
