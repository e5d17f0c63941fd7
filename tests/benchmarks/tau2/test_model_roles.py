"""A τ² set-up as a researcher makes it: the agent, the simulated user and τ²'s NL judge,
all three models on one local OpenAI-compatible server, through the real CLI.

The server (`FakeModelServer` on 127.0.0.1) serves three models, each played by a script
(`by_model`): an agent that looks something up and answers, a customer that states its
problem and stops, a judge that answers in τ²'s verdict format. Each test checks what a
user would: the run starts from `deedbench run` and from a study file, each model's
settings are recorded (its endpoint, its key's variable, temperature 0 for the user and
the judge), and every report's cost counts all three roles at the prices given.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.records import RunConfig
from deedbench.testing import FakeModelServer, by_model, tau2_agent, tau2_judge, tau2_user

from . import _reference

DATA = _reference.TAU2  # a tau2-bench checkout's layout; the test fails where it is missing
TASKS = "0,2,3"  # task 0 has no NL assertion; 2 and 3 are judged
JUDGED = 2
PRICES = {
    "openai-compatible/agent": {"input": 1.0, "output": 2.0},
    "openai-compatible/user": {"input": 0.5, "output": 1.0},
    "openai-compatible/judge": {"input": 3.0, "output": 4.0},
}
ROLES = {"agent", "user", "judge"}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeModelServer]:
    players = {"agent": tau2_agent, "user": tau2_user, "judge": tau2_judge}
    with FakeModelServer("openai", by_model(players)) as running:
        yield running


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "DEEDBENCH_STORE", "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TAU2_DATA_DIR", str(DATA / "data"))
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture(scope="module")
def prices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prices") / "prices.json"
    path.write_text(json.dumps({"as_of": "test", "models": PRICES}))
    return path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def role_flags(url: str) -> list[str]:
    return [
        "--agent", "openai-compatible/agent", "--base-url", url,
        "--user", "openai-compatible/user", "--user-base-url", url,
        "--judge", "openai-compatible/judge", "--judge-base-url", url,
    ]  # fmt: skip


def stored_config(store: Path, run_id: str) -> RunConfig:
    with closing(sqlite3.connect(store)) as db:
        (text,) = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return RunConfig.model_validate_json(text)


def requests_by_model(server: FakeModelServer, since: int) -> Counter[str]:
    return Counter(str(body["model"]) for body in server.requests[since:])


def check_costs(store: Path, run_id: str, prices: Path, calls: Counter[str]) -> None:
    """`report --json`, `runs --json`, `compare --json`, the HTML report and the terminal
    summary each count the calls of all three roles, at the prices given."""
    result = invoke("report", run_id, "--json", "--store", str(store), "--prices", str(prices))
    assert result.exit_code == 0, result.output
    costs = {c["role"]: c for c in json.loads(result.stdout)["costs"]}
    assert set(costs) == ROLES
    total = 0.0
    for role, cost in costs.items():
        usage, price = cost["usage"], PRICES[f"openai-compatible/{role}"]
        assert usage["calls"] == calls[role], role  # every call the server answered
        expected = (
            usage["input_tokens"] * price["input"] + usage["output_tokens"] * price["output"]
        ) / 1e6
        assert cost["cost_usd"] == pytest.approx(expected), role
        total += expected
    assert costs["judge"]["cost_usd"] > 0
    listed = invoke("runs", "--json", "--store", str(store), "--prices", str(prices))
    [row] = [r for r in json.loads(listed.stdout) if r["run_id"] == run_id]
    assert row["cost_usd"] == pytest.approx(total)
    assert row["model_calls"] == sum(calls.values())
    compared = invoke("compare", run_id, "--json", "--store", str(store), "--prices", str(prices))
    assert {c["role"] for c in json.loads(compared.stdout)["costs"][run_id]} == ROLES
    text = invoke("report", run_id, "--store", str(store), "--prices", str(prices)).output
    assert f"judge openai-compatible/judge: {calls['judge']} calls" in " ".join(text.split())
    html = store.parent / f"{run_id}.html"
    written = invoke("report", run_id, "--html", str(html), "--store", str(store))
    assert written.exit_code == 0, written.output
    assert "<td>judge</td><td>openai-compatible/judge</td>" in html.read_text()


def check_recorded(config: RunConfig, url: str) -> None:
    roles = config.role_settings
    assert set(roles) == ROLES
    for role, (spec, settings) in roles.items():
        assert spec == f"openai-compatible/{role}"
        assert settings.base_url == url  # each role's own endpoint, recorded
        assert settings.api_key_env == "OPENAI_COMPATIBLE_API_KEY"  # the variable, no key
    assert roles["user"][1].params.temperature == 0.0  # τ²'s user and judge temperature
    assert roles["judge"][1].params.temperature == 0.0
    assert config.benchmark_options["judge"] == "openai-compatible/judge"
    assert config.sample_ids == TASKS.split(",")


def test_a_run_with_agent_user_and_judge_on_one_local_server_counts_all_three(
    server: FakeModelServer, prices: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # over 3 s: the acceptance run itself (τ²'s retail data read, three models served), then
    # six commands that each show its cost, as a user would type them (8.7 s measured at a
    # load average of 11 on 2 cores, this module's first test paying the CLI's imports)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-roles-secret-4321")
    store, before = tmp_path / "runs.db", server.hits
    result = invoke(
        "run", "tau2-retail", *role_flags(server.base_url), "-T", f"tasks={TASKS}",
        "--run-id", "roles", "--store", str(store), "--prices", str(prices),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    calls = requests_by_model(server, before)
    assert calls["judge"] == JUDGED  # one call per judged task, each episode ended by its user
    assert all(
        body["temperature"] == 0.0
        for body in server.requests[before:]
        if body["model"] in ("judge", "user")
    )
    check_recorded(stored_config(store, "roles"), server.base_url)
    for written in store.parent.glob(f"{store.name}*"):  # the store and any log beside it
        assert b"sk-roles-secret-4321" not in written.read_bytes()
    summary = " ".join(result.output.split())
    assert f"judge openai-compatible/judge: {JUDGED} calls" in summary  # the closing summary
    check_costs(store, "roles", prices, calls)


def test_the_same_run_from_a_study_file(
    server: FakeModelServer, prices: Path, tmp_path: Path
) -> None:
    # over 3 s: the acceptance run from a study file (τ²'s retail data read, three models
    # served), then the same cost checks (3.4 s measured at a load average of 11 on 2 cores)
    url = server.base_url
    study = tmp_path / "study.toml"
    study.write_text(
        f'name = "s"\n\n[[benchmarks]]\nname = "tau2-retail"\nsamples = {TASKS.split(",")}\n\n'
        f'[[agents]]\nname = "a"\nspec = "openai-compatible/agent"\nbase_url = "{url}"\n\n'
        f'[user]\nspec = "openai-compatible/user"\nbase_url = "{url}"\n\n'
        f'[judge]\nspec = "openai-compatible/judge"\nbase_url = "{url}"\n'
    )
    store, before = tmp_path / "runs.db", server.hits
    result = invoke("study", str(study), "--store", str(store), "--prices", str(prices))
    assert result.exit_code == 0, result.output
    calls = requests_by_model(server, before)
    assert calls["judge"] == JUDGED
    check_recorded(stored_config(store, "s-tau2-retail-a"), url)
    check_costs(store, "s-tau2-retail-a", prices, calls)


def test_a_resume_compares_each_roles_settings_with_the_record(
    server: FakeModelServer, tmp_path: Path
) -> None:
    store = tmp_path / "runs.db"
    first = ("run", "tau2-retail", *role_flags(server.base_url), "-T", "tasks=2")
    assert invoke(*first, "--run-id", "r", "--store", str(store)).exit_code == 0
    again = invoke(
        "run", "tau2-retail", "--run-id", "r", "--store", str(store),
        "--judge-temperature", "0.5", "--user-max-tokens", "7",
    )  # fmt: skip
    assert again.exit_code == 2
    said = " ".join(again.output.split())
    assert "judge temperature 0.0 (got 0.5)" in said and "user max_tokens None (got 7)" in said
    same = invoke("run", "tau2-retail", "--run-id", "r", "--store", str(store),
                  "--judge-temperature", "0", "--judge", "openai-compatible/judge")  # fmt: skip
    assert same.exit_code == 0, same.output  # what agrees with the record resumes


@pytest.mark.parametrize("dry", [True, False])
def test_a_judge_without_its_base_url_is_refused_by_the_run_and_its_dry_run(
    server: FakeModelServer, tmp_path: Path, dry: bool
) -> None:
    store, before = tmp_path / "runs.db", server.hits
    result = invoke(
        "run", "tau2-retail", "--agent", "baseline/oracle", "-T", "tasks=2",
        "-T", "judge=openai-compatible/judge", "--base-url", server.base_url,
        "--store", str(store), *(["--dry-run"] if dry else []),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "the judge's model openai-compatible/judge needs a base URL: --judge-base-url" in (
        " ".join(result.output.split())
    )
    assert server.hits == before
    assert not store.exists() if dry else _runs(store) == 0  # nothing recorded


def test_a_dry_run_builds_every_model_as_the_run_does(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key the judge reads from a variable that is not set stops the run (exit 1); the
    dry run says so too, before anything is written."""
    monkeypatch.delenv("NO_SUCH_JUDGE_KEY", raising=False)
    store, url = tmp_path / "runs.db", server.base_url
    args = [
        "run", "tau2-retail", "--agent", "openai-compatible/agent", "--base-url", url,
        "--judge", "openai/gpt-4.1", "--judge-api-key-env", "NO_SUCH_JUDGE_KEY",
        "-T", "tasks=2", "--store", str(store),
    ]  # fmt: skip
    for dry in (["--dry-run"], []):
        result = invoke(*args, *dry)
        assert result.exit_code == 1, result.output
        assert "set the environment variable NO_SUCH_JUDGE_KEY" in result.output
    assert not store.exists() or _runs(store) == 0


def _runs(store: Path) -> int:
    with closing(sqlite3.connect(store)) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM runs").fetchone()
        return int(count)
