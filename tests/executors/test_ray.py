"""The Ray executor on a two-node cluster on 127.0.0.1: the same records as in one
process, episodes on both nodes, workers and nodes that die mid-run, calls capped per
endpoint across the cluster, agent modules shipped, and clear failures before a run starts.

Model agents talk to `deedbench.testing`'s fake server in this process, which the
cluster's workers (other processes on this machine) reach over loopback.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from deedbench.agents import is_model_spec, settings_for
from deedbench.benchmarks import load_benchmark
from deedbench.engine import Executor, InProcessExecutor, Launch, RunStore, new_run_config
from deedbench.errors import ExecutorError, RunAborted
from deedbench.executors.ray import RayExecutor
from deedbench.executors.ray_guard import RayNotInstalled, require_ray
from deedbench.executors.ray_pool import MAX_LOSSES, RayPool
from deedbench.executors.ray_shipping import modules_to_ship, py_modules
from deedbench.recipes import RunRecipe
from deedbench.records import AgentSettings, EpisodeRecord, GenerationParams, RunConfig
from deedbench.testing import FakeModelServer, Reply, tac_player

from ._agents import DOOMED

pytestmark = [
    pytest.mark.slow,  # a two-node Ray cluster: out of the fast tier
    pytest.mark.xdist_group("ray"),
    pytest.mark.skipif(sys.platform == "win32", reason="Ray's cluster utilities need POSIX"),
]

KEY = "sk-test-ray-0000-5678"


def config_of(
    run_id: str,
    benchmark: str,
    agent: str,
    *,
    url: str | None = None,
    samples: int | None = None,
    epochs: int = 1,
    data_hash: str | None = None,
) -> RunConfig:
    bench = load_benchmark(benchmark)
    settings: AgentSettings | dict[str, Any] = {}
    if is_model_spec(agent):
        params = GenerationParams(timeout=10).over(bench.generation_defaults)
        settings = settings_for(
            agent,
            AgentSettings(base_url=url, params=params, max_attempts=4, retry_initial_wait=0.05),
        )
    config = new_run_config(
        run_id=run_id,
        benchmark=bench,
        agent=agent,
        agent_params=settings,
        conditions=list(bench.conditions),
        epochs=epochs,
        seed=0,
        samples=bench.samples()[:samples],
    )
    return config.model_copy(update={"data_hash": data_hash}) if data_hash else config


def executed(
    config: RunConfig,
    store: Path,
    executor: Executor | RayPool,
    *,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    after: Callable[[], Any] | None = None,
) -> dict[tuple[str, str, int], EpisodeRecord]:
    """Run the config through the executor (prepared first) into its own store; given a
    pool, through a `RayExecutor` of 8 episodes on it, the pool started and closed here."""

    async def go() -> None:
        recipe = RunRecipe(config)
        pool = executor if isinstance(executor, RayPool) else None
        running = RayExecutor(8, pool=pool) if pool is not None else executor
        assert isinstance(running, Executor)
        with RunStore(store) as runs:
            launch = Launch(config, runs, recipe, on_record=on_record)
            if pool is not None:
                await pool.start()
            try:
                with launch.lock():
                    async with running:
                        await launch.prepare(running)
                        launch.record()
                        await launch.drive()
                        if after is not None:
                            await after()
            finally:
                if pool is not None:
                    await pool.close()

    asyncio.run(go())
    with RunStore(store) as runs:
        return {r.key: r for r in runs.episodes(config.run_id)}


def comparable(record: EpisodeRecord) -> dict[str, Any]:
    """Everything a record says, but when it ran and for how long."""
    return record.model_dump(exclude={"started_at", "duration_s"})


def bodies(server: FakeModelServer) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in server.requests]


@pytest.mark.parametrize(
    ("benchmark", "agent", "samples"),
    [
        ("tac", "baseline/random", 48),
        ("tac", "openai/gpt-4o", 12),
        ("retail", "baseline/oracle", 12),
        ("retail", "openai/gpt-4o", 3),
    ],
)
def test_records_equal_the_local_executors_record_for_record(
    ray_cluster: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    benchmark: str,
    agent: str,
    samples: int,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    player = tac_player if benchmark == "tac" else None  # "OK." to every turn otherwise
    with FakeModelServer("openai", player) as server:
        config = config_of("same", benchmark, agent, url=server.base_url, samples=samples)
        local = executed(config, tmp_path / "local.db", InProcessExecutor(8))
        pool = RayPool(workers=2, concurrency=8)
        remote = executed(config, tmp_path / "ray.db", pool)
    assert len(local) == config.planned_episodes
    assert remote.keys() == local.keys()
    for key, record in local.items():
        assert comparable(remote[key]) == comparable(record), key
    assert {r.status for r in remote.values()} == {"scored"}
    assert len(pool.finished_on) == 2, pool.finished_on  # episodes ran on both nodes


def test_a_worker_killed_mid_run_loses_only_its_episodes_and_pays_nothing_twice(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The episodes in flight on the killed worker run again on the other one with the
    answers they had already sent: the only requests sent twice are those in flight."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pool = RayPool(workers=2, concurrency=8)
    killed: list[tuple[int, int]] = []  # (pid, episodes it had in flight)
    seen: list[EpisodeRecord] = []

    def kill_after_ten(record: EpisodeRecord) -> None:
        """From the tenth record on, the first moment the worker has episodes in flight
        (records arrive in batches, and between a batch and the jobs that replace its
        episodes a worker can hold none)."""
        seen.append(record)
        victim = pool.members[0]
        if len(seen) >= 10 and not killed and victim.load > 0:
            killed.append((victim.pid, victim.load))
            os.kill(victim.pid, signal.SIGKILL)

    limits: list[dict[str, dict[str, int]]] = []

    async def look() -> None:
        """The limits actor's state once the slots given back are in (a worker sends its
        releases without waiting, so the last ones may still be on their way)."""
        for _ in range(100):
            limits.append(await pool.limit_state())
            if all(state["in_flight"] == 0 for state in limits[-1].values()):
                return
            await asyncio.sleep(0.1)

    def slow(body: dict[str, Any]) -> Reply:
        return replace(tac_player(body), delay=0.1)

    with FakeModelServer("openai", slow) as server:
        config = config_of("killed", "tac", "openai/gpt-4o", url=server.base_url, samples=24)
        stored = executed(
            config,
            tmp_path / "runs.db",
            pool,
            on_record=kill_after_ten,
            after=look,
        )
        sent = bodies(server)
    assert len(stored) == config.planned_episodes == 48
    assert {r.status for r in stored.values()} == {"scored"}
    [(pid, in_flight)] = killed
    assert in_flight > 0
    repeats = len(sent) - len(set(sent))
    assert 0 <= repeats <= in_flight  # at most the one call in flight of each lost episode
    assert max(sent.count(b) for b in set(sent)) <= 2
    with RunStore(tmp_path / "runs.db") as runs:
        assert len({e.key for r in stored.values() for e in runs.responses_for(r.seed)}) == len(
            set(sent)
        )  # every answer paid for is in the store
    [state] = limits[-1].values()
    assert state["in_flight"] == 0  # the dead worker's call slots were given back
    assert [m.pid for m in pool.members if m.pid == pid] == []  # Ray restarted it


def test_calls_per_endpoint_are_capped_across_the_cluster_for_every_run(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of 8 episodes in flight each, on two workers, against one endpoint capped
    at 3: never more than 3 calls in flight there; a 429 halves it for everyone."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def slow(body: dict[str, Any]) -> Reply:
        return replace(tac_player(body), delay=0.05)

    with FakeModelServer("openai", slow) as server:
        server.script(Reply(status=429, headers={"retry-after": "0"}))
        configs = [
            config_of(f"capped-{n}", "tac", "openai/gpt-4o", url=server.base_url, samples=12)
            for n in (1, 2)
        ]
        pool = RayPool(workers=2, concurrency=3)
        states: list[dict[str, dict[str, int]]] = []

        async def go() -> None:
            with RunStore(tmp_path / "runs.db") as runs:
                await pool.start()
                try:
                    executors = [RayExecutor(8, pool=pool) for _ in configs]
                    launches = [Launch(config, runs, RunRecipe(config)) for config in configs]
                    with ExitStack() as locks:  # the driver heartbeats the lock it holds
                        for launch, executor in zip(launches, executors, strict=True):
                            locks.enter_context(launch.lock())
                            launch.record()
                            await executor.start()
                            await launch.prepare(executor)
                        await asyncio.gather(*(launch.drive() for launch in launches))
                    for executor in executors:
                        await executor.close()
                    states.append(await pool.limit_state())
                finally:
                    await pool.close()

        asyncio.run(go())
        peak = server.max_in_flight
    assert 2 <= peak <= 3
    [state] = states[0].values()
    assert state["cap"] == 3 and state["lowest"] == 1  # one 429 halved 3 to 1 for all
    with RunStore(tmp_path / "runs.db") as runs:
        assert [runs.count(c.run_id) for c in configs] == [{"scored": 24}] * 2


def test_an_agent_module_that_is_not_installed_is_shipped_to_the_workers(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "deedbench_shipped_agent.py").write_text(
        "import os\n"
        "from deedbench.records import Message\n\n"
        "class Agent:\n"
        "    async def next_turn(self, messages, tools, context):\n"
        "        return Message(role='assistant', content=f'pid {os.getpid()}')\n"
    )
    monkeypatch.syspath_prepend(str(folder))  # importable here, not in the workers
    config = config_of("shipped", "tac", "python/deedbench_shipped_agent:Agent", samples=4)
    assert modules_to_ship([config]) == ["deedbench_shipped_agent"]
    with pytest.raises(ExecutorError, match=r"cannot import agent python/deedbench_shipped"):
        executed(config, tmp_path / "bare.db", RayExecutor(4, workers=1))
    stored = executed(
        config, tmp_path / "runs.db", RayExecutor(4, workers=2, ship=modules_to_ship([config]))
    )
    assert len(stored) == 8
    pids = {r.messages[-1].content for r in stored.values()}
    assert f"pid {os.getpid()}" not in pids


def test_python_agents_and_benchmarks_in_the_working_folder_are_shipped(
    working_folder: Path,
) -> None:
    """What `deedbench run --executor ray` uploads for specs beside the user, found
    without PYTHONPATH (no cluster needed: this is what the pool is given)."""
    (working_folder / "deedbench_here_ray_agent.py").write_text("class Agent: ...\n")
    (working_folder / "deedbench_here_ray_bench.py").write_text("class Bench: ...\n")
    config = config_of("here", "tac", "python/deedbench_here_ray_agent:Agent", samples=1)
    config = config.model_copy(update={"benchmark": "python/deedbench_here_ray_bench:Bench"})
    ship = modules_to_ship([config])
    assert ship == ["deedbench_here_ray_agent", "deedbench_here_ray_bench"]
    assert py_modules(ship) == [
        str((working_folder / "deedbench_here_ray_agent.py").resolve()),
        str((working_folder / "deedbench_here_ray_bench.py").resolve()),
    ]


def test_a_key_missing_everywhere_stops_the_run_before_it_is_recorded(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = config_of("nokey", "tac", "openai/gpt-4o", url="http://127.0.0.1:9/v1", samples=2)

    async def go() -> None:
        async with RayExecutor(2, workers=1) as executor:
            await executor.prepare(RunRecipe(config))

    with pytest.raises(RunAborted, match=r"OPENAI_API_KEY.*on Ray worker pid"):
        asyncio.run(go())


def test_data_that_differs_on_a_node_is_refused_when_the_run_is_prepared(
    ray_cluster: Any,
) -> None:
    config = config_of("elsewhere", "tac", "baseline/random", data_hash="sha256:" + "0" * 64)

    async def go() -> None:
        async with RayExecutor(2, workers=1) as executor:
            await executor.prepare(RunRecipe(config))

    with pytest.raises(ExecutorError, match=r"hashes to sha256:.* not sha256:0+: give every node"):
        asyncio.run(go())


def test_an_episode_that_kills_every_worker_it_runs_on_stops_the_run(
    ray_cluster: Any, tmp_path: Path
) -> None:
    """The doomed episode's worker dies each time it runs it: after MAX_LOSSES workers,
    the run stops (Lost) instead of killing workers for ever; what finished is stored."""
    config = config_of("doomed", "tac", "python/executors._agents:KillsOnDoomed", samples=6)
    executor = RayExecutor(2, workers=2, ship=modules_to_ship([config]))
    with pytest.raises(ExecutorError, match=f"was lost with {MAX_LOSSES} Ray workers"):
        executed(config, tmp_path / "runs.db", executor)
    with RunStore(tmp_path / "runs.db") as runs:
        stored = list(runs.episodes("doomed"))
    assert stored and {r.status for r in stored} == {"scored"}
    assert DOOMED not in {r.sample_id for r in stored if r.condition == "base"}


def test_a_node_that_dies_mid_run_loses_only_its_episodes(ray_cluster: Any, tmp_path: Path) -> None:
    """The second node is removed (its raylet and workers killed) halfway; its episodes
    run again on the head node. The node is added back for whatever runs next."""
    [node] = list(ray_cluster.worker_nodes)
    pool = RayPool(workers=2, concurrency=4)
    removed: list[bool] = []

    def remove_after_twelve(record: EpisodeRecord) -> None:
        if len(removed) == 0 and sum(pool.finished_on.values()) >= 12:
            removed.append(True)
            ray_cluster.remove_node(node, allow_graceful=False)

    config = config_of("node", "tac", "python/engine._agents:Slow", samples=24)
    pool.ship = modules_to_ship([config])
    try:
        stored = executed(config, tmp_path / "runs.db", pool, on_record=remove_after_twelve)
    finally:
        ray_cluster.add_node(num_cpus=1)
        ray_cluster.wait_for_nodes()
    assert removed == [True]
    assert len(stored) == 48
    assert {r.status for r in stored.values()} == {"scored"}


def test_without_ray_installed_the_executor_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from deedbench.cli.main import app

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    with pytest.raises(RayNotInstalled, match=re.escape("pip install 'deedbench[ray]'")):
        require_ray()
    store = tmp_path / "runs.db"
    args = ["run", "tac", "--agent", "baseline/random", "--limit", "1", "--store", str(store)]
    result = CliRunner().invoke(app, [*args, "--executor", "ray"])
    assert result.exit_code == 2, result.output
    assert "pip install 'deedbench[ray]'" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_study_on_ray_stores_what_it_stores_locally(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`deedbench study --executor ray`: a baseline, a turn function shipped to the
    workers and a model agent, record for record as in this process."""
    from typer.testing import CliRunner

    from deedbench.cli.main import app

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeModelServer("openai", tac_player) as server:
        study = tmp_path / "study.toml"
        study.write_text(
            'name = "s"\n\n[[benchmarks]]\nname = "tac"\nlimit = 3\nepochs = 1\n\n'
            '[[agents]]\nspec = "baseline/random"\n\n'
            '[[agents]]\nspec = "python/study._agents:decline"\n\n'
            f'[[agents]]\nname = "m"\nspec = "openai/gpt-4o"\nbase_url = "{server.base_url}"\n'
        )
        stored = {}
        for kind in ("local", "ray"):
            store = tmp_path / f"{kind}.db"
            args = ["study", str(study), "--store", str(store), "--executor", kind]
            result = CliRunner().invoke(app, [*args, "--concurrency", "4"])
            assert result.exit_code == 0, result.output
            with RunStore(store) as runs:
                stored[kind] = {
                    run_id: {r.key: comparable(r) for r in runs.episodes(run_id)}
                    for run_id in ("s-tac-random", "s-tac-decline", "s-tac-m")
                }
    assert [len(records) for records in stored["ray"].values()] == [6, 6, 6]
    assert stored["ray"] == stored["local"]


def test_a_driver_killed_with_sigkill_takes_the_local_cluster_it_started_along(
    tmp_path: Path,
) -> None:
    """`deedbench run --executor ray` that starts its own local cluster, killed with
    SIGKILL mid-run: within seconds no process of that cluster is left (Ray's agents and
    workers outlived the driver by about a minute before its watchdog)."""
    store = tmp_path / "runs.db"
    driver = _start_on_a_local_cluster(store, "--epochs", "1000")
    try:
        deadline = time.monotonic() + 180
        while not _stored(store) and driver.poll() is None:
            assert time.monotonic() < deadline, "no episode stored in time"
            time.sleep(0.1)
        assert driver.poll() is None, driver.communicate()[1].decode()[-2000:]
        cluster = _descendants(driver.pid)
        titles = [title for _, title in cluster.values()]
        assert sum("ray::Worker" in t for t in titles) == 2, titles
        assert any("raylet" in t for t in titles) and any("Agent" in t for t in titles), titles
        driver.kill()
        driver.wait()
        _all_gone(cluster, "the driver's SIGKILL")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()


def test_a_run_that_ends_on_a_local_cluster_it_started_ends_the_cluster_and_only_it(
    tmp_path: Path,
) -> None:
    """The same run ending by itself: its summary printed, exit 0 (the watchdog spares the
    driver, which keeps Ray's log files open), and no process of its cluster left."""
    driver = _start_on_a_local_cluster(tmp_path / "runs.db", "--epochs", "5")
    seen: dict[int, tuple[int | None, str]] = {}
    deadline = time.monotonic() + 180
    while driver.poll() is None:
        assert time.monotonic() < deadline, "the run did not end in time"
        # The first sight of a process keeps its title: a raylet read while it exits has an
        # empty command line, and overwriting would lose the evidence that it ran.
        seen = _descendants(driver.pid) | seen
        time.sleep(0.1)
    out, err = driver.communicate()
    assert driver.returncode == 0, err.decode()[-2000:]
    assert b"run id:" in out
    assert any("raylet" in title for _, title in seen.values()), seen  # its own cluster
    _all_gone(seen, "the run ended")


def _start_on_a_local_cluster(store: Path, *extra: str) -> subprocess.Popen[bytes]:
    """`deedbench run tac --executor ray` on a new local cluster of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "DEEDBENCH_STORE")}
    args = [sys.executable, "-c", "from deedbench.cli.main import main; main()", "run", "tac"]
    args += ["--agent", "baseline/random", "--executor", "ray", "--ray-address", "local"]
    args += ["--workers", "2", "--store", str(store), *extra]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _all_gone(processes: dict[int, tuple[int | None, str]], since: str) -> None:
    """Polls until none of these processes is alive; fails after 20 s."""
    deadline = time.monotonic() + 20
    alive = {pid: (start, t) for pid, (start, t) in processes.items() if start is not None}
    while left := {pid: t for pid, (start, t) in alive.items() if _started(pid) == start}:
        assert time.monotonic() < deadline, f"left 20 s after {since}: {_now(left)}"
        time.sleep(0.2)


def _now(processes: dict[int, str]) -> dict[int, str]:
    """What these processes run now (a title seen while a process was starting is empty)."""
    now = {}
    for pid, title in processes.items():
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except OSError:
            parent = "?"
        now[pid] = f"{title.strip()} (parent {parent})"
    return now


def _stored(store: Path) -> bool:
    """Whether the store holds a record yet, as a separate read-only connection sees it."""
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            return bool(db.execute("SELECT 1 FROM episodes LIMIT 1").fetchall())
    except sqlite3.Error:
        return False


def _started(pid: int) -> int | None:
    """When the process started (clock ticks since boot), None once it is gone or a zombie:
    with the pid, what tells a process from a later one that reuses its pid."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


def _descendants(pid: int) -> dict[int, tuple[int | None, str]]:
    """Every process below `pid`, with its start time and command line."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        found += frontier
    described = {}
    for child in found:
        try:
            title = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        described[child] = (_started(child), title.strip())
    return described
