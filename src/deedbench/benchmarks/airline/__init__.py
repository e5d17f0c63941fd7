"""Airline: τ-bench's airline customer-service domain.

`world.py` holds the copy-on-write database an episode reads and changes (flights,
reservations, users), `tools.py` the 14 tools that act on it, faithful to τ-bench's
airline tools, and `rules.py` the policy rules those tools never check.
"""
