"""Run a fake model endpoint in its own process (for benchmarks and manual checks).

    python -m deedbench.testing.serve --protocol openai --delay 0.2 --fault-rate 0.2

Prints the base URL on the first line, then serves until interrupted or terminated,
when it prints when the first request came and the last answer went (wall-clock
seconds: "first_request_at: T", "last_answer_at: T") and, last, how many requests it
received ("requests: N"). Running it apart from the client keeps the server's work off
the client's interpreter.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import threading
from dataclasses import replace
from typing import Any

from deedbench.testing.fake_server import FakeModelServer, Reply
from deedbench.testing.players import tac_player

__all__ = ["FAULTS", "main"]

FAULTS = (
    Reply(status=429, headers={"retry-after": "0.2"}, error_message="rate limited"),
    Reply(status=500, error_message="internal error"),
    Reply(status=503, error_message="overloaded"),
    Reply(drop_connection=True),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of requests that fail")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def respond(body: dict[str, Any]) -> Reply:
        fail = rng.random() < args.fault_rate
        fault = rng.choice(FAULTS)
        reply = fault if fail else tac_player(body)
        return replace(reply, delay=args.delay)

    server = FakeModelServer(args.protocol, respond).start()
    print(server.base_url, flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    stopped.wait()
    for name in ("first_request_at", "last_answer_at"):  # wall-clock seconds, or None
        print(f"{name}: {getattr(server, name)}", flush=True)
    print(f"requests: {server.hits}", flush=True)
    sys.exit(0)  # the server's thread is a daemon: it ends here, clients connected or not


if __name__ == "__main__":
    main()
