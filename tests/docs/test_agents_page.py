"""docs/agents.md shows TAC's first tool spec as the agent receives it."""

from __future__ import annotations

import copy
import json
from typing import Any

from deedbench.benchmarks.tac import TacBenchmark

from ._pages import DOCS, blocks


def test_the_tool_spec_shown_is_tacs_first_with_its_parameters_descriptions_elided() -> None:
    [shown] = [b for b in blocks(DOCS / "agents.md") if b.lang == "json"]
    bench = TacBenchmark()
    sample = bench.samples()[0]
    spec = bench.setup(sample, "base", 0).toolbox.specs()[0]
    real: dict[str, Any] = copy.deepcopy(spec)  # the toolbox's specs are shared: never edit them
    for parameter in real["function"]["parameters"]["properties"].values():
        parameter["description"] = "..."
    assert json.loads(shown.code) == real
