"""The viewer's pages: small HTML frames that its script (assets/view.js, after the HTML
report's transcript.js, which builds an episode's messages) fills from the API.

What a page knows before any fetch (the run's configuration, the two sides of a
comparison) is written here, every value through `html.escape`; everything else the
script puts in with textContent, or as the report's own escaped markup (its figures).
A URL names a page whole, so it can be shared: a run, a run with a filter (a group's
rate), an episode, two sides, two episodes. A URL that names nothing in the store is a
404 page saying what was not found.
"""

from __future__ import annotations

import json
from functools import cache
from html import escape
from importlib import resources
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from deedbench.records import RunConfig
from deedbench.reports.format import data_label
from deedbench.secrets import redact
from deedbench.version import __version__
from deedbench.view.api import Rejected, catalog_of, parse_key, parse_ref, parse_sides
from deedbench.view.catalog import UnknownEpisode

__all__ = [
    "ASSETS",
    "asset",
    "compare_page",
    "error_page",
    "pair_page",
    "routes",
    "run_page",
    "runs_page",
]

# name -> (package, file, media type): the only files the viewer serves
ASSETS = {
    "report.css": ("deedbench.reports.html", "report.css", "text/css"),
    "transcript.js": ("deedbench.reports.html", "transcript.js", "text/javascript"),
    "view.css": ("deedbench.view", "assets/view.css", "text/css"),
    "view.js": ("deedbench.view", "assets/view.js", "text/javascript"),
}


def _page(title: str, main: str, **data: str) -> HTMLResponse:
    attrs = "".join(f' data-{name}="{escape(value)}"' for name, value in data.items())
    html = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'  # no favicon request
        f"<title>{escape(title)} · deedbench view</title>"
        '<link rel="stylesheet" href="/assets/report.css">'
        '<link rel="stylesheet" href="/assets/view.css">'
        '<script src="/assets/transcript.js" defer></script>'
        '<script src="/assets/view.js" defer></script></head>\n'
        f'<body><nav class="view-top"><a href="/" class="home">deedbench view</a>'
        f'<span class="version">deedbench {escape(__version__)}</span></nav>'
        f"<main{attrs}>{main}</main></body></html>\n"
    )
    return HTMLResponse(redact(html))


def error_page(status: int, reason: str) -> HTMLResponse:
    body = f'<h1>{status}</h1><p class="reason">{escape(reason)}</p><p><a href="/">all runs</a></p>'
    response = _page(f"{status}", body, page="error")
    response.status_code = status
    return response


def runs_page(request: Request) -> Response:
    main = (
        "<h1>Runs</h1>"
        '<p class="note">Every run in the store, newest first; figures update while runs '
        "are executed. Tick two runs to put them side by side.</p>"
        '<form id="runs-filters" class="filters" autocomplete="off"></form>'
        '<div id="runs" class="table-wrap"><p class="note">reading the store…</p></div>'
    )
    return _page("runs", main, page="runs")


def run_page(request: Request) -> Response:
    catalog = catalog_of(request)
    run_id = request.path_params["run_id"]
    try:
        config = catalog.run(run_id)
    except LookupError:
        raise Rejected(404, f"no run {run_id[:200]!r} in the store") from None
    opened = ""
    if "sample" in request.path_params:
        p = request.path_params
        key = parse_key(p["condition"], p["epoch"], p["sample"])
        try:
            catalog.episode(run_id, key)
        except UnknownEpisode:
            raise Rejected(
                404,
                f"run {run_id!r} has no stored episode {key.sample_id[:200]!r} "
                f"/ {key.condition[:80]!r} / epoch {key.epoch}",
            ) from None
        opened = f"{run_id}/{key.condition}/{key.epoch}/{key.sample_id}"
    main = (
        _run_header(config)
        + '<div id="figures"><p class="note">computing the figures…</p></div>'
        + _browser()
    )
    return _page(run_id, main, page="run", run=run_id, open=opened)


def _run_header(config: RunConfig) -> str:
    sides = "".join(
        f' <a href="/compare?a={_q(config.run_id)}/{_q(config.conditions[0])}'
        f'&amp;b={_q(config.run_id)}/{_q(c)}">{escape(c)} vs {escape(config.conditions[0])}</a>'
        for c in config.conditions[1:]
    )
    facts = [
        ("benchmark", config.benchmark),
        ("agent", config.agent),
        ("user", config.user.spec if config.user is not None else "—"),
        ("conditions", ", ".join(config.conditions)),
        ("epochs", str(config.epochs)),
        ("samples", str(len(config.sample_ids))),
        ("seed", str(config.seed)),
        ("data", data_label(config.data_hash)),
        ("created", config.created_at[:19]),
        ("deedbench", config.deedbench_version),
    ]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
    whole = json.dumps(config.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return (
        f"<h1>{escape(config.run_id)} <small>{escape(config.agent)} on "
        f"{escape(config.benchmark)}</small></h1>"
        '<p id="run-status" class="status">reading the run…</p>'
        + (f'<p class="sides">Side by side:{sides}</p>' if sides else "")
        + f'<dl class="facts run-facts">{items}</dl>'
        + '<details class="config"><summary>the whole configuration</summary>'
        + f"<pre>{escape(whole)}</pre></details>"
    )


def _browser() -> str:
    """The transcript browser's frame, with the report's element ids and classes."""
    return (
        '<section id="episodes"><h2>Episodes</h2>'
        '<p class="note">Filter the episodes, or click any rate above to see exactly the '
        "episodes it counts; each episode has its own address. The call a score rests on "
        'is marked <span class="badge deciding-badge">★ deciding call</span>.</p>'
        '<div class="browser-bar"><form id="filters" class="filters" autocomplete="off">'
        '</form><p id="match-summary" class="count"></p></div>'
        '<div class="browser"><div id="episode-list" class="episode-list"></div>'
        '<div id="episode-detail" class="episode-detail"><p class="note">No episode open.'
        "</p></div></div></section>"
    )


def compare_page(request: Request) -> Response:
    catalog = catalog_of(request)
    a, b = parse_sides(catalog, request)
    title = f"{b[0]}/{b[1]} vs {a[0]}/{a[1]}"
    main = (
        f"<h1>Side by side <small>{escape(title)}</small></h1>"
        '<div id="contrast"><p class="note">pairing the episodes…</p></div>'
        '<div id="pairs"></div>'
    )
    return _page(title, main, page="compare", a="/".join(a), b="/".join(b))


def pair_page(request: Request) -> Response:
    catalog = catalog_of(request)
    refs = []
    for name in ("a", "b"):
        run_id, key = parse_ref(request.query_params.get(name))
        try:
            catalog.episode(run_id, key)
        except LookupError:
            raise Rejected(
                404, f"no stored episode {request.query_params.get(name, '')[:300]!r}"
            ) from None
        refs.append(f"{run_id}/{key.condition}/{key.epoch}/{key.sample_id}")
    main = (
        "<h1>Two episodes side by side</h1>"
        '<div id="pair"><p class="note">reading the episodes…</p></div>'
    )
    return _page("two episodes", main, page="pair", a=refs[0], b=refs[1])


def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS:
        raise Rejected(404, "no such file")
    package, path, media = ASSETS[name]
    return Response(_read(package, path), media_type=media)


@cache
def _read(package: str, path: str) -> str:
    return resources.files(package).joinpath(path).read_text(encoding="utf-8")


def _q(text: str) -> str:
    return escape(quote(text, safe=""))


routes = [
    Route("/", runs_page),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/episodes/{condition}/{epoch}/{sample:path}", run_page),
    Route("/compare", compare_page),
    Route("/pair", pair_page),
    Route("/assets/{name}", asset),
]
