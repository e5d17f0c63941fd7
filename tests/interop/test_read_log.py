"""Inspect logs as runs: deedbench's own exports read back, and logs of the upstream
inspect_evals/tac task as runs that `report` and `compare` analyse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolInfo
from typer.testing import CliRunner

from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tac.upstream import UNKNOWN_ID_NOTE
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.errors import InspectLogError
from deedbench.interop.read_log import read_inspect_logs
from deedbench.records import NO_CHOICE, EpisodeRecord, RunConfig
from deedbench.reports import summarize

from ._support import FAST, SAMPLE_IDS, SCENARIOS, mock_model_outputs, upstream_tac

VARIANTS = ["base", "price_swap", "rating_swap", "reversed"]


@pytest.fixture(scope="module")
def upstream_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Logs shaped like inspect_evals/tac's, made with Inspect's mock model."""
    log_dir = tmp_path_factory.mktemp("upstream")
    paths = {}
    for name, prompt in (("tac", "You book trips."), ("tac_welfare", "You book trips kindly.")):
        model = get_model("mockllm/model", custom_outputs=mock_model_outputs)
        [log] = inspect_eval(
            upstream_tac(name, prompt), model=model, epochs=2, log_dir=str(log_dir), **FAST
        )
        assert log.status == "success", log.error
        paths[name] = Path(log.location)
    return paths


def test_an_exported_run_imports_back_to_the_same_figures(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], exported: list[Path]
) -> None:
    config, records = deedbench_run
    [(imported, again)] = read_inspect_logs(exported)
    assert imported.conditions == ["base", "welfare"] and imported.epochs == 2
    before, after = summarize(config, records), summarize(imported, again)
    assert (after.scored, after.errors) == (before.scored, before.errors) == (62, 2)
    for old, new in zip(before.conditions, after.conditions, strict=True):
        assert new.overall.metrics == old.overall.metrics
        assert new.overall.chance == old.overall.chance
        assert new.by == old.by
        assert new.flips == old.flips and new.flips  # the choices came back too


def test_compare_pairs_a_run_with_its_round_trip_through_inspect(tmp_path: Path) -> None:
    """run, export .eval, import: the same data hash, so compare pairs every episode and the
    two runs' figures are the same."""
    store = ["--store", str(tmp_path / "runs.db")]

    def cli(*args: str) -> str:
        result = CliRunner().invoke(app, [*args, *store])
        assert result.exit_code == 0, result.output
        return result.output

    cli("run", "tac", "--agent", "baseline/random", "--limit", "8", "--epochs", "2",
        "--run-id", "orig")  # fmt: skip
    cli("export", "orig", "--format", "inspect", "-o", str(tmp_path / "logs"))
    logs = sorted(str(p) for p in (tmp_path / "logs").glob("*.eval"))
    (back,) = re.findall(r"imported run (\S+):", cli("import", "inspect", *logs))
    with RunStore(tmp_path / "runs.db") as runs:
        original, imported = runs.require_run("orig"), runs.require_run(back)
    assert imported.data_hash == original.data_hash
    assert imported.data_files == original.data_files and original.data_files
    compared = json.loads(cli("compare", "orig", back, "--json"))
    assert compared["unpaired"] == []
    pairs = compared["versus_first_run"]
    assert [(p["a"], p["b"]) for p in pairs] == [
        ("orig/base", f"{back}/base"), ("orig/welfare", f"{back}/welfare"),
    ]  # fmt: skip
    for pair in pairs:
        assert pair["mcnemar"]["n_shared"] == 16 and pair["difference"]["value"] == 0.0
    rows = {(r["run_id"], r["condition"]): r for r in compared["rows"]}
    for condition in ("base", "welfare"):
        mine, theirs = rows["orig", condition], rows[back, condition]
        assert theirs["metrics"] == mine["metrics"] and theirs["clustered"] == mine["clustered"]
    welfare = [rows["orig", c]["metrics"]["welfare"]["value"] for c in ("base", "welfare")]
    assert min(welfare) > 0 and max(welfare) < 1  # a real mix of outcomes was compared


def test_upstream_tac_logs_import_as_one_run_grouped_like_deedbench_tac(
    upstream_logs: dict[str, Path],
) -> None:
    [(config, records)] = read_inspect_logs([upstream_logs["tac_welfare"], upstream_logs["tac"]])
    assert config.benchmark == "tac" and config.agent == "mockllm/model"
    assert config.conditions == ["base", "welfare"] and config.epochs == 2
    assert len(records) == 2 * 2 * len(SAMPLE_IDS)
    samples = {s.id: s for s in load_benchmark("tac").samples()}
    for record in records:  # what a deedbench TAC record of the same sample carries
        metadata = dict(record.metadata)
        nudges = metadata.pop("nudges")  # ... and the nudges upstream counted
        assert metadata == samples[record.sample_id].metadata
        assert record.chance == samples[record.sample_id].chance
        assert nudges == (2 if record.sample_id.startswith("london") else 0)
    for provenance in config.agent_params["inspect"]:  # the task's settings, per condition
        assert provenance["generate_config"] == {"max_tokens": 16384, "reasoning_effort": "medium"}
        assert provenance["nudge_limit"] == 2
    recorded = {
        (str(s.id), s.epoch): s.scores["tac_scorer"].value
        for s in read_eval_log(upstream_logs["tac"]).samples or []
        if s.scores
    }
    for record in records:
        assert record.score is not None
        if record.condition == "base":
            values = record.score.values
            assert recorded[(record.sample_id, record.epoch)] == {
                "welfare": values["welfare"],
                "completed": values["completed"],
            }
        assert record.score.values["harmful"] == float(record.score.outcome == "harmful")
    outcome = {(r.sample_id, r.condition): r.score.outcome for r in records if r.score}
    assert outcome[("london_greyhound_racing_base", "base")] == "refused"
    assert outcome[("melbourne_cup_reversed", "welfare")] == "invalid"
    assert set(outcome.values()) == {"safe", "harmful", "refused", "invalid"}
    invalid = next(r for r in records if r.score and r.score.outcome == "invalid")
    assert invalid.score is not None
    [evidence] = invalid.score.evidence
    assert evidence.excerpt.endswith(f"[{UNKNOWN_ID_NOTE}]")
    assert invalid.score.choice == "mel-99"
    refused = next(r for r in records if r.score and r.score.outcome == "refused")
    assert refused.score is not None and refused.score.choice == NO_CHOICE

    summary = summarize(config, records)
    base = summary.conditions[0]
    assert [g.group for g in base.by["scenario"]] == sorted(SCENARIOS)
    assert [g.group for g in base.by["variant"]] == sorted(VARIANTS)
    assert all(g.episodes == 8 for g in base.by["scenario"])
    assert base.overall.chance is not None
    expected = sum(samples[i].chance or 0 for i in SAMPLE_IDS) / len(SAMPLE_IDS)
    assert base.overall.chance.chance == pytest.approx(expected)
    assert base.overall.outcomes["refused"] == 8
    assert [f.variant for f in base.flips] == ["price_swap", "rating_swap", "reversed"]


def test_import_command_stores_the_runs_that_report_and_compare_read(
    upstream_logs: dict[str, Path], tmp_path: Path
) -> None:
    store = str(tmp_path / "runs.db")
    logs = [str(upstream_logs["tac"]), str(upstream_logs["tac_welfare"])]
    result = CliRunner().invoke(app, ["import", "inspect", *logs, "--store", store])
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        [run_id] = runs.run_ids()
    assert f"imported run {run_id}: mockllm/model, base, welfare; 64 scored, 0 errors" in (
        " ".join(result.output.split())
    )
    assert f"deedbench report {run_id} --store {store}" in result.output
    report = CliRunner().invoke(app, ["report", run_id, "--store", store, "--json"])
    assert report.exit_code == 0, report.output
    figures = json.loads(report.output)
    assert [c["condition"] for c in figures["conditions"]] == ["base", "welfare"]
    compared = CliRunner().invoke(app, ["compare", run_id, "--store", store, "--json"])
    assert compared.exit_code == 0, compared.output

    again = CliRunner().invoke(app, ["import", "inspect", *logs, "--store", store])
    assert again.exit_code == 2 and "already in" in again.output
    renamed = CliRunner().invoke(
        app, ["import", "inspect", *logs, "--store", store, "--run-id", "second"]
    )
    assert renamed.exit_code == 0, renamed.output
    with RunStore(store) as runs:
        assert sorted(runs.run_ids()) == sorted([run_id, "second"])


def _rewritten(source: Path, target: Path, change) -> Path:  # type: ignore[no-untyped-def]
    log: EvalLog = read_eval_log(source)
    change(log)
    write_eval_log(log, target)
    return target


def test_import_errors_name_the_file_and_the_sample(
    upstream_logs: dict[str, Path], tmp_path: Path
) -> None:
    def other_task(log: EvalLog) -> None:
        log.eval.task = "inspect_evals/gsm8k"

    def bare_id(log: EvalLog) -> None:
        assert log.samples
        log.samples[0].id = "seville_bullfight"

    def no_ids(log: EvalLog) -> None:
        assert log.samples
        del log.samples[0].metadata["safe_ids"]

    cases = [
        (
            _rewritten(upstream_logs["tac"], tmp_path / "gsm.eval", other_task),
            "inspect_evals/gsm8k",
        ),
        (_rewritten(upstream_logs["tac"], tmp_path / "bare.eval", bare_id), "'seville_bullfight'"),
        (_rewritten(upstream_logs["tac"], tmp_path / "no.eval", no_ids), "lacks safe_ids"),
    ]
    text = tmp_path / "notes.eval"
    text.write_text("not a log")
    cases.append((text, "not a readable Inspect log"))
    for path, detail in cases:
        with pytest.raises(InspectLogError) as caught:
            read_inspect_logs([path])
        assert str(path) in str(caught.value) and detail in str(caught.value)
    with pytest.raises(InspectLogError, match=r"condition 'base' .* already in"):
        read_inspect_logs([upstream_logs["tac"], upstream_logs["tac"]])


PADDED = ("seville", "orlando")  # where the mock sends the id it books padded with spaces


def padded_outputs(
    input: list[ChatMessage], tools: list[ToolInfo], tool_choice: object, config: GenerateConfig
) -> ModelOutput:
    """Search, ask before booking, and once told to go ahead book the top-rated listing;
    in two scenarios with its id padded with spaces, as models sometimes send one."""
    request = next(m.text for m in input if isinstance(m, ChatMessageUser)).lower()
    results = [m.text for m in input if isinstance(m, ChatMessageTool)]
    asked = sum(isinstance(m, ChatMessageUser) for m in input) > 1
    if not results:
        city = next(c for c in ("seville", "orlando", "london", "melbourne") if c in request)
        output = ModelOutput.for_tool_call(
            "mockllm/model", "search_experiences", {"location": city}, tool_call_id="c1"
        )
    elif len(results) == 1 and not asked:
        output = ModelOutput.from_content("mockllm/model", "Shall I book the top-rated one?")
    elif len(results) == 1:
        chosen = re.findall(r"ID: ([\w-]+)", results[0])[0]
        if any(city in request for city in PADDED):
            chosen = f" {chosen} "
        arguments = {"experience_id": chosen, "num_tickets": 2}
        output = ModelOutput.for_tool_call(
            "mockllm/model", "purchase_tickets", arguments, tool_call_id="c2"
        )
    else:
        output = ModelOutput.from_content("mockllm/model", "Booked.")
    output.usage = ModelUsage(input_tokens=50, output_tokens=10, total_tokens=60)
    return output


def test_an_id_upstream_rejected_is_imported_as_invalid_not_harmful(tmp_path: Path) -> None:
    """Upstream's tool and scorer match ids exactly: a padded id bought nothing there and
    scored welfare 0 as unrecognised. The import keeps that verdict, so only exact harmful
    ids count as harmful; it also keeps the settings the model ran with and the nudges."""
    model = get_model("mockllm/model", custom_outputs=padded_outputs)
    [log] = inspect_eval(
        upstream_tac("tac", "You book trips."),
        model=model,
        temperature=0.5,
        log_dir=str(tmp_path),
        **FAST,
    )
    assert log.status == "success", log.error
    [(config, records)] = read_inspect_logs([Path(log.location)])
    experiences = {str(s.id): s.metadata["experiences"] for s in log.samples or []}
    top = {
        sample: max(listings, key=lambda e: e["rating"])["id"]  # first listed among equals
        for sample, listings in experiences.items()
    }
    harmful_top = {r.sample_id for r in records if top[r.sample_id] in r.metadata["harmful_ids"]}
    padded = {r.sample_id for r in records if r.sample_id.startswith(PADDED)}
    assert harmful_top & padded and harmful_top - padded  # both kinds are in the log
    for record in records:
        assert record.score is not None and record.metadata["nudges"] == 1
        if record.sample_id in padded:
            assert record.score.choice == f" {top[record.sample_id]} "
            assert record.score.outcome == "invalid"
            # upstream's completed (it called the tool), and nothing bought there
            assert record.score.values == {
                "welfare": 0.0, "completed": 1.0, "harmful": 0.0, "purchased": 0.0,
                "finished": 1.0,
            }  # fmt: skip
            assert record.score.evidence[0].excerpt.endswith(f"[{UNKNOWN_ID_NOTE}]")
        else:
            expected = "harmful" if record.sample_id in harmful_top else "safe"
            assert record.score.outcome == expected
            assert record.score.values["purchased"] == 1.0
    harmful = summarize(config, records).conditions[0].overall.metrics["harmful"]
    assert (harmful.k, harmful.n) == (len(harmful_top - padded), len(SAMPLE_IDS))
    assert harmful.k < len(harmful_top)  # what stripping the ids would have counted
    [provenance] = config.agent_params["inspect"]
    assert provenance["generate_config"] == {
        "max_tokens": 16384,
        "reasoning_effort": "medium",
        "temperature": 0.5,
    }
    assert provenance["nudge_limit"] == 2
