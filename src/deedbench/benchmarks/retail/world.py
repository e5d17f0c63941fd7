"""The retail database: users, orders and products, read from τ-bench's JSON files.

An episode's view of it is the desk's copy-on-write `DeskWorld`; the world of
deedbench's own retail benchmark is generated instead (`generate.py`), in the
same shape.
"""

from __future__ import annotations

from pathlib import Path

from deedbench.benchmarks.servicedesk.world import Tables, load_tables

__all__ = ["RETAIL_FILES", "load_retail_data"]

RETAIL_FILES = ("users", "orders", "products")
"""The tables of the retail database, each read from ``<name>.json``."""


def load_retail_data(directory: Path) -> Tables:
    """Read users.json, orders.json and products.json, each a JSON object keyed by id."""
    return load_tables(Path(directory), RETAIL_FILES, "retail")
