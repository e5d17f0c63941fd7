"""Headless Chromium from Debian (/usr/bin/chromium), driven by Playwright.

Playwright never downloads a browser here: it launches the system's Chromium with a
fresh profile folder. Without /usr/bin/chromium the tests are skipped, saying why;
in CI (CI set to anything but 0/false) they fail instead, since .ci/run installs it.

Every page a test opens is watched: a request for anything but the report file (or the
viewer's server, for its pages), a Content-Security-Policy violation, a script error or
a dialog fails the test.
Screenshots go to the test's temporary folder, and also to $DEEDBENCH_ARTIFACTS.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reports._html_support import Reports, build_reports

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Dialog, Page

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Runs before the page's own script: records what the page must never do.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


@pytest.fixture(scope="session")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    return build_reports(tmp_path_factory.getbasetemp() / "html-reports")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium, or a skip saying why (a failure in CI)."""
    from playwright.sync_api import expect

    # What a page shows after a click waits on the viewer's API, which shares two cores
    # with the other test worker. In one CI run (2026-12-06) an episode's detail had not
    # appeared 5 s (Playwright's default) after its row was clicked; not reproduced
    # since, idle or beside three busy processes, so the cause is not known. A page that
    # never shows what is expected still fails, 15 s later.
    expect.set_options(timeout=15_000)
    if not CHROMIUM.exists():
        reason = (
            "the browser tests need Debian's chromium at /usr/bin/chromium "
            "(apt-get install chromium)"
        )
        if _in_ci():
            pytest.fail(f"CI is set and {reason}: .ci/run should have installed it", pytrace=False)
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(
    chromium: Path, reports: Reports, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserContext]:
    """One browser while a module's tests run. Playwright's sync API keeps an event loop
    running on this thread, where every later asyncio.run (any CLI run in another test
    module on the same xdist worker) would fail, so it stops when the module is done.
    Depends on `reports` so their runs (asyncio.run) finish before it starts."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=str(chromium),
            headless=True,
            args=ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        context.add_init_script(WATCH)
        yield context
        context.close()


@pytest.fixture
def origin() -> str:
    """Where the page may fetch from: the report's file here; a module serving its pages
    (the viewer's) overrides it with its server's URL."""
    return "file://"


@pytest.fixture
def page(browser: BrowserContext, origin: str) -> Iterator[Page]:
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on(
        "request",
        lambda r: None if r.url.startswith(origin) else problems.append(f"request: {r.url}"),
    )

    def dialog(d: Dialog) -> None:
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    yield page
    violations = page.evaluate("window.__violations") if not page.is_closed() else []
    page.close()
    assert problems == [] and violations == []


@pytest.fixture
def screenshot(page: Page, tmp_path: Path) -> Callable[..., Path]:
    """Takes a PNG of the page as it is (the viewport, or the whole page with
    `full_page=True`), into the test's folder and $DEEDBENCH_ARTIFACTS."""

    def take(name: str, full_page: bool = False) -> Path:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        artifacts = os.environ.get("DEEDBENCH_ARTIFACTS")
        if artifacts:
            Path(artifacts).mkdir(parents=True, exist_ok=True)
            (Path(artifacts) / path.name).write_bytes(path.read_bytes())
        return path

    return take
