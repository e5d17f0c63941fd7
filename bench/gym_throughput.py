"""Rollout throughput from outside: deedbench's Gymnasium environment (and its async batch)
against τ²'s AgentGymEnv, on the same τ² tasks with the same scripted actions, scoring
included, model time excluded (no model is called: the user's model is a script on
both sides).

Each episode: the agent plays the task's gold agent actions, one tool call per step, then
ends with a text holding ###STOP###; the simulated user (τ²'s user simulator on τ²'s side,
deedbench's τ² user on deedbench's, each over a scripted model) answers the greeting with
one fixed line. τ²'s side runs in τ²'s own Python (bench/tau2_gym_driver.py): a fresh
AgentGymEnv per episode, as τ²'s gym makes one per task, timed from its construction to
the last step, whose return includes τ²'s evaluation. deedbench's side: one
`DeedbenchEnv` per domain (its one-time load, the domain's data, reported apart), each
episode from `reset` to the last step, scored in it; and the async batch, every episode
of the domain in flight at once on one event loop. Both sides' rewards are compared:
a speed figure on different answers would be no figure.

Throughput per core is steps per CPU-second of the process (all its threads); wall-clock
steps per second are printed beside it (τ²'s gym waits for its orchestrator thread in
10 ms polls, so its wall clock is mostly waiting).

    python bench/gym_throughput.py [--domains airline telecom] [--tasks 20] [--repeat 3]

τ²'s side needs the reference environment of tests/benchmarks/tau2/_reference.py and
gymnasium, which it does not have: the script installs gymnasium once into a folder of
its own (~/.cache/deedbench/tau2-gym, `pip install --target`), leaving that environment
as it is. Goal (issue 42): at least 20x τ²'s AgentGymEnv per core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.tau2 import _reference  # noqa: E402

from deedbench.engine import AgentContext  # noqa: E402
from deedbench.engine.seat import Turn  # noqa: E402
from deedbench.environment import Environment, action  # noqa: E402
from deedbench.environment.gym import DeedbenchEnv  # noqa: E402
from deedbench.records import EpisodeRecord, Message  # noqa: E402

USER_REPLY = "Hi, I need help with my account, please."
STOP = "Thank you, that is all done. ###STOP###"
GYM = Path.home() / ".cache" / "deedbench" / "tau2-gym"
USER = "llm:python/bench.gym_throughput:scripted_user"


def scripted_user(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> str:
    """The user's model on deedbench's side: the line τ²'s stand-in answers with."""
    return USER_REPLY


def _actions(task: Any) -> list[dict[str, Any] | str]:
    gold = [a for a in task.gold if a.requestor == "assistant"]
    calls: list[dict[str, Any] | str] = [
        {"name": a.name, "arguments": dict(a.arguments)} for a in gold
    ]
    return [*calls, STOP]


def _gym_path() -> Path:
    if not (GYM / "gymnasium").is_dir():
        python = _reference._venv()
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--target", str(GYM),
             "gymnasium==1.4.0", "cloudpickle", "farama-notifications"],
            check=True,
        )  # fmt: skip
    return GYM


def tau2_side(domain: str, episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    spec = {"domain": domain, "user_reply": USER_REPLY, "episodes": episodes}
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "spec.json", Path(folder) / "out.json"
        source.write_text(json.dumps(spec), encoding="utf-8")
        paths = [_reference.SOURCE, _reference.TAU2 / "offline" / "stubs", _gym_path()]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(map(str, paths)),
            "TAU2_DATA_DIR": str(_reference.DATA),
        }
        driver = Path(__file__).with_name("tau2_gym_driver.py")
        subprocess.run(
            [str(_reference._venv()), str(driver), str(source), str(target)],
            check=True, env=env, cwd=folder,
        )  # fmt: skip
        found: list[dict[str, Any]] = json.loads(target.read_text(encoding="utf-8"))
        return found


def gym_side(env: DeedbenchEnv, plays: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    results = []
    for task_id, actions in plays:
        wall, cpu = time.perf_counter(), time.process_time()
        env.reset(options={"sample_id": task_id})
        steps, reward, done = 0, 0.0, False
        for act in actions:
            _, reward, terminated, truncated, _ = env.step(act)
            steps += 1
            done = terminated or truncated
            if done:
                break
        results.append({"task_id": task_id, "steps": steps, "terminated": done,
                        "reward": reward, "wall": time.perf_counter() - wall,
                        "cpu": time.process_time() - cpu})  # fmt: skip
    return results


async def _batch(environment: Environment, plays: list[tuple[str, list[Any]]]) -> int:
    """Every episode in flight at once, each turn answered as soon as all are asked."""
    rollouts = [environment.open(task_id, epoch=n + 1) for n, (task_id, _) in enumerate(plays)]
    todo = [[action(a) for a in actions] for _, actions in plays]
    steps: list[Turn | EpisodeRecord] = list(await asyncio.gather(*(r.start() for r in rollouts)))
    taken = 0
    while live := [i for i, s in enumerate(steps) if isinstance(s, Turn) and todo[i]]:
        done = await asyncio.gather(*(rollouts[i].act(todo[i].pop(0)) for i in live))
        taken += len(live)
        for i, step in zip(live, done, strict=True):
            steps[i] = step
    return taken


def batch_side(environment: Environment, plays: list[tuple[str, list[Any]]]) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    steps = asyncio.run(_batch(environment, plays))
    return {"steps": steps, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def _rate(results: list[dict[str, Any]], clock: str) -> float:
    return sum(r["steps"] for r in results) / sum(r[clock] for r in results)


def measure(domain: str, tasks: int, repeat: int) -> dict[str, Any]:
    options = {"data": str(_reference.TAU2), "user": USER}
    clock = time.perf_counter()
    env = DeedbenchEnv(f"tau2-{domain}", options=options)
    load = time.perf_counter() - clock
    bench = env.environment.benchmark
    chosen = list(bench.tasks.values())[:tasks]
    plays = [(task.id, _actions(task)) for task in chosen]
    theirs = tau2_side(domain, [
        {"task_id": task_id, "actions": [a if isinstance(a, str) else json.dumps(a) for a in acts]}
        for task_id, acts in plays
    ])  # fmt: skip
    gym_side(env, plays)  # warm: each task's start and gold end state made once, as in training
    ours = [gym_side(env, plays) for _ in range(repeat)]
    env.close()
    agree = sum(
        t["reward"] == o["reward"] and t["steps"] == o["steps"]
        for t, o in zip(theirs, ours[0], strict=True)
    )
    environment = Environment(f"tau2-{domain}", options=options)
    batch_side(environment, plays)  # warm, as the gym's first pass
    batches = [batch_side(environment, plays) for _ in range(repeat)]
    asyncio.run(environment.aclose())
    gym_cpu = statistics.median(_rate(r, "cpu") for r in ours)
    gym_wall = statistics.median(_rate(r, "wall") for r in ours)
    batch_cpu = statistics.median(b["steps"] / b["cpu"] for b in batches)
    return {
        "domain": domain,
        "episodes": len(plays),
        "steps": sum(r["steps"] for r in theirs),
        "agree": agree,
        "load_s": load,
        "tau2_cpu": _rate(theirs, "cpu"),
        "tau2_wall": _rate(theirs, "wall"),
        "gym_cpu": gym_cpu,
        "gym_wall": gym_wall,
        "batch_cpu": batch_cpu,
        "x_gym": gym_cpu / _rate(theirs, "cpu"),
        "x_batch": batch_cpu / _rate(theirs, "cpu"),
        "tau2_eps": len(plays) / sum(r["cpu"] for r in theirs),
        "gym_eps": statistics.median(len(plays) / sum(x["cpu"] for x in r) for r in ours),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=["airline", "telecom"])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    missing = _reference.missing()
    if missing is not None:
        raise SystemExit(f"τ²'s code cannot run here: {missing}")
    print(
        f"{'domain':8} {'eps':>4} {'steps':>5} {'agree':>5} {'load s':>6} "
        f"{'τ² st/cpu-s':>11} {'τ² st/s':>8} {'gym st/cpu-s':>12} {'gym st/s':>8} "
        f"{'batch st/cpu-s':>14} {'x gym':>6} {'x batch':>7} {'τ² ep/cpu-s':>11} "
        f"{'gym ep/cpu-s':>12}"
    )
    for domain in args.domains:
        row = measure(domain, args.tasks, args.repeat)
        print(
            f"{row['domain']:8} {row['episodes']:>4} {row['steps']:>5} {row['agree']:>5} "
            f"{row['load_s']:>6.2f} {row['tau2_cpu']:>11.1f} {row['tau2_wall']:>8.1f} "
            f"{row['gym_cpu']:>12.0f} {row['gym_wall']:>8.0f} {row['batch_cpu']:>14.0f} "
            f"{row['x_gym']:>6.0f} {row['x_batch']:>7.0f} {row['tau2_eps']:>11.2f} "
            f"{row['gym_eps']:>12.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
