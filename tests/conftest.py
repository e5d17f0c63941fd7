"""Shared test settings: property tests are derandomized so CI runs are repeatable."""

import pytest
from hypothesis import settings

settings.register_profile("deedbench", derandomize=True, deadline=None)
settings.load_profile("deedbench")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--differential",
        type=int,
        default=None,
        metavar="N",
        help="τ-bench differential tests: N generated call sequences and conversations per "
        "domain instead of the default few hundred",
    )
