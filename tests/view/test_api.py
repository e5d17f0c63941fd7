"""The viewer's JSON API: the report's own figures, filters that select what a rate counts,
pairings, and a 4xx (never a traceback) for anything malformed."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from starlette.testclient import TestClient

from deedbench.view import StoreReader
from deedbench.view.app import POLICY
from reports._html_support import PAYLOADS, Reports, read_html


def get(client: TestClient, path: str, status: int = 200) -> Any:
    response = client.get(path)
    assert response.status_code == status, response.text
    return response.json()


def all_summaries(reports: Reports) -> list[dict[str, Any]]:
    return [s for r in (reports.tac, reports.retail, reports.model) for s in r.summaries]


def test_every_run_is_listed_newest_first_with_its_progress_and_rates(
    client: TestClient, reports: Reports
) -> None:
    get(client, "/api/runs/mixed/summary")  # one run's figures computed, the others later
    runs = get(client, "/api/runs")["runs"]
    ids = [r["id"] for r in runs]
    assert set(ids) == {
        "xss" + PAYLOADS["img"],
        "gpt",
        "oracle",
        "reckless",
        "idle",
        "relevance",
        "mixed",
    }
    assert ids[0] == "xss" + PAYLOADS["img"]  # the last made
    created = [r["created"] for r in runs]
    assert created == sorted(created, reverse=True)
    by_id = {r["id"]: r for r in runs}
    for summary in all_summaries(reports):
        row = by_id[summary["run"]["run_id"]]
        assert (row["scored"], row["errors"], row["planned"]) == (
            summary["scored"],
            summary["errors"],
            summary["planned"],
        )
        assert row["state"] == "finished" and row["executor"] is None
    mixed = by_id["mixed"]["figures"]
    assert mixed is not None and mixed["of_episodes"] == 192 and mixed["cost"] is None
    (summary,) = [s for s in reports.tac.summaries if s["run"]["run_id"] == "mixed"]
    base = summary["conditions"][0]["overall"]["metrics"]["welfare"]
    assert mixed["rates"][0]["condition"] == "base"
    assert mixed["rates"][0]["rate"] == f"{100 * base['value']:.1f}%"
    assert (
        mixed["rates"][0]["wilson"] == f"[{100 * base['ci_low']:.1f}, {100 * base['ci_high']:.1f}]"
    )


def test_a_summary_is_what_report_json_prints(client: TestClient, reports: Reports) -> None:
    for summary in all_summaries(reports):
        assert get(client, f"/api/runs/{summary['run']['run_id']}/summary") == summary


@pytest.mark.slow  # every link of four runs' figures, each asked of the API
def test_every_link_in_the_figures_selects_exactly_the_episodes_it_counts(
    client: TestClient,
) -> None:
    """The figures are the HTML report's markup; each link's filter, sent to the episodes
    API, gives the count its cell stands for (a rate's n, an outcome's count, a group's n)."""
    checked = faults = 0
    for run_id in ("mixed", "oracle", "reckless", "idle"):
        figures = get(client, f"/api/runs/{run_id}/figures")
        for where, cell, row in _links(figures["html"]):
            if "data-wilson" in cell and "counted" in where:
                expected = json.loads(cell["data-wilson"])["n"]
            elif "data-outcomes" in cell:
                expected = json.loads(cell["data-outcomes"])[where["outcome"]]
            elif "data-faults" in cell:  # whose failure, or a kind of fault found
                expected = json.loads(cell["data-faults"])[where["fault"]]
                faults += 1
            elif where.get("outcome") == "(scored)" and "data-episodes" in row:
                expected = int(row["data-episodes"])
            else:
                continue
            shown = get(client, f"/api/runs/{run_id}/episodes?{_query(where)}")["total"]
            assert shown == expected, (where, row)
            checked += 1
    assert checked > 100 and faults >= 1
    undone = "fault=fault:agent.action_not_done"
    assert get(client, f"/api/runs/idle/episodes?{undone}")["total"] == 32  # it does nothing
    # the reckless agent never asks for consent, but passes τ's reward: a procedure
    # verdict, not a failure, so no episode of it is anyone's failure (issue 38)
    consent = "fault=fault:agent.procedure.consent"
    assert get(client, f"/api/runs/reckless/episodes?{consent}")["total"] == 0
    for none in ("party:user", "fault:user.early_stop", "nonsense:agent"):
        assert get(client, f"/api/runs/reckless/episodes?fault={none}")["total"] == 0


class _Links(HTMLParser):
    """Each link with a filter, with the attributes of its table cell and row."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[dict[str, Any], dict[str, str], dict[str, str]]] = []
        self.cell: dict[str, str] = {}
        self.row: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self.row = values
        elif tag in ("td", "th"):
            self.cell = values
        elif tag == "a" and "data-filter" in values:
            self.found.append((json.loads(values["data-filter"]), self.cell, self.row))


def _links(html: str) -> list[tuple[dict[str, Any], dict[str, str], dict[str, str]]]:
    parser = _Links()
    parser.feed(html)
    return parser.found


def _query(where: dict[str, Any]) -> str:
    pairs = [(k, v) for k, v in where.items() if k in ("condition", "outcome", "counted", "fault")]
    pairs += [("group", f"{k}:{v}") for k, v in where.get("group", {}).items()]
    return urlencode(pairs)


def test_an_episode_is_the_report_browsers_record_with_episodes_to_put_beside_it(
    client: TestClient, reports: Reports
) -> None:
    data = get(client, "/api/runs/relevance/episodes/welfare/1/seville_bullfight_price_swap")
    browser = reports.tac.data()
    (expected,) = [
        e
        for e in browser["episodes"]
        if browser["runs"][e["run"]]["id"] == "relevance"
        and (e["sample"], e["condition"]) == ("seville_bullfight_price_swap", "welfare")
    ]
    texts = browser["texts"]
    episode = data["episode"]
    for name in ("sample", "condition", "epoch", "seed", "outcome", "choice", "values", "evidence"):
        assert episode[name] == expected[name]
    shown = [data["texts"][m["content"]] for m in episode["messages"] if m["content"] is not None]
    assert shown == [texts[m["content"]] for m in expected["messages"] if m["content"] is not None]
    related = {r["label"]: r["ref"] for r in data["related"]}
    assert related == {
        "base (same sample)": "relevance/base/1/seville_bullfight_price_swap",
        "the base variant (seville_bullfight_base)": "relevance/welfare/1/seville_bullfight_base",
        "python/tests:MixedAgent (run mixed)": "mixed/welfare/1/seville_bullfight_price_swap",
    }


def test_two_conditions_side_by_side_pair_as_the_summary_does(
    client: TestClient, reports: Reports
) -> None:
    data = get(client, "/api/compare?a=mixed/base&b=mixed/welfare")
    (summary,) = [s for s in reports.tac.summaries if s["run"]["run_id"] == "mixed"]
    versus = summary["conditions"][1]["versus_first"]
    assert data["contrast"]["difference"] == versus["difference"]
    assert data["contrast"]["mcnemar"] == versus["mcnemar"]
    assert data["pairs"] == versus["difference"]["n_shared"] == data["total"]
    assert data["headline"].startswith("mixed/welfare vs mixed/base, welfare rate: ")
    gained = [r for r in data["rows"] if r["difference"] > 0]
    lost = [r for r in data["rows"] if r["difference"] < 0]
    assert (len(gained), len(lost)) == (versus["mcnemar"]["b01"], versus["mcnemar"]["b10"])
    differ = get(client, "/api/compare?a=mixed/base&b=mixed/welfare&only=differ&limit=5")
    assert differ["total"] == len(gained) + len(lost) and len(differ["rows"]) == 5
    assert all(r["difference"] != 0 for r in differ["rows"])
    row = data["rows"][0]
    assert row["a"]["ref"] == f"mixed/base/{row['epoch']}/{row['sample']}"


def test_two_runs_side_by_side_pair_as_compare_does(client: TestClient) -> None:
    data = get(client, "/api/compare?a=mixed&b=relevance")  # the first condition of each
    assert (data["a"]["condition"], data["b"]["condition"]) == ("base", "base")
    assert data["pairs"] == 48 and data["only_a"] == 48 and data["only_b"] == 0  # epochs 2, 1
    assert all(r["b"]["outcome"] == "harmful" for r in data["rows"])  # the relevance trap
    other = get(client, "/api/compare?a=mixed/base&b=oracle")
    assert other["contrast"] is None and other["rows"] == []
    assert "no shared samples" in other["note"]


def test_two_episodes_side_by_side_align_their_tool_calls(client: TestClient) -> None:
    a, b = "relevance/base/1/seville_bullfight_base", "relevance/welfare/1/seville_bullfight_base"
    data = get(client, f"/api/pair?a={quote(a)}&b={quote(b)}")
    names = [
        [None if at is None else side["episode"]["messages"][at[0]]["calls"][at[1]]["name"]
         for at in (row["a"], row["b"])]
        for row, side in ((row, data["a"]) for row in data["rows"])
    ]  # fmt: skip
    assert [row["same"] for row in data["rows"]] == [True] * len(data["rows"])
    assert names[0][0] == "search_experiences" and names[-1][0] == "purchase_tickets"
    mixed = get(client, f"/api/pair?a={quote(a)}&b={quote('mixed/base/1/seville_bullfight_base')}")
    gaps = [row for row in mixed["rows"] if row["b"] is None]
    assert gaps  # the mixed agent reads no details: relevance's extra calls face gaps


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/runs/no-such-run/summary", 404),
        ("/api/runs/no-such-run/episodes", 404),
        ("/runs/no-such-run", 404),
        ("/api/runs/mixed/episodes/base/1/no-such-sample", 404),
        ("/runs/mixed/episodes/base/1/no-such-sample", 404),
        ("/api/runs/mixed/episodes/no-such-condition/1/seville_bullfight_base", 404),
        ("/api/runs/mixed/episodes/base/0/seville_bullfight_base", 404),
        ("/api/runs/mixed/episodes/base/-1/seville_bullfight_base", 404),
        ("/api/runs/mixed/episodes/base/x/seville_bullfight_base", 404),
        (f"/api/runs/mixed/episodes/base/{10**30}/seville_bullfight_base", 404),
        (f"/api/runs/mixed/episodes?offset={10**30}", 400),
        ("/api/runs/mixed/episodes?limit=100000", 400),
        ("/api/runs/mixed/episodes?offset=-5", 400),
        ("/api/runs/mixed/episodes?group=nocolon", 400),
        ("/api/runs/mixed/episodes?q=" + "x" * 201, 400),
        ("/api/compare?a=mixed/base", 400),
        ("/api/compare?a=mixed/base&b=mixed/base", 400),
        ("/api/compare?a=mixed/nope&b=relevance", 404),
        ("/api/compare?b=mixed", 400),
        ("/api/pair?a=mixed/base/1&b=mixed/base/1/x", 400),
        ("/api/pair?a=mixed/base/1/nope&b=mixed/base/1/seville_bullfight_base", 404),
        ("/pair?a=" + "%2F" * 5000, 400),
        ("/assets/../pyproject.toml", 404),
        ("/assets/..%2F..%2Fpyproject.toml", 404),
        ("/assets/%2e%2e/app.py", 404),
        ("/assets/view.py", 404),
        ("/api/nothing", 404),
        ("/etc/passwd", 404),
    ],
)
def test_malformed_requests_get_a_4xx_with_a_reason(
    client: TestClient, path: str, status: int
) -> None:
    response = client.get(path)
    assert response.status_code == status, response.text
    assert response.headers["content-security-policy"] == POLICY
    assert "Traceback" not in response.text and 'File "' not in response.text
    if path.startswith("/api/"):
        assert response.json()["error"]
    else:
        assert f"<h1>{status}</h1>" in response.text


def test_only_get_is_answered_and_only_for_this_server(client: TestClient) -> None:
    assert client.post("/api/runs").status_code == 405
    assert client.delete("/runs/mixed").status_code == 405
    rebound = client.get("/api/runs", headers={"host": "attacker.example"})
    assert rebound.status_code == 400  # a page that rebinds its name to 127.0.0.1 reads nothing
    assert "mixed" not in rebound.text
    assert client.get("/api/runs", headers={"host": "localhost:7575"}).status_code == 200


def test_every_answer_has_the_policy_and_serves_no_other_files(client: TestClient) -> None:
    for path in ("/", "/runs/mixed", "/assets/view.js", "/assets/report.css", "/api/runs"):
        response = client.get(path)
        assert response.status_code == 200
        headers = response.headers
        assert headers["content-security-policy"] == POLICY
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"
    assert "script-src 'self';" in POLICY and "default-src 'none'" in POLICY
    assert "connect-src 'self'" in POLICY  # nothing fetched from elsewhere


def test_markup_in_run_ids_and_data_is_escaped_in_every_page(client: TestClient) -> None:
    run_id = "xss" + PAYLOADS["img"]
    page = client.get(f"/runs/{quote(run_id, safe='')}")
    assert page.status_code == 200
    assert PAYLOADS["img"] not in page.text and PAYLOADS["script"] not in page.text
    assert "&lt;img src=x onerror=" in page.text
    figures = get(client, f"/api/runs/{quote(run_id, safe='')}/figures")["html"]
    for payload in ("script", "img", "svg"):
        assert PAYLOADS[payload] not in figures
    elements = {e.tag for e in read_html(figures).elements}
    assert not elements & {"script", "img", "iframe", "object", "embed"}


def test_keys_a_run_read_are_redacted_from_every_answer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gpt run read OPENAI_API_KEY; if its value is in a stored record (an older
    version stored what a provider echoed), no answer shows it."""
    secret = "Weighing the listings"  # the fake model's reasoning, in every transcript
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ref = "gpt/base/1/budapest_animal_circus_base"
    answers = [
        client.get("/api/runs").text,
        client.get("/api/runs/gpt/figures").text,
        client.get("/api/runs/gpt/summary").text,
        client.get("/api/runs/gpt/episodes/base/1/budapest_animal_circus_base").text,
        client.get(f"/api/pair?a={quote(ref)}&b={quote(ref)}").text,
        client.get("/runs/gpt").text,
    ]
    assert all(secret not in text for text in answers)
    assert "[REDACTED]" in answers[3]


def test_pages_of_episodes_follow_the_reports_order(client: TestClient, reports: Reports) -> None:
    """Walked a page at a time (pages of 7 cut through samples and conditions), the list
    is the HTML report's browser, in its order; newest first, the order written reversed."""
    browser = reports.tac.data()
    in_report = [
        f"mixed/{e['condition']}/{e['epoch']}/{e['sample']}"
        for e in browser["episodes"]
        if browser["runs"][e["run"]]["id"] == "mixed"
    ]
    reader = StoreReader(reports.tac.path.parent / "runs.db", on_corrupt=pytest.fail)
    written = [
        f"mixed/{r.condition}/{r.epoch}/{r.sample_id}" for _, r in reader.light_records("mixed")
    ]
    for sort, expected in (("run", in_report), ("newest", written[::-1])):
        walked: list[str] = []
        total = 1
        while len(walked) < total:
            page = get(client, f"/api/runs/mixed/episodes?limit=7&offset={len(walked)}&sort={sort}")
            total = page["total"]
            walked += [row["ref"] for row in page["rows"]]
        assert walked == expected and total == 192
