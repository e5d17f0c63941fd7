"""Service desk (retail): a τ-bench-style customer-service domain.

`world.py` holds the copy-on-write database an episode reads and changes, and
`tools.py` the 16 tools that act on it, faithful to τ-bench's retail tools.
"""
