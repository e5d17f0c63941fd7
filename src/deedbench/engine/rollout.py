"""One episode played from outside, step by step: the loop as a task, its turns handed out.

A `Rollout` runs `executor.run_job`, the function every executor runs for `deedbench
run`, on a benchmark and agents already built (`Built`), one of whose parties is a
`Seat`. `start` starts the episode as a task of the running event loop and returns the
first `Turn` a seat is asked for; `act` answers it and returns the next one; when the
episode ends either returns its `EpisodeRecord`, scored as `deedbench run` scores it.
Many rollouts share one event loop, one task each and no thread.

Who owns what: the rollout's task owns the episode's state (the world, the conversation,
the limits and counters, all inside the loop's frame, as in any run); the rollout holds
only the question asked and the answer awaited. Whoever steps it owns nothing of the
episode but its answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from deedbench.engine.executor import Built, EpisodeJob, Prebuilt, run_job
from deedbench.engine.seat import PLAYING, Turn
from deedbench.errors import Interrupted
from deedbench.records import EpisodeKey, EpisodeRecord, Message

__all__ = ["Rollout", "Step"]

Step = Turn | EpisodeRecord
"""What a step of a rollout gives: the next turn asked for, or the finished episode."""


class Rollout:
    """One episode of `built.benchmark` with key `key` and seed `seed`, one of whose parties
    is a `Seat`; `on_record` is told of its record when it ends (a store's writer)."""

    def __init__(
        self,
        built: Built,
        key: EpisodeKey,
        seed: int,
        *,
        run_id: str = "",
        on_record: Callable[[EpisodeRecord], None] | None = None,
    ) -> None:
        self.key = key
        self.seed = seed
        self.turn: Turn | None = None
        """The turn asked for and not yet answered (None before start and once ended)."""
        self.record: EpisodeRecord | None = None
        """The finished episode's record (None until it ends)."""
        self.turns = 0  # turns answered so far
        self._built = built
        self._job = EpisodeJob(run_id, Prebuilt(built.benchmark, built.agent), key, seed)
        self._on_record = on_record
        self._task: asyncio.Task[EpisodeRecord] | None = None
        self._next: asyncio.Future[Step] | None = None
        self._answer: asyncio.Future[Message] | None = None

    @property
    def done(self) -> bool:
        return self.record is not None

    async def start(self) -> Step:
        """Start the episode; the first turn a seat is asked for, or the record of an
        episode that ended before any was (RunAborted passes through, as in a run)."""
        if self._task is not None:
            raise RuntimeError("this rollout has started already")
        loop = asyncio.get_running_loop()
        self._next = loop.create_future()
        context = PLAYING.set(self)
        try:  # the task copies the context now, with this rollout in it
            self._task = loop.create_task(run_job(self._built, self._job))
        finally:
            PLAYING.reset(context)
        self._task.add_done_callback(self._ended)
        return await self._next

    async def act(self, message: Message) -> Step:
        """Answer the turn asked for with `message` (an assistant message: text or tool
        calls); the next turn, or the finished episode's record."""
        answer = self._take_answer()
        self._next = asyncio.get_running_loop().create_future()
        answer.set_result(message)
        return await self._next

    async def interrupt(self, reason: str = "the player stopped") -> EpisodeRecord:
        """Stop the episode at the turn asked for: it ends as `INTERRUPTED`, kept with what
        was played (an error record: in no rate, played again on resume)."""
        answer = self._take_answer()
        self._next = asyncio.get_running_loop().create_future()
        answer.set_exception(Interrupted(reason))
        ended = await self._next
        assert isinstance(ended, EpisodeRecord)  # nothing is asked after an interruption
        return ended

    async def cancel(self) -> None:
        """Abandon the episode with no record (a trainer's reset in the middle of one)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def ask(self, turn: Turn) -> Message:
        """The seat's side: hand `turn` out and wait for its answer."""
        loop = asyncio.get_running_loop()
        self.turn = turn
        self._answer = loop.create_future()
        self._resolve(turn)
        return await self._answer

    def _take_answer(self) -> asyncio.Future[Message]:
        answer = self._answer
        if answer is None or answer.done():
            state = "has ended" if self.done else "asks for no turn (start it first)"
            raise RuntimeError(f"episode {self.key.sample_id!r} {state}")
        self._answer = None
        self.turn = None
        self.turns += 1
        return answer

    def _resolve(self, step: Step) -> None:
        if self._next is not None and not self._next.done():
            self._next.set_result(step)

    def _ended(self, task: asyncio.Task[EpisodeRecord]) -> None:
        self.turn = None
        if task.cancelled():
            if self._next is not None and not self._next.done():
                self._next.cancel()
            return
        failure = task.exception()
        if failure is not None:  # RunAborted: what would stop a run stops the stepping
            if self._next is not None and not self._next.done():
                self._next.set_exception(failure)
            return
        self.record = task.result()
        if self._on_record is not None:
            self._on_record(self.record)
        self._resolve(self.record)
