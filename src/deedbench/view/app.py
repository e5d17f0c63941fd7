"""The viewer's ASGI application: its routes, and the rules every answer follows.

- Every answer carries a Content-Security-Policy that lets the page load only the
  viewer's own script, styles and API (`'self'`; inline styles as the HTML report
  has them), no frame, form or plugin, plus `nosniff`, no referrer and no caching.
- Requests must name this server by a host it serves (`server.allowed_hosts`: 127.0.0.1,
  localhost and the address bound; exposed, the machine's names too; and any
  `--allowed-host`): a web page elsewhere that rebinds its name to this address (DNS
  rebinding) gets a 400, never a transcript.
- A request for nothing in the store, or a malformed one, is a 4xx with one line of
  reason (JSON under /api/, a small page elsewhere); a store that cannot be read is a
  503 saying why; no answer ever carries a traceback. An error that escapes the
  application before it answered is answered here (a plain 500 with the headers),
  not by the server, whose own answers carry none of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deedbench.errors import StoreError
from deedbench.reports.cost import PriceTable
from deedbench.view import api, pages
from deedbench.view.catalog import Catalog
from deedbench.view.source import StoreReader
from deedbench.view.summaries import SummaryCache

__all__ = ["HEADERS", "POLICY", "SecurityHeaders", "create_app"]

POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


class SecurityHeaders:
    """Adds `HEADERS` to every response the application sends, errors included, and
    answers an error that escapes it before it answered (then lets the error go on to
    the server's log)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            if not started:
                await _internal_answer()(scope, receive, sending)
            raise


def create_app(
    reader: StoreReader,
    prices: PriceTable,
    hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    cache: SummaryCache | None = None,
) -> tuple[ASGIApp, Catalog]:
    """The application over one store, and its catalog (close it when done). `hosts` are
    the names requests may give in their Host header (`*.example.com`: every name under
    it); `cache` keeps the summaries computed (None: in memory only)."""
    catalog = Catalog(reader, prices, cache)
    app = Starlette(
        routes=[*api.routes, *pages.routes],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))],
        exception_handlers={
            api.Rejected: _rejected,
            HTTPException: _http_error,
            StoreError: _store_error,
            500: _internal_error,
        },
    )
    app.state.catalog = catalog
    return SecurityHeaders(app), catalog


def _answer(request: Request, status: int, reason: str) -> Response:
    if request.url.path.startswith("/api/"):
        return api.json_response({"error": reason}, status)
    return pages.error_page(status, reason)


async def _rejected(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, api.Rejected)
    return _answer(request, exc.status, exc.reason)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reasons = {404: "no such page", 405: "the viewer only answers GET requests"}
    return _answer(request, exc.status_code, reasons.get(exc.status_code, str(exc.detail)))


async def _store_error(request: Request, exc: Exception) -> Response:
    return _answer(request, 503, str(exc))


async def _internal_error(request: Request, exc: Exception) -> Response:
    return _internal_answer()


def _internal_answer() -> Response:
    return Response(
        "internal error: the viewer's terminal shows what went wrong\n",
        status_code=500,
        media_type="text/plain",
    )
