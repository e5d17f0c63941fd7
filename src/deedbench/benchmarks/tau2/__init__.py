"""τ²/τ³-bench on deedbench: τ²'s domains, tasks and evaluator on the service desk.

`data.py` finds and reads τ²'s data, `tasks.py` its tasks, `toolkit.py` and
`convention.py` how a domain's tools are written and what their results read,
`environment.py` the two sides of an episode and τ²'s replays, `domain.py` what a
domain declares. Each domain is a folder of its own (``airline/``, ``retail/``,
``telecom/``, ``banking/``).
"""

__all__: list[str] = []
