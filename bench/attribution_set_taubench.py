"""The labelled attribution set's τ-bench side: gold actions mutated and run in τ-bench's code.

Each task of τ-bench's airline and retail test splits (../shared/taubench) gives its gold
trajectory and the mutations of `bench/attribution_labels.md` (`attribution_mutations.py`;
τ-bench's gold actions are all the agent's, and its user has no tools). Every episode is
executed with τ-bench's own `Env.step`, a scripted user saying the episode's lines, and
scored with τ-bench's own `Env.calculate_reward` (tests/benchmarks/taubench/_reference.py);
it is saved as a record of τ-bench's result format, and labelled: reward 1, no party; else
the side of its mutation. One file per part (``dev``, ``heldout``) and the labels beside it.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.benchmarks.taubench import _reference

from attribution_mutations import Mutator
from attribution_steps import GREETING, Step

WRITES = {
    "airline": {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    },
    "retail": {
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    },
}
"""The tools that change τ-bench's database (τ-bench does not type its tools; these are the
same tools τ² types as writes)."""

FILES = {"airline": ("flights", "reservations", "users"), "retail": ("orders", "products", "users")}
PARTY = {"assistant": "agent", "user": "user", "task": "task", "": None}


class TauTask:
    """A τ-bench task dressed as the mutations read a τ² task."""

    def __init__(self, raw: dict[str, Any], index: int) -> None:
        self.raw = raw
        self.id = str(index)
        self.index = index
        actions = [a for a in raw["actions"] if a["name"] != "respond"]
        self.actions = actions
        criteria = SimpleNamespace(
            actions=[
                SimpleNamespace(name=a["name"], arguments=a["kwargs"], requestor="assistant")
                for a in actions
            ],
            communicate_info=list(raw.get("outputs") or []),
            env_assertions=None,
            reward_basis=[SimpleNamespace(value="DB")]
            + ([SimpleNamespace(value="COMMUNICATE")] if raw.get("outputs") else []),
        )
        self.evaluation_criteria = criteria
        self.user_scenario = SimpleNamespace(instructions=raw["instruction"])
        self.user_tools = None

    def model_copy(self, deep: bool = True) -> TauTask:
        return copy.deepcopy(self)

    def as_raw(self) -> dict[str, Any]:
        """The task as τ-bench's record holds it, with whatever a mutation changed."""
        ec = self.evaluation_criteria
        changed = iter(ec.actions)
        actions = [
            a if a["name"] == "respond" else {"name": a["name"], "kwargs": next(changed).arguments}
            for a in self.raw["actions"]
        ]
        return {**self.raw, "actions": actions, "outputs": list(ec.communicate_info)}


class TauWorld:
    def __init__(self, domain: str) -> None:
        self.domain = f"taubench-{domain}"
        self.name = domain
        folder = _reference.TAUBENCH / domain
        self.text = {n: (folder / f"{n}.json").read_text(encoding="utf-8") for n in FILES[domain]}
        self.tasks_raw = json.loads((folder / "tasks_test.json").read_text(encoding="utf-8"))
        self.tasks = [TauTask(raw, i) for i, raw in enumerate(self.tasks_raw)]
        tools = _reference.tau().tools[domain]
        self.infos = {t.get_info()["function"]["name"]: t.get_info()["function"] for t in tools}
        self.agent_tools = dict(self.infos)
        self.user_tools: dict[str, Any] = {}
        self.wiki = (folder / "policy.md").read_text(encoding="utf-8")

    def load(self) -> dict[str, Any]:
        return {n: json.loads(t) for n, t in self.text.items()}

    def writes(self, name: str) -> bool:
        return name in WRITES[self.name]

    def required(self, name: str) -> list[str]:
        return list(self.infos[name]["parameters"].get("required", []))

    def run(
        self, task: TauTask, steps: list[Step]
    ) -> tuple[list[dict[str, Any]], float, dict[str, Any], list[dict[str, Any]]]:
        """The steps through τ-bench's Env: its trajectory, reward and reward info, and each
        call's outcome."""
        steps = [
            s
            for s in steps
            if not (s.role == "assistant" and s.call is None and s.words == GREETING)
        ]
        spoken: list[Step] = []
        for step in steps:  # τ-bench's user speaks only when the agent has spoken
            if (
                spoken
                and step.role == "user"
                and not (spoken[-1].role == "assistant" and spoken[-1].call is None)
            ):
                spoken.append(Step("assistant", words="One moment, I am working on your request."))
            spoken.append(step)
        steps = spoken
        lines = [s.text("") for s in steps if s.role == "user"]
        if steps[0].role != "user" or any(s.role == "user" and s.call is not None for s in steps):
            raise ValueError("τ-bench's user opens and has no tools")
        env = _reference.environment(self.name, self.load, task.as_raw(), lines)
        opening = env.reset(0).observation
        traj: list[dict[str, Any]] = [
            {"role": "system", "content": self.wiki},
            {"role": "user", "content": opening},
        ]
        outcomes: list[dict[str, Any]] = []
        result = None
        for number, step in enumerate(steps[1:]):
            if step.role == "user":
                continue  # said by the scripted user in answer to the agent's words
            if step.call is None:
                response = env.step(
                    _reference.tau().Action(name="respond", kwargs={"content": step.text("")})
                )
                traj.append({"role": "assistant", "content": step.text("")})
                traj.append({"role": "user", "content": response.observation})
            else:
                name, kwargs = step.call
                call_id = f"call_{number}"
                response = env.step(
                    _reference.tau().Action(name=name, kwargs=copy.deepcopy(kwargs))
                )
                traj.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(kwargs)},
                            }
                        ],
                    }
                )
                traj.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "name": name,
                        "content": response.observation,
                    }
                )
                outcomes.append(
                    {
                        "name": name,
                        "content": response.observation,
                        "failed": str(response.observation).startswith(("Error", "Unknown action")),
                    }
                )
            if response.done:
                result = response.info.reward_info
                break
        if result is None:
            result = env.calculate_reward()
        return traj, float(result.reward), json.loads(result.model_dump_json()), outcomes

    def gold_outcomes(self, task: TauTask, actions: list[Any]) -> list[dict[str, Any]]:
        steps = [Step("user", words="Hello.")] + [
            Step("assistant", call=(a.name, a.arguments)) for a in actions
        ]
        return self.run(
            task, [*steps, Step("assistant", words="Done."), Step("user", words="###STOP###")]
        )[3]


def generate(domain: str, seed: int, out: Path, limit: int = 0) -> None:
    world = TauWorld(domain)
    order = list(range(len(world.tasks)))
    random.Random(f"{seed}:taubench-{domain}:split").shuffle(order)
    half = len(order) // 2
    pools = Mutator.pools(world.tasks)
    out.mkdir(parents=True, exist_ok=True)
    for part, ids in (("dev", order[:half]), ("heldout", order[half:])):
        ids = ids[:limit] if limit else ids
        records, labels = [], {}
        for index in ids:
            task = world.tasks[index]
            mutator = Mutator(
                world, task, pools, random.Random(f"{seed}:taubench-{domain}:{index}")
            )
            for variant in mutator.variants():
                used = variant.task or task
                traj, reward, reward_info, _ = world.run(used, variant.steps)
                label = None if reward >= 1.0 - 1e-6 else PARTY[variant.side or ""]
                if variant.control and label is not None:
                    raise SystemExit(
                        f"control {variant.kind} of τ-bench {domain} task {index} failed: "
                        f"{reward_info}"
                    )
                number = len(records)
                records.append(
                    {
                        "task_id": index,
                        "trial": number,
                        "reward": reward,
                        "info": {
                            "task": used.as_raw(),
                            "source": "user",
                            "user_cost": 0.0,
                            "reward_info": reward_info,
                        },
                        "traj": traj,
                    }
                )
                labels[str(number)] = {
                    "task": str(index),
                    "kind": variant.kind,
                    "side": variant.side,
                    "party": label,
                    "style": variant.style,
                    "reward": reward,
                    "note": variant.note,
                }
            print(
                f"taubench-{domain} {part}: task {index}, {len(records)} episodes",
                file=sys.stderr,
                flush=True,
            )
        (out / f"taubench-{domain}-{part}.json").write_text(json.dumps(records), encoding="utf-8")
        (out / f"taubench-{domain}-{part}.labels.json").write_text(
            json.dumps(labels, indent=1), encoding="utf-8"
        )


if __name__ == "__main__":
    generate(
        sys.argv[1],
        int(sys.argv[2]),
        Path(sys.argv[3]),
        int(sys.argv[4]) if len(sys.argv) > 4 else 0,
    )
