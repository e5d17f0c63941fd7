"""The viewer's JSON API: what its pages fetch, each answer read from the store.

Every answer is JSON with registered secrets redacted; a request that names no run,
no episode or a malformed one gets a 4xx with a one-line reason (`Rejected`), never a
traceback. Figures come from the report's own code: a run's summary is
`summarize`'s (what `deedbench report --json` prints) and its figures are the HTML
report's tables and charts (`render_figures`).
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import RootModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from deedbench.records import MAX_EPOCHS, EpisodeKey, Party, RunConfig
from deedbench.reports.format import contrast_text, interval, pct
from deedbench.reports.html import render_figures
from deedbench.secrets import redact
from deedbench.view.align import align_calls, calls_of
from deedbench.view.catalog import Catalog, EpisodeFilter, UnknownEpisode
from deedbench.view.source import Activity
from deedbench.view.summaries import Summarized

__all__ = [
    "MAX_OFFSET",
    "MAX_TEXT",
    "PAGE_LIMIT",
    "Rejected",
    "activity",
    "catalog_of",
    "compare",
    "episode",
    "episodes",
    "figures",
    "json_response",
    "pair",
    "parse_key",
    "parse_ref",
    "parse_side",
    "parse_sides",
    "routes",
    "runs",
    "summary",
]

PAGE_LIMIT = 500  # most rows one answer carries
MAX_TEXT = 200  # longest search text or sample filter
MAX_OFFSET = 10_000_000


class Rejected(Exception):
    """A request the viewer cannot answer: its status (400, 404) and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def catalog_of(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


def json_response(value: object, status: int = 200) -> Response:
    """`value` as JSON (pydantic's, as `report --json` writes it), secrets redacted."""
    text = RootModel[object](value).model_dump_json()
    return Response(redact(text), status_code=status, media_type="application/json")


# --- parsing requests ------------------------------------------------------------------------


def parse_key(condition: str, epoch: str, sample: str) -> EpisodeKey:
    """An episode key from a URL's parts: the epoch a number within the plan's bounds."""
    if not epoch.isdigit() or len(epoch) > 7 or not 1 <= int(epoch) <= MAX_EPOCHS:
        raise Rejected(404, f"no epoch {epoch[:20]!r}: epochs are numbers from 1 to {MAX_EPOCHS}")
    if not sample or not condition:
        raise Rejected(404, "an episode needs a condition, an epoch and a sample")
    return EpisodeKey(sample, condition, int(epoch))


def parse_ref(text: str | None) -> tuple[str, EpisodeKey]:
    """`run/condition/epoch/sample`, as `catalog.ref` writes it."""
    parts = (text or "").split("/", 3)
    if len(parts) != 4 or not all(parts) or not parts[2].isdigit():
        raise Rejected(400, "an episode is given as run/condition/epoch/sample")
    run_id, condition, epoch, sample = parts
    return run_id, parse_key(condition, epoch, sample)


def parse_side(catalog: Catalog, text: str | None, default: str | None = None) -> tuple[str, str]:
    """`run/condition`, or `run` alone for `default` (when the run has it) or its first."""
    run_id, _, condition = (text or "").partition("/")
    if not run_id:
        raise Rejected(400, "a side is given as run or run/condition")
    config = _config(catalog, run_id)
    if not condition:
        condition = config.conditions[0]
        if default is not None and default in config.conditions:
            condition = default
    if condition not in config.conditions:
        known = ", ".join(config.conditions)
        raise Rejected(404, f"run {run_id!r} has no condition {condition[:80]!r} (it has {known})")
    return run_id, condition


def parse_sides(catalog: Catalog, request: Request) -> tuple[tuple[str, str], tuple[str, str]]:
    """The two sides of a side by side, `a` and `b` (b's condition defaults to a's); 400
    when both name the same run and condition."""
    a = parse_side(catalog, request.query_params.get("a"))
    b = parse_side(catalog, request.query_params.get("b"), default=a[1])
    if a == b:
        raise Rejected(400, "a side by side needs two different sides")
    return a, b


def _config(catalog: Catalog, run_id: str) -> RunConfig:
    try:
        return catalog.run(run_id)
    except LookupError:
        raise Rejected(404, f"no run {run_id[:200]!r} in the store") from None


def _number(request: Request, name: str, default: int, most: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit() or len(text) > 9 or int(text) > most:
        raise Rejected(400, f"{name} must be a whole number from 0 to {most}")
    return int(text)


def _text(request: Request, name: str) -> str:
    text = request.query_params.get(name, "").strip()
    if len(text) > MAX_TEXT:
        raise Rejected(400, f"{name} is longer than {MAX_TEXT} characters")
    return text


def _filter(request: Request) -> EpisodeFilter:
    """The browser's filter from a query: condition, group=KEY:VALUE (repeated), outcome,
    counted, sample, q (transcript text), fault (party:PARTY or fault:KIND)."""
    groups = {}
    for item in request.query_params.getlist("group")[:20]:
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise Rejected(400, "group is given as KEY:VALUE")
        groups[key] = value
    return EpisodeFilter(
        condition=request.query_params.get("condition") or None,
        groups=groups,
        outcome=request.query_params.get("outcome") or None,
        counted=request.query_params.get("counted") or None,
        sample=_text(request, "sample"),
        text=_text(request, "q"),
        fault=_text(request, "fault") or None,
    )


# --- answers ---------------------------------------------------------------------------------


def runs(request: Request) -> Response:
    """Every run, newest first: what it is, how far it got, its primary rate and cost."""
    rows = []
    for config, act, summarized in catalog_of(request).overview():
        rows.append(
            {
                "id": config.run_id,
                "created": config.created_at,
                "benchmark": config.benchmark,
                "agent": config.agent,
                "conditions": config.conditions,
                "epochs": config.epochs,
                "planned": config.planned_episodes,
                "scored": act.counts.get("scored", 0),
                "errors": act.counts.get("error", 0),
                "state": _state(config, act),
                "executor": act.executor,
                "version": act.version,
                "primary": config.report.primary,
                "figures": None if summarized is None else _headline(summarized),
            }
        )
    return json_response({"runs": rows})


def _state(config: RunConfig, act: Activity) -> str:
    if act.executor is not None:
        return "running"
    if config.imported_from is not None:  # its episodes are its file's: none to run
        return "imported"
    return "finished" if sum(act.counts.values()) >= config.planned_episodes else "stopped"


def _headline(summarized: Summarized) -> dict[str, Any]:
    """The primary rate of each condition with both intervals, and the run's cost."""
    summary = summarized.summary
    primary = summary.run.report.primary
    rates = []
    for c in summary.conditions:
        wilson, boot = c.overall.metrics[primary], c.overall.clustered.get(primary)
        rates.append(
            {
                "condition": c.condition,
                "rate": pct(wilson.value),
                "wilson": interval(wilson, point=False),
                "boot": None if boot is None else interval(boot, point=False),
                "n": wilson.n,
            }
        )
    costs = [cost.cost_usd for cost in summary.costs]
    known = [c for c in costs if c is not None]
    cost = None if not costs else "unknown" if len(known) < len(costs) else f"${sum(known):.4f}"
    return {"rates": rates, "cost": cost, "of_episodes": summarized.episodes}


def activity(request: Request) -> Response:
    """What a page polls: the run's version changes whenever anything shown may have."""
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    config = _config(catalog, run_id)
    act = catalog.activity().get(run_id) or Activity({}, 0, 0, None)
    return json_response(
        {
            "version": act.version,
            "state": _state(config, act),
            "executor": act.executor,
            "scored": act.counts.get("scored", 0),
            "errors": act.counts.get("error", 0),
            "planned": config.planned_episodes,
        }
    )


def summary(request: Request) -> Response:
    """The run's summary exactly as `deedbench report --json` prints it."""
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    _config(catalog, run_id)
    summarized, _ = catalog.summary(run_id)
    return json_response(summarized.summary)


def figures(request: Request) -> Response:
    """The run's tables and charts as the HTML report draws them, and what they are of."""
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    _config(catalog, run_id)
    summarized, act = catalog.summary(run_id)
    html = render_figures([summarized.summary], {})
    return json_response(
        {
            "html": html,
            "of_episodes": summarized.episodes,
            "stored": sum(act.counts.values()),
            "seconds": round(summarized.seconds, 3),
        }
    )


_PARTIES: tuple[str, ...] = get_args(Party)


def episodes(request: Request) -> Response:
    """A page of the episodes a filter selects, their outcomes, and every filter's options."""
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    config = _config(catalog, run_id)
    where = _filter(request)
    offset = _number(request, "offset", 0, MAX_OFFSET)
    limit = _number(request, "limit", 100, PAGE_LIMIT)
    newest = request.query_params.get("sort", "run") == "newest"
    listing = catalog.episodes(run_id, where, newest_first=newest, offset=offset, limit=limit)
    spec = config.report
    return json_response(
        {
            "total": listing.total,
            "counts": listing.counts,
            "offset": offset,
            "rows": listing.rows,
            "facets": catalog.facets(run_id),
            "metrics": [
                [m.name, f"{m.name} ({m.given} = 1)" if m.given else m.name] for m in spec.metrics
            ],
            "group_by": spec.group_by,
            # whose failure, on benchmarks that attribute failures (the kinds of fault are
            # the report's links, added to the choices when one is followed)
            "faults": [[f"party:{p}", f"the {p}'s failure"] for p in _PARTIES]
            if spec.show_rules
            else [],
        }
    )


def episode(request: Request) -> Response:
    """One episode as the report's browser reads it, and episodes to put beside it."""
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    config = _config(catalog, run_id)
    p = request.path_params
    key = parse_key(p["condition"], p["epoch"], p["sample"])
    try:
        data, related = catalog.episode(run_id, key)
    except UnknownEpisode:
        raise Rejected(404, f"run {run_id!r} has no stored episode {_describe(key)}") from None
    return json_response({**data, "run": {"id": run_id, "agent": config.agent}, "related": related})


def _describe(key: EpisodeKey) -> str:
    return f"{key.sample_id[:200]!r} / {key.condition[:80]!r} / epoch {key.epoch}"


def compare(request: Request) -> Response:
    """Side b against side a on shared (sample, epoch) keys: the paired contrast and rows."""
    catalog = catalog_of(request)
    a, b = parse_sides(catalog, request)
    offset = _number(request, "offset", 0, MAX_OFFSET)
    limit = _number(request, "limit", 200, PAGE_LIMIT)
    differ = request.query_params.get("only") == "differ"
    pairing = catalog.pairing(a, b)
    rows = [r for r in pairing.rows if r["difference"] != 0 or not differ]
    result = pairing.contrast
    agents = {side: catalog.run(side[0]).agent for side in (a, b)}
    return json_response(
        {
            "a": {"run": a[0], "condition": a[1], "agent": agents[a]},
            "b": {"run": b[0], "condition": b[1], "agent": agents[b]},
            "metric": catalog.run(a[0]).report.primary,
            "contrast": result,
            "headline": None if result is None else contrast_text(result),
            "note": pairing.note,
            "pairs": len(pairing.rows),
            "differ": sum(1 for r in pairing.rows if r["difference"] != 0),
            "only_a": pairing.only_a,
            "only_b": pairing.only_b,
            "total": len(rows),
            "offset": offset,
            "rows": rows[offset : offset + limit],
        }
    )


def pair(request: Request) -> Response:
    """Two episodes with their tool calls aligned row by row."""
    catalog = catalog_of(request)
    sides = []
    for name in ("a", "b"):
        run_id, key = parse_ref(request.query_params.get(name))
        config = _config(catalog, run_id)
        try:
            data, _ = catalog.episode(run_id, key)
        except UnknownEpisode:
            raise Rejected(404, f"run {run_id!r} has no stored episode {_describe(key)}") from None
        sides.append({**data, "run": {"id": run_id, "agent": config.agent}})
    a, b = (calls_of(side["episode"]["messages"]) for side in sides)
    return json_response({"a": sides[0], "b": sides[1], "rows": align_calls(a, b)})


routes = [
    Route("/api/runs", runs),
    Route("/api/runs/{run_id}/activity", activity),
    Route("/api/runs/{run_id}/summary", summary),
    Route("/api/runs/{run_id}/figures", figures),
    Route("/api/runs/{run_id}/episodes", episodes),
    Route("/api/runs/{run_id}/episodes/{condition}/{epoch}/{sample:path}", episode),
    Route("/api/compare", compare),
    Route("/api/pair", pair),
]
