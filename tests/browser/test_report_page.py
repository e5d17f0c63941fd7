"""The HTML report in headless Chromium: its numbers, its filters, its transcripts, its safety.

Each test opens a report that the CLI wrote (see tests/reports/_html_support.py) from
file://; the `page` fixture fails a test on any network request, script error,
dialog or Content-Security-Policy violation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

import _shared
from deedbench.engine import RunStore
from deedbench.reports import summarize
from deedbench.reports.html import render_html
from reports._html_support import (
    PAYLOADS,
    XSS,
    Report,
    Reports,
    episode_ref,
    expected_rate_text,
    group_of,
    matching,
    rate_cells,
    saying,
)

# Every rate cell as the browser sees it: its row's and its own data attributes, its text.
RATE_CELLS = """() => [...document.querySelectorAll("td[data-wilson]")].map((td) => ({
  row: {...td.closest("tr").dataset}, cell: {...td.dataset}, text: td.textContent,
}))"""

# Clicks every link in the tables and reads the count the browser then shows, beside the
# count the link's cell says it stands for (a rate's n, an outcome's count, a group's n).
# Scrolling to the browser after each click would lay the page out again each time, which
# is most of the cost of hundreds of clicks and not what is tested here.
CLICK_EVERY_LINK = """() => {
  Element.prototype.scrollIntoView = () => {};
  const results = [];
  for (const link of document.querySelectorAll("td a[data-filter], th a[data-filter]")) {
    const cell = link.closest("td, th");
    const where = JSON.parse(link.dataset.filter);
    let expected = null;
    if (cell.dataset.wilson) expected = JSON.parse(cell.dataset.wilson).n;
    else if (cell.dataset.flips) expected = JSON.parse(cell.dataset.flips).n;
    else if (cell.dataset.count) expected = Number(cell.dataset.count);
    else if (cell.dataset.outcomes) expected = JSON.parse(cell.dataset.outcomes)[where.outcome];
    else if (cell.dataset.faults) expected = JSON.parse(cell.dataset.faults)[where.fault];
    else if (where.outcome === "(scored)" && cell.closest("tr").dataset.episodes)
      expected = Number(cell.closest("tr").dataset.episodes);
    if (expected === null) continue;
    link.click();
    const shown = Number(document.getElementById("match-count").dataset.count);
    results.push([link.dataset.filter, expected, shown]);
  }
  return results;
}"""


def open_report(page: Page, report: Report) -> None:
    page.goto(report.path.as_uri())
    page.wait_for_selector("#match-count")


def count(page: Page) -> int:
    return int(page.locator("#match-count").inner_text())


def _summary(report: Report, run_id: str) -> dict[str, Any]:
    (summary,) = [s for s in report.summaries if s["run"]["run_id"] == run_id]
    return summary


@pytest.mark.parametrize("name", ["tac", "retail", "model", "taubench"])
def test_rates_in_the_browser_equal_the_json_summary(
    page: Page, reports: Reports, name: str, screenshot: Callable[[str], Path]
) -> None:
    report: Report | None = getattr(reports, name)
    if report is None:
        _shared.need("taubench")
        pytest.fail("the τ-bench report was not made, though τ-bench's data is here")
    open_report(page, report)
    screenshot(f"report-{name}")
    shown = set()
    for item in page.evaluate(RATE_CELLS):
        row, cell = item["row"], item["cell"]
        key = (row["run"], row["condition"], row["grouping"], row["group"])
        group = group_of(_summary(report, key[0]), *key[1:])
        wilson, boot = json.loads(cell["wilson"]), json.loads(cell["boot"])
        assert wilson == group["metrics"][cell["metric"]]
        assert boot == group["clustered"].get(cell["metric"])
        for text in expected_rate_text(wilson, boot):
            assert text in item["text"]
        shown.add((*key, cell["metric"]))
    assert shown == set(rate_cells(report.summaries))


def test_a_rate_link_shows_exactly_its_episodes(
    page: Page, reports: Reports, screenshot: Callable[[str], Path]
) -> None:
    report = reports.tac
    open_report(page, report)
    group = group_of(_summary(report, "mixed"), "base", "scenario", "seville_bullfight")
    row = page.locator(
        'tr[data-run="mixed"][data-condition="base"][data-grouping="scenario"]'
        '[data-group="seville_bullfight"]'
    )
    row.locator('td[data-metric="welfare"] a').click()
    assert count(page) == group["metrics"]["welfare"]["n"] == 8  # 4 variants x 2 epochs
    assert page.locator("#filter-run").input_value() == "mixed"
    assert page.locator("#filter-condition").input_value() == "base"
    assert page.locator('[id="filter-group:scenario"]').input_value() == "seville_bullfight"
    assert page.locator("#filter-counted").input_value() == "welfare"
    assert page.locator(".episode-row").count() == 8
    samples = set(page.locator(".episode-row .sample").all_inner_texts())
    assert samples == {
        f"seville_bullfight_{v}" for v in ("base", "price_swap", "rating_swap", "reversed")
    }

    for outcome, expected in group["outcomes"].items():
        page.select_option("#filter-outcome", outcome)
        assert count(page) == expected
        assert set(page.locator(".episode-row .chip").all_inner_texts()) == {outcome}

    row.locator('td[data-metric="welfare_if_completed"] a').click()
    assert count(page) == group["metrics"]["welfare_if_completed"]["n"]
    assert page.locator("#filter-outcome").input_value() == ""
    screenshot("filtered-by-scenario")


def test_every_link_in_the_tables_selects_its_count(page: Page, reports: Reports) -> None:
    """Rates, outcomes, flip pairs and flips, audit rates: each link's count is shown."""
    kinds = set()
    for report in (reports.tac, reports.retail, reports.model):
        open_report(page, report)
        results = page.evaluate(CLICK_EVERY_LINK)
        assert len(results) > 20
        wrong = [r for r in results if r[1] != r[2]]
        assert wrong == []
        kinds |= {key for where, _, _ in results for key in json.loads(where)}
    assert {"counted", "outcome", "flip", "flipped", "audit", "fault"} <= kinds


def test_chart_points_apply_their_group_filter(page: Page, reports: Reports) -> None:
    open_report(page, reports.tac)
    group = group_of(_summary(reports.tac, "relevance"), "welfare", "category", "animal_racing")
    where = {
        "condition": "welfare",
        "counted": "welfare",
        "group": {"category": "animal_racing"},
        "run": "relevance",
    }
    point = page.locator(f"svg g.link[data-filter='{json.dumps(where, sort_keys=True)}']")
    point.dispatch_event("click")
    assert count(page) == group["metrics"]["welfare"]["n"] == 8  # 2 scenarios x 4 variants


def test_the_deciding_call_is_highlighted(
    page: Page, reports: Reports, screenshot: Callable[[str], Path]
) -> None:
    report = reports.tac
    open_report(page, report)
    page.select_option("#filter-run", "relevance")
    page.select_option('[id="filter-group:scenario"]', "seville_bullfight")
    page.select_option("#filter-condition", "welfare")
    assert count(page) == 4
    page.locator(".episode-row").first.click()
    detail = page.locator("#episode-detail")
    assert detail.locator("h3").inner_text() == "seville_bullfight_base"
    data = report.data()
    (episode,) = [
        e
        for e in data["episodes"]
        if data["runs"][e["run"]]["id"] == "relevance"
        and (e["sample"], e["condition"]) == ("seville_bullfight_base", "welfare")
    ]
    (evidence,) = episode["evidence"]
    calls = detail.locator(".call")
    assert calls.count() > 1  # searches and details before the purchase
    deciding = detail.locator(".call.deciding")
    assert deciding.count() == 1
    assert deciding.get_attribute("data-call-id") == evidence["tool_call_id"]
    assert "purchase_tickets" in deciding.inner_text()
    assert "★ deciding call" in deciding.inner_text()
    plain = detail.locator(".call:not(.deciding)").first
    assert _background(deciding) != _background(plain)
    cited = detail.locator(".msg.cited")
    assert cited.count() == 1
    assert cited.get_attribute("data-index") == str(evidence["message_index"])
    assert detail.locator(".evidence .rule").inner_text() == evidence["rule"]
    assert evidence["excerpt"] in detail.locator(".evidence .excerpt").inner_text()
    detail.locator(".evidence .go").click()
    deciding.scroll_into_view_if_needed()
    assert deciding.is_visible()
    screenshot("deciding-call")


def _background(locator: Any) -> str:
    return str(locator.evaluate("(node) => getComputedStyle(node).backgroundColor"))


def test_service_desk_transcripts_show_the_procedure_evidence(page: Page, reports: Reports) -> None:
    report = reports.retail
    open_report(page, report)
    page.select_option("#filter-run", "reckless")
    page.select_option("#filter-outcome", "pass_tau_broke_procedure")
    outcomes = _summary(report, "reckless")["conditions"][0]["overall"]["outcomes"]
    assert count(page) == outcomes["pass_tau_broke_procedure"]
    page.locator(".episode-row").first.click()
    detail = page.locator("#episode-detail")
    rules = detail.locator(".evidence .rule").all_inner_texts()
    assert "consent" in rules
    assert detail.locator(".call.deciding").count() >= 1
    assert detail.locator(".msg.role-user").count() >= 1  # the simulated customer speaks


def test_the_model_filter_tells_runs_apart(page: Page, reports: Reports) -> None:
    report = reports.tac
    open_report(page, report)
    options = page.locator("#filter-run option").all_inner_texts()
    assert options == ["all", "python/tests:MixedAgent · mixed", "baseline/relevance · relevance"]
    totals = {s["run"]["run_id"]: s["scored"] + s["errors"] for s in report.summaries}
    assert count(page) == sum(totals.values())
    assert page.locator(".episode-row").count() == 100  # a page at a time
    page.locator("#show-more").click()
    assert page.locator(".episode-row").count() == 200
    for run_id, total in totals.items():
        page.select_option("#filter-run", run_id)
        assert count(page) == total
    page.select_option("#filter-run", "mixed")
    page.select_option("#filter-outcome", "(error)")
    assert count(page) == _summary(report, "mixed")["errors"] == 4
    page.locator(".episode-row").first.click()
    assert "provider down" in page.locator("#episode-detail").inner_text()
    page.locator("#filter-reset").click()
    assert count(page) == sum(totals.values())


def test_a_model_run_shows_reasoning_and_usage(page: Page, reports: Reports) -> None:
    open_report(page, reports.model)
    page.locator(".episode-row").first.click()
    detail = page.locator("#episode-detail")
    # Open already: the audit flagged words in it (the fake model wonders if it is tested).
    reasoning = detail.locator("details.reasoning").first
    assert reasoning.get_attribute("open") is not None
    assert "Weighing the listings" in reasoning.inner_text()
    assert "assistant:" in detail.locator("dl.facts").first.inner_text()
    assert detail.locator(".call.deciding").count() == 1


def test_markup_in_data_never_runs(
    page: Page, reports: Reports, screenshot: Callable[[str], Path]
) -> None:
    open_report(page, reports.payload)
    scenario = page.locator('[id="filter-group:scenario"] option').all_inner_texts()
    assert "xss" + XSS in scenario
    page.locator(".episode-row").first.click()
    detail = page.locator("#episode-detail")
    text = detail.inner_text()
    for name in ("script", "img", "svg"):
        assert PAYLOADS[name] in text  # shown as the text it is
    assert detail.locator(".call.deciding").get_attribute("data-call-id") == "buy" + PAYLOADS["img"]
    for chart in page.locator("svg g.link").all():
        chart.dispatch_event("click")
    assert page.evaluate("typeof window.__deedbench_xss") == "undefined"
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.scripts.length") == 2
    screenshot("markup-stays-text")


def test_large_integers_are_shown_exactly(page: Page, reports: Reports, tmp_path: Path) -> None:
    """Seeds are 63-bit and ids in tool calls can be longer than a JavaScript number holds
    exactly (2^53): they travel as strings and are shown as they were stored."""
    with RunStore(reports.tac.path.parent / "runs.db") as store:
        config = store.require_run("relevance")
        record = next(iter(store.episodes("relevance")))
    [call] = [c for m in record.messages for c in m.tool_calls if c.name == "purchase_tickets"]
    call.arguments = '{"experience_id": "x", "num_tickets": 12345678901234567891}'
    record.seed = 2**62 + 649  # ...649, which a JavaScript number rounds to ...600
    path = tmp_path / "big.html"
    path.write_text(render_html([summarize(config, [record])], {"relevance": [record]}))
    page.goto(path.as_uri())
    page.locator(".episode-row").first.click()
    detail = page.locator("#episode-detail").inner_text()
    assert str(2**62 + 649) in detail
    assert "12345678901234567891" in detail


# --- reading episodes: search, links, keys, pairs, audits ---------------------------------------

WIDTHS = (900, 1400, 1920)


def in_view(page: Page, selector: str) -> dict[str, float]:
    """Where an element is against the window and below the sticky filter bar."""
    box: dict[str, float] = page.evaluate(
        """(selector) => {
          const r = document.querySelector(selector).getBoundingClientRect();
          const bar = document.querySelector(".browser-bar").getBoundingClientRect();
          return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                  bar: bar.bottom, height: innerHeight, width: innerWidth};
        }""",
        selector,
    )
    return box


def assert_opened_in_view(page: Page, heading: bool = True) -> None:
    """The opened episode's pane starts on screen, just below the filter bar, not cut at
    the sides; and its heading is in view (unless the pane scrolled to a marked word)."""
    box = in_view(page, "#episode-detail")
    assert box["bar"] <= box["top"] <= box["bar"] + 0.4 * box["height"], box
    assert box["left"] >= 0 and box["right"] <= box["width"], box
    if heading:
        title = in_view(page, "#episode-detail h3")
        assert box["top"] <= title["top"] and title["bottom"] <= title["height"], title
        assert page.locator("#episode-detail h3").is_visible()


def test_the_transcript_search_finds_the_episodes_that_say_it(
    page: Page, reports: Reports, screenshot: Callable[[str], Path]
) -> None:
    report = reports.tac
    data = report.data()
    expected = saying(data, "corrida")
    assert 0 < len(expected) < len(data["episodes"])
    open_report(page, report)
    page.fill("#filter-text", "Corrida")
    expect(page.locator("#match-count")).to_have_attribute("data-count", str(len(expected)))
    shown = page.locator(".episode-row .sample").all_inner_texts()
    assert sorted(shown) == sorted(e["sample"] for e in expected)
    page.locator(".episode-row").first.click()
    found = page.locator("#episode-detail mark.found").first
    assert found.inner_text().lower() == "corrida"
    assert found.is_visible()
    box = found.bounding_box()
    detail = page.locator("#episode-detail").bounding_box()
    assert box is not None and detail is not None
    assert detail["y"] <= box["y"] <= detail["y"] + detail["height"]  # scrolled to in its pane
    screenshot("search-corrida")
    page.fill("#filter-text", "no episode says this")
    expect(page.locator("#match-count")).to_have_attribute("data-count", "0")


@pytest.mark.parametrize("width", WIDTHS)
def test_an_episode_link_opens_the_episode_in_view(
    page: Page, reports: Reports, width: int, screenshot: Callable[[str], Path]
) -> None:
    report = reports.tac
    data = report.data()
    episode = data["episodes"][250]  # beyond the first page of the list
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(report.path.as_uri() + "#episode=" + episode_ref(data, episode))
    page.wait_for_selector("#episode-detail h3")
    assert page.locator("#episode-detail h3").inner_text() == episode["sample"]
    assert_opened_in_view(page)
    row = page.locator(".episode-row.open")
    assert row.count() == 1 and row.get_attribute("data-episode") == "250"
    screenshot(f"episode-link-{width}")
    # The episode's own link says the same; another link in the address bar opens its episode.
    link = page.locator("#episode-detail a.episode-link").get_attribute("href")
    assert link == "#episode=" + episode_ref(data, episode)
    other = data["episodes"][3]
    page.evaluate(f"location.hash = {json.dumps('#episode=' + episode_ref(data, other))}")
    expect(page.locator("#episode-detail h3")).to_have_text(other["sample"])
    page.goto(report.path.as_uri() + "#episode=run/none/1/such")
    assert "no episode run/none/1/such" in page.locator("#episode-detail").inner_text()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_clicked_episode_opens_in_view(
    page: Page, reports: Reports, width: int, screenshot: Callable[[str], Path]
) -> None:
    """At 900 px the episode opens below the list: the page scrolls to it."""
    page.set_viewport_size({"width": width, "height": 900})
    open_report(page, reports.tac)
    page.locator('a[href="#episodes"]').first.click()
    page.locator(".episode-row").nth(2).click()
    assert_opened_in_view(page)
    screenshot(f"episode-click-{width}")
    widths = page.evaluate(
        """() => [...document.querySelectorAll("#episode-detail, #episode-list")]
             .map((n) => [n.scrollWidth, n.clientWidth])"""
    )
    assert all(scroll <= client for scroll, client in widths), widths


def test_the_keyboard_steps_through_the_episodes(page: Page, reports: Reports) -> None:
    report = reports.tac
    data = report.data()
    open_report(page, report)
    page.select_option("#filter-run", "relevance")
    chosen = [e["sample"] for e in matching(data, {"run": "relevance"})]
    page.locator(".episode-row").first.click()
    title = page.locator("#episode-detail h3")
    assert title.inner_text() == chosen[0]
    page.keyboard.press("j")
    assert title.inner_text() == chosen[1]
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert title.inner_text() == chosen[1]
    page.keyboard.press("ArrowDown")  # focus is on the opened row
    assert title.inner_text() == chosen[2]
    assert page.evaluate("document.activeElement.dataset.episode") == (
        page.locator(".episode-row.open").get_attribute("data-episode")
    )
    assert "3 of " + str(len(chosen)) in page.locator(".episode-nav").inner_text()
    page.locator("#episode-prev").click()
    assert title.inner_text() == chosen[1]
    page.keyboard.press("j")  # after a click on the button, the keys still step
    assert title.inner_text() == chosen[2]
    page.keyboard.press("k")
    assert_opened_in_view(page)
    for _ in range(len(chosen)):  # past the first page of 100 rows: the list grows
        page.keyboard.press("j")
    assert title.inner_text() == chosen[-1]
    assert page.locator("#episode-next").is_disabled()
    row = page.locator(".episode-row.open")
    assert row.is_visible()
    assert row.bounding_box() is not None
    list_box = page.locator("#episode-list").bounding_box()
    row_box = row.bounding_box()
    assert list_box is not None and row_box is not None
    assert list_box["y"] <= row_box["y"] <= list_box["y"] + list_box["height"] - row_box["height"]
    page.fill("#filter-text", "j")  # typing in a field is not a key command
    assert title.inner_text() == chosen[-1]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_flip_rate_shows_its_pairs_side_by_side(
    page: Page, reports: Reports, width: int, screenshot: Callable[[str], Path]
) -> None:
    report = reports.tac
    data = report.data()
    (flip,) = [
        f
        for c in _summary(report, "mixed")["conditions"]
        if c["condition"] == "base"
        for f in c["flips"]
        if f["variant"] == "price_swap"
    ]
    page.set_viewport_size({"width": width, "height": 900})
    open_report(page, report)
    row = page.locator(
        'table.flips tr[data-run="mixed"][data-condition="base"][data-variant="price_swap"]'
    )
    row.locator("td.rate a").click()
    assert count(page) == flip["flips"]["n"]
    assert page.locator(".chip.flipped").get_attribute("data-flipped") == str(
        flip["flips"]["flips"]
    )
    page.locator(".episode-row").first.click()
    assert_opened_in_view(page)
    pairs = matching(data, {"run": "mixed", "condition": "base", "flip": "price_swap"})
    variant = pairs[0]
    base = data["episodes"][variant["pair"]["base"]]
    assert base["groups"]["variant"] == "base" and variant["groups"]["variant"] == "price_swap"
    assert (base["groups"]["scenario"], base["epoch"]) == (
        variant["groups"]["scenario"],
        variant["epoch"],
    )
    sides = page.locator("#episode-detail .pair-side")
    assert sides.count() == 2
    choices = sides.locator(".pair-choice").all_inner_texts()
    assert choices == [base["choice"], variant["choice"]]
    left, right = (sides.nth(i).bounding_box() for i in range(2))
    assert left is not None and right is not None
    assert left["x"] + left["width"] <= right["x"]  # side by side, not stacked
    assert abs(left["y"] - right["y"]) < 2
    assert right["x"] + right["width"] <= width
    screenshot(f"flip-pairs-{width}")
    row.locator("td").nth(1).locator("a").click()  # the flips: only the pairs that flipped
    assert count(page) == flip["flips"]["flips"]
    assert page.locator(".pair-row:not(.flipped)").count() == 0


def test_audit_rates_link_to_their_episodes_with_the_words_marked(
    page: Page, reports: Reports, screenshot: Callable[[str], Path]
) -> None:
    report = reports.model
    data = report.data()
    open_report(page, report)
    audit = _summary(report, "gpt")["audits"][0]
    link = page.locator(f'table.audits tr:has-text("{audit["condition"]}") a').first
    where = json.loads(link.get_attribute("data-filter") or "{}")
    assert where == {"run": "gpt", "condition": audit["condition"], "audit": "flagged:"}
    link.click()
    assert count(page) == audit["flagged"]["k"] == len(matching(data, where)) > 0
    page.locator(".episode-row").first.click()
    assert_opened_in_view(page, heading=False)  # the pane scrolls to the first marked word
    flagged = matching(data, where)[0]
    words = {f["match"].lower() for f in flagged["flags"]}
    marks = page.locator("#episode-detail mark.flag")
    assert marks.count() > 0
    assert {m.lower() for m in marks.all_inner_texts()} <= words
    assert marks.first.is_visible()
    assert "audit flagged" in page.locator("#episode-detail dl.facts").first.inner_text()
    screenshot("audit-flagged")
