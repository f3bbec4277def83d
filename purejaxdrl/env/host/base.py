"""Host environments: batches of CPU environments stepped with numpy arrays.

The interface every adapter implements; the package makes them from ids.

EnvPool and Gymnasium's vector environments auto-reset on the step *after* an
episode ends: that step ignores its action, returns reward 0 and the first
observation of the next episode (both verified by `tests/env/test_host_env.py`'s
probes). Adapters normalise every library to that one form, `HostStep`, with
the episode boundary made explicit (`terminated`, `truncated`, `first`), and the
runner (`runners/trajectories.py`) turns it into the project's Transitions:
discount 0 only on termination, truncation bootstrapping from the true final
observation, and no reset step ever reaching a loss.

Ids: `envpool:<task>` (any EnvPool task, e.g. `envpool:Pong-v5`) and
`gymnasium:<id>` (any registered Gymnasium id, or `<module>:<id>` to import
the module that registers it first).
"""

import dataclasses
import difflib
import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.extras import import_failure


class HostStep(NamedTuple):
    """What a batch of host environments returns after `reset` or `step`, `[B]`.

    Attributes:
      observation: [B, *obs_shape] in the environment's own dtype (uint8 for
        Atari frames). After a step that ended an episode (terminated or
        truncated) it is that episode's true final observation; the next step
        then resets the environment, ignores its action and returns `first`.
      reward: float32 [B], the reward of the transition into this observation.
      terminated: bool [B], the episode reached a terminal state.
      truncated: bool [B], a time limit ended the episode (never with terminated).
      first: bool [B], the observation starts an episode: after `reset`, or the
        reset step after an episode's end (whose action was ignored and whose
        reward is 0: it is no transition of any episode).
      env_id: int32 [B], which environments of the pool these rows are.
      metrics: float32 [B] per name of the spec's `metrics`: the environment's
        own `info["metrics"]` of the transition (0 where a row reports none).
      life_lost: bool [B] or None: a `terminated` that lost a life, the game
        going on (EnvPool's `episodic_life`). Learning treats it as any
        termination (no bootstrap, a reset step next); episode returns and
        lengths in the logs and in evaluation run on to the game's end. None:
        no row did.

    """

    observation: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    first: np.ndarray
    env_id: np.ndarray
    metrics: Mapping[str, np.ndarray] = MappingProxyType({})
    life_lost: np.ndarray | None = None

    def game_over(self) -> np.ndarray:
        """Where the episode the logs count ended (not only a life), bool [B]."""
        ended = self.terminated | self.truncated
        return ended if self.life_lost is None else ended & ~self.life_lost


@dataclasses.dataclass(frozen=True)
class HostSpec:
    """The spaces of a host environment, per environment (unbatched).

    Attributes:
      observation: the observation's shape.
      observation_dtype: its numpy dtype; it stays so until it is on a device.
      action: the action space (Box actions are rescaled from [-1, 1]).
      metrics: the names of the environment's own per-step metrics (a
        Gymnasium environment's `info["metrics"]`, as a JAX `Env`'s), summed
        over each episode and logged as `env/<name>`.
      action_bounds: (low, high) per action dimension, the environment's own
        Box bounds that `rescale_actions` maps [-1, 1] onto (`box_bounds`);
        None for Discrete actions.

    """

    observation: Box
    observation_dtype: np.dtype
    action: Discrete | Box
    metrics: tuple[str, ...] = ()
    action_bounds: tuple[tuple[float, ...], tuple[float, ...]] | None = None


class HostEnv:
    """A batch of `num_envs` auto-resetting host environments (numpy in and out).

    `step` steps all of them; `send` / `recv` are the asynchronous form (EnvPool's
    `batch_size < num_envs`): `recv` returns the `batch_size` environments that
    finished first, with their `env_id`, and `send` takes actions for those.
    """

    num_envs: int
    batch_size: int
    spec: HostSpec

    def reset(self) -> HostStep:
        """Resets every environment (seeded at construction); all rows `first`."""
        raise NotImplementedError

    def step(self, action: np.ndarray) -> HostStep:
        """Steps every environment with `action` [num_envs]."""
        self.send(action, np.arange(self.num_envs, dtype=np.int32))
        return self.recv()

    def send(self, action: np.ndarray, env_id: np.ndarray) -> None:
        """Starts stepping environments `env_id` with `action` (one row each)."""
        raise NotImplementedError

    def recv(self) -> HostStep:
        """The next `batch_size` environments' steps."""
        raise NotImplementedError

    def close(self) -> None:
        """Releases the environments' threads and memory."""


class BoundaryTracker:
    """Marks `first` rows: the step after an episode ended is a reset step.

    Both libraries reset on the step after `terminated | truncated`; the rows it
    returns are `first`. Tracking the previous step's end per environment says so
    without trusting a library-specific info field.
    """

    def __init__(self, num_envs: int):
        self.ended = np.ones(num_envs, bool)  # before `reset`: next is first

    def mark(
        self, env_id: np.ndarray, terminated: np.ndarray, truncated: np.ndarray
    ) -> np.ndarray:
        """`first` for rows `env_id`, and remembers which of them just ended."""
        first = self.ended[env_id].copy()
        self.ended[env_id] = terminated | truncated
        return first


class NonFiniteStepError(ValueError):
    """A host environment returned a NaN or infinite observation or reward."""


def check_finite(name: str, step: HostStep) -> HostStep:
    """`step`, or a one-line error naming `name` where a value is not finite.

    Left unchecked, a NaN would surface updates later as a learner metric
    (approx_kl is nan) that points nowhere near the environment. The check
    costs a few microseconds on CartPole's batch of 32, next to a step's tens
    to hundreds; integer observations (Atari's uint8 frames) hold no NaN and
    are skipped.
    """
    obs, reward = step.observation, step.reward
    obs_ok = obs.dtype.kind != "f" or np.isfinite(obs).all()
    if obs_ok and np.isfinite(reward).all():
        return step
    what, values = ("observation", obs) if not obs_ok else ("reward", reward)
    rows = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    row = int(np.argmax(rows))
    value = values[row].ravel()[~np.isfinite(values[row].ravel())][0]
    raise NonFiniteStepError(
        f"{name} returned a non-finite {what} ({value}) in environment "
        f"{int(step.env_id[row])} ({int(rows.sum())} of the batch's "
        f"{len(values)}); purejaxdrl stops rather than train on it: find where "
        f"the environment computes it (a division by zero, say{_NONE[what]}) "
        "and return finite values"
    )


# A reward of None reaches the batch as nan: Gymnasium's vector env stores
# rewards in a float array.
_NONE = {
    "reward": ", or a reward of None, which a vector env stores as nan",
    "observation": "",
}


def import_optional(module: str, extra: str) -> Any:
    """Imports an optional dependency, or says in one line how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if (why := import_failure(module, e)) is not None:
            raise ConfigError(why) from None
        raise ConfigError(
            f"{module} is not installed ({e}); host environments of this kind "
            f"need it: pip install 'purejaxdrl[{extra}]'"
        ) from None


def check_known(
    env_id: str, name: str, names: list[str], where: str, other: str = ""
) -> None:
    """Raises a one-line ConfigError when `name` is not among a library's `names`.

    Args:
      env_id: the id as the user wrote it.
      name: the library's part of it.
      names: what the library knows.
      where: how to list them, e.g. "envpool.list_all_envs()".
      other: a last clause for a name that is none of them (how to make it
        one), starting "; ".

    """
    if name in names:
        return
    # Suggest whole ids: a bare `CartPole-v1` would name gymnax's device env.
    prefix = env_id.removesuffix(name)
    close = [prefix + c for c in difflib.get_close_matches(name, names, n=3)]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    if close and other:  # "?; if ..." reads badly: a sentence of its own
        clause = other.removeprefix("; ")
        other = f" {clause[:1].upper()}{clause[1:]}"
    raise ConfigError(
        f"env.id={env_id!r}: no such {env_id.partition(':')[0]} environment "
        f"({len(names)} of them, listed by {where}){hint}{other}"
    )


def _is(space: Any, kind: str) -> bool:
    # By class name: EnvPool and Gymnasium (and a user's subclass) alike.
    return any(c.__name__ == kind for c in type(space).__mro__)


def space_spec(space: Any, env_id: str) -> Discrete | Box:
    """A Gymnasium-style action space of `env_id` as our spec (Discrete or Box).

    Raises:
      ConfigError: a space other than Discrete or a flat Box (MultiDiscrete,
        MultiBinary, Tuple, Dict, a Box of 2 or more axes), or a Box without
        finite bounds, which `rescale_actions` cannot scale the policy's
        actions to.

    """
    if _is(space, "Discrete"):
        return Discrete(int(space.n))
    if not _is(space, "Box") or len(space.shape) != 1:
        what = f"a {type(space).__name__}" if not _is(space, "Box") else "not flat"
        raise ConfigError(
            f"env.id={env_id!r}: its action space {space} is {what}; "
            "purejaxdrl's policies act in a Discrete space or a flat Box (one "
            "axis), so map one of those to its actions in a "
            "gymnasium.ActionWrapper (e.g. a Box of shape (n,) reshaped)."
        )
    if not (np.isfinite(space.low).all() and np.isfinite(space.high).all()):
        raise ConfigError(
            f"env.id={env_id!r}: its action space {space} has bounds that are not "
            "finite; the policy's actions in [-1, 1] are scaled to the bounds, so "
            "give the space finite ones (e.g. Box(-1.0, 1.0, shape)), scaling the "
            "actions inside the environment where it needs a wider range."
        )
    return Box(tuple(space.shape))


def box_bounds(space: Any) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """A Box space's (low, high), one float per dimension; None for a Discrete."""
    if _is(space, "Discrete"):
        return None
    low = np.broadcast_to(space.low, space.shape).ravel()
    high = np.broadcast_to(space.high, space.shape).ravel()
    return tuple(map(float, low)), tuple(map(float, high))


def rescale_actions(space: Any, action: np.ndarray) -> np.ndarray:
    """Actions for `space`: Box actions from [-1, 1] to its bounds; ints as int32.

    A Discrete space's actions are offset by its `start` (`Discrete(3,
    start=-1)` takes -1, 0, 1; the policy picks 0, 1, 2).
    """
    if _is(space, "Discrete"):
        return np.asarray(action, np.int32) + np.int32(getattr(space, "start", 0))
    low, high = space.low, space.high
    return (low + (np.clip(action, -1.0, 1.0) + 1.0) * 0.5 * (high - low)).astype(
        space.dtype
    )
