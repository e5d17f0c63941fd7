"""The viewer over the HTML report tests' store (tests/reports/_html_support.py: TAC runs
with every outcome and provider errors, service-desk runs, a model run with an audit, a
run full of markup), driven in process through Starlette's test client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from deedbench import secrets as secrets_module
from deedbench.reports.cost import PriceTable
from deedbench.view import StoreReader, create_app
from reports._html_support import Reports, build_reports


@pytest.fixture(scope="session")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    return build_reports(tmp_path_factory.getbasetemp() / "html-reports")


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def client(reports: Reports, warnings: list[str]) -> Iterator[TestClient]:
    reader = StoreReader(reports.tac.path.parent / "runs.db", on_corrupt=warnings.append)
    app, catalog = create_app(reader, PriceTable.load())
    with TestClient(app, base_url="http://127.0.0.1:7575") as test_client:
        yield test_client
    catalog.close()


@pytest.fixture(autouse=True)
def own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private registry of secrets per test: what one test registers stays there."""
    monkeypatch.setattr(secrets_module, "_SECRETS", set())
