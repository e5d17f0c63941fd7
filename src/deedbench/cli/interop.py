"""`deedbench import inspect` and `import tau2`: Inspect AI logs and τ²'s result files into
the run store, for `report`, `compare`, HTML, the viewer and `audit`.

An import is all or nothing (`engine.whole_runs.add_runs`): its runs and every record are
written in one transaction, so no command ever lists a run being imported, and one that
fails or is killed leaves nothing, and can simply be run again."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from deedbench.cli.app import (
    AllowImportOption,
    CommandGroup,
    JudgeLenientOption,
    PricesOption,
    StoreOption,
    app,
    check_run_id,
    console,
    fail,
    open_store,
    resolve_store,
)
from deedbench.cli.roles import (
    JudgeApiKeyEnvOption,
    JudgeArgOption,
    JudgeBaseUrlOption,
    JudgeMaxTokensOption,
    JudgeTemperatureOption,
    OldApiKeyEnvOption,
    OldBaseUrlOption,
    judge_choice,
)
from deedbench.printable import safe

__all__ = ["import_app", "import_inspect", "import_tau2"]

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
            help="Inspect logs (.eval or .json) of inspect_evals/tac or deedbench's tasks, or "
            "a folder of .eval logs (as `export --format inspect` writes them).",
            exists=True,
        ),
    ],
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="Name the run (when the logs make one run)."),
    ] = None,
    allow_import: AllowImportOption = False,
    store: StoreOption = None,
) -> None:
    """Import Inspect logs as runs: one per model and data, a condition per task
    (tac: base, tac_welfare: welfare)."""
    from deedbench.interop import require_inspect

    require_inspect()  # InspectNotInstalled, like InspectLogError below: exit 2, one line
    from deedbench.engine.whole_runs import add_runs
    from deedbench.interop.read_log import read_inspect_logs

    runs = read_inspect_logs(logs, allow_import=allow_import)
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
        if taken and run_id is not None:
            raise fail(f"run {run_id!r} is already in {path}: choose another --run-id")
        if taken:
            raise fail(
                f"run {taken[0]!r} is already in {path} (these logs were imported before?); "
                "pass --run-id to import them again under another name"
            )
        add_runs(runs_store, runs)
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


@import_app.command("tau2")
def import_tau2(
    file: Annotated[
        Path,
        typer.Argument(
            help="A τ² result file (its JSON, or the folder of results.json and simulations/)."
        ),
    ],
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="τ²'s data: a tau2-bench checkout, its data folder or the domain's "
            "(default $TAU2_DATA_DIR).",
        ),
    ] = None,
    fresh_tasks: Annotated[
        bool,
        typer.Option("--fresh-tasks", help="Score on the data's current tasks, not the file's."),
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge", help="A model judging the NL assertions the file records no verdicts for."
        ),
    ] = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_api_key_env: JudgeApiKeyEnvOption = None,
    judge_temperature: JudgeTemperatureOption = None,
    judge_max_tokens: JudgeMaxTokensOption = None,
    judge_model_arg: JudgeArgOption = None,
    judge_lenient: JudgeLenientOption = False,
    base_url: OldBaseUrlOption = None,
    api_key_env: OldApiKeyEnvOption = None,
    prices: PricesOption = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run.")] = None,
    store: StoreOption = None,
) -> None:
    """Import a τ² result file as a run: each simulation rescored (τ²'s reward and its
    components, checked against the file's) with the procedure verdicts beside it."""
    from deedbench.cli.validate import rescore_tau2
    from deedbench.engine.whole_runs import add_runs
    from deedbench.errors import StoreError

    if run_id is not None:
        check_run_id(run_id)
    found = rescore_tau2(
        file,
        data,
        fresh_tasks=fresh_tasks,
        judge=judge,
        choice=judge_choice(
            judge_base_url,
            judge_api_key_env,
            judge_temperature,
            judge_max_tokens,
            judge_model_arg,
            old_base_url=base_url,
            old_api_key_env=api_key_env,
        ),
        prices=prices,
        progress=True,
        run_id=run_id,
        same_data=True,
        judge_reading="lenient" if judge_lenient else "strict",
    )
    config, records = found.imported.config, found.imported.records
    path = resolve_store(store)
    with open_store(path) as runs_store:
        if runs_store.get_run(config.run_id):
            raise fail(
                f"run {config.run_id!r} is already in {path} (this file was imported before?); "
                "pass --run-id to import it again under another name"
            )
        try:
            add_runs(runs_store, [(config, records)])
        except StoreError as exc:  # a record that cannot be stored: the file's, say so
            raise fail(f"{file}: cannot import it: {exc}") from None
    scored = sum(1 for r in records if r.status == "scored")
    command = ["deedbench", "report", config.run_id]
    if store is not None:
        command += ["--store", str(path)]
    console.print(
        f"imported run [bold]{safe(config.run_id)}[/bold]: {safe(config.agent)}, "
        f"{safe(config.benchmark)}; {scored} scored, {len(records) - scored} errors",
        highlight=False,
    )
    console.print(f"  report: {shlex.join(command)}", soft_wrap=True, highlight=False, markup=False)
