"""The open registries, end to end: a benchmark from another package (tests/fixtures/tinybench)
is found through the ``deedbench.benchmarks`` entry point by `deedbench list`, `run`,
`report` and `inspect eval`, each in a fresh process whose path has the installed package;
``python/MODULE:ATTR`` names a benchmark class on the path; and a model provider from
another package (tests/agents/acme) is found through the ``deedbench.providers`` entry
point, runs a run against a server on 127.0.0.1 and reads its own key's variable.

"Installed" is what pip leaves in a site folder: the module and a ``*.dist-info`` with
METADATA and entry_points.txt, the entry points taken from the package's pyproject.toml.
(pip itself cannot build it offline here: the venv has no `wheel` for setuptools.)"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import deedbench.agents.providers as providers
from deedbench.agents import agent_kinds, resolve_agent, settings_for
from deedbench.benchmarks import benchmark_class, benchmarks, load_benchmark
from deedbench.engine import InProcessExecutor, Launch, RunStore, plan_run
from deedbench.errors import AgentSpecError, BenchmarkError
from deedbench.recipes import RunRecipe
from deedbench.records import AgentSettings
from deedbench.testing import FakeModelServer, tac_player

PACKAGE = Path(__file__).parent / "fixtures" / "tinybench"
PROVIDER = Path(__file__).parent / "agents" / "acme"
BIN = Path(sys.executable).parent
ACME_KEY = "acme-key-that-is-never-written-0042"


def install(package: Path, target: Path) -> Path:
    """`package` installed in the site folder `target`, as pip installs it."""
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    for module in package.glob("*.py"):
        shutil.copy(module, target)
    info = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
            for group, points in groups.items()
        )
    )
    return target


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tinybench installed in a site folder of its own."""
    return install(PACKAGE, tmp_path_factory.mktemp("site"))


def _run(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": str(site), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("INSPECT_LOG_DIR", None)
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_an_installed_package_adds_a_benchmark_to_list_run_and_report(
    site: Path, tmp_path: Path
) -> None:
    deedbench = str(BIN / "deedbench")
    listed = _run(site, deedbench, "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "say the secret word" in listed.stdout and "baseline/knower" in listed.stdout
    assert "count" in listed.stdout and "how many words (1-4)" in listed.stdout

    unknown = _run(site, deedbench, "run", "nope", "--agent", "baseline/x", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "tinybench" in unknown.stdout + unknown.stderr  # valid names include the package's

    store = str(tmp_path / "runs.db")
    ran = _run(
        site, deedbench, "run", "tinybench", "--agent", "baseline/knower", "-T", "count=3",
        "--run-id", "tiny", "--store", store, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "starting run tiny: 6 of 6 episodes to run" in ran.stdout

    reported = _run(site, deedbench, "report", "tiny", "--json", "--store", store, cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    summary = json.loads(reported.stdout)
    assert summary["run"]["benchmark"] == "tinybench"
    assert summary["run"]["benchmark_options"] == {"count": "3"}
    assert [c["condition"] for c in summary["conditions"]] == ["plain", "hinted"]
    for condition in summary["conditions"]:
        rate = condition["overall"]["metrics"]["right"]
        assert (rate["n"], rate["value"]) == (3, 1.0)
        assert condition["overall"]["outcomes"] == {"right": 3}


@pytest.mark.slow  # a fresh interpreter imports Inspect
def test_inspect_finds_the_installed_benchmark_as_a_generated_task(
    site: Path, tmp_path: Path
) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = tmp_path / "logs"
    evaluated = _run(
        site, str(BIN / "inspect"), "eval", "deedbench/tinybench_hinted", "--model",
        "deedbench/refuse", "-T", "count=1", "--log-dir", str(logs), "--display", "none",
        cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.eval.task == "deedbench/tinybench_hinted"
    assert log.eval.metadata == {
        "benchmark": "tinybench", "condition": "hinted", "options": {"count": "1"},
    }  # fmt: skip
    assert log.samples is not None and [s.id for s in log.samples] == ["word-apple"]
    # the refusing baseline never calls the tool: tinybench's own scorer says wrong
    assert log.samples[0].scores is not None
    assert log.samples[0].scores["deedbench"].answer == "wrong"


def test_python_module_attr_names_a_benchmark_class_on_the_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(PACKAGE))
    cls = benchmark_class("python/tinybench:TinyBench")
    assert cls.name == "python/tinybench:TinyBench"  # recorded so, to resume and report by
    assert cls(None).values == {"count": 2}
    planned = plan_run(cls(None), "baseline/knower")
    assert planned.benchmark == "python/tinybench:TinyBench"
    assert planned.run_id.startswith("tinybench-")  # its own name, not the class's
    with pytest.raises(BenchmarkError, match="is not a Benchmark class"):
        benchmark_class("python/tinybench:Answers")
    with pytest.raises(BenchmarkError, match="cannot be loaded"):
        benchmark_class("python/no_such_module_here:X")


def test_a_python_benchmark_in_the_working_folder_needs_no_pythonpath(
    working_folder: Path,
) -> None:
    (working_folder / "deedbench_here_bench.py").write_text(
        (PACKAGE / "tinybench.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    cls = benchmark_class("python/deedbench_here_bench:TinyBench")
    assert cls.name == "python/deedbench_here_bench:TinyBench"
    assert cls(None).values == {"count": 2}


def test_deedbench_registers_its_own_four_first() -> None:
    assert list(benchmarks())[:4] == ["tac", "retail", "taubench-retail", "taubench-airline"]
    with pytest.raises(BenchmarkError, match=r"Valid benchmarks: retail, tac, .*python/MODULE"):
        benchmark_class("nope")


@pytest.fixture
def acme(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Acme's provider installed on this process's path, and its key in the environment
    (the provider table read afresh: it reads the installed ones once per process)."""
    monkeypatch.syspath_prepend(str(install(PROVIDER, tmp_path_factory.mktemp("acme"))))
    monkeypatch.setenv("ACME_API_KEY", ACME_KEY)
    providers._installed.cache_clear()
    yield
    providers._installed.cache_clear()


def test_an_installed_provider_is_listed_after_deedbench_own(acme: None) -> None:
    assert agent_kinds()[-6:] == [
        "openai/MODEL", "openai-compatible/MODEL", "anthropic/MODEL", "acme/MODEL",
        "a2a/URL", "python/MODULE:ATTRIBUTE",
    ]  # fmt: skip
    with pytest.raises(AgentSpecError, match=r"Valid agents: .*anthropic/MODEL, acme/MODEL, a2a"):
        resolve_agent("nope/x", None)
    with pytest.raises(AgentSpecError, match=r"^acme agents need --base-url"):
        resolve_agent("acme/acme-1", None)


def test_an_installed_provider_runs_a_run_with_its_own_key(acme: None, tmp_path: Path) -> None:
    """Rebuilt from the run's record, as every executor builds it; the key is sent to the
    provider and written nowhere."""
    store_file = tmp_path / "runs.db"
    tac = load_benchmark("tac")
    with FakeModelServer("openai", tac_player) as server:
        settings = settings_for("acme/acme-1", AgentSettings(base_url=server.base_url))
        config = plan_run(tac, "acme/acme-1", settings=settings, limit=1, epochs=1, run_id="a")
        with RunStore(store_file) as store:
            launch = Launch(config, store, RunRecipe(config, benchmark=tac))
            asyncio.run(launch.run(InProcessExecutor(2, lookup=store.response)))
            assert store.count("a") == {"scored": 2}  # 1 sample x 2 conditions
            recorded = store.get_run("a")
    assert recorded is not None and recorded.agent_settings is not None
    assert recorded.agent_settings.api_key_env == "ACME_API_KEY"
    assert {h["authorization"] for h in server.headers} == {f"Bearer {ACME_KEY}"}
    assert server.requests[0]["model"] == "acme-1"
    for written in tmp_path.iterdir():
        assert ACME_KEY.encode() not in written.read_bytes(), written
