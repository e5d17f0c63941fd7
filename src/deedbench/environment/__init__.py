"""deedbench as the environment: a benchmark's episodes played from outside, one side at a
time (a trainer, a person at a terminal, a remote agent's host), stored, scored and
reported like any run.

`Environment` opens a benchmark's episodes with one side in a `Seat` (`engine.seat`),
each a `Rollout` (`engine.rollout`) stepped from outside; `chat` reads actions and writes
observations in OpenAI's chat format; `host` serves episodes to another process as JSON.
`deedbench.environment.gym` (Gymnasium, an optional extra) and
`deedbench.environment.verifiers_env` (verifiers) are imported by name, so this package
imports neither.
"""

from deedbench.environment.chat import action, chat_message, typed
from deedbench.environment.environment import Environment, outcome_info, reward_of

__all__ = ["Environment", "action", "chat_message", "outcome_info", "reward_of", "typed"]
