"""The labelled attribution set's τ² side: gold trajectories mutated and run in τ²'s own code.

Runs in τ²'s Python (3.12, ../shared/tau2's source and offline stubs on the path), never in
deedbench's; `bench/attribution_set.py` starts it. For each task of one domain it builds the
gold trajectory from the task's ``evaluation_criteria.actions`` (as
../shared/tau2/offline/gold_eval.py does), applies the mutations of
`bench/attribution_labels.md`, executes every call with τ²'s ``Environment.get_response`` on
the task's start state, scores each episode with τ²'s ``evaluate_simulation``, and labels it
by those rules: reward 1, no party; else the side of its mutation. It writes one τ² result
file (τ²'s ``Results.save``) per part (``dev``, ``heldout``) and the labels beside them.

    python attribution_set_tau2.py SPEC.json

SPEC: {"domain", "seed", "out" (a folder), "limit" (tasks per part, 0: all)}.
"""

from __future__ import annotations

import json
import pickle
import random
import sys
from copy import deepcopy
from pathlib import Path
from typing import Any

from loguru import logger

logger.remove()
import litellm  # noqa: E402  (the offline stand-in)
from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage  # noqa: E402
from tau2.data_model.simulation import (  # noqa: E402
    AgentInfo,
    Info,
    Results,
    SimulationRun,
    TerminationReason,
    UserInfo,
)
from tau2.data_model.tasks import Task  # noqa: E402
from tau2.environment.db import DB  # noqa: E402
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation  # noqa: E402
from tau2.registry import registry  # noqa: E402
from tau2.utils import load_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attribution_mutations import Mutator  # noqa: E402
from attribution_steps import GREETING, STOP, Step  # noqa: E402

PARTY = {"assistant": "agent", "user": "user", "task": "task", "": None}
"""A mutation's side (a τ² requestor, or the task) as the party it labels."""

_LOADED: dict[str, bytes] = {}


def _cached_load(cls: Any, path: str) -> Any:
    """τ²'s ``DB.load`` with each file read once (a fresh validated copy every time)."""
    if str(path) not in _LOADED:
        _LOADED[str(path)] = pickle.dumps(load_file(path), protocol=pickle.HIGHEST_PROTOCOL)
    return cls.model_validate(pickle.loads(_LOADED[str(path)]))


DB.load = classmethod(_cached_load)  # type: ignore[method-assign, assignment]


def _judge(model: Any = None, messages: Any = None, **_: Any) -> str:
    """Every NL assertion met: no mutation here changes what is said of the assertions."""
    import ast
    import re

    prompt = messages[-1]["content"] if isinstance(messages[-1], dict) else str(messages[-1])
    found = re.search(r"expectedOutcomes:\s*(\[.*\])", prompt, re.S)
    outcomes = ast.literal_eval(found.group(1)) if found else []
    rows = [
        {"expectedOutcome": o, "reasoning": "scripted", "metExpectation": True} for o in outcomes
    ]
    return json.dumps({"results": rows})


litellm.STUB_RESPONDER = _judge

_VPN: list[Any] = []


def _fresh_vpn() -> None:
    """τ²'s telecom phone keeps a class-wide default VPN that ``break_vpn`` degrades; a τ²
    process running one simulation has it fresh, so every episode here starts with it fresh."""
    if _VPN:
        from tau2.domains.telecom.user_tools import TelecomUserTools

        TelecomUserTools.default_vpn_details = deepcopy(_VPN[0])


class Tau2World:
    """The domain's environments and tasks, in τ²'s own code."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        if domain == "telecom":
            from tau2.domains.telecom.user_tools import TelecomUserTools

            _VPN.append(deepcopy(TelecomUserTools.default_vpn_details))
        try:
            self.tasks: list[Task] = registry.get_tasks_loader(domain)("base")
        except Exception:  # banking has no splits
            self.tasks = registry.get_tasks_loader(domain)(None)
        env = self.env(self.tasks[0])
        self.agent_tools = dict(env.tools.get_tools()) if env.tools else {}
        self.user_tools = dict(env.user_tools.get_tools()) if env.user_tools else {}
        self.kinds = {n: env.tools.tool_type(n).value for n in self.agent_tools}
        self.kinds.update({n: env.user_tools.tool_type(n).value for n in self.user_tools})

    def required(self, name: str) -> list[str]:
        """The parameters a call of `name` must give."""
        params = {**self.agent_tools, **self.user_tools}[name].params
        return [k for k, f in params.model_fields.items() if f.is_required()]

    def env_kwargs(self, task: Task) -> dict[str, Any]:
        if self.domain != "banking_knowledge":
            return {}
        from tau2.runner.build import _derive_read_log_allowlist

        return {
            "read_log_allowlist": _derive_read_log_allowlist(task),
            "retrieval_variant": "no_knowledge",
        }

    def env(self, task: Task) -> Any:
        _fresh_vpn()
        env = registry.get_env_constructor(self.domain)(**self.env_kwargs(task))
        state = task.initial_state
        env.set_state(
            initialization_data=state.initialization_data if state else None,
            initialization_actions=state.initialization_actions if state else None,
            message_history=list(state.message_history) if state and state.message_history else [],
        )
        return env

    def writes(self, name: str) -> bool:
        """A call that can change a database: τ²'s write tools, and the generic ones that
        mutate state (banking's unlock and give); transfers end an episode, not a record."""
        kind = self.kinds.get(name)
        return kind == "write" or (
            kind == "generic" and name not in ("transfer_to_human_agents", "calculate")
        )

    def run(self, task: Task, steps: list[Step]) -> tuple[list[Any], list[dict[str, Any]]]:
        """The steps executed live: τ²'s messages, and each call's outcome."""
        env = self.env(task)
        messages: list[Any] = []
        outcomes: list[dict[str, Any]] = []
        number = 0
        for step in steps:
            if step.call is None:
                text = step.text(outcomes[-1]["content"] if outcomes else "")
                cls = AssistantMessage if step.role == "assistant" else UserMessage
                messages.append(cls(role=step.role, content=text))
                continue
            name, arguments = step.call
            number += 1
            call = ToolCall(
                id=f"call_{number}", name=name, arguments=deepcopy(arguments), requestor=step.role
            )
            cls = AssistantMessage if step.role == "assistant" else UserMessage
            messages.append(cls(role=step.role, content=None, tool_calls=[call]))
            answer = env.get_response(call)
            messages.append(answer)
            failed = bool(answer.error) or str(answer.content or "").startswith("Error")
            outcomes.append(
                {"name": name, "role": step.role, "content": answer.content, "failed": failed}
            )
        return messages, outcomes

    def gold_outcomes(self, task: Task, actions: list[Any]) -> list[dict[str, Any]]:
        """Each gold action replayed in order on a fresh start: what it answered."""
        steps = [Step(a.requestor, call=(a.name, a.arguments)) for a in actions]
        return self.run(task, steps)[1]

    def score(self, task: Task, messages: list[Any], ending: str = "user_stop") -> Any:
        sim = SimulationRun(
            id="probe",
            task_id=task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=TerminationReason(ending),
            messages=messages,
        )
        return evaluate_simulation(
            sim,
            task,
            EvaluationType.ALL,
            solo_mode=False,
            domain=self.domain,
            env_kwargs=self.env_kwargs(task),
        )


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    domain, seed, out = spec["domain"], int(spec["seed"]), Path(spec["out"])
    world = Tau2World(domain)
    order = [t.id for t in world.tasks]
    random.Random(f"{seed}:{domain}:split").shuffle(order)
    half = len(order) // 2
    parts = {"dev": order[:half], "heldout": order[half:]}
    by_id = {t.id: t for t in world.tasks}
    pools = Mutator.pools(world.tasks)
    out.mkdir(parents=True, exist_ok=True)
    for part, ids in parts.items():
        if spec.get("limit"):
            ids = ids[: int(spec["limit"])]
        simulations, tasks, labels = [], {}, {}
        for number, task_id in enumerate(ids):
            task = by_id[task_id]
            mutator = Mutator(world, task, pools, random.Random(f"{seed}:{domain}:{task_id}"))
            for variant in mutator.variants():
                used = variant.task or task
                messages, _ = world.run(used, variant.steps)
                ending = "user_stop"
                reward = world.score(used, messages, ending)
                label = None if reward.reward >= 1.0 - 1e-6 else PARTY[variant.side or ""]
                if variant.control and label is not None:
                    raise SystemExit(f"control {variant.kind} of {task_id} failed: {reward.info}")
                sim_id = f"{part}-{len(simulations):05d}"
                simulations.append(
                    SimulationRun(
                        id=sim_id,
                        task_id=used.id,
                        start_time="",
                        end_time="",
                        duration=0.0,
                        termination_reason=TerminationReason(ending),
                        messages=messages,
                        reward_info=reward,
                        trial=0,
                        seed=seed,
                    )
                )
                tasks.setdefault(used.id, used)
                labels[sim_id] = {
                    "task": task_id,
                    "kind": variant.kind,
                    "side": variant.side,
                    "party": label,
                    "style": variant.style,
                    "reward": reward.reward,
                    "note": variant.note,
                }
            print(
                f"{domain} {part}: {number + 1}/{len(ids)} tasks, {len(simulations)} episodes",
                file=sys.stderr,
                flush=True,
            )
        env = world.env(world.tasks[0])
        info = Info(
            git_commit="fc0055dc4e0a316c3f83133267fbd6faaa770992",
            num_trials=1,
            max_steps=200,
            max_errors=10,
            user_info=UserInfo(implementation="user_simulator", llm="scripted"),
            agent_info=AgentInfo(implementation="llm_agent", llm="scripted"),
            environment_info=env.get_info(),
            retrieval_config="no_knowledge" if domain == "banking_knowledge" else None,
        )
        Results(info=info, tasks=list(tasks.values()), simulations=simulations).save(
            out / f"{domain}-{part}.json"
        )
        (out / f"{domain}-{part}.labels.json").write_text(
            json.dumps(labels, indent=1), encoding="utf-8"
        )


if __name__ == "__main__":
    assert GREETING and STOP
    main()
