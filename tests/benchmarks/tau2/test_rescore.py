"""`rescore tau2` on result files τ² itself made: τ²'s evaluator scores trajectories (gold,
broken, and written the way a model writes them), τ²'s own ``Results.save`` writes the
file (one JSON, or the folder format), and τ²'s own re-grader (what ``tau2
evaluate-trajs`` runs) re-grades it. deedbench must reproduce the file's every
``reward_info``, give what τ²'s re-grader gives (on the file's tasks and, with
--fresh-tasks, on the current ones), and compute pass^k to the bit as τ²'s metrics do.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.tau2.banking import banking_domain
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.rescore import Judged, Tau2Rescorer, rescore_with
from deedbench.benchmarks.tau2.results import read_results
from deedbench.benchmarks.tau2.retail import RETAIL
from deedbench.benchmarks.tau2.tasks import GoldAction, Tau2Task
from deedbench.benchmarks.tau2.telecom import TELECOM
from deedbench.cli.main import app

from . import _reference
from ._trajectories import GREETING, variants

pytestmark = pytest.mark.reference("tau2")

CHECKOUT = _reference.TAU2
NO_KNOWLEDGE = {"retrieval_variant": "no_knowledge"}


def _call(number: int, action: GoldAction, role: str) -> dict[str, Any]:
    call = {"id": f"call_{number}", "name": action.name, "arguments": dict(action.arguments)}
    return {"role": role, "content": None, "tool_calls": [call]}


def chatty(task: Tau2Task, rng: random.Random) -> list[dict[str, Any]]:
    """The task's gold actions as a model and a customer would go through them: words
    around the calls, a confirmation before writes, a call that fails first, two calls
    in one message, text beside a call (τ² runs the call), the customer's own calls."""
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": "hi, i have a problem with my account, can you help?"},
        {"role": "assistant", "content": "Of course. Could you give me your details?"},
        {"role": "user", "content": "sure, here they are."},
    ]
    gold = task.gold
    number = 0
    index = 0
    while index < len(gold):
        action = gold[index]
        role = "user" if action.requestor == "user" else "assistant"
        number += 1
        if role == "user":
            messages.append({"role": "assistant", "content": f"Please run {action.name}."})
            messages.append(_call(number, action, "user"))
            index += 1
            continue
        roll = rng.random()
        if roll < 0.25 and action.arguments:  # a first try with an argument missing
            broken = dict(action.arguments)
            broken.pop(sorted(broken)[0])
            wrong = action.model_copy(update={"arguments": broken})
            messages.append(_call(number, wrong, "assistant"))
            number += 1
        if roll > 0.6:
            messages.append({"role": "assistant", "content": f"I will now {action.name}. OK?"})
            messages.append({"role": "user", "content": "yes, go ahead"})
        following = gold[index + 1] if index + 1 < len(gold) else None
        message = _call(number, action, "assistant")
        if following is not None and following.requestor != "user" and rng.random() < 0.3:
            number += 1
            message["tool_calls"] += _call(number, following, "assistant")["tool_calls"]
            index += 1
        if rng.random() < 0.2:
            message["content"] = "One moment."
        messages.append(message)
        index += 1
    criteria = task.evaluation_criteria
    said = " ".join(criteria.communicate_info or []) if criteria is not None else ""
    messages.append({"role": "assistant", "content": f"All done. {said}".strip()})
    messages.append({"role": "user", "content": "great, thanks! ###STOP###"})
    return messages


def _cases(data: Tau2Data, tasks: int, seed: str, trials: int = 2) -> list[dict[str, Any]]:
    """`trials` trials a task: the gold trajectory or a chatty one, then broken variants."""
    rng = random.Random(seed)
    chosen = rng.sample(sorted(data.tasks), tasks)
    cases = []
    for task_id in chosen:
        task = data.tasks[task_id]
        made = {c["id"].split("/")[1]: c for c in variants(task)}
        first = made["gold"]
        if rng.random() < 0.6:
            first = {**first, "id": f"{task_id}/chatty", "messages": chatty(task, rng)}
        cases.append({**first, "trial": 0})
        others = [name for name in made if name != "gold"] or ["gold"]
        for trial in range(1, trials):
            again = made[rng.choice(others)]
            cases.append({**again, "id": f"{again['id']}/{trial}", "trial": trial})
    return cases


def _file(
    tau2_name: str,
    cases: list[dict[str, Any]],
    path: Path,
    env_kwargs: dict[str, Any] | None = None,
    **results: Any,
) -> dict[str, Any]:
    spec = {"path": str(path), "num_trials": 2, **results}
    return _reference.results_file(tau2_name, cases, spec, env_kwargs)


def _domain_data(domain: Tau2Domain) -> Tau2Data:
    folder = _reference.domain_data(domain.folder_name)
    return Tau2Data(domain, folder, f"tau2-{domain.name}", "base")


DOMAINS = [  # τ²'s name, deedbench's domain, tasks, trials a task
    ("airline", "AIRLINE", 4, 2),
    ("retail", "RETAIL", 5, 2),
    ("telecom", "TELECOM", 30, 4),  # four trials: pass^2 in sixths, summed in τ²'s order
    ("banking_knowledge", "banking", 5, 2),
]


def _domain(name: str) -> Tau2Domain:
    if name == "banking":
        return banking_domain("no_knowledge")
    from deedbench.benchmarks.tau2 import airline

    return {"AIRLINE": airline.AIRLINE, "RETAIL": RETAIL, "TELECOM": TELECOM}[name]


@pytest.mark.parametrize(("tau2_name", "name", "tasks", "trials"), DOMAINS)
def test_the_files_rewards_are_reproduced_as_taus_regrader_gives_them(
    tau2_name: str, name: str, tasks: int, trials: int, tmp_path: Path
) -> None:
    domain = _domain(name)
    data = _domain_data(domain)
    cases = _cases(data, tasks, f"rescore-{tau2_name}", trials)
    env = NO_KNOWLEDGE if tau2_name == "banking_knowledge" else None
    extra = {"retrieval_config": "no_knowledge"} if env else {}
    writes = [c for c in cases if c["id"].endswith(("/gold", "/chatty"))]
    garbled = [writes[0]["id"]]  # written by tools whose outputs read otherwise now
    infra = [{"id": "lost", "task_id": cases[0]["task"]["id"], "trial": 1}]
    fmt = "dir" if tau2_name == "telecom" else "json"
    if fmt == "dir":  # a file per simulation, named by its id: ids as τ²'s (uuids) are
        named = {c["id"]: f"sim-{n:03d}" for n, c in enumerate(cases)}
        cases = [{**c, "id": named[c["id"]]} for c in cases]
        garbled = [named[g] for g in garbled]
    path = tmp_path / ("run" if fmt == "dir" else "results.json")
    made = {"format": fmt, "garble": garbled, "infrastructure_errors": infra, **extra}
    theirs = _file(tau2_name, cases, path, env, num_trials=trials, **made)
    crashed = [c for c in theirs["cases"] if "crash" in c]
    assert not crashed, crashed[:3]

    results = read_results(path)
    assert len(results.simulations) == len(cases) + 1
    report, rescored = rescore_with(Tau2Rescorer(results, CHECKOUT))
    differing = [f"{v.id}: {v.differs} {v.error or ''}" for v in report.verdicts if v.differs]
    assert not differing, differing[:5]
    assert report.rescored == report.reproduced == len(cases)
    assert report.infrastructure_errors == 1 and report.not_rescored == 0
    for found in rescored:  # the whole verdict, as τ²'s own re-grader gives it
        if found.score is None:
            continue
        ours = (found.score.details or {})["reward_info"]
        expected = theirs["regraded"][found.verdict.id]
        assert json.dumps(ours, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert report.replayed_with_differences >= 1  # the garbled outputs, replayed leniently
    assert report.pass_hat_k == {int(k): v for k, v in theirs["pass_hat_ks"].items()}
    assert report.recorded_pass_hat_k == report.pass_hat_k
    assert 0 < report.pass_hat_k[1] < 1
    assert set(report.pass_hat_k) == set(range(1, trials + 1))


def test_fresh_tasks_are_the_datas_as_taus_fresh_tasks_are(tmp_path: Path) -> None:
    """A file made under an older version of a task (here: it had one more thing to say):
    on the file's tasks its verdicts stand; --fresh-tasks scores on the current task, as
    τ²'s re-grader does with --fresh-tasks."""
    data = _domain_data(TELECOM)
    task = next(t for t in data.tasks.values() if "COMMUNICATE" not in t.reward_basis)
    older = json.loads(json.dumps(task.raw))
    older["evaluation_criteria"]["communicate_info"] = ["the code is 1234"]
    older["evaluation_criteria"]["reward_basis"] = [*task.reward_basis, "COMMUNICATE"]
    cases = [{**c, "task": older, "trial": 0} for c in variants(task)][:3]
    path = tmp_path / "results.json"
    theirs = _file("telecom", cases, path, fresh=1, num_trials=1)
    results = read_results(path)
    on_file, _ = rescore_with(Tau2Rescorer(results, CHECKOUT))
    assert on_file.reproduced == on_file.rescored == len(cases)
    assert all(v.reward == 0.0 for v in on_file.verdicts)  # nothing said "the code is 1234"
    fresh, rescored = rescore_with(Tau2Rescorer(results, CHECKOUT, fresh_tasks=True))
    assert fresh.tasks_from == "data" and not fresh.tasks_kept_from_file
    for found in rescored:
        ours = (found.score.details or {})["reward_info"] if found.score else None
        expected = theirs["regraded_fresh"][found.verdict.id]
        assert json.dumps(ours, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert any(v.reward == 1.0 for v in fresh.verdicts)
    assert all(v.differs for v in fresh.verdicts)  # the file's verdicts were the older task's


def _nl_cases(data: Tau2Data) -> list[dict[str, Any]]:
    judged = [t for t in data.tasks.values() if t.needs_judge][:2]
    cases = []
    for task in judged:
        made = {c["id"].split("/")[1]: c for c in variants(task)}
        cases += [{**made["gold"], "trial": 0}, {**made["judge-says-no"], "trial": 1}]
    return cases


def _scripted_judge(verdicts: dict[str, bool]) -> Any:
    """A model that answers τ²'s judge prompt in τ²'s format, met or not per assertion."""
    from deedbench.agents.function import FunctionAgent
    from deedbench.records import Message

    def answer(messages: Any, tools: Any, context: Any) -> Message:
        prompt = messages[-1].content
        listed = prompt.split("expectedOutcomes:")[1].strip().splitlines()[0]
        import ast

        outcomes = ast.literal_eval(listed)
        results = [
            {"expectedOutcome": o, "reasoning": "scripted", "metExpectation": verdicts.get(o, True)}
            for o in outcomes
        ]
        return Message(role="assistant", content=json.dumps({"results": results}))

    return FunctionAgent(answer)


def test_nl_verdicts_come_from_the_file_else_from_a_judge_else_none(tmp_path: Path) -> None:
    import asyncio

    from deedbench.benchmarks.tau2.rescore import judge_simulations

    data = _domain_data(RETAIL)
    cases = _nl_cases(data)
    path = tmp_path / "results.json"
    _file("retail", cases, path)
    results = read_results(path)
    report, _ = rescore_with(Tau2Rescorer(results, CHECKOUT))
    assert report.nl_from_file == report.reproduced == len(cases)
    assert report.pass_hat_k[1] == 0.5  # the judge said no to every second trial

    for simulation in results.simulations:  # a file whose judge verdicts were not kept
        assert simulation.reward_info is not None
        simulation.reward_info["nl_assertions"] = None
    bare, _ = rescore_with(Tau2Rescorer(results, CHECKOUT))
    assert bare.needs_judge == len(cases) and bare.rescored == 0 and bare.pass_hat_k == {}

    rescorer = Tau2Rescorer(results, CHECKOUT)
    judged = asyncio.run(judge_simulations(rescorer, _scripted_judge({})))
    assert set(judged.verdicts) == set(range(len(results.simulations)))  # by place, not id
    graded, _ = rescore_with(rescorer, judged)
    assert graded.nl_from_judge == graded.rescored == len(cases)
    assert graded.pass_hat_k[1] == 1.0  # this judge finds every assertion met
    assert all("nl_assertions" in v.differs for v in graded.verdicts)  # the file kept none
    reward_differs = {v.id.split("/")[1] for v in graded.verdicts if "reward" in v.differs}
    assert reward_differs == {"judge-says-no"}  # where the file's judge said otherwise
    lost = Judged({}, {0: "not τ²'s format"}, [])
    failed, _ = rescore_with(Tau2Rescorer(results, CHECKOUT), lost)
    assert "the judge failed: not τ²'s format" in (failed.verdicts[0].error or "")
    assert failed.verdicts[0].status == "infrastructure_error"  # in no rate


def test_the_command_prints_and_writes_the_rescore(tmp_path: Path) -> None:
    data = _domain_data(TELECOM)
    cases = _cases(data, 3, "rescore-cli")
    path = tmp_path / "results.json"
    _file("telecom", cases, path)
    runner = CliRunner()
    done = runner.invoke(app, ["rescore", "tau2", str(path), "--data", str(CHECKOUT)])
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert (
        f"reproduced (the reward and every component equal the file's reward_info): "
        f"{len(cases)} of {len(cases)}" in text
    )
    assert "pass^k as τ²'s leaderboard computes it" in text
    done = runner.invoke(app, ["rescore", "tau2", str(path), "--data", str(CHECKOUT), "--json"])
    payload = json.loads(done.output)
    assert payload["reproduced"] == len(cases) and len(payload["verdicts"]) == len(cases)
    bad = runner.invoke(app, ["rescore", "tau2", str(tmp_path / "none.json"), "--data", "x"])
    assert bad.exit_code == 2 and "no such τ² result file" in bad.output
    wrong = runner.invoke(app, ["rescore", "taubench", str(path), "--fresh-tasks"])
    assert wrong.exit_code == 2 and "τ² only" in wrong.output


def test_an_imported_file_is_a_run_that_report_compare_and_audit_read(tmp_path: Path) -> None:
    data = _domain_data(TELECOM)
    cases = _cases(data, 3, "import")
    path = tmp_path / "results.json"
    infra = [{"id": "lost", "task_id": cases[0]["task"]["id"], "trial": 1}]
    _file("telecom", cases, path, infrastructure_errors=infra)
    store = tmp_path / "runs.db"
    runner = CliRunner()
    given = ["import", "tau2", str(path), "--data", str(CHECKOUT), "--store", str(store)]
    done = runner.invoke(app, given)
    assert done.exit_code == 0, done.output
    run_id = " ".join(done.output.split()).split("imported run ")[1].split(":")[0]
    assert run_id.startswith("tau2-telecom-tau2-scripted-")
    again = runner.invoke(app, given)
    assert again.exit_code == 2 and "already in" in again.output
    assert runner.invoke(app, [*given, "--run-id", "second"]).exit_code == 0

    report = runner.invoke(app, ["report", run_id, "--json", "--store", str(store)])
    payload = json.loads(report.output)
    assert payload["scored"] == len(cases) and payload["errors"] == 1  # τ²'s infra error
    [condition] = payload["conditions"]
    reward = condition["overall"]["metrics"]["reward"]
    results = read_results(path)
    recorded = [s.reward_info["reward"] for s in results.simulations if s.reward_info]
    assert reward["n"] == len(cases) and reward["k"] == sum(r == 1.0 for r in recorded)
    assert payload["run"]["agent_params"]["tau2"]["reproduced"] == f"{len(cases)} of {len(cases)}"
    shown = runner.invoke(app, ["show", run_id, cases[0]["task"]["id"], "--store", str(store)])
    assert shown.exit_code == 0 and "###STOP###" in shown.output
    compared = runner.invoke(app, ["compare", run_id, "second", "--store", str(store)])
    assert compared.exit_code == 0, compared.output
    audited = runner.invoke(app, ["audit", run_id, "--store", str(store)])
    assert audited.exit_code == 0 and f"{len(cases)} audits stored" in audited.output
    html = tmp_path / "report.html"
    made = runner.invoke(app, ["report", run_id, "--html", str(html), "--store", str(store)])
    assert made.exit_code == 0 and "###STOP###" in html.read_text(encoding="utf-8")


def test_the_command_asks_a_judge_model_over_http_for_what_the_file_lacks(
    tmp_path: Path,
) -> None:
    """--judge through a real HTTP client against a local server answering τ²'s format."""
    import ast

    from deedbench.testing import FakeModelServer, Reply

    data = _domain_data(RETAIL)
    cases = _nl_cases(data)
    path = tmp_path / "results.json"
    _file("retail", cases, path)
    raw = json.loads(path.read_text())
    for simulation in raw["simulations"]:
        simulation["reward_info"]["nl_assertions"] = None
    path.write_text(json.dumps(raw))

    def verdicts(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        listed = ast.literal_eval(prompt.split("expectedOutcomes:")[1].strip().splitlines()[0])
        met = [{"expectedOutcome": o, "reasoning": "r", "metExpectation": True} for o in listed]
        return Reply(text=json.dumps({"results": met}))

    with FakeModelServer("openai", verdicts) as server:
        judge = ["--judge", "openai-compatible/judge", "--judge-base-url", server.base_url]
        done = CliRunner().invoke(
            app, ["rescore", "tau2", str(path), "--data", str(CHECKOUT), "--json", *judge]
        )
        asked = server.hits
    assert done.exit_code == 0, done.output
    payload = json.loads(done.output)
    assert asked == len(cases) and payload["nl_from_judge"] == len(cases)
    assert payload["needs_judge"] == 0 and payload["pass_hat_k"] == {"1": 1.0, "2": 1.0}
