"""Whose failure a τ² episode was: the task's, the simulated customer's, or the agent's.

Only an episode whose τ² reward is below 1 has a party. Its causes are found from the
components of τ²'s verdict that failed, each naming what differs from the gold:

- the task's, when its own gold trajectory fails a component the episode fails too (the
  reward is out of reach); when a required string (``communicate_info``) has no source in
  the instruction, the task's own assertions or what the gold actions return; when the
  episode's call matches a gold action that raises (τ² skips it, so the gold never does
  what the episode did); or when the gold's value departs from the instruction the
  episode followed;
- for the database, environment assertions and action matching: the episode's calls are
  lined up with the gold actions (`scoring.causes`), and each departure whose repair
  alone removes some of what differs is a cause, answered for by whoever performed, or
  failed to perform, the action (the customer for their own phone's calls and the gold
  actions that are theirs, unless the agent called that tool itself and never asked
  them; the customer for a value they stated that their instruction does not hold, and
  for what was left undone when they ended the conversation while the agent was at work);
- what was never said, or judged unmet: the agent's, unless the customer left first.

Faults found on the way that caused nothing (a gold read that raises, a detail the
customer made up that no call used) are kept, not counted as causes. A gold read that
raises changes no database and excuses nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from deedbench.benchmarks.tau2.convention import to_json_str
from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.environment import Tau2Environment
from deedbench.benchmarks.tau2.evaluator import evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck, Tau2Reward
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.benchmarks.tau2.telecom.device_actions import ACTIONS, asked_actions
from deedbench.benchmarks.tau2.user import USER_STOP
from deedbench.benchmarks.tau2.validate import gold_conversation
from deedbench.records import Attribution, Fault, Message, ToolCall, answered_calls, party_of
from deedbench.scoring.attribution import (
    CONTRADICTS_GOLD,
    EARLY_STOP,
    GOLD_BREAKS_POLICY,
    GOLD_RAISES,
    INVENTED_DETAIL,
    OUTPUT_UNSUPPORTED,
    contradicted_ids,
    invented_details,
    unsupported,
)
from deedbench.scoring.causes import (
    Act,
    Call,
    GoldStep,
    Judge,
    Side,
    answerable,
    departures,
    explain,
)
from deedbench.scoring.dialogue import (
    early_stop,
    in_text,
    named_values,
    stop_quote,
)
from deedbench.scoring.procedure import ONE_CHANGE_PER_ORDER, ONE_USER, check_procedure, quote
from deedbench.scoring.state import world_differences

__all__ = ["GOLD_FAILS", "TASK_CHECKS", "USER_CHECKS", "Tau2Attribution", "state_differences"]

GOLD_FAILS = "task.gold_fails"
TASK_CHECKS = (GOLD_RAISES, GOLD_BREAKS_POLICY, OUTPUT_UNSUPPORTED, CONTRADICTS_GOLD, GOLD_FAILS)
USER_CHECKS = (INVENTED_DETAIL, EARLY_STOP)
_GOLD_RULES = (ONE_USER, ONE_CHANGE_PER_ORDER)
_STATE = ("DB", "ENV_ASSERTION", "ACTION")


@dataclass
class _GoldVerdict:
    """The task's own gold trajectory scored by τ²'s rules (NL assertions taken as met)."""

    failed: dict[str, str]
    """Each component it fails, with what its check says."""


def state_differences(ours: Tau2Environment, gold: Tau2Environment) -> list[str]:
    """What differs between an episode's databases and the gold replay's: table, record,
    field, the episode's value and the gold's (the customer's own database marked)."""
    found = world_differences(ours.agent_world, gold.agent_world)
    if ours.user_world is not None and ours.user_world is not ours.agent_world:
        found += world_differences(ours.user_world, gold.user_world, label="user_db")
    return found


class Tau2Attribution:
    """Attributes the episodes of one τ² domain's data; each task's own faults found once."""

    def __init__(self, data: Tau2Data) -> None:
        self.data = data
        self._task_faults: dict[str, tuple[Tau2Task, list[Fault]]] = {}
        self._gold: dict[str, tuple[Tau2Task, _GoldVerdict]] = {}
        desk = data.domain.desk
        self._agent_tools = frozenset(t.name for t in desk.agent_tools)
        self._user_tools = frozenset(t.name for t in desk.user_tools)
        self._writes = frozenset(t.name for t in (*desk.agent_tools, *desk.user_tools) if t.writes)
        self._database_text: str | None = None
        self._errors: dict[str, tuple[Tau2Task, dict[int, str]]] = {}

    # --- the task itself -------------------------------------------------------------------

    def task_faults(self, task: Tau2Task) -> list[Fault]:
        """What is wrong with the task itself, whatever any episode does (for `validate`)."""
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
        found += [
            Fault(kind=GOLD_FAILS, excerpt=f"the task's own gold trajectory fails {name}: {why}")
            for name, why in self._gold_verdict(task).failed.items()
        ]
        found += self._unsupported(task)
        instruction = str(task.user_scenario)
        found += contradicted_ids(instruction, (a.arguments for a in task.gold))
        return found

    def _unsupported(self, task: Tau2Task) -> list[Fault]:
        return [
            Fault(
                kind=OUTPUT_UNSUPPORTED,
                excerpt=f"required information {info!r} is in no result of the gold actions, "
                "the instruction or the task's own assertions, and no number worked out from "
                "theirs",
            )
            for info in self._unsupported_infos(task, numbers=False)
        ]

    def _unsupported_infos(self, task: Tau2Task, *, numbers: bool = True) -> list[str]:
        """Required strings with no source: not in the instruction, the task's own assertions
        or any result of the gold actions, nor a number worked out from theirs."""
        criteria = task.evaluation_criteria
        infos = (criteria.communicate_info or []) if criteria is not None else []
        if not infos:
            return []
        conversation = gold_conversation(self.data, task)
        results = " ".join(m.content for m in conversation if m.role == "tool")
        arguments = " ".join(json.dumps(a.arguments) for a in task.gold)
        assertions = " ".join((criteria.nl_assertions or []) if criteria is not None else [])
        sources = f"{results} {arguments} {assertions} {task.user_scenario}"
        return unsupported(infos, sources, self._database(), numbers=numbers)

    def _database(self) -> str:
        """The domain's databases as text, where a required fact may be found."""
        if self._database_text is None:
            self._database_text = json.dumps([self.data.base, self.data.user_base], default=str)
        return self._database_text

    def _gold_verdict(self, task: Tau2Task) -> _GoldVerdict:
        cached = self._gold.get(task.id)
        if cached is not None and cached[0] == task:
            return cached[1]
        conversation = gold_conversation(self.data, task)
        try:
            found = evaluate(self.data, task, conversation, "user_stop", judge=_all_met).reward
        except Exception as exc:  # τ²'s evaluator cannot score the task's own gold either
            verdict = _GoldVerdict({"the reward": f"{type(exc).__name__}: {exc}"})
        else:
            failed = {
                name: "; ".join(_failing_checks(found, name)[:3]) or f"{name} is 0"
                for name in found.failed_components()
            }
            verdict = _GoldVerdict(failed)
        self._gold[task.id] = (task, verdict)
        return verdict

    # --- one episode -----------------------------------------------------------------------

    def attribute(
        self,
        task: Tau2Task,
        messages: Sequence[Message],
        reward: Tau2Reward | None,
        ending: str,
        *,
        solo: bool = False,
    ) -> Attribution:
        """The faults of one episode (`messages`: the whole transcript) and, if its reward is
        below 1, its causes and whose failure it was."""
        observed = [f for f in self.task_faults(task) if f.kind != GOLD_FAILS]
        spoken = [m for m in messages if not (m.role == "user" and m.tool_calls)]
        observed += invented_details(spoken, str(task.user_scenario))
        attribution = Attribution(faults=observed, checks=[*TASK_CHECKS, *USER_CHECKS])
        if reward is None or reward.reward >= 1.0:
            return attribution
        causes = self._causes(task, list(messages), reward, ending, solo)
        attribution.faults = causes + observed
        attribution.party = party_of(causes) if causes else "agent"
        return attribution

    def _causes(
        self, task: Tau2Task, messages: list[Message], reward: Tau2Reward, ending: str, solo: bool
    ) -> list[Fault]:
        if reward.reward_basis is None:  # ended otherwise than by the agent or the user
            note = str((reward.info or {}).get("note", "the episode ended prematurely"))
            side = "user" if ending == "user_error" else "agent"
            return [Fault(kind=f"{side}.ending", excerpt=note, cause=True)]
        failing = set(reward.failed_components())
        gold = self._gold_verdict(task)
        unreachable = [name for name in failing if name in gold.failed]
        if unreachable:
            return [
                Fault(
                    kind=GOLD_FAILS,
                    excerpt=f"the task's own gold trajectory fails {name} too: {gold.failed[name]}",
                    cause=True,
                )
                for name in unreachable
            ]
        stopped = early_stop(
            messages, USER_STOP, names_change=lambda text: self._names_change(task, text)
        )
        causes: list[Fault] = []
        state = [name for name in _STATE if name in failing]
        if state:
            causes += self._state_causes(task, messages, state, stopped, solo)
        if "COMMUNICATE" in failing:
            causes += self._unsaid(task, reward, messages, stopped, bool(causes))
        if "NL_ASSERTION" in failing:
            for check in reward.nl_assertions or []:
                if not check.met:
                    causes.append(
                        _stopped(messages, stopped, f"the judge found {check.nl_assertion!r} unmet")
                        or Fault(
                            kind="agent.nl_assertion",
                            excerpt=f"{check.nl_assertion}: {quote(check.justification, 160)}",
                            cause=True,
                        )
                    )
        return causes

    def _state_causes(
        self,
        task: Tau2Task,
        messages: list[Message],
        failing: list[str],
        stopped: int | None,
        solo: bool,
    ) -> list[Fault]:
        acts = self._acts(messages, solo)
        gold = self._gold_steps(task, every="ACTION" in failing)
        judge = self._judge(task, failing, solo)
        checked = "ACTION" in failing
        lined_up = departures(acts, gold, _matches(task), calls_checked=checked)
        found = explain(acts, lined_up, judge)
        if not found:
            left = sorted(judge([a.call() for a in acts]))
            return [
                Fault(
                    kind=f"agent.{name.lower()}",
                    excerpt="; ".join(left[:4]) or f"{name} fails",
                    cause=True,
                )
                for name in failing
            ]
        departed = {d.gold.index for d in lined_up if d.gold is not None}
        done = [g.index for g in gold if not g.raises and g.index not in departed]
        instruction = str(task.user_scenario)
        criteria = task.evaluation_criteria
        assertions = " ".join((criteria.nl_assertions or []) if criteria is not None else [])
        return [
            answerable(
                d,
                acts=acts,
                messages=messages,
                instruction=instruction,
                stopped_at=stopped,
                asked=lambda tool, arguments, after: _asked(messages, tool, arguments, after),
                last_done_gold=max(done, default=-1),
                statements=f"{instruction} {assertions}",
                asked_before=lambda tool, arguments, before: _asked_since(
                    messages, tool, arguments, before
                ),
            )
            for d in found
        ]

    def _names_change(self, task: Tau2Task, text: str) -> bool:
        """Whether an agent's words name one of the task's gold changes: its tool, every id
        among its arguments, or (a customer's action on their phone) the device action."""
        asked = set(asked_actions(text))
        for action in task.gold:
            if action.name not in self._writes:
                continue
            if re.search(rf"(?<!\w){re.escape(action.name)}(?!\w)", text):
                return True
            if action.requestor == "user" and _TOOL_ACTION.get(action.name) in asked:
                return True
            ids = [v for v in _strings(action.arguments) if any(ch.isdigit() for ch in v)]
            if ids and all(v.lower() in text.lower() for v in ids):
                return True
        return False

    def _acts(self, messages: Sequence[Message], solo: bool) -> list[Act]:
        found = []
        for answered in answered_calls(messages):
            role = messages[answered.index].role
            side: Side = "user" if role == "user" else "agent"
            name = answered.call.name
            own = self._user_tools if side == "user" else self._agent_tools
            other = self._agent_tools if side == "user" else self._user_tools
            refused = not solo and name not in own and name in other
            found.append(
                Act(
                    index=answered.index,
                    side=side,
                    name=name,
                    arguments=answered.call.args or {},
                    failed=answered.failed,
                    refused=refused,
                    answer=answered.result.content if answered.result is not None else "",
                    writes=name in self._writes,
                )
            )
        return found

    def _gold_steps(self, task: Tau2Task, *, every: bool) -> list[GoldStep]:
        """The gold actions that change state (every one, when action matching failed),
        each marked if the gold replay skips it."""
        skipped = self._gold_errors(task)
        return [
            GoldStep(
                index=i,
                side="user" if action.requestor == "user" else "agent",
                name=action.name,
                arguments=dict(action.arguments),
                raises=i in skipped,
                error=skipped.get(i, ""),
            )
            for i, action in enumerate(task.gold)
            if every or action.name in self._writes
        ]

    def _gold_errors(self, task: Tau2Task) -> dict[int, str]:
        """The gold actions the gold replay cannot do: those that raise (τ² skips them) and
        those that answer with an error (they change nothing either)."""
        cached = self._errors.get(task.id)
        if cached is not None and cached[0] == task:
            return cached[1]
        environment = self.data.start(task, solo=False)
        found: dict[int, str] = {}
        for index, action in enumerate(task.gold):
            try:
                result = environment.make_tool_call(action.name, action.requestor, action.arguments)
            except Exception as exc:
                found[index] = str(exc)
                continue
            text = to_json_str(result)
            if text.startswith("Error"):
                found[index] = text
        self._errors[task.id] = (task, found)
        return found

    def _judge(self, task: Tau2Task, failing: list[str], solo: bool) -> Judge:
        """What still differs in the failing components when `calls` are replayed from the
        task's start, as τ²'s evaluator replays a trajectory."""
        gold = self.data.gold_end(task).environment
        criteria = task.evaluation_criteria
        assert criteria is not None

        def judge(calls: list[Call]) -> frozenset[str]:
            environment = self._replayed(task, calls, solo)
            found: set[str] = set()
            if "DB" in failing:
                found.update(state_differences(environment, gold))
            if "ENV_ASSERTION" in failing:
                for assertion in criteria.env_assertions or []:
                    try:
                        met = environment.assertion(
                            assertion.env_type,
                            assertion.func_name,
                            assertion.arguments,
                            assertion.assert_value,
                        )
                    except Exception:
                        met = False
                    if not met:
                        found.add(
                            f"assertion {assertion.func_name}({json.dumps(assertion.arguments)}) "
                            f"is not {assertion.assert_value}"
                        )
            if "ACTION" in failing:
                for number, action in enumerate(criteria.actions or []):
                    if not any(action.matches(name, arguments) for _, name, arguments in calls):
                        found.add(
                            f"no call matches gold action #{number} {action.name}"
                            f"({json.dumps(action.arguments)})"
                        )
            return frozenset(found)

        return judge

    def _replayed(self, task: Tau2Task, calls: list[Call], solo: bool) -> Tau2Environment:
        environment = self.data.initialised(task, solo)
        for number, (side, name, arguments) in enumerate(calls):
            if not environment.has_tool(name) or not environment.mutates(name):
                continue
            call = ToolCall.decoded(f"replay_{number}", name, arguments)
            environment.respond(call, "user" if side == "user" else "assistant")
        environment.sync()
        return environment

    def _unsaid(
        self,
        task: Tau2Task,
        reward: Tau2Reward,
        messages: list[Message],
        stopped: int | None,
        state_failed: bool,
    ) -> list[Fault]:
        unsourced = set(self._unsupported_infos(task))
        found = []
        for check in reward.communicate_checks or []:
            if check.met:
                continue
            left = _stopped(messages, stopped, f"the agent had not said {check.info!r}")
            if left is not None:
                found.append(left)
            elif check.info in unsourced and (not state_failed or not _numeric_text(check.info)):
                found.append(
                    Fault(
                        kind=OUTPUT_UNSUPPORTED,
                        excerpt=f"required information {check.info!r} is in no result of the "
                        "gold actions, the instruction, the task's own assertions or the "
                        "database, and no number worked out from theirs",
                        cause=True,
                    )
                )
            else:
                found.append(
                    Fault(
                        kind="agent.communicate",
                        excerpt=f"no agent message says {check.info!r}",
                        cause=True,
                    )
                )
        return found


def _stopped(messages: Sequence[Message], stopped: int | None, what: str) -> Fault | None:
    if stopped is None:
        return None
    return Fault(
        kind=EARLY_STOP,
        excerpt=f"the user ended the conversation ({stop_quote(messages, stopped)}) while the "
        f"agent was still at work; {what}",
        message_index=min(stopped, len(messages) - 1),
        cause=True,
    )


def _matches(task: Tau2Task) -> Callable[[GoldStep, Act], bool]:
    gold = task.gold

    def matches(step: GoldStep, act: Act) -> bool:
        return gold[step.index].matches(act.name, act.arguments)

    return matches


_TOOL_ACTION = {tool: action for action, (_, tools) in ACTIONS.items() for tool in tools}


def _asked(messages: Sequence[Message], tool: str, arguments: dict[str, Any], after: int) -> bool:
    """Whether an agent message after message `after` asks the customer for this call: it
    names the tool (or the device action it performs, unless it names another tool of that
    action: ``disconnect_vpn`` asks for no ``connect_vpn``) and every value of its arguments."""
    action = _TOOL_ACTION.get(tool)
    values = named_values(arguments)
    for message in messages[after + 1 :]:
        if message.role != "assistant" or not message.content.strip():
            continue
        text = message.content
        named = _names_tool(text, tool) or (
            action is not None
            and action in asked_actions(text)
            and not any(_names_tool(text, other) for other in ACTIONS[action][1] - {tool})
        )
        if named and all(in_text(v, text) for v in values):
            return True
    return False


def _names_tool(text: str, tool: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(tool)}(?!\w)", text) is not None


def _asked_since(
    messages: Sequence[Message], tool: str, arguments: dict[str, Any], before: int
) -> bool:
    """Whether the agent asked the customer for this call before message `before` more
    often than the customer made it (one request, one use)."""
    made = sum(
        1
        for m in messages[:before]
        if m.role == "user"
        for c in m.tool_calls
        if c.name == tool and (c.args or {}) == arguments
    )
    asks = sum(
        1
        for i, m in enumerate(messages[:before])
        if m.role == "assistant" and _asked(messages[i : i + 1], tool, arguments, -1)
    )
    return asks > made


def _numeric_text(text: str) -> bool:
    """A required string that is a number: its lack of a source is weak evidence (it may be
    worked out from more numbers than the check adds up), so it is a cause of the failure
    only where nothing else failed."""
    return re.fullmatch(r"[$]?-?[\d,]+(?:\.\d+)?%?", text.strip()) is not None


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _failing_checks(reward: Tau2Reward, name: str) -> list[str]:
    if name == "ENV_ASSERTION":
        return [
            f"{c.env_assertion.func_name}({c.env_assertion.arguments}) is not "
            f"{c.env_assertion.assert_value}"
            for c in reward.env_assertions or []
            if not c.met
        ]
    if name == "COMMUNICATE":
        return [c.justification for c in reward.communicate_checks or [] if not c.met]
    if name == "ACTION":
        return [
            f"no call matches {c.action.name}({c.action.arguments})"
            for c in reward.action_checks or []
            if not c.action_match
        ]
    if name == "DB":
        return ["its databases differ from the gold replay's"]
    return []


def _all_met(messages: Sequence[Message], assertions: list[str]) -> list[NLAssertionCheck]:
    return [NLAssertionCheck(nl_assertion=a, met=True, justification="assumed") for a in assertions]
