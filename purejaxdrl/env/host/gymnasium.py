"""Adapter from Gymnasium's vector API (`gymnasium:<id>`) to `HostEnv`.

Gymnasium's vector environments run in this process (`sync`, default) or in
subprocesses (`vectorization_mode="async"`, whose workers end with the run:
`gymnasium_workers`); both are stepped synchronously here. They are made in
NEXT_STEP auto-reset mode, EnvPool's: the step after an episode ends resets it
(`base.py`). (SAME_STEP mode would hand the final observation over in `info`
instead; one form for both libraries keeps one trajectory builder, and the
reset step's inference gives the value of the final observation that
truncation bootstraps from, at no extra pass.)

Observations that are not a Box are flattened (`flattened`): a Discrete one
(FrozenLake, Taxi) to its one-hot vector, Dict and Tuple ones to their parts'
flat concatenation, as float32.

Illegal actions: an environment whose `info` reports `action_mask` (Gymnasium's
convention, e.g. Taxi-v4: 1 where an action is legal) gets its A flags appended
to its (flat) observations, and an action spec whose `legal` reads them back
(`env.base.Discrete`), so the networks mask as they do on device.
"""

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.host.api_check import (
    api_errors,
    quiet_reset_signature,
    raise_worker_errors,
    warnings_unless_refused,
)
from purejaxdrl.env.host.base import (
    BoundaryTracker,
    HostEnv,
    HostSpec,
    HostStep,
    box_bounds,
    check_finite,
    check_known,
    import_optional,
    rescale_actions,
    space_spec,
)
from purejaxdrl.env.host.envpool import env_seeds
from purejaxdrl.env.host.gymnasium_options import typed_options
from purejaxdrl.env.host.gymnasium_workers import (
    close_pool,
    ignoring_stop_signals,
    worker_deaths,
    worker_for,
)
from purejaxdrl.env.imports import import_modules

_OWN_ENV_HINT = (
    "; if a module of your own registers it, import that first: "
    f"{both_ways('--env.imports', 'env.imports', 'MODULE', ['MODULE'])}, or "
    "--env.id gymnasium:MODULE:{name}"
)


def registered_in_main(env_id: str) -> bool:
    """Whether Gymnasium id `env_id` (`gymnasium:X`) was registered by `__main__`.

    A script's own `gym.register` trains, but no other process (`eval`,
    `export`, `train --resume`) runs that script, so none finds the id. Read
    off the registry entry's entry point, without importing Gymnasium where
    nothing has (then nothing registered it either).
    """
    gym = sys.modules.get("gymnasium")
    _, _, name = env_id.partition("gymnasium:")
    if gym is None or not env_id.startswith("gymnasium:") or ":" in name:
        return False
    entry = getattr(gym.registry.get(name), "entry_point", None)
    if isinstance(entry, str):
        return entry.startswith("__main__:")
    return getattr(entry, "__module__", None) == "__main__"


class GymnasiumEnv(HostEnv):
    """`num_envs` copies of Gymnasium environment `env_id` in one vector env.

    Args:
      env_id: a registered Gymnasium id, e.g. `CartPole-v1`, or
        `<module>:<id>` (`my_pkg.envs:MyCorridor-v0`): the module is imported
        first (searching the current folder too), then `<id>` is made.
      num_envs: environments in the vector.
      seed: the run's seed; environment i is seeded from (seed, i).
      vectorization_mode: "sync" (this process) or "async" (subprocesses).
      options: keyword arguments of `gymnasium.make` (e.g. max_episode_steps).

    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        seed: int,
        *,
        vectorization_mode: str = "sync",
        **options: Any,
    ):
        gym = import_optional("gymnasium", "gymnasium")
        # Gymnasium's own `module:Id` form: gymnasium.make would import the
        # module itself, but only after the check below; importing it here
        # (from the current folder too) lets the check see its registrations.
        module, _, name = env_id.rpartition(":")
        if module:
            import_modules([module], f"env.id='gymnasium:{env_id}'")
        names = list(gym.registry)
        check_known(
            f"gymnasium:{env_id}",
            name,
            names,
            "gymnasium.registry",
            "" if module else _OWN_ENV_HINT.format(name=name),
        )
        if vectorization_mode not in ("sync", "async"):
            raise ConfigError(
                f"env.options vectorization_mode={vectorization_mode!r}: "
                "purejaxdrl steps Gymnasium's own vector environments, 'sync' (in "
                "this process) or 'async' (subprocesses), which it makes reset "
                "on the step after an episode ends; pass one of those."
            )
        options = typed_options(gym, env_id, gym.spec(name), options)
        vec = _make_vec(gym, env_id, num_envs, vectorization_mode, options)
        if vectorization_mode == "async":  # its workers' API breaks in one line
            pool = vec.unwrapped
            pool._raise_if_errors = functools.partial(raise_worker_errors, pool)
        self.vec, self.flat = flattened(vec, f"gymnasium:{env_id}")
        self.num_envs = self.batch_size = num_envs
        self.seeds = env_seeds(seed, num_envs)
        space = self.vec.single_observation_space
        action = space_spec(self.vec.single_action_space, f"gymnasium:{env_id}")
        self.name = f"gymnasium:{env_id}"
        # In subprocesses (async), an environment's own error reaches here as
        # Gymnasium's re-raise: only the sync pool's say which side broke.
        self.sync = vectorization_mode == "sync"
        self.unchecked = self.sync  # async: the checker warns in the workers
        # Whether the environment reports legal actions shows in its reset's
        # info, as does whether it logs metrics of its own, and their names;
        # the first `reset` returns this one (a second would reach the
        # environments: an episode counter of theirs would start at 1).
        self.first = self._reset_or_close()
        info = self.first[1]
        self.masks = MASK_KEY in info
        shape = tuple(space.shape)
        if self.masks:
            action, shape = _masked_spec(f"gymnasium:{env_id}", shape, action)
        names = tuple(sorted(k for k in info.get("metrics", {}) if k[0] != "_"))
        dtype = np.dtype(np.float32 if self.flat else space.dtype)
        bounds = box_bounds(self.vec.single_action_space)
        self.spec = HostSpec(Box(shape), dtype, action, names, bounds)
        self.boundaries = BoundaryTracker(num_envs)
        self.env_id = np.arange(num_envs, dtype=np.int32)
        self.pending: np.ndarray | None = None

    def reset(self) -> HostStep:
        first, self.first = self.first, None
        if first is None:
            with self._api("reset"):
                first = self.vec.reset(seed=self.seeds)
        obs, info = first
        obs = self._observe(obs, info)
        zeros = np.zeros(self.num_envs, bool)
        # Every row starts an episode, whatever the last step ended: a second
        # reset marked only the rows that had just ended `first`.
        self.boundaries.ended[:] = True
        first = self.boundaries.mark(self.env_id, zeros, zeros)
        step = HostStep(
            obs,
            np.zeros(self.num_envs, np.float32),
            zeros,
            zeros,
            first,
            self.env_id,
            self._metrics(info),
        )
        return check_finite(self.name, step)

    def send(self, action: np.ndarray, env_id: np.ndarray) -> None:
        if not np.array_equal(env_id, self.env_id):
            raise ValueError(
                "a Gymnasium vector env steps all its environments at once"
            )
        self.pending = rescale_actions(self.vec.single_action_space, action)

    def recv(self) -> HostStep:
        action, self.pending = self.pending, None
        # The first step is Gymnasium's checked one (its passive checker's).
        held = warnings_unless_refused() if self.unchecked else contextlib.nullcontext()
        with held, self._api("step"):
            obs, reward, terminated, truncated, info = self.vec.step(action)
        self.unchecked = False
        obs = self._observe(obs, info)
        terminated = np.asarray(terminated, bool)
        truncated = np.asarray(truncated, bool) & ~terminated
        first = self.boundaries.mark(self.env_id, terminated, truncated)
        step = HostStep(
            obs,
            np.asarray(reward, np.float32),
            terminated,
            truncated,
            first,
            self.env_id,
            self._metrics(info),
        )
        return check_finite(self.name, step)

    def _reset_or_close(self) -> tuple[Any, dict[str, Any]]:
        """The pool's first reset; any error closes the pool first."""
        try:
            with warnings_unless_refused(), quiet_reset_signature(), self._api("reset"):
                return self.vec.reset(seed=self.seeds)
        except Exception:
            self.close()
            raise

    @contextlib.contextmanager
    def _api(self, method: str) -> Iterator[None]:
        """`api_errors` around the pool's `method`; for async, a worker's death too."""
        space = self.vec.single_observation_space
        with api_errors(self.name, method, space):
            if self.sync:
                yield
                return
            with worker_deaths(self.vec.unwrapped, self.name, method):
                yield

    def close(self) -> None:
        if self.sync:
            self.vec.close()
            return
        # A worker that raised, died or hangs can leave the pool mid-step: the
        # close is bounded, and kills what it cannot close (`gymnasium_workers`).
        close_pool(self.vec)

    def _metrics(self, info: dict[str, Any]) -> dict[str, np.ndarray]:
        """The step's `info["metrics"]`, float32 [B] per name, 0 where absent.

        A vector environment gathers its environments' info dicts into arrays,
        with a `_<name>` mask of the environments whose dict held the name.
        """
        reported = info.get("metrics", {})
        out = {}
        for name in self.spec.metrics:
            values = np.asarray(reported.get(name, 0.0), np.float32)
            mask = np.asarray(reported.get(f"_{name}", True), bool)
            out[name] = np.broadcast_to(np.where(mask, values, 0.0), (self.num_envs,))
        return out

    def _observe(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        obs = obs.astype(np.float32) if self.flat else obs
        return with_mask(obs, info) if self.masks else obs


def _make_vec(
    gym: Any, env_id: str, num_envs: int, mode: str, options: dict[str, Any]
) -> Any:
    """Gymnasium's vector env of `num_envs` copies of `env_id`, in NEXT_STEP mode.

    Raises:
      ConfigError: options its environment does not take, or a missing package.

    """
    vector_kwargs = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
    async_pool = mode == "async"
    if async_pool:  # workers that end with the run (`gymnasium_workers`)
        vector_kwargs["worker"] = worker_for(os.getpid())
    try:
        with ignoring_stop_signals() if async_pool else contextlib.nullcontext():
            return gym.make_vec(
                env_id,
                num_envs=num_envs,
                vectorization_mode=mode,
                vector_kwargs=vector_kwargs,
                **options,
            )
    except TypeError as error:
        if not options or "argument" not in str(error):
            raise  # the environment's own error, not the options'
        raise ConfigError(
            f"env.options {sorted(options)}: gymnasium.make({env_id!r}) did "
            f"not take them ({error}); pass only keyword arguments its "
            "environment takes."
        ) from None
    except gym.error.DependencyNotInstalled as error:
        raise ConfigError(
            f"env.id='gymnasium:{env_id}' needs a package that is not "
            f"installed: {error}"
        ) from None


def flattened(env: Any, env_id: str) -> tuple[Any, bool]:
    """`env` (one or a vector) with observations that are not a Box flattened.

    Returns the environment, wrapped in Gymnasium's `FlattenObservation` where
    its observation space is not a Box, and whether it was (the caller casts
    those observations to float32: a one-hot vector is Gymnasium's int64).

    Raises:
      ConfigError: a space Gymnasium cannot flatten (Graph, Sequence, Text).

    """
    gym = import_optional("gymnasium", "gymnasium")
    vector = isinstance(env, gym.vector.VectorEnv)
    space = env.single_observation_space if vector else env.observation_space
    if isinstance(space, gym.spaces.Box):
        return env, False
    try:
        gym.spaces.flatten_space(space)
    except (NotImplementedError, TypeError, ValueError) as error:
        env.close()
        raise ConfigError(
            f"env.id={env_id!r}: its observation space {space} cannot be "
            f"flattened ({error}); purejaxdrl's networks take arrays, so map it "
            "to a Box in a gymnasium.ObservationWrapper."
        ) from None
    wrappers = gym.wrappers.vector if vector else gym.wrappers
    return wrappers.FlattenObservation(env), True


def flattened_note(name: str, shape: tuple[int, ...]) -> str:
    """What a flattened pool's observations are, for a message about entries.

    `name` is the pool's `gymnasium:<id>`, `shape` its observations' shape.
    """
    return (
        f"{name}'s observation space is not a Box, so the host adapter flattens "
        f"its observations into one array of shape {shape}, a Dict's entries "
        "concatenated (entries are picked on device environments only)"
    )


MASK_KEY = "action_mask"


def with_mask(obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
    """`obs` [..., D] with the legal-action flags of `info` appended: [..., D + A]."""
    flags = np.asarray(info[MASK_KEY]).astype(obs.dtype)
    return np.concatenate([obs, flags], axis=-1)


def _masked_spec(
    env_id: str, shape: tuple[int, ...], action: Discrete | Box
) -> tuple[Discrete, tuple[int, ...]]:
    """The action spec that reads the appended flags, and the observation's shape."""
    if not isinstance(action, Discrete) or len(shape) != 1:
        raise ConfigError(
            f"{env_id} reports info['action_mask'], which purejaxdrl appends to "
            f"flat observations of discrete-action environments; its observations "
            f"are {shape} and its actions {action}: flatten them in a "
            "gymnasium.ObservationWrapper, or drop the mask."
        )
    num = action.num_values
    return Discrete(num, functools.partial(_legal, num=num)), (shape[0] + num,)


def _legal(obs: Any, *, num: int) -> Any:
    # The flags are the observation's last `num` entries (`with_mask`).
    return obs[..., -num:] > 0.5
