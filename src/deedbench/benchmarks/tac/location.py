"""Forgiving place matching for `search_experiences`.

People and models write places many ways: "Oahu, Hawaii", "oahu", "Honolulu, HI",
"sevilla". A listing's location is a comma-separated list from most to least
specific; a query matches a listing when one of its parts names one of the
listing's parts, allowing abbreviations, word-level containment and small typos.
The most specific query part that matches anything decides, so "Bangkok,
Thailand" falls back to the country only when nothing is in Bangkok.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache

__all__ = ["match_location"]

_ALIASES = {
    "hi": "hawaii",
    "fl": "florida",
    "ny": "new york",
    "nyc": "new york city",
    "manhattan": "new york city",
    "us": "usa",
    "united states": "usa",
    "united states of america": "usa",
    "united kingdom": "uk",
    "great britain": "uk",
    "sevilla": "seville",
    "marrakesh": "marrakech",
    "vic": "victoria",
    "the canaries": "canary islands",
}


@lru_cache(maxsize=4096)
def _parts(place: str) -> tuple[str, ...]:
    text = unicodedata.normalize("NFKD", place).encode("ascii", "ignore").decode().lower()
    parts = []
    for raw in text.split(","):
        part = " ".join(re.findall(r"[a-z0-9]+", raw))
        part = part.removeprefix("the ") if part != "the" else part
        if part:
            parts.append(_ALIASES.get(part, part))
    return tuple(parts)


def _same_place(query: str, listing: str) -> bool:
    if query == listing:
        return True
    padded_q, padded_l = f" {query} ", f" {listing} "
    if padded_q in padded_l or padded_l in padded_q:
        return True
    return (
        min(len(query), len(listing)) >= 4 and SequenceMatcher(None, query, listing).ratio() >= 0.85
    )


@lru_cache(maxsize=4096)
def match_location(query: str, locations: tuple[str, ...]) -> tuple[tuple[int, ...], str | None]:
    """Indexes of the locations the query names, and the query part that matched."""
    listing_parts = [_parts(loc) for loc in locations]
    for query_part in _parts(query):
        hits = tuple(
            i
            for i, parts in enumerate(listing_parts)
            if any(_same_place(query_part, part) for part in parts)
        )
        if hits:
            return hits, query_part
    return (), None
