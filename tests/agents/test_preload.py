"""The model agent's SDK imported on a background thread while the CLI plans the run."""

from __future__ import annotations

import subprocess
import sys

from deedbench.agents.preload import import_sdk_early


def test_a_model_spec_imports_its_agent_module_and_sdk_in_the_background() -> None:
    script = (
        "import sys\n"
        "from deedbench.agents.preload import import_sdk_early\n"
        "thread = import_sdk_early('anthropic/claude-x')\n"
        "assert thread is not None and thread.daemon\n"
        "thread.join()\n"
        "names = {'anthropic', 'deedbench.agents.anthropic_agent', 'openai'}\n"
        "print(sorted(names & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['anthropic', 'deedbench.agents.anthropic_agent']"


def test_other_specs_start_nothing() -> None:
    for spec in ("baseline/random", "openai", "python/some.module:Agent"):
        assert import_sdk_early(spec) is None
