"""The HTML report: one self-contained file with tables, charts and a transcript browser.

Everything is rendered from the same `RunSummary` that `report --json` prints, and each
figure on the page carries the summary's own JSON for it in a data attribute, so the
page can be checked number by number against `--json`. Charts are inline SVG drawn
here; the transcript browser is a small inline script (report.js) over the
episodes, embedded as JSON. Nothing is fetched at view time, and the page's
Content-Security-Policy forbids it.

Anything a model, a simulated user or a data file wrote is untrusted: server-side text
goes through `html.escape`; the embedded JSON has `<`, `>`, `&` and U+2028/9 escaped,
so it cannot end its script element; the script builds the DOM with textContent only.
The policy also names the script's hash, so no other script could run.

The package follows the page: `page` (the document, its policy and header), `tables`
(the summary and the rate tables), `charts` (the SVG figures), `browser` (the transcript
browser's frame and data) and `markup` (elements and links every part writes with).
"""

from deedbench.reports.html.browser import episode_data, episode_filters
from deedbench.reports.html.markup import ERROR, SCORED
from deedbench.reports.html.page import render_figures, render_html

__all__ = [
    "ERROR",
    "SCORED",
    "episode_data",
    "episode_filters",
    "render_figures",
    "render_html",
]
