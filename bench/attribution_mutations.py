"""The mutations of the labelled attribution set (`bench/attribution_labels.md`), on τ² tasks.

Plain Python over τ²'s task objects: `bench/attribution_set_tau2.py` runs it inside τ²'s own
Python. A `Mutator` turns one task's gold actions into episodes (`Variant`: the steps, the
mutation's kind and side, the task to score it on); the caller executes the steps live and
labels each episode by its reward.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from attribution_steps import GREETING, STOP, Gold, Step, Variant, first_line, say
from attribution_task_faults import TaskFaults


class Mutator(TaskFaults):
    """The episodes of one task: its controls and each mutation that applies to it."""

    def __init__(
        self, world: Any, task: Any, pools: dict[str, list[Any]], rng: random.Random
    ) -> None:
        self.world = world
        self.task = task
        self.pools = pools
        self.rng = rng
        ec = task.evaluation_criteria
        self.gold = [
            Gold(a.name, dict(a.arguments), a.requestor, i) for i, a in enumerate(ec.actions or [])
        ]
        self.communicate = list(ec.communicate_info or [])
        self.instruction = str(task.user_scenario.instructions)
        self.user_side = "your phone" if world.domain == "telecom" else "your side"

    @staticmethod
    def pools(tasks: list[Any]) -> dict[str, list[Any]]:
        """Every value each argument name takes in the domain's gold actions."""
        found: dict[str, set[str]] = {}
        for task in tasks:
            for action in (
                (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
            ):
                for key, value in action.arguments.items():
                    for item in value if isinstance(value, list) else [value]:
                        found.setdefault(key, set()).add(json.dumps(item, sort_keys=True))
        return {k: [json.loads(v) for v in sorted(vals)] for k, vals in found.items()}

    # -- the steps ---------------------------------------------------------------------

    def opening(self, style: str) -> list[Step]:
        if style == "bare":
            return [say("assistant", GREETING), say("user", "Hello, I need help.")]
        return [
            say("assistant", GREETING),
            say("user", "Hi, I need some help with my account, please."),
        ]

    def closing(self, style: str) -> list[Step]:
        if style == "bare":
            said = (
                "Summary: " + "; ".join(self.communicate)
                if self.communicate
                else "Is there anything else?"
            )
            return [say("assistant", said), say("user", f"Thanks. {STOP}")]
        said = "Is there anything else I can help you with?"
        if self.communicate:
            said = "Here is what I found: " + "; ".join(self.communicate) + ". " + said
        return [say("assistant", said), say("user", f"No, that's all. Thank you! {STOP}")]

    def ask(self, name: str, arguments: dict[str, Any]) -> list[Step]:
        shown = json.dumps(arguments, sort_keys=True)
        return [
            say("assistant", f"To do this I will call {name} with {shown}. Shall I go ahead?"),
            say("user", "Yes, please go ahead."),
        ]

    def ask_user(self, name: str, arguments: dict[str, Any]) -> Step:
        shown = f" with {json.dumps(arguments, sort_keys=True)}" if arguments else ""
        return say(
            "assistant",
            f"Could you please do this on {self.user_side}: {name}{shown}? Tell me what it shows.",
        )

    def steps_of(self, gold: Gold, style: str, *, asked: bool = True) -> list[Step]:
        call = Step(gold.requestor, call=(gold.name, gold.arguments))
        if style == "bare":
            return [call]
        if gold.requestor == "user":
            report = say("user", lambda answer: f"I did it. It says: {first_line(answer)}")
            if not asked:
                return [
                    say("user", f"By the way, I went ahead and did {gold.name} myself."),
                    call,
                    report,
                ]
            return [self.ask_user(gold.name, gold.arguments), call, report]
        if self.world.writes(gold.name):
            return [*self.ask(gold.name, gold.arguments), call]
        return [call]

    def episode(
        self, golds: list[Gold], style: str, *, replace: dict[int, list[Step]] | None = None
    ) -> list[Step]:
        steps = self.opening(style)
        for gold in golds:
            steps += (replace or {}).get(gold.index, self.steps_of(gold, style))
        return steps + self.closing(style)

    def style(self) -> str:
        return self.rng.choice(["talking", "bare"])

    # -- the variants ------------------------------------------------------------------

    def variants(self) -> Iterator[Variant]:
        style = self.style()
        yield Variant("control.clean", None, self.episode(self.gold, style), style, control=True)
        yield from self._controls()
        agent_writes = [
            g for g in self.gold if g.requestor == "assistant" and self.world.writes(g.name)
        ]
        user_actions = [g for g in self.gold if g.requestor == "user" and self.world.writes(g.name)]
        if agent_writes:
            yield from self._agent(self.rng.choice(agent_writes))
        extra = self._unrequested_agent_call()
        if extra is not None:
            style = self.style()
            steps = self.episode(self.gold, style)
            at = len(steps) - 2
            added = [Step("assistant", call=extra)]
            if style == "talking":
                added = [*self.ask(*extra), *added]
            yield Variant(
                "agent.unrequested",
                "assistant",
                steps[:at] + added + steps[at:],
                style,
                note=extra[0],
            )
        if user_actions:
            target = self.rng.choice(user_actions)
            yield from self._user_actions(target, agent_writes)
            yield from self._agent_guided_faults(target)
        yield from self._user_device_unrequested()
        yield from self._early_stops()
        yield from self._contradictions()
        yield from self._task_faults(agent_writes)

    def _controls(self) -> Iterator[Variant]:
        reads = [
            g for g in self.gold if g.requestor == "assistant" and not self.world.writes(g.name)
        ]
        if reads:
            style = self.style()
            again = self.rng.choice(reads)
            steps = self.episode(self.gold, style)
            at = len(steps) - 2
            yield Variant(
                "control.extra_read",
                None,
                [*steps[:at], Step("assistant", call=(again.name, again.arguments)), *steps[at:]],
                style,
                control=True,
            )

    def _agent(self, target: Gold) -> Iterator[Variant]:
        style = self.style()
        yield Variant(
            "agent.drop",
            "assistant",
            self.episode(self.gold, style, replace={target.index: []}),
            style,
            note=target.name,
        )
        style = self.style()
        twice = [
            *self.steps_of(target, style),
            Step("assistant", call=(target.name, target.arguments)),
        ]
        yield Variant(
            "agent.repeat",
            "assistant",
            self.episode(self.gold, style, replace={target.index: twice}),
            style,
            note=target.name,
        )
        changed = self.perturb(target)
        if changed is not None:
            style = self.style()
            wrong = Gold(target.name, changed, "assistant", target.index)
            yield Variant(
                "agent.wrong_arg",
                "assistant",
                self.episode(self.gold, style, replace={target.index: self.steps_of(wrong, style)}),
                style,
                note=json.dumps(changed, sort_keys=True)[:200],
            )

    def _user_actions(self, target: Gold, agent_writes: list[Gold]) -> Iterator[Variant]:
        """User-side mutations of one user gold action, the agent's wrong-side call in its
        place, and the controls around them."""
        style = self.style()
        dropped: list[Step] = []
        if style == "talking":
            dropped = [self.ask_user(target.name, target.arguments), say("user", "Okay, done.")]
        yield Variant(
            "user.drop",
            "user",
            self.episode(self.gold, style, replace={target.index: dropped}),
            style,
            note=target.name,
        )
        style = self.style()
        twice = [*self.steps_of(target, style), Step("user", call=(target.name, target.arguments))]
        yield Variant(
            "user.repeat",
            "user",
            self.episode(self.gold, style, replace={target.index: twice}),
            style,
            note=target.name,
        )
        changed = self.perturb(target)
        if changed is not None:
            style = self.style()
            wrong = Gold(target.name, changed, "user", target.index)
            yield Variant(
                "user.wrong_arg",
                "user",
                self.episode(self.gold, style, replace={target.index: self.steps_of(wrong, style)}),
                style,
                note=json.dumps(changed, sort_keys=True)[:200],
            )
        # the user calls one of the agent's tools in its place (τ² refuses: not the user's tool)
        agent_tool = self.rng.choice(
            sorted(n for n in self.world.agent_tools if self.world.writes(n))
        )
        style = self.style()
        misplaced = [Step("user", call=(agent_tool, dict(target.arguments)))]
        if style == "talking":
            misplaced = [
                self.ask_user(target.name, target.arguments),
                *misplaced,
                say("user", lambda a: f"I tried. It says: {first_line(a)}"),
            ]
        yield Variant(
            "user.wrong_side",
            "user",
            self.episode(self.gold, style, replace={target.index: misplaced}),
            style,
            note=agent_tool,
        )
        # the agent calls the user's tool itself (τ² refuses: not the agent's tool)
        style = self.style()
        own = [Step("assistant", call=(target.name, target.arguments))]
        if style == "talking":
            own = [
                *self.ask(target.name, target.arguments),
                *own,
                say("assistant", "That's done."),
            ]
        yield Variant(
            "agent.wrong_side",
            "assistant",
            self.episode(self.gold, style, replace={target.index: own}),
            style,
            note=target.name,
        )
        recovered = [
            Step("assistant", call=(target.name, target.arguments)),
            *self.steps_of(target, "talking"),
        ]
        yield Variant(
            "control.wrong_side_recovered",
            None,
            self.episode(self.gold, "talking", replace={target.index: recovered}),
            "talking",
            control=True,
            note=target.name,
        )
        # the user performs its gold action before it is asked: no fault
        unasked = self.steps_of(target, "talking", asked=False)
        yield Variant(
            "control.user_unasked",
            None,
            self.episode(self.gold, "talking", replace={target.index: unasked}),
            "talking",
            control=True,
            note=target.name,
        )
        others = [g for g in agent_writes if g.index != target.index]
        if others:
            gone = self.rng.choice(others)
            yield Variant(
                "agent.drop+user_unasked",
                "assistant",
                self.episode(self.gold, "talking", replace={target.index: unasked, gone.index: []}),
                "talking",
                note=gone.name,
            )

    def _agent_guided_faults(self, target: Gold) -> Iterator[Variant]:
        """The agent's doing on the user's side (talking only): it asks the user for a device
        action no gold action wants, which the user performs; or it asks for the user's other
        gold actions but never for `target`, which the user then never does."""
        gold_names = {g.name for g in self.gold}
        allowed = (
            set(self.task.user_tools or [])
            if self.world.domain == "banking_knowledge"
            else set(self.world.user_tools)
        )
        names = sorted(n for n in allowed if self.world.writes(n) and n not in gold_names)
        if names:
            name = self.rng.choice(names)
            arguments = self._arguments_for(name)
            if arguments is not None:
                steps = self.episode(self.gold, "talking")
                at = self.rng.randrange(2, len(steps) - 1)
                while at > 2 and steps[at].role == "user":
                    at -= 1
                report = say("user", lambda answer: f"I did it. It says: {first_line(answer)}")
                asked = [
                    self.ask_user(name, arguments),
                    Step("user", call=(name, arguments)),
                    report,
                ]
                yield Variant(
                    "agent.asks_unneeded",
                    "assistant",
                    steps[:at] + asked + steps[at:],
                    "talking",
                    note=name,
                )
        users = [g for g in self.gold if g.requestor == "user" and self.world.writes(g.name)]
        if len(users) >= 2:
            yield Variant(
                "agent.never_asks",
                "assistant",
                self.episode(self.gold, "talking", replace={target.index: []}),
                "talking",
                note=target.name,
            )

    def _user_device_unrequested(self) -> Iterator[Variant]:
        """A write the user makes that no gold action and nobody asked for."""
        gold_names = {g.name for g in self.gold}
        allowed = (
            set(self.task.user_tools or [])
            if self.world.domain == "banking_knowledge"
            else set(self.world.user_tools)
        )
        names = sorted(n for n in allowed if self.world.writes(n) and n not in gold_names)
        if not names:
            return
        for name in self.rng.sample(names, min(2, len(names))):
            yield from self._user_unrequested(name)

    def _user_unrequested(self, name: str) -> Iterator[Variant]:
        arguments = self._arguments_for(name)
        if arguments is None:
            return
        style = self.style()
        steps = self.episode(self.gold, style)
        at = self.rng.randrange(2, len(steps) - 1)
        while steps[at].role == "user" and steps[at].call is None and at > 2:
            at -= 1
        added = [Step("user", call=(name, arguments))]
        if style == "talking":
            added = [say("user", f"Also, I'm going to {name} while we're at it."), *added]
        yield Variant("user.unrequested", "user", steps[:at] + added + steps[at:], style, note=name)

    def _arguments_for(self, name: str) -> dict[str, Any] | None:
        """Arguments for a tool the task's gold does not call: from the gold actions of the
        domain (each parameter's first pooled value), or none when it takes none."""
        arguments: dict[str, Any] = {}
        known = {k: v for g in self.gold for k, v in g.arguments.items()}
        for key in self.world.required(name):
            if key in known:
                arguments[key] = known[key]
            elif self.pools.get(key):
                arguments[key] = self.rng.choice(self.pools[key])
            else:
                return None
        return arguments

    def _unrequested_agent_call(self) -> tuple[str, dict[str, Any]] | None:
        gold_names = {g.name for g in self.gold}
        wanted = {
            "telecom": ["refuel_data", "suspend_line", "enable_roaming", "disable_roaming"],
            "retail": ["modify_user_address", "cancel_pending_order"],
            "airline": ["send_certificate", "cancel_reservation"],
            "banking_knowledge": ["change_user_email"],
        }[self.world.domain.removeprefix("taubench-")]
        for name in self.rng.sample(wanted, len(wanted)):
            if name in gold_names:
                continue
            arguments = self._arguments_for(name)
            if arguments is not None:
                return name, arguments
        return None

    def _early_stops(self) -> Iterator[Variant]:
        writes = [g for g in self.gold if self.world.writes(g.name)]
        if not writes and not self.communicate:
            return
        style = self.style()
        if writes:
            cut = self.rng.choice(writes)
        steps = self.opening(style)
        for gold in self.gold:
            if writes and gold.index == cut.index:
                break
            steps += self.steps_of(gold, style)
        if not writes:  # the stop comes before the agent's summary
            steps += [say("user", f"Thanks, that's all I needed. {STOP}")]
        elif style == "bare":
            steps += [say("user", f"Thanks. {STOP}")]
        elif cut.requestor == "user":
            steps += [
                self.ask_user(cut.name, cut.arguments),
                say("user", f"Sorry, I have to go now. {STOP}"),
            ]
        else:
            steps += [self.ask(cut.name, cut.arguments)[0], say("user", f"Yes, go ahead. {STOP}")]
        yield Variant(
            "user.early_stop",
            "user",
            steps,
            style,
            note=cut.name if writes else "before the summary",
        )

    def _contradictions(self) -> Iterator[Variant]:
        """The user states a value its instruction contradicts; the agent acts on it. And
        its control: the user states the instruction's value."""
        found = []
        for gold in self.gold:
            if gold.requestor != "assistant" or not self.world.writes(gold.name):
                continue
            for key, value in gold.arguments.items():
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, bool) or not isinstance(item, str | int | float):
                        continue
                    if len(str(item)) >= 3 and str(item) in self.instruction:
                        found.append((gold, key, item))
        if not found:
            return
        gold, key, value = self.rng.choice(found)
        new = self._other(key, value)
        if new is None or str(new) in self.instruction:
            return
        first = min(g.index for g in self.gold if _holds(g.arguments, value))
        for stated, kind, side in (
            (new, "user.contradicts", "user"),
            (value, "control.confirmed", None),
        ):
            golds = [
                Gold(g.name, _swap(g.arguments, value, stated), g.requestor, g.index)
                if g.index >= first
                else g
                for g in self.gold
            ]
            steps = self.opening("talking")
            for g in golds:
                if g.index == first:
                    steps += [
                        say("assistant", f"Could you confirm the {key} for this, please?"),
                        say("user", f"Yes, it is {stated}."),
                    ]
                steps += self.steps_of(g, "talking")
            steps += self.closing("talking")
            yield Variant(
                kind,
                side,
                steps,
                "talking",
                control=side is None,
                note=f"{key}: {value} -> {stated}",
            )

    # -- values ------------------------------------------------------------------------

    def perturb(self, gold: Gold, *, valid: bool = False) -> dict[str, Any] | None:
        """`gold`'s arguments with one changed: to another value the domain's gold actions
        use for that argument (`valid`: only such values), else a shifted number."""
        keys = sorted(gold.arguments)
        for key in self.rng.sample(keys, len(keys)):
            new = self._other(key, gold.arguments[key], valid=valid)
            if new is not None:
                return {**gold.arguments, key: new}
        return None

    def _other(self, key: str, value: Any, *, valid: bool = False) -> Any:
        if isinstance(value, bool):
            return None if valid else not value
        if isinstance(value, int | float) and not valid:
            return value + (1 if isinstance(value, int) else 1.0)
        if isinstance(value, str):
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            if isinstance(inner, dict) and inner:
                for k in self.rng.sample(sorted(inner), len(inner)):
                    new = self._other(k, inner[k], valid=valid)
                    if new is not None:
                        return json.dumps({**inner, k: new})
                return None
        if isinstance(value, list) and value:
            at = self.rng.randrange(len(value))
            new = self._other(key, value[at], valid=valid)
            return None if new is None else [*value[:at], new, *value[at + 1 :]]
        choices = [p for p in self.pools.get(key, []) if p != value and type(p) is type(value)]
        return self.rng.choice(choices) if choices else None


def _holds(arguments: dict[str, Any], value: Any) -> bool:
    return any(v == value or (isinstance(v, list) and value in v) for v in arguments.values())


def _swap(arguments: dict[str, Any], old: Any, new: Any) -> dict[str, Any]:
    def one(v: Any) -> Any:
        return new if v == old else v

    return {k: [one(x) for x in v] if isinstance(v, list) else one(v) for k, v in arguments.items()}
