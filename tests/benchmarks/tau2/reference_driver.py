"""Run τ²'s own environment and evaluator on trajectories, for the differential tests.

This script runs in τ²'s Python (3.12, with the packages of
../shared/tau2/offline/requirements-offline.txt and τ²'s source on the path),
never in deedbench's. It reads a JSON file of cases and writes what τ² made of
each, as JSON:

    {"domain": "telecom", "env_kwargs": {...}, "cases": [
        {"id": "...", "task": {<τ² task>}, "solo": false,
         "messages": [<τ² messages; tool results are left out: τ² computes them>],
         "termination": "user_stop", "nl": [true, false] | null,
         "hashes": "every" | "end" | "none" | [<tool names>], "evaluate": true}]}

For each case, τ²'s telecom class-wide VPN default fresh (as a τ² process running
that one simulation has it), the environment set to the task's start, every tool call of the
messages run with τ²'s ``get_response`` (the result, whether it failed, and the
hashes of both databases after it, or only after the named tools' calls), then
(unless ``"evaluate": false``) ``evaluate_simulation`` on the whole trajectory, as
``tau2 run`` scores it; the NL judge's verdicts come from the case (litellm is the
import-only stand-in of ../shared/tau2/offline/stubs).

With ``"results": {"path": ..., "format": "json" | "dir", "num_trials": n,
"solo": bool, "retrieval_config": ...}`` in the spec, the evaluated cases are also
saved as one τ² result file with τ²'s own ``Results.save`` (a case's ``"trial"``, and
``"termination"``; a case with ``"infrastructure_error": true`` is recorded as one,
unscored), and the file is re-graded by τ²'s own re-grader
(``compute_simulation_rewards``, what ``tau2 evaluate-trajs`` runs, on the tasks in
the file and, ``--fresh-tasks``, on the current ones), and its metrics computed
(``compute_metrics``): the output is then ``{"cases": [...], "regraded": {...},
"regraded_fresh": {...}, "pass_hat_ks": {...}}``.

With ``"shown": [{"domain": "telecom-workflow", "tasks": [<τ² task>, ...], "solo": bool,
"retrieval": VARIANT | null}, ...]`` in the spec instead of cases, it writes what τ²'s
own code shows its models for each task of each run (`_shown_run`): ``{"runs":
[{id: {"agent_system", "agent_tools", "opening", "user_system", "user_tools"}}, ...],
"judge": [<the NL judge's messages>]}``.

Usage: python reference_driver.py CASES.json OUT.json
"""

from __future__ import annotations

import ast
import json
import pickle
import re
import sys
import time
import traceback
from copy import deepcopy
from typing import Any

from loguru import logger

logger.remove()
import litellm  # noqa: E402  (the stand-in)
from tau2.data_model.message import (  # noqa: E402
    AssistantMessage,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from tau2.data_model.simulation import SimulationRun, TerminationReason  # noqa: E402
from tau2.data_model.tasks import Task  # noqa: E402
from tau2.environment.db import DB  # noqa: E402
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation  # noqa: E402
from tau2.registry import registry  # noqa: E402
from tau2.utils import load_file  # noqa: E402

# Read each database file once: τ²'s ``DB.load`` is ``load_file`` then
# ``model_validate``, and so is this, with the file's parsed data kept as pickled
# bytes (a fresh copy for every load, far faster than re-reading or deep-copying).
_LOADED: dict[str, bytes] = {}


def _cached_load(cls: Any, path: str) -> Any:
    if str(path) not in _LOADED:
        _LOADED[str(path)] = pickle.dumps(load_file(path), protocol=pickle.HIGHEST_PROTOCOL)
    return cls.model_validate(pickle.loads(_LOADED[str(path)]))


DB.load = classmethod(_cached_load)  # type: ignore[method-assign, assignment]

_VERDICTS: list[bool] = []


def _judge(model: Any = None, messages: Any = None, **_: Any) -> str:
    prompt = messages[-1]["content"] if isinstance(messages[-1], dict) else str(messages[-1])
    found = re.search(r"expectedOutcomes:\s*(\[.*\])", prompt, re.S)
    outcomes = ast.literal_eval(found.group(1)) if found else []  # τ² writes the list's repr
    verdicts = _VERDICTS or [True] * len(outcomes)
    return json.dumps(
        {
            "results": [
                {"expectedOutcome": o, "reasoning": "scripted", "metExpectation": bool(v)}
                for o, v in zip(outcomes, verdicts, strict=False)
            ]
        }
    )


litellm.STUB_RESPONDER = _judge


def _message(raw: dict[str, Any]) -> Any:
    role = raw["role"]
    calls = None
    if raw.get("tool_calls"):
        calls = [
            ToolCall(
                id=c["id"],
                name=c["name"],
                arguments=c["arguments"],
                requestor="user" if role == "user" else "assistant",
            )
            for c in raw["tool_calls"]
        ]
    content = raw.get("content")
    if role == "assistant":
        return AssistantMessage(role="assistant", content=content, tool_calls=calls)
    if role == "user":
        return UserMessage(role="user", content=content, tool_calls=calls)
    return SystemMessage(role="system", content=content)


def _fresh_vpn_default() -> None:
    """Give τ²'s telecom phone back its class-wide default VPN details, as a τ² process
    running this one simulation has them: ``break_vpn`` degrades that one object, so
    otherwise every later case would inherit it (deedbench keeps it per episode)."""
    if _VPN_DEFAULT:
        from tau2.domains.telecom.user_tools import TelecomUserTools

        TelecomUserTools.default_vpn_details = deepcopy(_VPN_DEFAULT[0])


_VPN_DEFAULT: list[Any] = []


def run_case(domain: str, env_kwargs: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    _fresh_vpn_default()
    task = Task.model_validate(case["task"])
    solo = bool(case.get("solo"))
    kwargs = dict(env_kwargs)
    if domain == "banking_knowledge":
        from tau2.runner.build import _derive_read_log_allowlist

        kwargs["read_log_allowlist"] = _derive_read_log_allowlist(task)
    env = registry.get_env_constructor(domain)(solo_mode=solo, **kwargs)
    state = task.initial_state
    history = deepcopy(state.message_history) if state and state.message_history else []
    env.set_state(
        initialization_data=state.initialization_data if state else None,
        initialization_actions=state.initialization_actions if state else None,
        message_history=history,
    )
    mode = case.get("hashes", "every")
    hashing = mode != "none"  # an evaluator case needs none

    def hashes() -> dict[str, Any]:
        if not hashing:
            return {}
        return {"agent": env.get_db_hash(), "user": env.get_user_db_hash()}

    out: dict[str, Any] = {"id": case["id"], "start": hashes(), "calls": []}
    trajectory = list(history)
    for raw in case["messages"]:
        message = _message(raw)
        trajectory.append(message)
        for call in message.tool_calls or []:
            answer = env.get_response(call)
            trajectory.append(answer)
            row = {"content": answer.content, "error": answer.error}
            if mode == "every" or (isinstance(mode, list) and call.name in mode):
                row.update(hashes())
            out["calls"].append(row)
    out["end"] = hashes()
    if not case.get("evaluate", True):
        return out
    simulation = SimulationRun(
        id=case["id"],
        task_id=task.id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=TerminationReason(case.get("termination", "user_stop")),
        messages=trajectory,
    )
    _VERDICTS[:] = case.get("nl") or []
    clock = time.perf_counter()
    reward = evaluate_simulation(
        simulation,
        task,
        EvaluationType.ALL,
        solo_mode=solo,
        domain=domain,
        env_kwargs=kwargs,
    )
    out["seconds"] = time.perf_counter() - clock
    out["reward_info"] = json.loads(reward.model_dump_json())
    simulation.reward_info = reward
    simulation.trial = case.get("trial", 0)
    _SIMULATIONS.append((task, simulation, list(_VERDICTS)))
    return out


_SIMULATIONS: list[tuple[Any, Any, list[bool]]] = []


def _older(content: str) -> str:
    """A tool's output as an older version of the tool might have written it."""
    try:
        value = json.loads(content)
    except json.JSONDecodeError:
        return content + " (as recorded)"
    if isinstance(value, dict):
        return json.dumps({**value, "recorded_by": "an older tool"})
    return content + " " if not isinstance(value, str) else json.dumps(value + " (as recorded)")


def _results_file(domain: str, env_kwargs: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """The evaluated cases as one τ² result file, re-graded by τ²'s own re-grader."""
    from pathlib import Path

    from tau2.data_model.simulation import AgentInfo, Info, Results, UserInfo
    from tau2.metrics.agent_metrics import compute_metrics
    from tau2.scripts import evaluate_trajectories as regrader

    tasks: dict[str, Any] = {}
    simulations = []
    verdicts: dict[str, list[bool]] = {}
    for task, simulation, nl in _SIMULATIONS:
        tasks.setdefault(task.id, task)
        simulations.append(simulation)
        verdicts[simulation.id] = nl
    for case in spec.get("infrastructure_errors", []):
        simulations.append(
            SimulationRun(
                id=case["id"],
                task_id=case["task_id"],
                start_time="",
                end_time="",
                duration=0.0,
                termination_reason=TerminationReason.INFRASTRUCTURE_ERROR,
                messages=[],
                trial=case.get("trial", 0),
            )
        )
    solo = bool(spec.get("solo"))
    env = registry.get_env_constructor(domain)(solo_mode=solo, **env_kwargs)
    info = Info(
        git_commit="fc0055dc4e0a316c3f83133267fbd6faaa770992",
        num_trials=spec.get("num_trials", 1),
        max_steps=200,
        max_errors=10,
        user_info=UserInfo(
            implementation="dummy_user" if solo else "user_simulator", llm="scripted"
        ),
        agent_info=AgentInfo(
            implementation="llm_agent_solo" if solo else "llm_agent", llm="scripted"
        ),
        environment_info=env.get_info(),
        retrieval_config=spec.get("retrieval_config"),
    )
    for simulation in simulations:  # a file older than the tools: outputs that read otherwise
        if simulation.id in spec.get("garble", []):
            for message in simulation.messages:
                if message.role == "tool" and message.content:
                    message.content = _older(message.content)
    results = Results(info=info, tasks=list(tasks.values()), simulations=simulations)
    path = Path(spec["path"])
    results.save(path, format=spec.get("format", "json"))
    if domain == "banking_knowledge":  # τ²'s re-grader builds alltools, which needs OpenAI
        original = regrader._build_eval_env_kwargs

        def offline(name: str, task: Any) -> Any:
            return {**(original(name, task) or {}), **env_kwargs}

        regrader._build_eval_env_kwargs = offline
    loaded = Results.load(path)
    out: dict[str, Any] = {}
    for key, fresh in (("regraded", False), ("regraded_fresh", True))[: 1 + spec.get("fresh", 0)]:
        out[key] = {}
        for simulation in loaded.simulations:  # one at a time: the judge says what the case did
            _VERDICTS[:] = verdicts.get(simulation.id, [])
            one = loaded.model_copy(update={"simulations": [simulation]})
            [graded] = regrader.compute_simulation_rewards(one, fresh_tasks=fresh).simulations
            info = graded.reward_info
            out[key][graded.id] = json.loads(info.model_dump_json()) if info else None
    out["pass_hat_ks"] = {str(k): v for k, v in compute_metrics(loaded).pass_hat_ks.items()}
    return out


def _opening(message: Any) -> dict[str, Any]:
    calls = [
        {"name": c.name, "arguments": c.arguments}
        for c in (getattr(message, "tool_calls", None) or [])
    ]
    return {"role": message.role, "content": message.content, "tool_calls": calls}


def _quicker_building() -> None:
    """Build what τ² builds for a task faster, without changing what it shows: every
    database is validated once (each task gets its own copy), the knowledge base read and
    each search index built once (tasks only read them), and τ²'s ``Tool.parse_data``
    and ``openai_schema`` are remembered per function signature and docstring, and per
    parameters model (both are pure functions of those)."""
    from tau2.environment.tool import Tool

    validated: dict[str, bytes] = {}

    def load(cls: Any, path: str) -> Any:  # validated once, then unpickled (a fresh copy)
        if str(path) not in validated:
            validated[str(path)] = pickle.dumps(_cached_load(cls, path))
        return pickle.loads(validated[str(path)])

    DB.load = classmethod(load)  # type: ignore[method-assign, assignment]
    from tau2.domains.banking_knowledge import environment, retrieval

    knowledge = environment.get_knowledge_base()  # read once: tasks only read it
    environment.get_knowledge_base = lambda: knowledge
    pipelines: dict[Any, Any] = {}
    for name in ("_create_kb_pipeline", "_create_grep_pipeline"):  # indexed once per spec
        build = getattr(retrieval, name)

        def remembered(spec: Any, knowledge_base: Any, build: Any = build) -> Any:
            key = (build.__name__, repr(spec), id(knowledge_base))
            if key not in pipelines:
                pipelines[key] = build(spec, knowledge_base)
            return pipelines[key]

        setattr(retrieval, name, remembered)
    parsed: dict[Any, Any] = {}
    original = Tool.parse_data.__func__  # type: ignore[attr-defined]

    def parse_data(cls: Any, sig: Any, docstring: Any, predefined: Any) -> Any:
        key = (str(sig), docstring, tuple(sorted(predefined)))
        if key not in parsed:
            parsed[key] = original(cls, sig, docstring, predefined)
        return parsed[key]

    Tool.parse_data = classmethod(parse_data)  # type: ignore[method-assign, assignment]
    schemas: dict[tuple[str, int], Any] = {}
    schema = Tool.openai_schema.fget  # type: ignore[attr-defined]

    def openai_schema(self: Any) -> Any:
        key = (self.name, id(self.params))
        if key not in schemas:
            schemas[key] = (self.params, schema(self))  # the model kept: its id stays its own
        return deepcopy(schemas[key][1])

    Tool.openai_schema = property(openai_schema)  # type: ignore[method-assign, assignment]


def _shown_run(run: dict[str, Any]) -> dict[str, Any]:
    """What τ²'s own code shows its models for each task of one run (``TextRunConfig``,
    ``build_text_orchestrator``, then ``initialize``, as ``tau2 run`` does): the agent's
    system prompt and tools as ``openai_schema`` JSON, the opening messages, the user's
    system prompt and tools."""
    from tau2.data_model.simulation import TextRunConfig
    from tau2.runner.build import build_text_orchestrator

    solo = bool(run.get("solo"))
    tasks: dict[str, Any] = {}
    for raw in run["tasks"]:
        task = Task.model_validate(raw)
        config = TextRunConfig(
            domain=run["domain"],
            agent="llm_agent_solo" if solo else "llm_agent",
            llm_agent="scripted",
            user="dummy_user" if solo else "user_simulator",
            llm_user="scripted",
            retrieval_config=run.get("retrieval"),
        )
        try:
            if solo:
                tasks[task.id] = _solo(config, task)
                continue
            orchestrator = build_text_orchestrator(config, task, seed=300)
            orchestrator.initialize()
        except Exception as exc:  # what τ² cannot build is a result too
            tasks[task.id] = {"crash": f"{type(exc).__name__}: {exc}"}
            continue
        agent, user = orchestrator.agent, orchestrator.user
        tasks[task.id] = {
            "agent_system": agent.system_prompt,
            "agent_tools": [t.openai_schema for t in agent.tools],
            "opening": [_opening(m) for m in orchestrator.trajectory],
            "user_system": None if solo else user.system_prompt,
            "user_tools": [t.openai_schema for t in user.tools] if user.tools else None,
        }
    return tasks


def _solo(config: Any, task: Any) -> dict[str, Any]:
    """What τ²'s solo agent is shown: ``build_text_orchestrator`` cannot build its user
    in v1.0.1 (``build_user`` hands ``DummyUser`` tools it does not take), so the
    environment and the agent are built as it builds them, and the opening is the
    task's message history (no greeting in solo mode)."""
    from tau2.runner.build import _build_env_kwargs, build_agent, build_environment

    env_kwargs = _build_env_kwargs(config, task)
    environment = build_environment(config.domain, solo_mode=True, env_kwargs=env_kwargs)
    agent = build_agent(
        config.effective_agent, environment, llm="scripted", task=task, solo_mode=True
    )
    state = task.initial_state
    history = (state.message_history if state is not None else None) or []
    return {
        "agent_system": agent.system_prompt,
        "agent_tools": [t.openai_schema for t in agent.tools],
        "opening": [_opening(m) for m in history],
        "user_system": None,
        "user_tools": None,
    }


def _judge_prompt() -> list[dict[str, Any]]:
    """The messages τ²'s NL judge is sent for a two-message trajectory."""
    from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator

    asked: list[Any] = []

    def judge(model: Any = None, messages: Any = None, **_: Any) -> str:
        asked.append(messages)
        return _judge(model=model, messages=messages)

    litellm.STUB_RESPONDER = judge
    try:
        trajectory = [
            AssistantMessage(role="assistant", content="Hello {there}."),
            UserMessage(role="user", content="I need help."),
        ]
        NLAssertionsEvaluator.evaluate_nl_assertions(trajectory, ["Agent helps.", "It's 'done'."])
    finally:
        litellm.STUB_RESPONDER = _judge
    return [{"role": m["role"], "content": m["content"]} for m in asked[0]]


def _shown(runs: list[dict[str, Any]]) -> dict[str, Any]:
    _quicker_building()
    return {"runs": [_shown_run(run) for run in runs], "judge": _judge_prompt()}


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as handle:
        spec = json.load(handle)
    if "shown" in spec:
        shown = _shown(spec["shown"])
        with open(target, "w", encoding="utf-8") as handle:
            json.dump(shown, handle)
        return
    if spec["domain"] == "telecom":
        from tau2.domains.telecom.user_tools import TelecomUserTools

        _VPN_DEFAULT.append(deepcopy(TelecomUserTools.default_vpn_details))
    results = []
    for case in spec["cases"]:
        try:
            results.append(run_case(spec["domain"], spec.get("env_kwargs", {}), case))
        except Exception as exc:  # a case τ² cannot evaluate is a result too
            results.append(
                {
                    "id": case["id"],
                    "crash": f"{type(exc).__name__}: {exc}",
                    "trace": traceback.format_exc(limit=5),
                }
            )
    output: Any = results
    if "results" in spec:
        output = {"cases": results}
        output.update(_results_file(spec["domain"], spec.get("env_kwargs", {}), spec["results"]))
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(output, handle)


if __name__ == "__main__":
    main()
