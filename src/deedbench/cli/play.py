"""`deedbench play`: a person plays one side of a benchmark's episodes in the terminal.

They see what a model in that seat is shown: the system prompt folded to its first
lines (``/system`` shows it whole), the tools listed (``/tools``), then the
conversation. A line is one message: ``name {json}`` calls the tool `name` (Tab
completes tool names), anything else is text. The episodes are a run of the agent
``human/NAME`` (playing the user: the agent's run, its user ``human/NAME``), recorded
by the seam (`deedbench.environment`), scored, and reported like any run. Ctrl-C or
Ctrl-D at the prompt stops: the episode in play is kept as interrupted, with what was
played, and the run resumes from there (`--run-id`).
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import (
    ApiKeyEnvOption,
    BaseUrlOption,
    StoreOption,
    app,
    check_run_id,
    data_option,
    fail,
    open_store,
    parse_pairs,
    resolve_store,
)
from deedbench.cli.roles import model_settings
from deedbench.errors import DeedbenchError
from deedbench.printable import printable

if TYPE_CHECKING:
    from deedbench.engine import RunStore
    from deedbench.engine.rollout import Rollout
    from deedbench.engine.seat import Turn
    from deedbench.environment import Environment
    from deedbench.records import EpisodeRecord, Message

__all__ = ["play"]

_FOLDED_LINES = 6
_FOLDED_CHARACTERS = 600
"""How much of a long system prompt is shown: its first lines and its last, at most this
many characters of each."""

_HELP = (
    "type a message and Enter; `name {json}` calls a tool (Tab completes its name); "
    "/system shows the whole system prompt, /tools the tools, /tool NAME one tool's "
    "parameters, /help this; Ctrl-C or Ctrl-D stops (what was played is kept)"
)


@app.command()
def play(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    side: Annotated[
        str, typer.Option("--as", help="The side you play: agent, or user (against --agent).")
    ] = "agent",
    name: Annotated[
        str | None,
        typer.Option(help="Your name, recorded as the agent human/NAME (default: your login)."),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="--as user: the agent you play against (a spec)."),
    ] = None,
    condition: Annotated[
        str | None, typer.Option(help="Comma-separated conditions (default: all).")
    ] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Epochs (default 1).")] = None,
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Name the run; an existing id resumes it.")
    ] = None,
    data: Annotated[
        Path | None, typer.Option("--data", help="Data to load instead of the built-in set.")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "-T",
            help="Benchmark option KEY=VALUE (repeatable); tasks=ID,ID... picks the samples "
            "to play where the benchmark takes no tasks option of its own.",
        ),
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    store: StoreOption = None,
) -> None:
    """Play one side of a benchmark's episodes yourself, stored as a run of human/NAME."""
    from deedbench.benchmarks import benchmark_class
    from deedbench.environment import Environment

    if side not in ("agent", "user"):
        raise fail(f"--as is agent or user, not {side!r}")
    if side == "user" and agent is None:
        raise fail("--as user plays against an agent: name it with --agent")
    if side == "agent" and agent is not None:
        raise fail("--agent is the agent played against (--as user); as the agent, you play")
    options = parse_pairs(option or [], "-T")
    if data is not None:
        options[data_option(benchmark)] = str(data)
    try:
        takes_tasks = any(o.name == "tasks" for o in benchmark_class(benchmark).option_specs)
    except DeedbenchError as exc:
        raise fail(str(exc)) from None
    samples = None
    if "tasks" in options and not takes_tasks:
        samples = [t.strip() for t in options.pop("tasks").split(",") if t.strip()]
    store_path = resolve_store(store)
    if run_id is not None:
        check_run_id(run_id)
    with open_store(store_path) as runs:
        existing = runs.get_run(run_id) if run_id else None
        player = f"human/{_name(name)}"
        if existing is not None and name is None:  # resumed: whoever played it
            recorded = existing.user.spec if side == "user" and existing.user else existing.agent
            player = recorded if recorded.startswith("human/") else player
        if existing is not None and not options:
            options = dict(existing.benchmark_options)
            if side == "user":
                options.pop("user", None)
        settings = None
        if side == "user" and agent is not None and "/" in agent:
            from deedbench.agents import is_model_spec

            if is_model_spec(agent):
                from deedbench.agents.roles import ModelChoice

                choice = ModelChoice(base_url=base_url, api_key_env=api_key_env)
                settings = model_settings("agent", agent, choice)
        try:
            environment = Environment(
                benchmark,
                options=options,
                play="user" if side == "user" else "agent",
                player=player,
                partner=agent,
                partner_settings=settings,
                conditions=[c for c in condition.split(",") if c] if condition else None,
                epochs=epochs or (None if existing is not None else 1),
                seed=seed,
                samples=samples,
                store=runs,
                run_id=run_id,
                concurrency=1,
            )
        except DeedbenchError as exc:
            raise fail(str(exc)) from None
        _Terminal(environment, runs).go(store_path, benchmark)


def _name(given: str | None) -> str:
    name = given
    if name is None:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "player"
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
        raise fail(f"--name {name!r}: letters, digits, '.', '_' and '-' only")
    return name


class _Terminal:
    """One person at the terminal answering the turns of a run's episodes, one at a time."""

    def __init__(self, environment: Environment, runs: RunStore) -> None:
        self.environment = environment
        self.runs = runs
        self.tools: list[str] = []
        self.specs: dict[str, dict[str, Any]] = {}
        self.system = ""
        self.shown = 0  # messages of the current turn already printed
        self.stopped = False

    def go(self, store: Path, benchmark: str) -> None:
        environment = self.environment
        config = environment.config
        total = config.planned_episodes
        done = self.runs.count(config.run_id).get("scored", 0)
        seat = "the user" if environment.play == "user" else "the agent"
        _say(
            f"{environment.player} plays {seat} of {benchmark}: run {config.run_id}, "
            f"{total - done} of {total} episodes to play. {_HELP}."
        )
        self._complete()
        loop = asyncio.new_event_loop()  # not asyncio.run: Ctrl-C must reach input()
        rollout: Rollout | None = None
        try:
            while not self.stopped:
                try:
                    rollout = environment.open()
                except DeedbenchError:
                    break  # the run has no episode left
                record = loop.run_until_complete(self._episode(rollout))
                _say(_ending(record, environment))
        except KeyboardInterrupt:  # not at the prompt: while the other side took its turn
            self.stopped = True
            if rollout is not None:
                loop.run_until_complete(rollout.cancel())
            _say("interrupted while the other side was busy: that episode is not kept")
        finally:
            loop.run_until_complete(environment.aclose())
            loop.close()
        counts = self.runs.count(config.run_id)
        where = shlex.quote(str(store))
        kept = f"{counts.get('scored', 0)} of {total} episodes scored"
        if counts.get("error"):
            kept += f", {counts['error']} interrupted or failed (played again on resume)"
        _say(f"run {config.run_id}: {kept}.")
        if self.stopped:
            again = [
                "deedbench",
                "play",
                benchmark,
                "--run-id",
                config.run_id,
                "--store",
                str(store),
            ]
            if environment.play == "user":
                again += ["--as", "user", "--agent", config.agent]
            _say("resume with: " + " ".join(shlex.quote(p) for p in again))
        _say(f"see it with: deedbench report {config.run_id} --store {where}")

    async def _episode(self, rollout: Rollout) -> EpisodeRecord:
        from deedbench.engine.seat import Turn
        from deedbench.environment import typed

        _say(f"\n=== episode {rollout.key.sample_id} ({rollout.key.condition}, "
             f"epoch {rollout.key.epoch}) ===")  # fmt: skip
        self.shown = 0
        step = await rollout.start()
        while isinstance(step, Turn):
            self._show(step)
            line = self._read()
            if line is None:
                self.stopped = True
                return await rollout.interrupt("the player stopped (Ctrl-C)")
            step = await rollout.act(typed(line, self.tools, f"call_{rollout.turns}"))
        return step

    def _read(self) -> str | None:
        """The next message typed (None: the person stopped); commands are answered here."""
        while True:
            try:
                line = input("> ")
            except (KeyboardInterrupt, EOFError):
                print()
                return None
            text = line.strip()
            if not text:
                continue
            if text == "/help":
                _say(_HELP)
            elif text == "/system":
                _say(self.system)
            elif text == "/tools":
                self._list_tools()
            elif text.startswith("/tool "):
                found = self.specs.get(text.removeprefix("/tool ").strip())
                _say(json.dumps(found, indent=2) if found else "no such tool; /tools lists them")
            else:
                return line

    def _show(self, turn: Turn) -> None:
        """What this turn shows that the last did not: on the first, the system prompt
        folded and the tools; then each new message."""
        messages = turn.messages
        if self.shown == 0 or self.shown > len(messages):  # the first turn, or a new view
            self.tools = [t["function"]["name"] for t in turn.tools]
            self.specs = {t["function"]["name"]: t["function"] for t in turn.tools}
            system = [m for m in messages if m.role == "system"]
            self.system = system[0].content if system else ""
            if self.system:
                _say(_folded(self.system))
            self._list_tools()
            self.shown = 1 if system else 0
        for message in messages[self.shown :]:
            _say(_line(message, self.environment.play))
        self.shown = len(messages)

    def _list_tools(self) -> None:
        if not self.specs:
            _say("(no tools)")
            return
        _say("tools:")
        for tool, spec in self.specs.items():
            params = ", ".join(spec.get("parameters", {}).get("properties", {}))
            summary = (spec.get("description") or "").split("\n")[0][:100]
            _say(f"  {tool}({params}): {summary}")

    def _complete(self) -> None:
        """Tab completes tool names (and commands) at the start of a line."""
        try:
            import readline
        except ImportError:  # no readline (Windows): typing works, Tab does not complete
            return

        def complete(text: str, state: int) -> str | None:
            if readline.get_begidx() > 0:
                return None
            names = [*self.tools, "/system", "/tools", "/tool", "/help"]
            found = [n for n in names if n.startswith(text)]
            return found[state] + " " if state < len(found) else None

        readline.set_completer(complete)
        readline.set_completer_delims(" \t\n")
        if "libedit" in (readline.__doc__ or ""):
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")


def _folded(text: str) -> str:
    """The system prompt's first lines and its last (a user's scenario comes last), each
    cut at a word, and how much lies between."""
    lines = text.splitlines()
    if len(lines) <= 2 * _FOLDED_LINES and len(text) <= 2 * _FOLDED_CHARACTERS:
        return "system prompt:\n" + "\n".join(f"  {line}" for line in lines)
    head = "\n".join(lines[:_FOLDED_LINES])[:_FOLDED_CHARACTERS].rsplit(" ", 1)[0]
    tail = "\n".join(lines[-2 * _FOLDED_LINES :])[-_FOLDED_CHARACTERS:].split(" ", 1)[-1]
    more = max(0, len(text) - len(head) - len(tail))
    shown = [f"  {line}" for line in head.splitlines()]
    shown.append(f"  ... ({more} characters more: /system shows it whole) ...")
    shown += [f"  {line}" for line in tail.splitlines()]
    return "system prompt:\n" + "\n".join(shown)


def _line(message: Message, side: str) -> str:
    """One message as the person sees it: who said it, then what."""
    you, other = ("you", "user") if side == "agent" else ("you", "agent")
    if message.role == "tool":
        return f"[tool result] {message.content}"
    who = you if message.role == "assistant" else other
    calls = [f"{who} -> {c.name} {c.arguments}" for c in message.tool_calls]
    said = [f"{who}: {message.content}"] if message.content or not calls else []
    return "\n".join([*said, *calls])


def _ending(record: EpisodeRecord, environment: Environment) -> str:
    if record.score is None:
        return f"=== ended: {record.termination} ({record.error}) ==="
    reward = environment.reward(record)
    return (
        f"=== ended: {record.termination}; {environment.config.report.primary} {reward:g} "
        f"({record.score.outcome}) ==="
    )


def _say(text: str) -> None:
    sys.stdout.write(printable(text) + "\n")
    sys.stdout.flush()
