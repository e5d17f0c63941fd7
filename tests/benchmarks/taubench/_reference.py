"""τ-bench's own code (../shared/taubench/src, commit 14bf0ef), run beside deedbench.

The differential tests call τ-bench's `Env.step`, `Env.calculate_reward` and its
tool-calling and ReAct agents' `solve` on the same inputs as deedbench. τ-bench
imports `litellm` at module level; no model is ever called here: a stand-in module
takes its place when litellm is not installed, and the agents' `completion` is
replaced by a script of model messages for each run.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# tests/benchmarks/taubench/<this file>: parents[3] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"
SOURCE = TAUBENCH / "src"

STOP = "###STOP###"


def available() -> bool:
    return (SOURCE / "tau_bench" / "envs" / "base.py").is_file() and (
        TAUBENCH / "retail" / "orders.json"
    ).is_file()


@cache
def tau() -> types.SimpleNamespace:
    """τ-bench's modules, imported once per process."""
    if "litellm" not in sys.modules:
        try:
            import litellm  # noqa: F401
        except ImportError:
            stand_in = types.ModuleType("litellm")
            stand_in.completion = _no_model  # type: ignore[attr-defined]
            sys.modules["litellm"] = stand_in
    if str(SOURCE) not in sys.path:
        sys.path.append(str(SOURCE))
    import tau_bench.agents.chat_react_agent as react
    import tau_bench.agents.tool_calling_agent as calling
    import tau_bench.envs.airline.tools as airline
    import tau_bench.envs.base as base
    import tau_bench.envs.retail.tools as retail
    import tau_bench.types as tau_types

    return types.SimpleNamespace(
        Env=base.Env,
        Action=tau_types.Action,
        Task=tau_types.Task,
        tools={"retail": retail.ALL_TOOLS, "airline": airline.ALL_TOOLS},
        calling=calling,
        react=react,
    )


def _no_model(**kwargs: Any) -> Any:
    raise RuntimeError("no model is called in these tests")


class ScriptedUser:
    """τ-bench's user interface, answering from a list: the first line opens.

    It refuses a reply that is not text, as a model-played user's API call does, unless
    `takes_null` (τ-bench's human user prints whatever it gets). While τ-bench scores
    (`scoring`), its gold replay hands the user each gold ``respond``: the answer is
    "ok." and uses no line, so a stop never comes from the scoring itself.
    """

    def __init__(self, lines: Sequence[str], *, takes_null: bool = False) -> None:
        self.lines = list(lines)
        self.said = 0
        self.takes_null = takes_null
        self.scoring = False
        self.last = ""

    def _next(self) -> str:
        line = self.lines[self.said] if self.said < len(self.lines) else "ok."
        self.said += 1
        self.last = line
        return line

    def reset(self, instruction: str | None = None) -> str:
        self.said = 0
        return self._next()

    def step(self, content: str) -> str:
        if self.scoring:
            return "ok."
        if not isinstance(content, str) and not (content is None and self.takes_null):
            raise TypeError(f"the user got {type(content).__name__} content")
        return self._next()

    def get_total_cost(self) -> float:
        return 0.0


def environment(
    domain: str,
    load: Callable[[], dict[str, Any]],
    task: dict[str, Any],
    lines: Sequence[str],
    *,
    takes_null: bool = False,
) -> Any:
    """τ-bench's Env for one task, over data from `load`, with a scripted user."""
    t = tau()
    env = t.Env(
        data_load_func=load,
        tools=t.tools[domain],
        tasks=[t.Task(**{k: task[k] for k in ("user_id", "actions", "instruction", "outputs")})],
        wiki="",
        rules=[],
        user_strategy="human",
        user_model="none",
        task_index=0,
    )
    env.terminate_tools = ["transfer_to_human_agents"]
    user = ScriptedUser(lines, takes_null=takes_null)
    env.user = user
    scores = env.calculate_reward

    def calculate_reward() -> Any:  # τ-bench's own, told to the user while it runs
        user.scoring = True
        try:
            return scores()
        finally:
            user.scoring = False

    env.calculate_reward = calculate_reward
    return env


@dataclass
class Crash:
    """τ-bench raised where it cannot go on (its run records reward 0 and the error)."""

    error: str


def step(env: Any, name: str, kwargs: dict[str, Any]) -> str | Crash:
    """One action through τ-bench's Env.step: the observation, or the crash."""
    try:
        return str(env.step(tau().Action(name=name, kwargs=kwargs)).observation)
    except Exception as exc:  # the crash itself is what is compared
        return Crash(f"{type(exc).__name__}: {exc}")


@dataclass
class Solved:
    """What τ-bench's run gives for one task: reward, messages, info (run.py's record).
    A run that raised keeps, in `partial`, the messages it had when it raised: the agent's
    messages so far, the one it was taking and the user's answer to it."""

    reward: float
    traj: list[dict[str, Any]]
    info: dict[str, Any]
    partial: list[dict[str, Any]] | None = None


def solve(env: Any, turns: Sequence[dict[str, Any]], *, react: bool = False) -> Solved:
    """τ-bench's tool-calling agent (or its ReAct agent) on scripted model messages,
    recorded as τ-bench's run.py records it (a run that raises: reward 0, no messages)."""
    t = tau()
    module = t.react if react else t.calling
    seen: dict[str, Any] = {}
    with _scripted(module, turns, seen):
        if react:
            agent = t.react.ChatReActAgent(
                tools_info=[tool.get_info() for tool in env.tools_map.values()],
                wiki="",
                model="scripted",
                provider="scripted",
                use_reasoning=True,
            )
        else:
            agent = t.calling.ToolCallingAgent(
                tools_info=env.tools_info, wiki="", model="scripted", provider="scripted"
            )
        try:
            result = agent.solve(env=env, task_index=0)
        except Exception as exc:
            partial = [*seen.get("messages", []), seen["answer"]] if "answer" in seen else []
            partial.append({"role": "user", "content": env.user.last})
            return Solved(0.0, [], {"error": str(exc)}, json.loads(json.dumps(partial)))
    return Solved(result.reward, result.messages, result.info)


class _Message:
    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message
        self.content = message.get("content")

    def model_dump(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.message))


class _Response:
    def __init__(self, message: dict[str, Any]) -> None:
        self.choices = [types.SimpleNamespace(message=_Message(message))]
        self._hidden_params = {"response_cost": 0.0}


FILLER = {"role": "assistant", "content": "Is there anything else I can do for you?"}


@contextmanager
def _scripted(module: Any, turns: Sequence[dict[str, Any]], seen: dict[str, Any]) -> Iterator[None]:
    """The agent's `completion` answers from `turns`; `seen` keeps the messages it was
    last given and its answer."""
    queue = list(turns)

    def completion(**kwargs: Any) -> _Response:
        answer = queue.pop(0) if queue else FILLER
        seen.update(messages=kwargs["messages"], answer=answer)
        return _Response(answer)

    original = module.completion
    module.completion = completion
    try:
        yield
    finally:
        module.completion = original
