"""What reaches the Ray workers besides the recipe: the modules of `python/MODULE:ATTR` specs
that are not installed (uploaded with Ray's runtime environment), and the values of the
API-key variables a run names (sent with its recipe in Ray's object store, never in the
runtime environment, which Ray's dashboard shows). `ray.py` says why."""

from __future__ import annotations

import importlib.util
import os
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

from deedbench.engine.executor import Recipe
from deedbench.engine.python_specs import use_working_folder
from deedbench.records import RunConfig

__all__ = ["key_variables", "modules_to_ship", "py_modules"]


def modules_to_ship(configs: Iterable[RunConfig]) -> list[str]:
    """The modules of the runs' `python/MODULE:ATTR` agents, model-played users and
    benchmarks."""
    names = []
    for config in configs:
        user = config.user.spec if config.user is not None else ""
        for spec in (config.agent, user, config.benchmark):
            prefix, _, rest = spec.partition("/")
            if prefix == "python" and ":" in rest:
                names.append(rest.partition(":")[0])
    return list(dict.fromkeys(names))


def py_modules(names: Sequence[str]) -> list[str]:
    """What Ray must upload for `names` to import on every node: each top-level package
    folder (or single-file module) that is not installed, i.e. not under site-packages or
    the standard library. Installed ones must be installed on the nodes too."""
    use_working_folder()  # where python/ specs are found (engine.python_specs)
    installed = [Path(p).resolve() for p in sysconfig.get_paths().values()]
    paths = []
    for name in names:
        top = name.partition(".")[0]
        if top == "deedbench":
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue  # the worker's import error will say so, naming the node
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        locations = list(spec.submodule_search_locations or [])
        path = Path(locations[0] if locations else spec.origin).resolve()
        if not any(path.is_relative_to(root) for root in installed):
            paths.append(str(path))
    return list(dict.fromkeys(paths))


def key_variables(recipe: Recipe) -> dict[str, str]:
    """The API-key variables a run's agents read, with the driver's values where set."""
    config = getattr(recipe, "config", None)
    if not isinstance(config, RunConfig):
        return {}
    return {v: os.environ[v] for v in config.key_variables if os.environ.get(v)}
