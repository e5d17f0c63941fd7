"""`deedbench view` in headless Chromium: the runs list, a run written while the page
watches, a run page whose numbers are `report --json`'s, both side-by-side views, and
markup in model replies that stays text.

The server is `deedbench view` itself (a child process, tests/view/_server.py) over a
copy of the HTML report tests' store; the `page` fixture fails a test on any request
to anywhere but that server, a script error, a dialog or a policy violation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from deedbench.engine import RunStore
from reports._html_support import PAYLOADS, XSS, Reports, expected_rate_text, group_of
from view._server import serving

# Per run row: the lines its id takes and whether it is cut, where its rate cell ends,
# the parts of its agent spec that break (parts long enough to break anywhere aside),
# and whether the agent spec is shown; and how far the table overflows its frame.
RUNS_LAYOUT = """() => {
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  };
  const shown = (node) => node.offsetParent !== null;
  const frame = document.querySelector("#runs");
  return {
    overflow: frame.scrollWidth - frame.clientWidth,
    right: frame.getBoundingClientRect().right,
    rows: [...document.querySelectorAll("tr.run-row")].map((tr) => {
      const id = tr.querySelector("a.run-id");
      const agents = [...tr.querySelectorAll(".breakable")].filter(shown);
      return {
        id: id.textContent,
        lines: lines(id),
        cut: id.scrollWidth > id.clientWidth,
        rate: tr.querySelector("td.rate").getBoundingClientRect().right,
        broken: agents.flatMap((a) => [...a.querySelectorAll(".part:not(.long)")])
          .filter((p) => lines(p) > 1).map((p) => p.textContent),
        agent: agents.map((a) => a.textContent),
      };
    }),
  };
}"""
RATE_CELLS = """() => [...document.querySelectorAll("#figures td[data-wilson]")].map((td) => ({
  row: {...td.closest("tr").dataset}, cell: {...td.dataset}, text: td.textContent,
}))"""


@pytest.fixture(scope="module")
def store(reports: Reports, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the report tests' store, which the live test writes a run into."""
    path = tmp_path_factory.mktemp("view-store") / "runs.db"
    with sqlite3.connect(reports.tac.path.parent / "runs.db") as source:
        copy = sqlite3.connect(path)
        source.backup(copy)
        copy.close()
    return path


@pytest.fixture(scope="module")
def url(store: Path) -> Iterator[str]:
    with serving(store) as served:
        yield served


@pytest.fixture
def origin(url: str) -> str:
    return url


def summaries(reports: Reports) -> dict[str, dict[str, Any]]:
    every = [s for r in (reports.tac, reports.retail, reports.model) for s in r.summaries]
    return {s["run"]["run_id"]: s for s in every}


def test_the_runs_list_shows_every_run_with_its_progress_and_filters(
    page: Page, url: str, reports: Reports, screenshot: Callable[..., Path]
) -> None:
    page.goto(url)
    rows = page.locator("tr.run-row")
    expected = summaries(reports)
    expect(rows.first).to_be_visible()
    shown = {row.get_attribute("data-run"): row for row in rows.all()}
    assert expected.keys() <= shown.keys()
    for run_id, summary in expected.items():
        cell = shown[run_id].locator("td.progress")
        counts = [cell.get_attribute(f"data-{n}") for n in ("scored", "errors", "planned")]
        assert counts == [str(summary[n]) for n in ("scored", "errors", "planned")]
        expect(shown[run_id].locator(".state-chip")).to_have_text("finished")
    mixed = expected["mixed"]["conditions"][0]
    rate = shown["mixed"].locator('.cond-rate[data-condition="base"]')
    text = expected_rate_text(mixed["overall"]["metrics"]["welfare"], None)[0]
    expect(rate).to_contain_text(text, timeout=30_000)  # summaries are computed in the background
    screenshot("view-runs", full_page=True)
    benchmarks = {s["run"]["benchmark"] for s in expected.values()}
    chosen = sorted(benchmarks)[0]
    page.select_option("#runs-filter-benchmark", chosen)
    wanted = sum(1 for s in expected.values() if s["run"]["benchmark"] == chosen)
    expect(rows).to_have_count(wanted)
    page.select_option("#runs-filter-benchmark", "")
    page.check('tr[data-run="mixed"] input.choose')
    page.check('tr[data-run="relevance"] input.choose')
    page.click("#compare-chosen")
    expect(page.locator("#pairs-count")).to_have_attribute("data-count", "48")


def test_a_run_being_written_shows_new_episodes_within_two_seconds(
    page: Page, url: str, store: Path, screenshot: Callable[..., Path]
) -> None:
    """The test is the run's executor: it holds the run's lock, beats, and writes the
    mixed run's records one by one under a new id while the page watches."""
    with RunStore(store) as writer:
        config = writer.require_run("mixed").model_copy(
            update={"run_id": "live", "created_at": datetime.now(UTC).isoformat()}
        )
        records = list(writer.episodes("mixed"))[:5]
        writer.create_run(config)
        with writer.lock_run("live"):
            page.goto(url + "runs/live")
            status = page.locator("#run-status")
            expect(status).to_have_attribute("data-state", "running")
            waited = []
            for done, record in enumerate(records, start=1):
                writer.add("live", record)
                writer.flush()
                writer.heartbeat("live")
                started = time.monotonic()
                expect(status).to_have_attribute("data-stored", str(done), timeout=5000)
                waited.append(time.monotonic() - started)
                expect(page.locator(".episode-row")).to_have_count(done)
            assert max(waited) < 2.0, waited  # the page polls every second
            expect(page.locator("#figures")).to_have_attribute("data-of-episodes", "5")
            screenshot("view-run-live", full_page=True)
        expect(status).to_have_attribute("data-state", "stopped", timeout=5000)
    page.goto(url)
    row = page.locator('tr[data-run="live"]')
    expect(row.locator("td.progress")).to_have_attribute("data-scored", "5")
    expect(row.locator(".state-chip")).to_have_text("stopped")
    expect(row.locator("td.state")).to_contain_text("resume it with deedbench run --run-id")


def test_a_run_page_shows_report_json_figures_and_links_that_are_urls(
    page: Page, url: str, reports: Reports, screenshot: Callable[..., Path]
) -> None:
    summary = summaries(reports)["mixed"]
    page.goto(url + "runs/mixed")
    expect(page.locator("#figures #summary")).to_be_attached()
    cells = page.evaluate(RATE_CELLS)
    assert len(cells) > 50
    for item in cells:
        row, cell = item["row"], item["cell"]
        group = group_of(summary, row["condition"], row["grouping"], row["group"])
        wilson, boot = json.loads(cell["wilson"]), json.loads(cell["boot"])
        assert wilson == group["metrics"][cell["metric"]]
        assert boot == group["clustered"].get(cell["metric"])
        for text in expected_rate_text(wilson, boot):
            assert text in item["text"]
    screenshot("view-run", full_page=True)
    group = group_of(summary, "base", "scenario", "seville_bullfight")
    link = page.locator(
        '#figures tr[data-condition="base"][data-grouping="scenario"]'
        '[data-group="seville_bullfight"] td[data-metric="welfare"] a'
    )
    link.click()
    count = page.locator("#match-count")
    expect(count).to_have_attribute("data-count", str(group["metrics"]["welfare"]["n"]))
    shared = page.url
    page.goto(shared)  # the group's rate as a URL: the same episodes
    expect(count).to_have_attribute("data-count", str(group["metrics"]["welfare"]["n"]))
    page.locator(".episode-row a.sample").first.click()
    expect(page.locator("#episode-detail h3")).to_have_text("seville_bullfight_base")
    episode = page.url
    assert "/runs/mixed/episodes/base/" in episode
    page.goto(episode)  # an episode as a URL
    expect(page.locator("#episode-detail h3")).to_have_text("seville_bullfight_base")
    expect(page.locator(".episode-row.open")).to_have_count(1)
    expect(page.locator("#figures #summary")).to_be_attached()
    expect(page.locator("#episode-detail h3")).to_be_in_viewport()  # not pushed down by them
    screenshot("view-episode", full_page=True)


def test_a_whose_failure_link_lists_exactly_those_episodes(page: Page, url: str) -> None:
    """The run page's failures table links each party's count to its episodes; the link
    sets the browser's fault filter, which the list and the URL keep."""
    page.goto(url + "runs/idle")  # every episode failed: the agent never did what was asked
    cell = page.locator("#figures table.failures td.faults").first
    expect(cell).to_be_attached()
    counts = json.loads(cell.get_attribute("data-faults") or "{}")
    assert counts == {"party:agent": 32, "fault:agent.action_not_done": 32}
    cell.locator("a").first.click()
    count = page.locator("#match-count")
    expect(count).to_have_attribute("data-count", "32")
    expect(page.locator("#filter-fault")).to_have_value("party:agent")
    assert "fault=party%3Aagent" in page.url
    page.select_option("#filter-fault", "party:user")  # the choices name every party
    expect(count).to_have_attribute("data-count", "0")


def test_two_conditions_side_by_side_pair_as_the_summary_does(
    page: Page, url: str, reports: Reports, screenshot: Callable[..., Path]
) -> None:
    versus = summaries(reports)["mixed"]["conditions"][1]["versus_first"]
    page.goto(url + "compare?a=mixed/base&b=mixed/welfare")
    count = page.locator("#pairs-count")
    # The first compare of two sides computes their clustered bootstrap; under a loaded
    # CI machine that has taken longer than expect's default 5 s.
    expect(count).to_have_attribute(
        "data-count", str(versus["difference"]["n_shared"]), timeout=30_000
    )
    contrast = json.loads(page.locator("#contrast").get_attribute("data-contrast") or "null")
    assert contrast["difference"] == versus["difference"]
    assert contrast["mcnemar"] == versus["mcnemar"]
    screenshot("view-compare", full_page=True)
    page.check("#only-differ")
    differ = versus["mcnemar"]["b01"] + versus["mcnemar"]["b10"]
    expect(count).to_have_attribute("data-count", str(differ))
    expect(page.locator("tr.pair-row")).to_have_count(differ)
    assert "only=differ" in page.url


def test_two_episodes_side_by_side_align_their_tool_calls(
    page: Page, url: str, screenshot: Callable[..., Path]
) -> None:
    a, b = "relevance/base/1/seville_bullfight_base", "mixed/base/1/seville_bullfight_base"
    page.goto(f"{url}pair?a={quote(a, safe='')}&b={quote(b, safe='')}")
    rows = page.locator("#aligned tr.call-row")
    expect(rows.first).to_be_visible()
    assert page.locator("#aligned tr.call-row.gap-row").count() > 0  # relevance reads more
    first = rows.first.locator("td").all()
    assert len(first) == 2
    expect(page.locator("#side-a h3")).to_have_text("a seville_bullfight_base")
    expect(page.locator("#side-b .facts")).to_be_visible()
    screenshot("view-pair", full_page=True)


def test_markup_in_model_replies_never_runs(
    page: Page, url: str, store: Path, screenshot: Callable[..., Path]
) -> None:
    run_id = "xss" + PAYLOADS["img"]
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        (sample,) = db.execute(
            "SELECT sample_id FROM episodes WHERE run_id = ? AND condition = 'base' LIMIT 1",
            (run_id,),
        ).fetchone()
    ref = f"{run_id}/base/1/{sample}"
    for address in (
        url,
        f"{url}runs/{quote(run_id, safe='')}/episodes/base/1/{quote(sample, safe='')}",
        f"{url}pair?a={quote(ref, safe='')}&b={quote(ref, safe='')}",
    ):
        page.goto(address)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__deedbench_xss") is None
        assert page.locator("main script, main img, main iframe, main svg[onload]").count() == 0
    text = page.locator("#pair").inner_text()
    assert PAYLOADS["script"] in text and XSS.split(" ")[0] in text  # shown, as text
    screenshot("view-xss", full_page=True)


@pytest.mark.parametrize("width", [900, 1400, 1920])
def test_an_opened_episode_is_in_view_with_the_searched_words_marked(
    page: Page, url: str, width: int, screenshot: Callable[..., Path]
) -> None:
    """At 900 px the episode sits under the list: the page brings it below the filter bar."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url + "runs/mixed?q=corrida")
    first = page.locator(".episode-row a.sample").first
    name = first.inner_text()
    assert name.startswith("seville_bullfight")  # where the listings say "corrida"
    first.click()
    expect(page.locator("#episode-detail h3")).to_have_text(name)
    where = """() => [document.querySelector("#episode-detail").getBoundingClientRect().top,
                     document.querySelector(".browser-bar").getBoundingClientRect().bottom]"""
    settled = f"() => {{ const [top, bar] = ({where})(); return bar <= top && top <= bar + 360; }}"
    with suppress(PlaywrightTimeout):  # the page scrolls smoothly: under load, later
        page.wait_for_function(settled, timeout=5000)
    top, bar = box = page.evaluate(where)
    assert bar <= top <= bar + 0.4 * 900, box
    expect(page.locator("#episode-detail h3")).to_be_in_viewport()
    found = page.locator("#episode-detail mark.found")
    assert found.count() > 0 and found.first.inner_text().lower() == "corrida"
    screenshot(f"view-episode-{width}")


@pytest.mark.parametrize("width", [900, 1400, 1920])
def test_the_runs_list_never_breaks_a_run_id_and_shows_every_rate(
    page: Page, url: str, store: Path, width: int, screenshot: Callable[..., Path]
) -> None:
    """Run ids as deedbench makes them (benchmark, date, time, a tag: up to 40 characters)
    show whole on one line; any longer one (the markup run's, 69) stays on one line, cut
    with an ellipsis. No rate is cut off, and an agent spec breaks only after a "/"."""
    long_id = "taubench-airline-20261204-200246-cf8a"  # 37 characters
    with RunStore(store) as writer:
        if writer.get_run(long_id) is None:
            config = writer.require_run("mixed")
            writer.create_run(
                config.model_copy(
                    update={
                        "run_id": long_id,
                        "agent": "openai-compatible/Qwen/Qwen2.5-7B-Instruct",
                    }
                )
            )
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    expect(page.locator(f'tr[data-run="{long_id}"]')).to_be_visible()
    expect(page.locator('tr[data-run="mixed"] .cond-rate').first).to_be_visible(timeout=30_000)
    layout = page.evaluate(RUNS_LAYOUT)
    screenshot(f"view-runs-{width}", full_page=True)
    assert layout["overflow"] <= 1, layout
    for row in layout["rows"]:
        assert row["lines"] == 1, row
        assert row["cut"] == (len(row["id"]) > 40), row
        assert row["rate"] <= layout["right"] + 1, row
        assert row["broken"] == [], row
        assert len(row["agent"]) == 1, row  # in its column, or under the id when narrow
    shown = {row["id"]: row for row in layout["rows"]}
    assert shown[long_id]["agent"] == ["openai-compatible/Qwen/Qwen2.5-7B-Instruct"]
