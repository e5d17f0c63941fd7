"""The model provider table: deedbench's own three by name, each with its key's variable,
another package's through the ``deedbench.providers`` entry point (its installed form is
tests/test_registry.py's), the names refused with the valid ones listed, and no SDK
imported before an agent is made."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import deedbench.agents.providers as providers
from deedbench.agents import resolve_agent, settings_for
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.providers import GROUP, model_provider, provider_names
from deedbench.engine import plugins
from deedbench.errors import AgentSpecError
from deedbench.records import AgentSettings

ACME = Path(__file__).parent / "acme"


@pytest.fixture
def entries(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """The ``deedbench.providers`` entry points the table reads, as a test sets them (read
    afresh: the table reads them once per process)."""
    monkeypatch.syspath_prepend(str(ACME))
    points: list[EntryPoint] = []
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: points if group == GROUP else [])
    providers._installed.cache_clear()
    yield points
    providers._installed.cache_clear()


def test_deedbench_names_its_own_three_each_with_its_key_variable() -> None:
    assert provider_names()[:3] == ["openai", "openai-compatible", "anthropic"]
    assert [model_provider(name).key_env for name in provider_names()[:3]] == [
        "OPENAI_API_KEY",
        "OPENAI_COMPATIBLE_API_KEY",
        "ANTHROPIC_API_KEY",
    ]
    assert model_provider("anthropic").agent is AnthropicAgent
    settings = settings_for("anthropic/claude-x", AgentSettings())
    assert settings.api_key_env == "ANTHROPIC_API_KEY"
    assert settings_for("baseline/random", AgentSettings()).api_key_env is None


def test_an_unknown_name_lists_the_valid_ones(entries: list[EntryPoint]) -> None:
    entries.append(EntryPoint(name="acme", value="acme_models:ACME", group=GROUP))
    with pytest.raises(
        AgentSpecError,
        match=r"^unknown model provider 'nope'\. "
        r"Valid model providers: openai, openai-compatible, anthropic, acme$",
    ):
        model_provider("nope")


def test_an_entry_point_adds_a_provider_but_takes_no_name_of_deedbench(
    entries: list[EntryPoint],
) -> None:
    entries += [
        EntryPoint(name="acme", value="acme_models:ACME", group=GROUP),
        EntryPoint(name="openai", value="acme_models:ACME", group=GROUP),
    ]
    assert provider_names() == ["openai", "openai-compatible", "anthropic", "acme"]
    assert model_provider("acme").key_env == "ACME_API_KEY"
    assert model_provider("openai").key_env == "OPENAI_API_KEY"
    settings = settings_for("acme/a-1", AgentSettings())
    assert settings.api_key_env == "ACME_API_KEY"


@pytest.mark.parametrize(
    ("name", "target", "problem"),
    [
        ("acme", "no_such_acme_module:ACME", "cannot be loaded: No module named"),
        ("acme", "acme_models:Missing", "cannot be loaded: module 'acme_models' has no"),
        ("acme", "acme_models:AcmeAgent", "is no ModelProvider named 'acme'"),
        ("other", "acme_models:ACME", "is no ModelProvider named 'other'"),
    ],
)
def test_an_entry_point_that_is_no_provider_of_its_name_is_refused(
    entries: list[EntryPoint], name: str, target: str, problem: str
) -> None:
    entries.append(EntryPoint(name=name, value=target, group=GROUP))
    with pytest.raises(AgentSpecError, match=rf"^model provider '{name}' \({target}\) {problem}"):
        resolve_agent(f"{name}/model-1", None, AgentSettings(base_url="http://127.0.0.1:9/v1"))


def test_a_missing_sdk_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` now fails
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-missing-sdk-0000")
    with pytest.raises(
        AgentSpecError,
        match=r"^anthropic agents need the 'anthropic' package: "
        r"pip install 'deedbench\[anthropic\]'$",
    ):
        resolve_agent("anthropic/claude-x", None)


def test_listing_and_settings_import_no_sdk() -> None:
    script = (
        "import sys\n"
        "from deedbench.agents import agent_kinds, is_model_spec, settings_for\n"
        "from deedbench.records import AgentSettings\n"
        "agent_kinds()\n"
        "assert is_model_spec('anthropic/claude-x') and is_model_spec('openai/gpt-x')\n"
        "settings_for('openai-compatible/m', AgentSettings())\n"
        "print(sorted({'openai', 'anthropic'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
