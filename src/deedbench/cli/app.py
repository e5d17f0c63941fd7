"""The `deedbench` application object and what its commands share: options, errors, paths."""

from __future__ import annotations

import ast
import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from difflib import get_close_matches
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from typer.core import TyperGroup

from deedbench.errors import BenchmarkError, DeedbenchError
from deedbench.printable import printable, safe

if TYPE_CHECKING:
    from rich.progress import Progress

    from deedbench.engine import RunStore
    from deedbench.records import RunConfig
    from deedbench.reports.cost import PriceTable

__all__ = [
    "DEFAULT_STORE",
    "RUN_ID_RULE",
    "AllowImportOption",
    "ApiKeyEnvOption",
    "BaseUrlOption",
    "CommandGroup",
    "JudgeLenientOption",
    "NoCacheOption",
    "PricesOption",
    "QuietOption",
    "SafeConsole",
    "StoreOption",
    "Tally",
    "agent_purpose",
    "app",
    "check_run_id",
    "console",
    "data_option",
    "did_you_mean",
    "errors",
    "existing_store",
    "fail",
    "load_prices",
    "open_store",
    "parse_pairs",
    "progress_bar",
    "require_run",
    "resolve_store",
    "terminal_safe",
    "warn",
]


class CommandGroup(TyperGroup):
    """The command group: any deedbench error a command leaves unhandled (bad input, a
    store that cannot serve, a file that cannot be written) is one line on stderr and exit
    code 2, never a traceback. Commands catch what they report otherwise themselves."""

    def invoke(self, ctx: Any) -> Any:  # typer's Context here is its private vendored click's
        try:
            return super().invoke(ctx)
        except DeedbenchError as exc:
            raise fail(str(exc)) from None

    def get_params(self, ctx: Any) -> list[Any]:
        return _bare_flags(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, its flags shown bare in --help (typer labels them `<bool>`) and
        its summary whole in the list of commands."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _bare_flags(command.get_params(ctx))
            if command.short_help is None and command.help:  # listed whole, not cut at "..."
                command.short_help = " ".join(command.help.split("\n\n")[0].split())
        return command


def _bare_flags(params: list[Any]) -> list[Any]:
    """`params` with each flag's type label emptied: a flag takes no value to describe."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


app = typer.Typer(
    cls=CommandGroup,
    name="deedbench",
    help="Judge AI agents by what they do: run benchmarks, score actions, report honestly.",
    no_args_is_help=True,
    rich_markup_mode=None,  # click's plain help: no boxes, no stray breaks before defaults
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from deedbench.version import __version__

        print(f"deedbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print deedbench's version and exit.", callback=_print_version
        ),
    ] = False,
) -> None:
    """Judge AI agents by what they do: run benchmarks, score actions, report honestly."""


class SafeConsole(Console):
    """A console that never lets data drive the terminal.

    Commands pass data through `printable.safe` (markup escaped, control
    characters visible); as a last guard, every segment of text this console renders
    (not rich's own control codes) has its control characters shown as escapes and
    registered secrets redacted, whatever a renderable was built from.

    Rich renders a table by rendering each cell through this same method; those nested
    renders pass their segments through untouched, since every one of them reaches the
    output through the outermost render, which guards it (once, not once per level).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inside = threading.local()  # per thread: a guarded render is advancing

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if getattr(self._inside, "active", False):
            return super().render(renderable, options)
        return self._guarded(super().render(renderable, options))

    def _guarded(self, segments: Iterable[Segment]) -> Iterator[Segment]:
        inside, segments = self._inside, iter(segments)
        while True:
            inside.active = True  # only while rich works on it, not while it waits
            try:
                segment = next(segments, None)
            finally:
                inside.active = False
            if segment is None:
                return
            if segment.control is None and segment.text:
                yield Segment(printable(segment.text), segment.style)
            else:
                yield segment


def terminal_safe(stream: IO[str]) -> IO[str]:
    """`stream`, or, when it is a terminal, a writer to it that shows control characters
    as escapes (`printable`), as the tables do: raw output of data (an export's CSV) must not
    let a server's error or a scenario's field drive the terminal. A file or a pipe gets
    the data unaltered."""
    return cast(IO[str], _Printable(stream)) if stream.isatty() else stream


class _Printable:
    """A text stream's writer that passes what it writes through `printable`."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text))


# The terminal's width; piped output (CI logs, files) is $COLUMNS wide, else 80 columns
# (read at each print, so tables reflow to it: reports.tables.print_table).
console = SafeConsole()
errors = SafeConsole(stderr=True)

# A run id names the run in the store, in commands and in exported file names.
RUN_ID_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

DEFAULT_STORE = "deedbench.db"
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="A price table (JSON, same shape as the shipped one) whose entries win.",
        exists=True,
        dir_okay=False,
    ),
]
BaseUrlOption = Annotated[
    str | None, typer.Option(help="The agent's model endpoint (required for openai-compatible).")
]
ApiKeyEnvOption = Annotated[
    str | None, typer.Option(help="Environment variable that holds the agent's API key.")
]
JudgeLenientOption = Annotated[
    bool,
    typer.Option(
        "--judge-lenient",
        help="τ²: read the judge's replies as τ² does (an empty or partial reply meets what it "
        "leaves out) instead of strictly (exactly the assertions asked, each true or false, "
        "else asked again and then an infrastructure error); recorded with the rescore.",
    ),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
]
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help=f"Run store (SQLite). Default: $DEEDBENCH_STORE or ./{DEFAULT_STORE}.",
        show_default=False,
    ),
]


# Reading a store or a file never imports the code it names (python/MODULE:ATTR, another
# package's benchmark): runs record what readers need. A run recorded before that may need
# its benchmark's class; this option allows the import, which the error names first.
AllowImportOption = Annotated[
    bool,
    typer.Option(
        "--allow-import",
        help="Import the code a run's benchmark names (python/MODULE:ATTR or another "
        "package's) where a run recorded by an older deedbench needs it; without it, "
        "reading imports no code and says what it would import.",
    ),
]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Leave out the legend: the lines saying what the columns mean."
    ),
]


def agent_purpose(config: RunConfig) -> str | None:
    """What the run's agent is for, when it is a baseline: the line its benchmark recorded
    with the run; for a run recorded before that, the line of deedbench's own benchmark of
    that name (no other code is imported to read a store); None for any other agent."""
    from deedbench.benchmarks import BUILTIN, benchmark_class

    kind, _, name = config.agent.partition("/")
    if kind != "baseline":
        return None
    recorded = config.report.baseline_purposes
    if recorded is not None:
        return recorded.get(name)
    if config.benchmark not in BUILTIN:
        return None
    try:
        return benchmark_class(config.benchmark).baseline_purposes.get(name)
    except DeedbenchError:
        return None


def resolve_store(store: Path | None) -> Path:
    return store or Path(os.environ.get("DEEDBENCH_STORE", DEFAULT_STORE))


def existing_store(store: Path | None) -> Path:
    """The store a reading command reads, which must exist (reading never creates one)."""
    path = resolve_store(store)
    if not path.exists():
        raise fail(f"no run store at {path}")
    return path


@contextmanager
def open_store(path: Path, *, reading: bool = False) -> Iterator[RunStore]:
    """The store for a command's block. Whatever is wrong with it (a folder, not SQLite,
    damaged, read-only, a run locked by another process) is a one-line error, exit 2;
    a corrupt record that readers skip is named in a warning.

    `reading`: for a command that only reads, opened read-only as the viewer opens it, so
    it reads a store it may not write (another user's, a read-only folder) and never waits
    for a writer (an import writes in one transaction); a store of an older format is
    opened to write once, which migrates it."""
    from deedbench.engine import RunStore
    from deedbench.errors import StoreFormatError

    if reading:
        try:
            runs = RunStore(path, on_corrupt=warn, read_only=True)
        except StoreFormatError:  # older (migrated below), or newer (refused below)
            pass
        else:
            with runs:
                yield runs
            return
    with RunStore(path, on_corrupt=warn) as runs:
        yield runs


def warn(message: str) -> None:
    errors.print(f"[yellow]warning:[/yellow] {safe(message)}", highlight=False, soft_wrap=True)


def require_run(runs: RunStore, run_id: str) -> RunConfig:
    """The run's configuration, or a clear error naming the nearest run id and the
    latest runs, newest first as `deedbench runs` lists them.

    The keys its agent and its model-played user read are registered as secrets, so
    what reading commands print or write is redacted even in records stored before
    keys were removed from successful replies.
    """
    from deedbench.errors import StoreError
    from deedbench.secrets import register_secret

    config = runs.get_run(run_id)
    if config is None:
        newest = runs.run_ids()[::-1]
        near = get_close_matches(run_id, newest, n=1)
        hint = f": did you mean {near[0]!r}?" if near else ""
        known = ", ".join(newest[:10]) or "none"
        raise StoreError(f"no run {run_id!r} in {runs.path}{hint} (latest runs: {known})")
    for variable in config.key_variables:
        register_secret(os.environ.get(variable))
    return config


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the error (with `did_you_mean`'s hint) on stderr; the exit to raise."""
    errors.print(
        f"[red]error:[/red] {safe(did_you_mean(message))}", highlight=False, soft_wrap=True
    )
    return typer.Exit(code)


# deedbench's messages for a name or value it does not know: "unknown agent 'baseline/randm'
# for benchmark 'tac'. Valid agents: a, b", "unknown condition(s) ['x']. Valid conditions of
# tac: a, b", "tac option variants must be one of a, b; got 'x'".
_QUOTED = r"'[^']*'|\"[^\"]*\""
_UNKNOWN = re.compile(
    rf"unknown [\w ()-]*?(?P<names>{_QUOTED}|\[(?:{_QUOTED}|, )*\]).*?\. "
    r"Valid [\w ]+: (?P<valid>[^;(\n]*)"
)
_ONE_OF = re.compile(rf"one of (?P<valid>[^;\n]*); got (?P<names>{_QUOTED})")


def did_you_mean(message: str) -> str:
    """`message`, with the nearest valid name after each unknown name it quotes ("unknown
    benchmark 'tacc' (did you mean 'tac'?). Valid benchmarks: ..."), so every command
    (and every problem of a study) gives the hint, whichever layer found the name wrong."""
    for pattern in (_UNKNOWN, _ONE_OF):
        found = pattern.search(message)
        if found is None:
            continue
        valid = [v.strip() for v in found["valid"].split(",") if v.strip()]
        try:
            names = ast.literal_eval(found["names"])
        except (ValueError, SyntaxError):  # a name holding both kinds of quote: no hint
            continue
        near = [
            match[0]
            for name in ([names] if isinstance(names, str) else names)
            if (match := get_close_matches(name, valid, n=1))
        ]
        if near:
            hint = f" (did you mean {' or '.join(map(repr, near))}?)"
            return message[: found.end("names")] + hint + message[found.end("names") :]
    return message


def check_run_id(run_id: str) -> str:
    """A new run's id, which must follow the rule (checked before anything is written)."""
    if not RUN_ID_RULE.fullmatch(run_id):
        raise fail(
            f"invalid run id {run_id!r}: a run id is 1 to 128 letters, digits, '.', '_' or "
            "'-', and starts with a letter or a digit"
        )
    return run_id


def parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise fail(f"{flag} expects KEY=VALUE, got {pair!r}")
        result[key.strip()] = value.strip()
    return result


def load_prices(path: Path | None) -> PriceTable:
    from pydantic import ValidationError

    from deedbench.reports.cost import PriceTable

    try:
        return PriceTable.load(path)
    except ValidationError as exc:  # one line: each field and what is wrong with it
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}" for e in exc.errors()
        )
        raise fail(
            f'{path}: not a price table ({problems}); it needs "as_of" (the prices\' date) '
            'and "models" (spec: {"input": USD, "output": USD} per million tokens)'
        ) from None
    except ValueError as exc:  # a decode error
        raise fail(f"{path}: not a price table: {exc}") from None
    except RecursionError:
        raise fail(f"{path}: not a price table: JSON nested too deeply") from None
    except OSError as exc:
        raise fail(f"{path}: cannot be read: {exc.strerror or exc}") from None


def data_option(benchmark: str) -> str:
    from deedbench.benchmarks import benchmark_class

    cls = benchmark_class(benchmark)
    if cls.data_option is None:
        raise BenchmarkError(f"benchmark {benchmark!r} takes no --data")
    return cls.data_option


def progress_bar(*, enabled: bool = True, auto_refresh: bool = True) -> Progress:
    """The bar every long command shows on a terminal (and nowhere else), gone when done;
    a task's `stats` field (a Tally's line) shows after it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _stats_column(),
        console=console,
        transient=True,
        disable=not (enabled and console.is_terminal),
        auto_refresh=auto_refresh,
    )


def _stats_column() -> Any:
    """A column showing a task's `stats` field (rich is imported when a bar is made)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class StatsColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(printable(str(task.fields.get("stats", ""))))

    return StatsColumn()


class Tally:
    """What a long command has done so far: items done of planned, rate, ETA, errors,
    retries, tokens and cost. On a terminal it is the bar's `stats`; elsewhere (a pipe,
    a CI log) `advance` prints it as a plain line, at the first item, then every
    `every` seconds, and `finish` prints the last one (unless `lines` is False: output
    that must stay JSON).

    Retries are model calls sent again after a transient failure (timeouts, 429, 5xx).

    The rate, and the ETA from it, are measured from the first item done, once `basis`
    seconds have passed since: until then the only figure is the first item's wait, which
    holds the start-up (a fork server, the first call of every episode in flight) and
    would put a 5-second study at 8 minutes.
    """

    basis = 1.0

    def __init__(
        self,
        total: int,
        done: int = 0,
        *,
        noun: str = "episodes",
        every: float = 5.0,
        lines: bool = True,
    ) -> None:
        import time

        self._clock = time.monotonic
        self.total, self.done, self.noun, self.every = total, done, noun, every
        self._first_done = done
        self.errors = self.retries = self.tokens = 0
        self.cost: float | None = 0.0
        self._first: tuple[float, int] | None = None  # when the first item was done, done then
        self._printed: float | None = None
        self._lines = lines and not console.is_terminal  # False: the bar's stats alone

    def advance(
        self, usage: Iterable[Any] = (), *, error: bool = False, cost: float | None = 0.0
    ) -> None:
        """One item done: its usages (records.Usage), whether it failed, what it cost
        (None: unknown, no price for its model)."""
        self.done += 1
        if self._first is None:
            self._first = (self._clock(), self.done)
        self.errors += error
        for u in usage:
            self.retries += u.retries
            self.tokens += u.input_tokens + u.output_tokens
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        now = self._clock()
        if self._lines and (self._printed is None or now - self._printed >= self.every):
            self._printed = now
            console.print(self.line(), highlight=False, markup=False)

    def finish(self) -> None:
        """The last line, off a terminal (where the bar is gone, the summary follows)."""
        if self._lines and self.done > self._first_done:
            console.print(self.line(), highlight=False, markup=False)

    def line(self) -> str:
        """The plain line: "12 of 96 episodes, 3.1/s, ETA 0m27s, 0 errors, ..."."""
        return f"{self.done:,} of {self.total:,} {self.noun}, {self.stats()}"

    def stats(self) -> str:
        """What the bar shows beside its own count."""
        parts = []
        if self._first is not None:
            since, done_then = self._first
            elapsed, ran = self._clock() - since, self.done - done_then
            if ran and elapsed >= self.basis:
                rate = ran / elapsed
                left = max(self.total - self.done, 0) / rate
                parts.append(f"{rate:.1f}/s, ETA {_duration(left)}")
        parts.append(f"{self.errors} errors, {self.retries} retries")
        if self.tokens:
            money = "cost unknown" if self.cost is None else f"${self.cost:.4f}"
            parts.append(f"{self.tokens:,} tokens, {money} so far")
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    minutes, second = divmod(round(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}h{minute:02d}m" if hours else f"{minute}m{second:02d}s"
