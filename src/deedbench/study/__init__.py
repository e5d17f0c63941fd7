"""Studies: several runs described in one TOML file, run at once under shared limits,
resumed by running the file again, and reported as one table (`deedbench study`)."""

from deedbench.study.estimate import RoleEstimate, RunEstimate, estimate_runs
from deedbench.study.model import Problem, StudyError, StudyFile, load_study
from deedbench.study.planner import PlannedRun, StudyPlan, plan_study
from deedbench.study.runner import RunOutcome, run_study

__all__ = [
    "PlannedRun",
    "Problem",
    "RoleEstimate",
    "RunEstimate",
    "RunOutcome",
    "StudyError",
    "StudyFile",
    "StudyPlan",
    "estimate_runs",
    "load_study",
    "plan_study",
    "run_study",
]
