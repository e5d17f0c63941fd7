"""Model-agent concurrency: TAC episodes against a loopback server that answers after 200 ms.

The server runs in its own process (deedbench.testing.serve) and plays TAC in three
calls per episode (search, purchase, final reply). The client is deedbench's real
OpenAI-compatible agent, runner and store, at concurrency 100. Printed: wall time
against the ideal (calls x latency / concurrency), CPU per call of the client and of the
server, how many cores other processes kept busy meanwhile (on Linux; the machine is
shared), and the episode accounting; then the same run with 20% of requests failing
(429 with Retry-After, 500, 503, dropped connections), where every episode must end
scored or as an infrastructure error, none lost or doubled. Both are measured in one
process and in two worker processes sharing the run (`deedbench run --workers 2`), since
the SDK costs about 2 ms of client CPU per call and one process saturates one core. The
wall time includes preparing the run where it runs: importing the SDK in this process
the first time (the first one-process run), starting the workers for the others (their
fork server imports deedbench and the SDK, once per process); "ready" says when that ended.

    python bench/concurrency.py [--epochs 6] [--concurrency 100] [--latency 0.2] [--workers 1 2]
    python bench/concurrency.py --cli [--src OTHER/src] [--timeline]   # `deedbench run`

`--cli` times the command a user types instead, each worker count in a fresh process
(interpreter start, imports, workers, summary and all) against a clean server, with the
response cache on, as `deedbench run` has it by default; `--src` runs another checkout's
deedbench that way, for an A/B. From the server's clock it prints the time from process
start to the first request, the run phase (first request to last answer) against the
ideal, and the last answer to exit. `--timeline` adds, to each --cli line, where the time
from the last answer to the exit went: the episodes' executor closing, the event loop's
end, the closing summary, its tables, and the interpreter's exit (the command runs
through a probe that notes when each of those returns). `--per-call CALLS` prints the
client CPU per call of each protocol (OpenAI chat, Anthropic messages) split into the
SDK's and deedbench's own.

    python bench/concurrency.py --per-call 3000

Targets: within 1.2x of ideal, every episode recorded once (issue 3); with --cli, first
request within 0.6 s of process start, last answer to exit under 0.2 s, whole wall time
within 1.3x of ideal (issue 14).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from deedbench.benchmarks import load_benchmark
from deedbench.engine import InProcessExecutor, Launch, ProcessExecutor, RunStore, new_run_config
from deedbench.recipes import RunRecipe
from deedbench.records import AgentSettings, EpisodeRecord, GenerationParams

CALLS_PER_EPISODE = 3


def cpu_seconds(pid: int | str = "machine") -> float:
    """CPU seconds used so far by process `pid`, or by the whole machine; NaN off Linux."""
    try:
        if pid == "machine":
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
            ticks = sum(fields[:3]) + sum(fields[5:8])  # all but idle and iowait
        else:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = int(stat[11]) + int(stat[12])  # user and system
    except OSError:
        return math.nan
    return ticks / os.sysconf("SC_CLK_TCK")


def one_run(
    label: str,
    url: str,
    server_pid: int,
    store_path: Path,
    epochs: int,
    concurrency: int,
    workers: int,
) -> dict[str, float]:
    bench = load_benchmark("tac")
    settings = AgentSettings(
        base_url=url,
        params=GenerationParams(temperature=0.7, timeout=30),
        max_attempts=10,
        max_retry_seconds=120,
        retry_initial_wait=0.2,
        retry_max_wait=2.0,
    )
    config = new_run_config(
        run_id=label,
        benchmark=bench,
        agent="openai-compatible/fake",
        agent_params=settings.model_dump(),
        conditions=list(bench.conditions),
        epochs=epochs,
        seed=0,
        samples=bench.samples(),
    )
    # As `deedbench run` does: the executor prepares the recipe where episodes will run
    # (this process imports the SDK for one process; the workers' fork server imports it),
    # then the run is executed. Both are timed; `ready` is when the preparing ended.
    recipe = RunRecipe(config, cache=False)
    first: list[float] = []
    ready: list[float] = []

    workers_cpu: dict[int, float] = {}

    def note(record: EpisodeRecord) -> None:
        if not first:
            first.append(time.perf_counter())
        # The workers are the fork server's children, not this process's: their CPU is
        # read while they run (the last reading, at the last record, misses only their exit).
        for child in multiprocessing.active_children():
            if child.pid is not None:
                workers_cpu[child.pid] = cpu_seconds(child.pid)

    async def prepare_and_execute(store: RunStore) -> None:
        if workers == 1:
            executor: InProcessExecutor | ProcessExecutor = InProcessExecutor(concurrency)
        else:
            executor = ProcessExecutor(workers, concurrency, preload=recipe.modules)
        launch = Launch(config, store, recipe, on_record=note)
        await launch.run(executor, on_started=lambda: ready.append(time.perf_counter()))

    with RunStore(store_path) as store:
        store.create_run(config)
        machine, server = cpu_seconds(), cpu_seconds(server_pid)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        start, cpu = time.perf_counter(), time.process_time()
        asyncio.run(prepare_and_execute(store))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu += (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        cpu += sum(workers_cpu.values())
        machine, server = cpu_seconds() - machine, cpu_seconds(server_pid) - server
    db = sqlite3.connect(store_path)
    rows = db.execute(
        "SELECT COUNT(*), COUNT(DISTINCT sample_id || '|' || condition || '|' || epoch), "
        "SUM(status = 'scored'), SUM(status = 'error') FROM episodes WHERE run_id = ?",
        (label,),
    ).fetchone()
    db.close()
    return {
        "planned": config.planned_episodes,
        "records": rows[0],
        "distinct": rows[1],
        "scored": rows[2] or 0,
        "errors": rows[3] or 0,
        "seconds": elapsed,
        "ready": ready[0] - start,
        "first_record": first[0] - start,
        "cpu": cpu,
        "server_cpu": server,
        # Never below zero (the counters tick apart), and NaN where /proc is missing. The
        # fork server's one import of the SDK counts here (like this process's own import
        # for one process, it is not per call).
        "others_cores": max(machine - cpu - server, 0.0) / elapsed,
    }


# Runs `deedbench run` as the console entry does, noting (time.time()) when the episodes'
# driving, the asyncio run, the closing summary and its tables return, and the exit
# handlers start, in the file named by DEEDBENCH_TIMELINE. Wrappers stand in for the module
# attributes the command looks up when it runs; an older checkout lacking one is skipped.
TIMELINE_PROBE = """
import atexit, json, os, sys, time
import deedbench.cli.run as run_command, deedbench.engine as engine, deedbench.reports as reports
marks = []
def noting(label, function, is_async=False):
    async def noted_async(*args, **kwargs):
        try:
            return await function(*args, **kwargs)
        finally:
            marks.append((label, time.time()))
    def noted(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            marks.append((label, time.time()))
    return noted_async if is_async else noted
if hasattr(engine, "Launch"):
    engine.Launch.drive = noting("episodes done", engine.Launch.drive, is_async=True)
else:
    engine.execute = noting("episodes done", engine.execute, is_async=True)
run_command._Launch.go = noting("event loop done", run_command._Launch.go)
if hasattr(run_command._Launch, "summary"):
    run_command._Launch.summary = noting("summary", run_command._Launch.summary)
reports.render_summary = noting("tables", reports.render_summary)
def write():
    marks.append(("exit handlers", time.time()))
    with open(os.environ["DEEDBENCH_TIMELINE"], "w") as out:
        json.dump(marks, out)
atexit.register(write)
from deedbench.cli.main import main
main()
"""


def cli_run(
    url: str, store: Path, epochs: int, concurrency: int, workers: int, src: str | None,
    timeline: Path | None = None,
) -> tuple[int, float, float]:  # fmt: skip
    """`deedbench run` in a fresh process (through TIMELINE_PROBE if `timeline` names its
    file); its wall-clock start and end (the workers' fork server outlives the command, so
    its CPU is nobody's child to count) and the episodes it recorded."""
    entry = "from deedbench.cli.main import main; main()" if timeline is None else TIMELINE_PROBE
    command = [sys.executable, "-c", entry, "run", "tac"]
    command += ["--agent", "openai-compatible/fake", "--base-url", url, "--epochs", str(epochs)]
    command += ["--concurrency", str(concurrency), "--workers", str(workers)]
    command += ["--run-id", f"cli-{workers}w", "--store", str(store)]
    env = {**os.environ, **({"PYTHONPATH": src} if src else {})}
    if timeline is not None:
        env["DEEDBENCH_TIMELINE"] = str(timeline)
    # Output to files, not pipes: the command's exit is when a terminal's prompt returns.
    # (With --workers, a reader of its output pipes also waits for the fork server, which
    # holds them too, to finish its own exit.)
    with tempfile.TemporaryFile() as out:
        start = time.time()
        subprocess.run(command, check=True, stdout=out, stderr=out, env=env)
        end = time.time()
    with sqlite3.connect(store) as db:
        (scored,) = db.execute(
            "SELECT SUM(status = 'scored') FROM episodes WHERE run_id = ?", (f"cli-{workers}w",)
        ).fetchone()
    return scored or 0, start, end


def cli_report(
    workers: int, epochs: int, latency: float, concurrency: int, scored: int,
    start: float, end: float, served: dict[str, float],
) -> None:  # fmt: skip
    """What a user waits for, from the server's clock: start to first request, the run
    phase (first request to last answer), last answer to exit, against the ideal."""
    episodes = 96 * epochs
    ideal = episodes * CALLS_PER_EPISODE * latency / concurrency
    first, last = served["first_request_at"], served["last_answer_at"]
    print(
        f"cli-{workers}w: `deedbench run` of {episodes} episodes ({scored} scored), "
        f"wall {end - start:.2f} s, ideal {ideal:.2f} s, ratio {(end - start) / ideal:.2f}x; "
        f"start to first request {first - start:.2f} s, run phase {last - first:.2f} s "
        f"({(last - first) / ideal:.2f}x of ideal), last answer to exit {end - last:.2f} s"
    )


def timeline_report(timeline: Path, last_answer: float, end: float) -> None:
    """The exit's parts: each noted step's time after the one before, from the last answer."""
    before, parts = last_answer, []
    for label, at in [*json.loads(timeline.read_text()), ("process ended", end)]:
        parts.append(f"{label} +{1000 * (at - before):.0f} ms")
        before = at
    print("  after the last answer: " + ", ".join(parts))


def serve(
    latency: float, fault_rate: float, protocol: str = "openai"
) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "deedbench.testing.serve",
            "--protocol",
            protocol,
            "--delay",
            str(latency),
            "--fault-rate",
            str(fault_rate),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def served(out: str) -> dict[str, float]:
    """The server's closing lines: first_request_at and last_answer_at (where it has them:
    an older deedbench's server under PYTHONPATH prints only requests), requests."""
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    names = ("first_request_at", "last_answer_at", "requests")
    return {name: float(lines[name]) for name in names if lines.get(name, "None") != "None"}


def per_call_cpu(protocol: str, calls: int, in_flight: int) -> None:
    """Client CPU per call, split: the official SDK's `post` alone (request building,
    HTTP over its aiohttp transport, its error checks) against deedbench's whole call
    (`ModelAgent.next_turn`: the request from the conversation, the limiter, the first
    attempt, decoding and parsing into a Message). Both against a server in its own
    process answering at once, `in_flight` calls at a time; the difference is
    deedbench's own."""
    from deedbench.agents.anthropic_agent import AnthropicAgent
    from deedbench.agents.openai_agent import OpenAICompatibleAgent
    from deedbench.engine import AgentContext
    from deedbench.records import Message

    process, url = serve(0.0, 0.0, protocol)
    try:
        os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-not-a-key")
        kind = OpenAICompatibleAgent if protocol == "openai" else AnthropicAgent
        agent = kind("fake", base_url=url, params=GenerationParams(timeout=30))
        messages = [
            Message(role="system", content="You are a travel assistant."),
            Message(role="user", content="Find me a day trip in Seville."),
        ]
        context = AgentContext(sample_id="s", condition="base", epoch=1, seed=1)
        request = agent.build_request(messages, [], context)
        path = "/chat/completions" if protocol == "openai" else "/v1/messages"

        async def measure() -> dict[str, float]:
            async def sdk() -> None:
                await agent.client().post(path, body=request, cast_to=bytes)

            async def whole() -> None:
                await agent.next_turn(messages, [], context)

            cpu: dict[str, float] = {}
            for name, call in (("sdk", sdk), ("deedbench", whole)) * 2:  # second round kept
                slots = asyncio.Semaphore(in_flight)

                async def one(
                    call: Callable[[], Awaitable[None]] = call, slots: asyncio.Semaphore = slots
                ) -> None:
                    async with slots:
                        await call()

                before = time.process_time()
                await asyncio.gather(*(one() for _ in range(calls)))
                cpu[name] = (time.process_time() - before) / calls
            await agent.aclose()
            return cpu

        cpu = asyncio.run(measure())
    finally:
        process.terminate()
        process.communicate()
    own = cpu["deedbench"] - cpu["sdk"]
    print(
        f"per call, {protocol} ({calls} calls, {in_flight} in flight): client CPU "
        f"{1000 * cpu['deedbench']:.2f} ms, of which the SDK's post "
        f"{1000 * cpu['sdk']:.2f} ms ({cpu['sdk'] / cpu['deedbench']:.0%}) and deedbench's own "
        f"{1000 * own:.2f} ms ({own / cpu['deedbench']:.0%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="worker processes to measure (deedbench run --workers); each is its own run",
    )
    parser.add_argument("--cli", action="store_true", help="time `deedbench run` end to end")
    parser.add_argument("--src", help="with --cli: the src folder of the deedbench to run")
    parser.add_argument(
        "--timeline", action="store_true", help="with --cli: where the exit's time goes"
    )
    parser.add_argument(
        "--per-call",
        type=int,
        metavar="CALLS",
        help="measure client CPU per call (SDK vs deedbench's own), each protocol, CALLS calls",
    )
    args = parser.parse_args()
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            for workers in args.workers:
                process, url = serve(args.latency, 0.0)
                try:
                    store = Path(tmp) / f"cli-{workers}w.db"
                    timeline = Path(tmp) / f"cli-{workers}w.json" if args.timeline else None
                    done = cli_run(
                        url, store, args.epochs, args.concurrency, workers, args.src, timeline
                    )
                finally:
                    process.terminate()
                    out, _ = process.communicate()
                times = served(out)
                cli_report(workers, args.epochs, args.latency, args.concurrency, *done, times)
                if timeline is not None:
                    timeline_report(timeline, times["last_answer_at"], done[2])
        return
    if args.per_call:
        for protocol in ("openai", "anthropic"):
            per_call_cpu(protocol, args.per_call, args.concurrency)
        return
    runs = [
        (f"{kind}-{workers}w", fault_rate, workers)
        for workers in args.workers
        for kind, fault_rate in (("clean", 0.0), ("faults-20pct", 0.2))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for label, fault_rate, workers in runs:
            process, url = serve(args.latency, fault_rate)
            try:
                result = one_run(
                    label,
                    url,
                    process.pid,
                    Path(tmp) / f"{label}.db",
                    args.epochs,
                    args.concurrency,
                    workers,
                )
            finally:
                process.terminate()
                out, _ = process.communicate()
            result["calls"] = served(out)["requests"]  # every attempt, as served
            episodes = result["planned"]
            ideal = episodes * CALLS_PER_EPISODE * args.latency / args.concurrency
            accounted = result["scored"] + result["errors"]
            once = result["records"] == result["distinct"] == episodes == accounted
            print(
                f"{label}: {episodes:.0f} episodes, {result['calls']:.0f} calls, "
                f"wall {result['seconds']:.2f} s (ready after {result['ready']:.2f} s, first "
                f"record after {result['first_record']:.2f} s), ideal {ideal:.2f} s, "
                f"ratio {result['seconds'] / ideal:.2f}x, CPU per call: client "
                f"{1000 * result['cpu'] / result['calls']:.2f} ms, server "
                f"{1000 * result['server_cpu'] / result['calls']:.2f} ms; other processes "
                f"{result['others_cores']:.1f} cores; "
                f"records {result['records']:.0f} "
                f"(distinct {result['distinct']:.0f}), scored {result['scored']:.0f}, "
                f"infrastructure errors {result['errors']:.0f}; "
                + ("every episode recorded once" if once else "ACCOUNTING MISMATCH")
            )


if __name__ == "__main__":
    main()
