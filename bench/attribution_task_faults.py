"""The task's faults of the labelled attribution set (`bench/attribution_labels.md`, rule
6): a gold action made to raise, an expected output corrupted, decoys, and corruptions no
replay can show; a mixin of `attribution_mutations.Mutator`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from attribution_steps import Gold, Step, Variant, ids_in


class TaskFaults:
    """The task-side variants; the mutator it mixes into holds the task, the rng, the world
    and the steps."""

    task: Any
    world: Any
    rng: Any
    gold: list[Gold]
    communicate: list[str]

    # -- the task's faults -------------------------------------------------------------

    def _corrupted(self, change: Callable[[Any], None], suffix: str) -> Any:
        task = self.task.model_copy(deep=True)
        change(task)
        task.id = f"{self.task.id}~{suffix}"
        return task

    def _raising(self, gold: Gold) -> tuple[Any, dict[str, Any]] | None:
        """The task with `gold`'s arguments changed so that its replay fails, if one does."""
        keys = [
            k
            for k, v in gold.arguments.items()
            if ids_in(v) or (isinstance(v, list) and v and ids_in(v[0]))
        ]
        for key in self.rng.sample(keys, len(keys)):
            value = gold.arguments[key]
            bad = _broken(value)
            arguments = {**gold.arguments, key: bad}

            def change(task: Any, arguments: dict[str, Any] = arguments) -> None:
                task.evaluation_criteria.actions[gold.index].arguments = arguments

            task = self._corrupted(change, f"raises-{gold.index}")
            actions = task.evaluation_criteria.actions
            outcome = self.world.gold_outcomes(task, actions[: gold.index + 1])[-1]
            if outcome["failed"]:
                return task, arguments
        return None

    def _task_faults(self, agent_writes: list[Gold]) -> Iterator[Variant]:
        clean_style = self.style()
        clean = self.episode(self.gold, clean_style)
        writes = [g for g in self.gold if self.world.writes(g.name)]
        for gold in self.rng.sample(writes, len(writes)):
            found = self._raising(gold)
            if found is not None:
                yield Variant(
                    "task.gold_raises",
                    "task",
                    clean,
                    clean_style,
                    task=found[0],
                    note=f"{gold.name} {json.dumps(found[1])[:160]}",
                )
                break
        reads = [
            g for g in self.gold if g.requestor == "assistant" and not self.world.writes(g.name)
        ]
        for gold in self.rng.sample(reads, len(reads)):
            found = self._raising(gold)
            if found is None:
                continue
            yield Variant(
                "control.raising_read",
                None,
                clean,
                clean_style,
                task=found[0],
                control=True,
                note=gold.name,
            )
            if agent_writes:
                gone = self.rng.choice(agent_writes)
                style = self.style()
                yield Variant(
                    "agent.drop+raising_read",
                    "assistant",
                    self.episode(self.gold, style, replace={gone.index: []}),
                    style,
                    task=found[0],
                    note=f"{gone.name}; read {gold.name}",
                )
            break
        yield from self._output_faults(clean, clean_style)
        basis = {r.value for r in self.task.evaluation_criteria.reward_basis}
        candidates = [g for g in agent_writes if "DB" in basis]
        if candidates:
            gold = self.rng.choice(candidates)
            changed = self.perturb(gold, valid=True)
            if changed is not None:

                def change(task: Any) -> None:
                    task.evaluation_criteria.actions[gold.index].arguments = changed

                task = self._corrupted(change, f"other-{gold.index}")
                outcome = self.world.gold_outcomes(
                    task, task.evaluation_criteria.actions[: gold.index + 1]
                )[-1]
                if not outcome["failed"]:
                    yield Variant(
                        "task.undetectable",
                        "task",
                        clean,
                        clean_style,
                        task=task,
                        note=f"{gold.name} {json.dumps(changed, sort_keys=True)[:160]}",
                    )

    def _output_faults(self, clean: list[Step], style: str) -> Iterator[Variant]:
        ec = self.task.evaluation_criteria
        basis = {r.value for r in ec.reward_basis}
        if self.communicate and "COMMUNICATE" in basis:
            at = self.rng.randrange(len(self.communicate))
            wrong = _other_output(self.communicate[at])

            def change(task: Any) -> None:
                task.evaluation_criteria.communicate_info[at] = wrong

            yield Variant(
                "task.output",
                "task",
                clean,
                style,
                task=self._corrupted(change, "output"),
                note=f"{self.communicate[at]} -> {wrong}",
            )
        if ec.env_assertions and "ENV_ASSERTION" in basis:
            at = self.rng.randrange(len(ec.env_assertions))
            expected = not ec.env_assertions[at].assert_value

            def flip(task: Any) -> None:
                task.evaluation_criteria.env_assertions[at].assert_value = expected

            yield Variant(
                "task.output",
                "task",
                clean,
                style,
                task=self._corrupted(flip, "assertion"),
                note=f"{ec.env_assertions[at].func_name} expected {expected}",
            )


def _broken(value: Any) -> Any:
    """An identifier no database holds."""
    if isinstance(value, list):
        return [_broken(value[0]), *value[1:]]
    try:
        inner = json.loads(value)
    except ValueError:
        inner = None
    if isinstance(inner, dict):
        keys = [k for k, v in inner.items() if ids_in(v)]
        if keys:
            return json.dumps({**inner, keys[0]: _broken(inner[keys[0]])})
    return f"{value}0404"


def _other_output(text: str) -> str:
    digits = "".join(ch for ch in text if ch.isdigit())
    if digits:
        return text.replace(digits[-1], str((int(digits[-1]) + 5) % 10), 1) + "7"
    return f"{text} (revised)"
