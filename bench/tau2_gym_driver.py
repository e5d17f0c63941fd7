"""τ²'s side of bench/gym_throughput.py: episodes stepped through τ²'s own AgentGymEnv.

Runs in τ²'s Python (the reference environment of tests/benchmarks/tau2/_reference.py,
τ²'s source and the litellm stand-in on the path, gymnasium from a folder of its own),
never in deedbench's. Reads a JSON spec, writes JSON results:

    {"domain": "airline", "user_reply": "...", "episodes": [{"task_id": "0",
      "actions": ["{\\"name\\": ..., \\"arguments\\": {...}}", "... ###STOP###"]}]}

Each episode: a fresh AgentGymEnv (τ²'s default max_steps), reset, every action stepped,
the user played by the litellm stand-in answering `user_reply` every time; timed from
the environment's construction to the last step's return (τ² evaluates the simulation in
that step), wall clock and this process's CPU time (all its threads).

Usage: python tau2_gym_driver.py SPEC.json OUT.json
"""

from __future__ import annotations

import json
import sys
import time

from loguru import logger

logger.remove()
import litellm  # noqa: E402  (the stand-in)
from tau2.gym.gym_agent import AgentGymEnv  # noqa: E402


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as source:
        spec = json.load(source)
    reply = spec["user_reply"]
    litellm.STUB_RESPONDER = lambda **_: reply
    results = []
    for episode in spec["episodes"]:
        wall, cpu = time.perf_counter(), time.process_time()
        env = AgentGymEnv(domain=spec["domain"], task_id=episode["task_id"], user_llm="stub")
        env.reset()
        steps, reward, terminated = 0, 0.0, False
        for action in episode["actions"]:
            _, reward, terminated, _, _ = env.step(action)
            steps += 1
            if terminated:
                break
        results.append(
            {
                "task_id": episode["task_id"],
                "steps": steps,
                "terminated": terminated,
                "reward": reward,
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
            }
        )
        litellm.STUB_CALLS.clear()
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main()
