"""Reports: figures computed from the run store, rendered for the terminal or as JSON."""

from deedbench.reports.summary import GroupSummary, RunSummary, summarize
from deedbench.reports.terminal import render_summary

__all__ = ["GroupSummary", "RunSummary", "render_summary", "summarize"]
