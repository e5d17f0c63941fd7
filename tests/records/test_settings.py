"""Agent settings no provider takes are named before a run, never recorded unread: every
call with them would fail and every episode end as an infrastructure error."""

from __future__ import annotations

import math

import pytest

from deedbench.agents import settings_for
from deedbench.errors import UsageError
from deedbench.records import AgentSettings, GenerationParams


def test_settings_a_provider_takes_have_no_problem() -> None:
    params = GenerationParams(temperature=0.0, top_p=1.0, max_tokens=1, timeout=0.5)
    assert AgentSettings(params=params, max_retry_seconds=0).problems() == {}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("temperature", math.nan, "temperature = nan: a finite number of 0 or more"),
        ("temperature", -0.1, "temperature = -0.1: a finite number of 0 or more"),
        ("temperature", math.inf, "temperature = inf: a finite number of 0 or more"),
        ("top_p", 1.5, "top_p = 1.5: a finite number from 0 to 1"),
        ("timeout", -1.0, "timeout = -1.0: a finite number of seconds above 0"),
        ("timeout", 0.0, "timeout = 0.0: a finite number of seconds above 0"),
        ("timeout", math.inf, "timeout = inf: a finite number of seconds above 0"),
        ("max_tokens", 0, "max_tokens = 0: a whole number of 1 or more"),
    ],
)
def test_each_setting_no_provider_takes_is_named_with_what_it_takes(
    field: str, value: float, message: str
) -> None:
    settings = AgentSettings(params=GenerationParams(**{field: value}))
    assert settings.problems() == {field: message}
    with pytest.raises(UsageError) as raised:
        settings_for("openai/gpt-4o", settings)
    assert str(raised.value) == message


def test_retry_bounds_are_checked_and_every_problem_is_named_at_once() -> None:
    settings = AgentSettings(
        params=GenerationParams(temperature=math.nan, timeout=-1),
        max_attempts=0,
        max_retry_seconds=math.nan,
    )
    assert settings.problems() == {
        "temperature": "temperature = nan: a finite number of 0 or more",
        "timeout": "timeout = -1.0: a finite number of seconds above 0",
        "max_attempts": "max_attempts = 0: 1 or more",
        "max_retry_seconds": "max_retry_seconds = nan: a finite number of seconds, 0 or more",
    }


def test_a_recorded_run_with_such_settings_still_reads_back() -> None:
    """Checking is for new runs: what a store holds must always load."""
    text = AgentSettings(params=GenerationParams(timeout=-1)).model_dump_json()
    assert AgentSettings.model_validate_json(text).params.timeout == -1
