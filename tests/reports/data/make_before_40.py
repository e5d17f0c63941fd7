"""Make before-40-*.txt: what the code before issue 40 printed of the store
tests/reports/_before_40.py builds (main 7c357a7: the last commit before store format 3,
with the round's other changes in).

    git archive 7c357a7 src | tar -x -C ../before-40
    PYTHONPATH=../before-40/src python tests/reports/data/make_before_40.py
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3]))
from tests.reports._before_40 import REPORTS, build, report

import deedbench

here = Path(__file__).parent
print("deedbench from", deedbench.__file__)
with tempfile.TemporaryDirectory() as folder:
    store = Path(folder) / "runs.db"
    build(store)
    for command in REPORTS:
        name = "before-40-" + command.replace(" --", "-").replace(" ", "-") + ".txt"
        (here / name).write_text(report(store, command))
