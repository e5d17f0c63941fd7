"""Which hosts the viewer answers: the DNS-rebinding defence holds when it is exposed,
and what the server itself would answer without the security headers is answered with
them."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from deedbench.reports.cost import PriceTable
from deedbench.view import StoreReader, create_app
from deedbench.view.app import POLICY, SecurityHeaders
from deedbench.view.server import allowed_hosts, host_name
from reports._html_support import Reports
from view._server import LAUNCH, serving


def status(url: str, host: str) -> int:
    request = urllib.request.Request(url + "api/runs", headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_on_loopback_only_local_names_are_answered() -> None:
    """As before: 127.0.0.1, localhost and the loopback address bound (an IPv6 one as
    Host headers write it, in brackets)."""
    assert allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost"]
    assert allowed_hosts("::1") == ["127.0.0.1", "[::1]", "localhost"]
    assert allowed_hosts("127.0.0.1", ["viewer.internal"]) == [
        "127.0.0.1",
        "localhost",
        "viewer.internal",
    ]


def test_exposed_the_machines_names_and_those_given_are_answered() -> None:
    hosts = allowed_hosts("0.0.0.0", ["Viewer.Example.org", "*.lab.example"])
    machine = {host_name(socket.gethostname()), host_name(socket.getfqdn())}
    assert machine | {"0.0.0.0", "127.0.0.1", "localhost", "[::1]"} <= set(hosts)
    assert {"viewer.example.org", "*.lab.example"} <= set(hosts)
    assert "*" not in hosts


@pytest.mark.parametrize("text", ["*", "evil.com:80", "http://evil.com", "a b", "", "*.*.x"])
def test_what_is_no_host_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a host name or address"):
        host_name(text)


@pytest.fixture
def exposed(reports: Reports) -> Iterator[TestClient]:
    """The application as `--host 0.0.0.0 --expose --allowed-host viewer.example` makes it."""
    reader = StoreReader(reports.tac.path.parent / "runs.db", on_corrupt=pytest.fail)
    hosts = allowed_hosts("0.0.0.0", ["viewer.example", "*.lab.example"])
    app, catalog = create_app(reader, PriceTable.load(), hosts)
    with TestClient(app, base_url="http://127.0.0.1:7575") as client:
        yield client
    catalog.close()


@pytest.mark.parametrize(
    ("host", "code"),
    [
        ("evil.com", 400),
        ("evil.com:7575", 400),
        ("viewer.example.evil.com", 400),
        ("127.0.0.1:7575", 200),
        ("localhost:7575", 200),
        ("[::1]:7575", 200),
        (f"{socket.gethostname()}:7575", 200),
        ("viewer.example:7575", 200),
        ("a.lab.example", 200),
    ],
)
def test_exposed_a_rebound_name_is_refused(exposed: TestClient, host: str, code: int) -> None:
    answer = exposed.get("/api/runs", headers={"host": host})
    assert answer.status_code == code
    assert answer.headers["content-security-policy"] == POLICY
    assert ("mixed" in answer.text) == (code == 200)


def test_deedbench_view_expose_refuses_other_hosts(reports: Reports, tmp_path: Path) -> None:
    """The command itself, listening on every address: a page that rebinds evil.com to
    127.0.0.1 reads nothing, a name given with --allowed-host reads the runs."""
    store = reports.tac.path.parent / "runs.db"
    with serving(store, "--host", "0.0.0.0", "--expose", "--allowed-host", "viewer.example") as url:
        assert status(url, "evil.com") == 400
        assert status(url, f"evil.com:{url.rsplit(':', 1)[1].rstrip('/')}") == 400
        assert status(url, "viewer.example") == 200
        assert status(url, socket.gethostname()) == 200
        assert status(url, "127.0.0.1") == 200


def test_an_allowed_host_that_is_no_host_is_an_error(reports: Reports) -> None:
    store = reports.tac.path.parent / "runs.db"
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "view", "--store", str(store), "--allowed-host", "*"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "500"},
    )
    assert done.returncode == 2
    assert "--allowed-host '*' is not a host name or address" in done.stderr


def test_an_error_before_any_answer_is_answered_with_the_headers() -> None:
    """Without this, the server would answer it (uvicorn: a plain 500 with no policy)."""

    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("a bug")

    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    with pytest.raises(RuntimeError, match="a bug"):  # on to the server's log
        asyncio.run(SecurityHeaders(failing)(scope, receive, send))
    start = sent[0]
    assert start["status"] == 500
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    assert headers["content-security-policy"] == POLICY
    assert b"Traceback" not in sent[1]["body"]
