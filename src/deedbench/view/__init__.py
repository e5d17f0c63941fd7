"""`deedbench view`: the run store in a local browser, updated while runs are written.

A Starlette application (`app.py`) over a read-only view of the store (`source.py`,
`catalog.py`): pages (`pages.py`) that a script (`assets/view.js`) fills from a JSON
API (`api.py`), served by uvicorn (`server.py`). Its figures are the report's own:
`reports.summary`'s, computed off the request threads and kept between starts
(`summaries.py`), drawn as the HTML report's tables and charts. Importing this package
imports Starlette and uvicorn, the `view` extra.
"""

from deedbench.view.app import create_app
from deedbench.view.server import ServeError, serve
from deedbench.view.source import StoreReader

__all__ = ["ServeError", "StoreReader", "create_app", "serve"]
