"""Host-env steps in, the project's time-major Transitions `[T, B]` out.

Host environments reset on the step after an episode ends (`env/host/base.py`):
that reset step ignores its action and belongs to no episode. The builder keeps
one column of transitions per environment and never writes a reset step into
it, so a learner sees exactly what the Anakin runner gives it: discount 0 only
where an episode terminated, `truncated` where a time limit ended it, the true
final observation, and bootstrap values from the acting parameters.

The bootstrap value of a transition is the value of the next observation acted
on in its environment's stream. After a step that continues the episode that
is the next step's observation; after a truncation it is the final observation
itself, acted on by the (ignored) reset step: the value of the true final
observation, at no extra inference. After a termination it is 0, whatever that
value is (even inf or NaN).

Columns advance at their own pace (a reset step adds nothing; an asynchronous
pool returns some environments more often than others), so a batch is
complete when every column holds `T` finished transitions. The transitions
columns ahead carry into later batches were acted with older parameters: the
policy lag the runner logs (docs/guide/environments.md, "Policy lag").
"""

from typing import Any, NamedTuple

import jax
import numpy as np

from purejaxdrl.env.host.base import HostStep
from purejaxdrl.runners.base import ENV_METRIC
from purejaxdrl.types import Transition

# Transitions dropped from columns more than a batch ahead (`_drop_surplus`).
DROPPED = "actor/dropped"


class PolicyOut(NamedTuple):
    """The policy's output for a batch of observations, on the host.

    `start_state` is a recurrent core's state of those rows before the step
    (before any reset; () for a feed-forward policy): the builder keeps it as
    the start state of the trajectories that begin there.
    """

    env_action: np.ndarray
    action: np.ndarray
    log_prob: np.ndarray
    value: np.ndarray
    start_state: Any


class Batch(NamedTuple):
    """One learner batch: transitions `[T, B]` (numpy) and what they came from.

    Attributes:
      transitions: a Transition of numpy arrays, time-major, `info` empty.
      versions: int32 [T, B], the parameter version each action was taken with.
      episodes: sums over the episodes that ended while the batch was built:
        `episode/count`, `episode/return_sum`, `episode/length_sum`; and
        `actor/dropped`, the transitions `take` dropped (`_drop_surplus`).

    """

    transitions: Transition
    versions: np.ndarray
    episodes: dict[str, float]


class TrajectoryBuilder:
    """Columns of finished transitions, one per environment of a pool.

    Call `add` with each HostStep and the actions taken on its observations;
    `ready` says when every column holds `length` transitions, `take` returns
    them as a Batch and keeps the rest.

    For a recurrent policy the builder also keeps, per transition, whether its
    observation starts an episode (`reset`) and the core state it was acted
    from: a batch's `core_state` is that of each column's first transition,
    which may have been acted on in the batch before.

    Args:
      num_envs: environments in the pool (columns).
      length: transitions per column in a batch, T.
      obs_shape: one observation's shape.
      obs_dtype: its dtype.
      action_shape: one action's shape.
      action_dtype: its dtype.
      core_state: one environment's core state (leaves without the batch
        axis), or () for a feed-forward policy.

    """

    def __init__(
        self,
        num_envs: int,
        length: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype,
        action_shape: tuple[int, ...],
        action_dtype: np.dtype,
        core_state: Any = (),
        metrics: tuple[str, ...] = (),
    ):
        self.num_envs, self.length = num_envs, length
        self.count = np.zeros(num_envs, np.int64)  # finished transitions per column
        self.episode_return = np.zeros(num_envs, np.float64)
        self.episode_length = np.zeros(num_envs, np.int64)
        # The environment's own metrics, summed per episode as its return is.
        self.episode_metrics = {name: np.zeros(num_envs) for name in metrics}
        self.episodes = self._no_episodes()
        self.fields = {
            "observation": (obs_shape, obs_dtype),
            "final_observation": (obs_shape, obs_dtype),
            "action": (action_shape, action_dtype),
            "log_prob": ((), np.float32),
            "value": ((), np.float32),
            "reward": ((), np.float32),
            "discount": ((), np.float32),
            "truncated": ((), np.bool_),
            "bootstrap_value": ((), np.float32),
            "version": ((), np.int32),
        }
        leaves, self.core_def = jax.tree.flatten(core_state)
        self.recurrent = bool(leaves)
        if self.recurrent:
            self.fields["reset"] = ((), np.bool_)
            for i, leaf in enumerate(leaves):
                self.fields[f"core_state/{i}"] = (np.shape(leaf), np.dtype(leaf.dtype))
        self.buffers = self._empty(2 * length + 2)

    def _empty(self, rows: int) -> dict[str, np.ndarray]:
        return {
            name: np.zeros((rows, self.num_envs, *shape), dtype)
            for name, (shape, dtype) in self.fields.items()
        }

    def add(self, step: HostStep, out: PolicyOut, version: int) -> None:
        """Records the outcome of the previous actions and the actions on `step`.

        Args:
          step: what the environments `step.env_id` returned.
          out: the policy's output on `step.observation`, rows [rows, ...]
            (its actions on final observations are the ignored reset steps').
          version: the parameter version that acted.

        """
        value = out.value
        ids = step.env_id
        b = self.buffers
        # The previous action's outcome, in every row but reset steps' results.
        done = ~step.first
        row, col = self.count[ids[done]], ids[done]
        discount = 1.0 - step.terminated[done].astype(np.float32)
        b["reward"][row, col] = step.reward[done]
        b["discount"][row, col] = discount
        b["truncated"][row, col] = step.truncated[done]
        b["final_observation"][row, col] = step.observation[done]
        # A select, not `value * discount`: a terminal observation's value may
        # be inf or NaN (it is never learned from), and inf * 0 is NaN, which
        # would spread through the whole column's advantages (rollout's
        # `step_values` selects the same way).
        b["bootstrap_value"][row, col] = np.where(discount > 0, value[done], 0.0)
        self.count[col] += 1
        self._count_episodes(step, done)
        # The new actions, but on final observations: those are reset steps.
        acts = ~(step.terminated | step.truncated)
        col = ids[acts]
        row = self.count[col]
        if row.size and row.max() >= len(b["reward"]):
            self._grow()
            b = self.buffers
        b["observation"][row, col] = step.observation[acts]
        b["action"][row, col] = out.action[acts]
        b["log_prob"][row, col] = out.log_prob[acts]
        b["value"][row, col] = value[acts]
        b["version"][row, col] = version
        if self.recurrent:
            b["reset"][row, col] = step.first[acts]
            for i, leaf in enumerate(jax.tree.leaves(out.start_state)):
                b[f"core_state/{i}"][row, col] = leaf[acts]

    def _count_episodes(self, step: HostStep, done: np.ndarray) -> None:
        ids = step.env_id[done]
        self.episode_return[ids] += step.reward[done]
        self.episode_length[ids] += 1
        ended = ids[step.game_over()[done]]  # a lost life goes on counting
        self.episodes["episode/count"] += len(ended)
        self.episodes["episode/return_sum"] += self.episode_return[ended].sum()
        self.episodes["episode/length_sum"] += self.episode_length[ended].sum()
        self.episode_return[ended] = 0.0
        self.episode_length[ended] = 0
        for name, sums in self.episode_metrics.items():
            if name in step.metrics:  # absent from a reset's step: no transitions
                sums[ids] += step.metrics[name][done]
            self.episodes[f"{ENV_METRIC}{name}_sum"] += sums[ended].sum()
            sums[ended] = 0.0

    def _no_episodes(self) -> dict[str, float]:
        # Every name from the start: processes sum them in one fixed order.
        names = ["episode/count", "episode/return_sum", "episode/length_sum"]
        names += [DROPPED]
        names += [f"{ENV_METRIC}{name}_sum" for name in self.episode_metrics]
        return dict.fromkeys(names, 0.0)

    def _grow(self) -> None:
        # A column far ahead of the others (an asynchronous pool): more rows.
        rows = len(self.buffers["reward"])
        bigger = self._empty(2 * rows)
        for name, buffer in self.buffers.items():
            bigger[name][:rows] = buffer
        self.buffers = bigger

    def _drop_surplus(self) -> int:
        """Drops the oldest transitions of columns more than a batch ahead.

        Columns drift apart without bound (a reset step costs its column a
        transition), and what a column carries ahead reaches the learner a
        batch later for every batch it is ahead. Keeping at most one batch
        bounds that: what remains was acted while this batch was built. The
        rest of a column stays one contiguous stream, each row with its own
        reset flag and start core state, so the next batch starts correctly.
        Returns the number of transitions dropped.
        """
        rows = len(self.buffers["reward"])
        dropped = 0
        for col in np.flatnonzero(self.count > self.length):
            drop = int(self.count[col]) - self.length
            used = min(int(self.count[col]) + 1, rows)  # with its open row
            for buffer in self.buffers.values():
                buffer[: used - drop, col] = buffer[drop:used, col]
            self.count[col] -= drop
            dropped += drop
        return dropped

    def ready(self) -> bool:
        """Whether every column holds a batch's `length` finished transitions."""
        return bool(self.count.min() >= self.length)

    def take(self) -> Batch:
        """The first `length` transitions of every column; the rest move up."""
        t = self.length
        out = {name: buffer[:t].copy() for name, buffer in self.buffers.items()}
        # Rows after T: finished transitions of columns ahead, and open ones.
        # A column whose last transition ended an episode has no open row, so
        # the one furthest ahead may have filled the buffer (count == rows).
        rows = len(self.buffers["reward"])
        keep = min(int(self.count.max()) + 1, rows) - t
        for buffer in self.buffers.values():
            buffer[:keep] = buffer[t : t + keep]
        self.count -= t
        self.episodes[DROPPED] += self._drop_surplus()
        episodes, self.episodes = self.episodes, self._no_episodes()
        versions = out.pop("version")
        core = {}
        if self.recurrent:
            leaves = [
                out.pop(f"core_state/{i}")[0] for i in range(self.core_def.num_leaves)
            ]
            core = {
                "reset": out.pop("reset"),
                "core_state": jax.tree.unflatten(self.core_def, leaves),
            }
        return Batch(Transition(**out, info={}, **core), versions, episodes)
