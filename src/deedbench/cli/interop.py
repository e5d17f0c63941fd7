"""`deedbench import inspect`: Inspect AI logs into the run store, for `report` and `compare`."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from deedbench.cli.app import (
    CommandGroup,
    StoreOption,
    app,
    check_run_id,
    console,
    fail,
    open_store,
    resolve_store,
)
from deedbench.printable import safe

__all__ = ["import_app", "import_inspect"]

import_app = typer.Typer(
    cls=CommandGroup,
    name="import",
    help="Bring runs made elsewhere into the run store.",
    no_args_is_help=True,
)
app.add_typer(import_app)


@import_app.command("inspect")
def import_inspect(
    logs: Annotated[
        list[Path],
        typer.Argument(
            help="Inspect logs (.eval or .json) of inspect_evals/tac or deedbench's tasks.",
            exists=True,
            dir_okay=False,
        ),
    ],
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="Name the run (when the logs make one run)."),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Import Inspect logs as runs: one per model and data, a condition per task
    (tac: base, tac_welfare: welfare)."""
    from deedbench.interop import require_inspect

    require_inspect()  # InspectNotInstalled, like InspectLogError below: exit 2, one line
    from deedbench.interop.read_log import read_inspect_logs

    runs = read_inspect_logs(logs)
    if run_id is not None:
        if len(runs) > 1:
            models = ", ".join(config.agent for config, _ in runs)
            raise fail(
                f"--run-id names one run, but these logs make {len(runs)} ({models}); "
                "import them separately"
            )
        runs[0][0].run_id = check_run_id(run_id)
    path = resolve_store(store)
    with open_store(path) as runs_store:
        taken = [config.run_id for config, _ in runs if runs_store.get_run(config.run_id)]
        if taken:
            raise fail(
                f"run {taken[0]!r} is already in {path} (these logs were imported before?); "
                "pass --run-id to import them again under another name"
            )
        for config, records in runs:
            runs_store.create_run(config)
            for record in records:
                runs_store.add(config.run_id, record)
    for config, records in runs:
        scored = sum(1 for r in records if r.status == "scored")
        command = ["deedbench", "report", config.run_id]
        if store is not None:
            command += ["--store", str(path)]
        console.print(
            f"imported run [bold]{safe(config.run_id)}[/bold]: {safe(config.agent)}, "
            f"{safe(', '.join(config.conditions))}; {scored} scored, "
            f"{len(records) - scored} errors",
            highlight=False,
        )
        # one unwrapped line, so it can be copied as it is
        console.print(
            f"  report: {shlex.join(command)}", soft_wrap=True, highlight=False, markup=False
        )
