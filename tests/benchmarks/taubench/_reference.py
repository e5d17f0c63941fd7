"""τ-bench's own code (../shared/taubench/src, commit 14bf0ef), run beside deedbench.

The differential tests call τ-bench's `Env.step`, `Env.calculate_reward` and its
tool-calling and ReAct agents' `solve` on the same inputs as deedbench. τ-bench
imports `litellm` at module level; no model is ever called here: a stand-in module
takes its place when litellm is not installed, and the agents' `completion` is
replaced by a script of model messages for each run.
"""

from __future__ import annotations

import hashlib
import json
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any, Protocol

import _shared

TAUBENCH = _shared.TAUBENCH
SOURCE = TAUBENCH / "src"

STOP = "###STOP###"
NO_TASK = {"user_id": "nobody", "actions": [], "instruction": "", "outputs": []}


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


# ---- τ-bench's answers, kept ------------------------------------------------------------
# τ-bench hashes its whole database with ``str()`` at every reward and every transfer, and
# reloads its data for every task: most of the differential tests' time. Its answers on a
# case depend only on its code, the data and the case, so they are kept on disk
# (`_shared.cached`, beside τ²'s), keyed by the content hash of τ-bench's source, the data's
# text and the case, and τ-bench runs again only when one of them changes.


class Data(Protocol):
    """Data both sides load: a fresh copy from `load`, its JSON texts by file in `text`."""

    text: dict[str, str]

    def load(self) -> dict[str, Any]: ...


@cache
def fingerprint() -> str:
    return _shared.tree_hash([SOURCE])


def _data_key(data: Data) -> str:
    return hashlib.sha256(json.dumps(data.text, sort_keys=True).encode()).hexdigest()


@dataclass
class Stepped:
    """τ-bench's answers to a sequence of calls from a fresh environment without a task:
    each call's observation (or the crash that ended it), the database's hash before a
    transfer (which ends the run), and at the end of a run that neither crashed nor
    transferred."""

    observations: list[str | Crash]
    before_transfer: str | None
    end: str | None


def calls(domain: str, data: Data, sequence: Sequence[tuple[str, dict[str, Any]]]) -> Stepped:
    """`step` on each call in turn, as τ-bench's run takes them, until a crash or a transfer."""
    key = {"what": "calls", "domain": domain, "data": _data_key(data), "calls": sequence}

    def compute() -> dict[str, Any]:
        env = environment(domain, data.load, NO_TASK, [])
        found: dict[str, Any] = {"observations": [], "before_transfer": None, "end": None}
        for name, kwargs in sequence:
            if name == "transfer_to_human_agents":
                found["before_transfer"] = env.get_data_hash()
            answer = step(env, name, json.loads(json.dumps(kwargs)))
            if isinstance(answer, Crash):
                found["observations"].append({"crash": answer.error})
                return found
            found["observations"].append(answer)
            if name == "transfer_to_human_agents":
                return found
        found["end"] = env.get_data_hash()
        return found

    kept = _shared.cached("taubench", fingerprint(), key, compute)
    observations: list[str | Crash] = [
        Crash(o["crash"]) if isinstance(o, dict) else o for o in kept["observations"]
    ]
    return Stepped(observations, kept["before_transfer"], kept["end"])


def solved(
    domain: str,
    data: Data,
    task: dict[str, Any],
    lines: Sequence[str],
    turns: Sequence[dict[str, Any]],
    *,
    takes_null: bool = False,
    react: bool = False,
) -> Solved:
    """`solve` on a fresh `environment` of `task` with the user's `lines`, kept."""
    key = {
        "what": "solve",
        "domain": domain,
        "data": _data_key(data),
        "task": task,
        "lines": list(lines),
        "turns": list(turns),
        "takes_null": takes_null,
        "react": react,
    }

    def compute() -> dict[str, Any]:
        env = environment(domain, data.load, task, lines, takes_null=takes_null)
        found = solve(env, turns, react=react)
        return json.loads(json.dumps(asdict(found)))

    return Solved(**_shared.cached("taubench", fingerprint(), key, compute))
