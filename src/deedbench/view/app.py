"""The viewer's ASGI application: its routes, and the rules every answer follows.

- Every answer carries a Content-Security-Policy that lets the page load only the
  viewer's own script, styles and API (`'self'`; inline styles as the HTML report
  has them), no frame, form or plugin, plus `nosniff`, no referrer and no caching.
- Requests must name this server by a host it serves (127.0.0.1 or localhost unless
  `--host` names another): a web page elsewhere that rebinds its name to 127.0.0.1
  (DNS rebinding) gets a 400, never a transcript.
- A request for nothing in the store, or a malformed one, is a 4xx with one line of
  reason (JSON under /api/, a small page elsewhere); a store that cannot be read is a
  503 saying why; no answer ever carries a traceback.
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

from deedbench.engine import StoreError
from deedbench.reports.cost import PriceTable
from deedbench.view import api, pages
from deedbench.view.catalog import Catalog
from deedbench.view.source import StoreReader

__all__ = ["POLICY", "create_app"]

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
    """Adds `HEADERS` to every response the application sends, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, sending)


def create_app(
    reader: StoreReader, prices: PriceTable, hosts: Sequence[str] = ("127.0.0.1", "localhost")
) -> tuple[ASGIApp, Catalog]:
    """The application over one store, and its catalog (close it when done). `hosts` are
    the names requests may give in their Host header; ("*",) accepts any."""
    catalog = Catalog(reader, prices)
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
    return Response(
        "internal error: the viewer's terminal shows what went wrong\n",
        status_code=500,
        media_type="text/plain",
    )
