"""The HTML report read as a document: its figures equal `report --json`, its links select
exactly the episodes behind each rate, it needs no network, and nothing a model or a
scenario file wrote becomes markup. The same pages are driven in a browser in tests/browser.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

import _shared
from deedbench.engine import RunStore
from deedbench.reports import summarize
from deedbench.reports.format import chance_p_text, pct
from deedbench.reports.html import render_html

from ._html_support import (
    PAYLOADS,
    XSS,
    Element,
    Report,
    Reports,
    build_reports,
    expected_rate_text,
    group_of,
    matching,
    rate_cells,
    read_html,
)

NAMES = ["tac", "retail", "model", "payload", "taubench"]
# Every element the report writes; markup smuggled in through data would add others.
TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p",
    "small", "nav", "a", "section", "article", "div", "span", "table", "thead", "tbody", "tr",
    "th", "td", "dl", "dt", "dd", "ul", "li", "details", "summary", "figure", "figcaption",
    "form", "script", "svg", "g", "rect", "line", "circle", "text", "polyline", "kbd", "wbr",
}  # fmt: skip


@pytest.fixture(scope="session")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    return build_reports(tmp_path_factory.getbasetemp() / "html-reports")


def _report(reports: Reports, name: str) -> Report:
    result: Report | None = getattr(reports, name)
    if result is None:
        _shared.need("taubench")
        pytest.fail("the τ-bench report was not made, though τ-bench's data is here")
    return result


def _summary(report: Report, run_id: str) -> dict[str, Any]:
    (summary,) = [s for s in report.summaries if s["run"]["run_id"] == run_id]
    return summary


def _key(element: Element) -> tuple[str, str, str, str]:
    """The (run, condition, grouping, group) of the table row an element sits in."""
    row = element.row
    return row["data-run"], row["data-condition"], row["data-grouping"], row["data-group"]


def _group(report: Report, element: Element) -> dict[str, Any]:
    run, *where = _key(element)
    return group_of(_summary(report, run), *where)


def _with(report: Report, attribute: str) -> list[Element]:
    return [e for e in read_html(report.html).elements if attribute in e.attrs]


# --- the numbers are the summary's -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_rate_cell_equals_the_json_summary(reports: Reports, name: str) -> None:
    report = _report(reports, name)
    shown = set()
    for cell in _with(report, "data-wilson"):
        group = _group(report, cell)
        metric = cell.attrs["data-metric"]
        wilson = json.loads(cell.attrs["data-wilson"])
        boot = json.loads(cell.attrs["data-boot"])
        assert wilson == group["metrics"][metric]
        assert boot == group["clustered"].get(metric)
        for text in expected_rate_text(wilson, boot):
            assert text in cell.text, (cell.row, metric, cell.text)
        assert int(cell.row["data-episodes"]) == group["episodes"]
        shown.add((*_key(cell), metric))
    assert shown == set(rate_cells(report.summaries))


@pytest.mark.parametrize("name", NAMES)
def test_chance_tests_and_outcomes_equal_the_json_summary(reports: Reports, name: str) -> None:
    report = _report(reports, name)
    chance_cells = _with(report, "data-chance")
    if report.summaries[0]["run"]["report"]["compare_to_chance"]:
        assert chance_cells
    for cell in chance_cells:
        chance = json.loads(cell.attrs["data-chance"])
        assert chance == _group(report, cell)["chance"]
        assert cell.text == pct(chance["chance"])
    for cell in _with(report, "data-cluster-chance"):
        boot = _group(report, cell)["cluster_chance"]
        assert json.loads(cell.attrs["data-cluster-chance"]) == boot
        if boot is not None:  # both directions, as in the terminal and the CSV
            assert cell.text == chance_p_text(boot["p_below"], boot["p_above"])
    outcome_cells = _with(report, "data-outcomes")
    assert len(outcome_cells) == len({r[:4] for r in rate_cells(report.summaries)})
    for cell in outcome_cells:
        assert json.loads(cell.attrs["data-outcomes"]) == _group(report, cell)["outcomes"]


def test_tac_paired_contrasts_equal_the_json_summary(reports: Reports) -> None:
    report = reports.tac
    contrasts = _with(report, "data-contrast")
    within = {
        (e.attrs["data-run"], e.attrs["data-b"])
        for e in contrasts
        if e.attrs["data-kind"] == "condition"
    }
    assert within == {("mixed", "welfare"), ("relevance", "welfare")}
    for element in contrasts:
        contrast = json.loads(element.attrs["data-contrast"])
        if element.attrs["data-kind"] == "condition":
            (condition,) = [
                c
                for c in _summary(report, element.attrs["data-run"])["conditions"]
                if c["condition"] == contrast["b"]
            ]
            assert contrast == condition["versus_first"]
    between = [e for e in contrasts if e.attrs["data-kind"] == "run"]
    assert [(e.attrs["data-a"], e.attrs["data-b"]) for e in between] == [
        ("mixed/base", "relevance/base"),
        ("mixed/welfare", "relevance/welfare"),
    ]


def test_tac_flip_rates_equal_the_json_summary(reports: Reports) -> None:
    report = reports.tac
    cells = _with(report, "data-flips")
    expected = {
        (s["run"]["run_id"], c["condition"], f["variant"]): f
        for s in report.summaries
        for c in s["conditions"]
        for f in c["flips"]
    }
    assert len(expected) == 2 * 2 * 3  # runs x conditions x non-base variants
    assert {
        (e.row["data-run"], e.row["data-condition"], e.row["data-variant"]) for e in cells
    } == set(expected)
    for cell in cells:
        flip = expected[
            (cell.row["data-run"], cell.row["data-condition"], cell.row["data-variant"])
        ]
        assert json.loads(cell.attrs["data-flips"]) == flip["flips"]
        assert json.loads(cell.attrs["data-boot"]) == flip["clustered"]
        assert cell.text.startswith(pct(flip["flips"]["value"]))


def test_retail_pass_hat_k_and_rules_equal_the_json_summary(reports: Reports) -> None:
    report = reports.retail
    cells = _with(report, "data-passk")
    expected = {
        (s["run"]["run_id"], c["condition"], metric, p["k"]): p
        for s in report.summaries
        for c in s["conditions"]
        for metric, points in c["pass_hat_k"].items()
        for p in points
    }
    assert expected and {
        (e.row["data-run"], e.row["data-condition"], e.row["data-metric"], int(e.attrs["data-k"]))
        for e in cells
    } == set(expected)
    for cell in cells:
        key = (
            cell.row["data-run"],
            cell.row["data-condition"],
            cell.row["data-metric"],
            int(cell.attrs["data-k"]),
        )
        assert json.loads(cell.attrs["data-passk"]) == expected[key]
        assert cell.text == pct(expected[key]["value"])
    reckless = _summary(report, "reckless")["conditions"][0]["overall"]["evidence_rules"]
    assert reckless.get("consent", 0) > 0
    rules = [e for e in read_html(report.html).elements if e.attrs.get("class") == "rules"]
    assert any(f"consent {reckless['consent']}" in e.text for e in rules)


def test_status_costs_and_audits_equal_the_json_summary(reports: Reports) -> None:
    for report in (reports.tac, reports.model):
        for element in _with(report, "data-status"):
            summary = _summary(report, element.attrs["data-run"])
            status = json.loads(element.attrs["data-status"])
            assert status == {k: summary[k] for k in ("planned", "scored", "errors", "missing")}
    assert _summary(reports.tac, "mixed")["errors"] == 4  # one scenario's variants, once
    costs = _with(reports.model, "data-cost")
    summary = _summary(reports.model, "gpt")
    assert [json.loads(e.attrs["data-cost"]) for e in costs] == summary["costs"]
    (agent,) = [c for c in summary["costs"] if c["role"] == "agent"]
    assert agent["cost_usd"] is not None and agent["usage"]["calls"] > 0
    assert f"${agent['cost_usd']:.4f}" in costs[0].text
    audits = [json.loads(e.attrs["data-audit"]) for e in _with(reports.model, "data-audit")]
    assert audits == summary["audits"]
    assert {a["condition"] for a in audits} == {"base", "welfare"}
    assert all(a["flagged"]["k"] > 0 for a in audits)  # the fake model wonders if it is tested


# --- every rate links to its episodes ----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_link_selects_exactly_the_episodes_it_counts(reports: Reports, name: str) -> None:
    report = _report(reports, name)
    data = report.data()
    elements = read_html(report.html).elements
    checked = 0
    for cell in elements:
        if (
            "data-wilson" not in cell.attrs
            or json.loads(cell.attrs["data-wilson"])["value"] is None
        ):
            continue
        (where,) = [json.loads(e.attrs["data-filter"]) for e in _inside(elements, cell)]
        assert where["counted"] == cell.attrs["data-metric"]
        assert len(matching(data, where)) == json.loads(cell.attrs["data-wilson"])["n"]
        checked += 1
    assert checked > 0
    for cell in elements:
        if "data-outcomes" in cell.attrs:
            group = _group(report, cell)
            for link in _inside(elements, cell):
                where = json.loads(link.attrs["data-filter"])
                assert len(matching(data, where)) == group["outcomes"][where["outcome"]]


def _inside(elements: list[Element], cell: Element) -> list[Element]:
    """The links inside a cell: the elements after it in document order, until the next cell."""
    start = elements.index(cell)
    found = []
    for element in elements[start + 1 :]:
        if element.tag in ("td", "th", "tr"):
            break
        if "data-filter" in element.attrs:
            found.append(element)
    return found


def test_episode_counts_and_error_links(reports: Reports) -> None:
    report = reports.tac
    data = report.data()
    with RunStore(report.path.parent / "runs.db") as store:
        for index, run_id in enumerate(report.run_ids):
            records = list(store.episodes(run_id))
            mine = [e for e in data["episodes"] if e["run"] == index]
            assert len(mine) == len(records)
            assert {(e["sample"], e["condition"], e["epoch"]) for e in mine} == {
                (r.sample_id, r.condition, r.epoch) for r in records
            }
    errors = [e for e in data["episodes"] if e["status"] == "error"]
    assert errors and all(e["counted"] == [] for e in errors)
    links = [
        json.loads(e.attrs["data-filter"])
        for e in read_html(report.html).elements
        if "data-filter" in e.attrs
    ]
    error_links = [w for w in links if w.get("outcome") == "(error)"]
    assert {"run": "mixed", "outcome": "(error)"} in error_links
    for where in error_links:
        assert matching(data, where) and all(e["status"] == "error" for e in matching(data, where))


def test_texts_are_stored_once_and_evidence_points_into_the_transcript(reports: Reports) -> None:
    data = reports.tac.data()
    texts = data["texts"]
    assert len(texts) == len(set(texts))
    system = {
        texts[m["content"]]
        for e in data["episodes"]
        for m in e["messages"]
        if m["role"] == "system"
    }
    assert len(system) == 2  # one system prompt per condition, however many episodes
    for episode in data["episodes"]:
        calls = {c["id"] for m in episode["messages"] for c in m["calls"]}
        for evidence in episode["evidence"]:  # the call to highlight is in the transcript
            assert evidence["tool_call_id"] is None or evidence["tool_call_id"] in calls


# --- one file, nothing from the network --------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_page_is_self_contained(reports: Reports, name: str) -> None:
    report = _report(reports, name)
    elements = read_html(report.html).elements
    for element in elements:
        assert element.tag not in {"link", "img", "iframe", "object", "embed", "base"}
        assert "src" not in element.attrs, element
        if "href" in element.attrs:
            assert element.attrs["href"].startswith("#"), element
    scripts = [e for e in elements if e.tag == "script"]
    assert [s.attrs.get("type") for s in scripts] == ["application/json", None]
    (style,) = [e for e in elements if e.tag == "style"]
    assert "url(" not in style.text and "@import" not in style.text
    (policy,) = [e.attrs["content"] for e in elements if e.attrs.get("http-equiv")]
    digest = base64.b64encode(hashlib.sha256(scripts[1].text.encode()).digest()).decode()
    assert policy.startswith("default-src 'none';")
    assert f"script-src 'sha256-{digest}'" in policy


# --- nothing anyone wrote becomes markup -------------------------------------------------------


def test_markup_from_models_and_scenario_files_stays_text(reports: Reports) -> None:
    report = reports.payload
    html = report.html
    for name, payload in PAYLOADS.items():
        if name != "separators":  # harmless in HTML text; they matter only in the script
            assert payload not in html, name
    assert html.lower().count("<script") == 2
    assert html.lower().count("</script") == 2
    elements = read_html(html).elements
    assert {e.tag for e in elements} <= TAGS
    for element in elements:
        assert not [a for a in element.attrs if a.startswith("on")], element
    # The run id, the agent and the scenario are shown, as text.
    texts = " ".join(e.text for e in elements if e.tag in ("td", "th", "h3", "title", "text"))
    assert "xss" + PAYLOADS["img"] in texts
    assert "python/tests:" + PAYLOADS["script"] in texts
    # The browser's data carries every payload unchanged.
    (script,) = [e for e in elements if e.attrs.get("id") == "deedbench-data"]
    assert "\u2028" not in script.text and "\u2029" not in script.text
    data = report.data()
    (episode, *_) = data["episodes"]
    assert episode["sample"].startswith("xss" + XSS)
    assert episode["groups"]["scenario"] == "xss" + XSS
    assistant = episode["messages"][2]
    assert data["texts"][assistant["content"]] == XSS
    assert data["texts"][assistant["reasoning"]] == XSS
    assert [c["name"] for c in assistant["calls"]] == ["search_experiences", PAYLOADS["script"]]
    assert episode["evidence"][0]["tool_call_id"] == "buy" + PAYLOADS["img"]
    assert episode["choice"] == "x-1" + PAYLOADS["img"]


# --- edge cases --------------------------------------------------------------------------------


def test_a_run_with_no_episodes_renders(reports: Reports) -> None:
    with RunStore(reports.tac.path.parent / "runs.db") as store:
        config = store.require_run("relevance")
    empty = summarize(config, [])
    page = render_html([empty], {"relevance": []})
    cells = [e for e in read_html(page).elements if "data-wilson" in e.attrs]
    assert cells and all(e.text == "n/a" for e in cells)


# --- flips, audits, the glossary, pass^k with one epoch ----------------------------------------


def test_flip_pairs_are_the_pairs_the_flip_rates_count(reports: Reports) -> None:
    report = reports.tac
    data = report.data()
    checked = 0
    for summary in report.summaries:
        run = summary["run"]["run_id"]
        for c in summary["conditions"]:
            for flip in c["flips"]:
                where = {"run": run, "condition": c["condition"], "flip": flip["variant"]}
                pairs = matching(data, where)
                assert len(pairs) == flip["flips"]["n"]
                assert len(matching(data, {**where, "flipped": True})) == flip["flips"]["flips"]
                for ep in pairs:
                    base = data["episodes"][ep["pair"]["base"]]
                    assert base["groups"]["variant"] == "base"
                    assert base["groups"]["scenario"] == ep["groups"]["scenario"]
                    assert (base["run"], base["condition"], base["epoch"]) == (
                        ep["run"],
                        ep["condition"],
                        ep["epoch"],
                    )
                checked += 1
    assert checked == 12
    # Every link of the flips tables shows pairs (not a variant's episodes), as do the
    # chart's points: pairs, flips and rate per row, one point per row.
    in_tables = [e for e in _with(report, "data-filter") if "data-variant" in e.row]
    flips = [f["flips"] for s in report.summaries for c in s["conditions"] for f in c["flips"]]
    assert len(in_tables) == sum(3 if f["flips"] else 2 for f in flips)  # no link to 0 flips
    assert all("flip" in json.loads(e.attrs["data-filter"]) for e in in_tables)
    points = [
        json.loads(e.attrs["data-filter"])
        for e in _with(report, "data-filter")
        if e.tag == "g" and "flip" in e.attrs["data-filter"]
    ]
    assert len(points) == 12


def test_audit_rates_link_to_the_episodes_they_count(reports: Reports) -> None:
    report = reports.model
    data = report.data()
    summary = _summary(report, "gpt")
    links = {
        (w["condition"], w["audit"]): w
        for w in (json.loads(e.attrs["data-filter"]) for e in _with(report, "data-filter"))
        if "audit" in w
    }
    assert len(links) == len(summary["audits"]) == 2
    for audit in summary["audits"]:
        where = links[(audit["condition"], "flagged:")]
        flagged = matching(data, where)
        assert len(flagged) == audit["flagged"]["k"]
        assert all(ep["flags"] for ep in flagged)
        for ep in flagged:
            for flag in ep["flags"]:
                message = ep["messages"][flag["message_index"]]
                text = " ".join(
                    data["texts"][i]
                    for i in (message["content"], message["reasoning"])
                    if i is not None
                )
                assert flag["match"] in text


@pytest.mark.parametrize("name", ["tac", "retail", "taubench"])
def test_the_glossary_defines_every_metric(reports: Reports, name: str) -> None:
    report = _report(reports, name)
    elements = read_html(report.html).elements
    glossaries = [e for e in elements if e.tag == "dl" and e.attrs.get("class") == "metrics"]
    assert len(glossaries) == len(report.summaries)
    start = elements.index(glossaries[0])
    terms = [e.text for e in elements[start:] if e.tag == "dt"]
    definitions = [e.text for e in elements[start:] if e.tag == "dd"]
    metrics = report.summaries[0]["run"]["report"]["metrics"]
    for metric in metrics:
        at = terms.index(metric["name"])
        definition = definitions[at]
        assert definition == metric["description"] + (
            f" (among episodes with {metric['given']} = 1)" if metric["given"] else ""
        )
        assert definition and not definition.startswith(metric["name"])


def test_one_epoch_of_pass_hat_k_is_said_not_drawn(reports: Reports) -> None:
    one = _report(reports, "taubench")
    assert one.summaries[0]["run"]["epochs"] == 1
    classes = [e.attrs.get("class", "") for e in read_html(one.html).elements]
    assert "passk-chart" not in classes
    assert classes.count("note one-epoch") == 1 + len(one.summaries)  # the chart's, each table's
    assert "only pass^1" in one.html and "--epochs 2" in one.html
    two = [e.attrs.get("class", "") for e in read_html(reports.retail.html).elements]
    assert "passk-chart" in two and "note one-epoch" not in two
