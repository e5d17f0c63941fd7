"""Every model of a run is a role (agent, user, judge, audit judge) whose settings are made
by one function, `role_settings`, from a `ModelChoice`: what each records, and what each
refuses, naming the role's own flag."""

from __future__ import annotations

import pytest

from deedbench.agents import ModelChoice, role_settings
from deedbench.errors import UsageError
from deedbench.records import AgentSettings, GenerationParams


@pytest.fixture(autouse=True)
def no_endpoint_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_a_judge_runs_at_temperature_0_with_its_own_endpoint_and_key_variable() -> None:
    choice = ModelChoice(base_url="http://127.0.0.1:9/v1", max_tokens=512, extra={"top_k": 5})
    settings = role_settings("judge", "openai-compatible/judge", choice)
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.params.temperature == 0.0  # τ²'s judge temperature, not given
    assert settings.params.max_tokens == 512 and settings.params.extra == {"top_k": 5}
    assert settings.api_key_env == "OPENAI_COMPATIBLE_API_KEY"  # the variable read, named


def test_the_agent_takes_the_benchmarks_defaults_and_no_temperature_of_its_own() -> None:
    agent = role_settings("agent", "openai/gpt-4o", None, defaults={"max_tokens": 64})
    assert agent.params.temperature is None and agent.params.max_tokens == 64
    given = role_settings("user", "openai/gpt-4o", ModelChoice(temperature=0.7))
    assert given.params.temperature == 0.7  # what is given wins over the role's default


@pytest.mark.parametrize(
    ("role", "flag"),
    [("agent", "--base-url"), ("user", "--user-base-url"), ("judge", "--judge-base-url")],
)
def test_a_server_without_a_base_url_is_refused_naming_the_roles_own_flag(
    role: str, flag: str
) -> None:
    with pytest.raises(UsageError, match=f"the {role}'s model openai-compatible/m needs a base "
                       f"URL: {flag} URL"):  # fmt: skip
        role_settings(role, "openai-compatible/m", ModelChoice())


def test_settings_no_provider_takes_are_refused() -> None:
    with pytest.raises(UsageError, match=r"temperature = -1\.0"):
        role_settings("judge", "openai/gpt-4o", ModelChoice(temperature=-1.0))


def test_the_endpoint_the_sdk_would_read_from_the_environment_is_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert role_settings("judge", "openai/gpt-4.1", None).base_url == "http://127.0.0.1:8/v1"
    given = ModelChoice(base_url="http://127.0.0.1:7/v1")
    assert role_settings("judge", "openai/gpt-4.1", given).base_url == "http://127.0.0.1:7/v1"


def test_given_holds_only_what_was_given() -> None:
    given = ModelChoice(temperature=0.5, base_url="http://x/v1").given()
    assert given.model_dump(exclude_unset=True) == {
        "base_url": "http://x/v1",
        "params": {"temperature": 0.5},
    }
    assert ModelChoice().is_empty() and not ModelChoice(extra={"a": 1}).is_empty()
    assert AgentSettings(params=GenerationParams(temperature=0.0)) == role_settings(
        "user", "python/mod:attr", None
    )


def test_the_python_example_of_docs_models_and_roles_runs_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "models-and-roles.md"
    [script] = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    exec(compile(script, str(page), "exec"), {})
    assert capsys.readouterr().out.split() == ["0.0", "OPENAI_COMPATIBLE_API_KEY"]
