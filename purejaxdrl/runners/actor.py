"""An actor thread of the Sebulba runner: a host env pool and a device policy.

Each actor steps its own pool of host environments with a jitted policy on its
own device, builds `[T, B]` batches (`trajectories.py`) and hands them to the
learner through a bounded queue. Parameters come the other way through a
`ParamsBox`: the learner publishes each new version without waiting for anyone,
and an actor picks up the newest at each batch boundary (or, in deterministic
mode, exactly the version one update behind).
"""

import itertools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.base import Agent
from purejaxdrl.env.host.base import HostEnv
from purejaxdrl.runners.trajectories import Batch, PolicyOut, TrajectoryBuilder
from purejaxdrl.types import Params, PRNGKey


class Stopped(Exception):
    """Raised in an actor waiting on a queue or parameters when the run stops."""


class ParamsBox:
    """The learner's parameters by version, for the actors to pick up.

    `publish` never waits. `newest` returns the newest version; `exactly` waits
    for one version (deterministic mode). Versions older than the two newest
    are dropped.
    """

    def __init__(self, stop: threading.Event):
        self.stop = stop
        self.versions: dict[int, Any] = {}
        self.changed = threading.Condition()

    def publish(self, version: int, params: list[Any]) -> None:
        """Makes `params` (a copy per actor device) available as `version`."""
        with self.changed:
            self.versions[version] = params
            for old in [v for v in self.versions if v < version - 1]:
                del self.versions[old]
            self.changed.notify_all()

    def newest(self) -> tuple[int, Any]:
        """(version, params) of the newest version published."""
        with self.changed:
            self.changed.wait_for(lambda: self.versions or self.stop.is_set())
            self._check_stop()
            version = max(self.versions)
            return version, self.versions[version]

    def exactly(self, version: int) -> Any:
        """The params of `version`, waiting until it is published."""
        with self.changed:
            self.changed.wait_for(
                lambda: version in self.versions or self.stop.is_set()
            )
            self._check_stop()
            return self.versions[version]

    def wake(self) -> None:
        """Wakes every waiting actor (after `stop` is set)."""
        with self.changed:
            self.changed.notify_all()

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise Stopped


class ActorStats:
    """Seconds an actor spent on each part of its loop, and env rows stepped.

    The actor adds; the learner `take`s the totals since its last take (for
    an update's metrics).
    """

    NAMES = ("env_seconds", "act_seconds", "params_wait", "queue_wait", "env_steps")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.totals = dict.fromkeys(self.NAMES, 0.0)

    def add(self, name: str, amount: float) -> None:
        """Adds `amount` to the total of `name` (one of NAMES)."""
        with self.lock:
            self.totals[name] += amount

    def take(self) -> dict[str, float]:
        """The totals since the last take; they restart from 0."""
        with self.lock:
            totals, self.totals = self.totals, dict.fromkeys(self.NAMES, 0.0)
        return totals


# The jitted host-actor step (`make_policy`): not `training.policy.Policy`.
ActorStep = Callable[..., tuple[Any, PolicyOut]]


def make_policy(agent: Agent, platform: str) -> ActorStep:
    """A jitted `(params, carry, obs, first, env_id, key, step, first_env) -> ...`.

    Returns `(carry, out)`. `carry` is the core state of every environment of
    a pool, leaves `[num_envs, ...]`, from `initial_carry` (() for a
    feed-forward agent); the call steps the rows `env_id` (int32 [B], the
    pool's own indices; an asynchronous pool returns a subset), zeroing the
    state where `first` (bool [B]) starts an episode. The agent sees
    `first_env + env_id` (int32 []: the pool's first environment in the run):
    per-environment behaviour (Ape-X's ε_i) takes the run's global indices,
    numbered pool after pool as the device runner numbers them device after
    device, so a run's `num_envs` covers the same ε_i either way.
    `out` is a PolicyOut of device arrays.

    Step `step` acts with `fold_in(key, step)`, folded inside the jitted call:
    an eager `fold_in` per step cost more than the whole policy call (130 vs
    100 us for CartPole's 32 envs on CPU). Observations arrive in their host
    dtype (uint8 frames) and become float32 on the device. Runs where the
    params are (the actor's device).
    """
    acting = agent.acting

    def policy(
        params: Params,
        carry: Any,
        obs: jax.Array,
        first: jax.Array,
        env_id: jax.Array,
        key: PRNGKey,
        step: jax.Array,
        first_env: jax.Array,
    ) -> tuple[Any, PolicyOut]:
        obs = obs.astype(jnp.float32)
        keys = jax.random.split(jax.random.fold_in(key, step), obs.shape[0])
        start = jax.tree.map(lambda s: s[env_id], carry)
        # The carry is the pool's (local rows); the agent gets global indices.
        global_ids = first_env + env_id
        state, action, extras = acting.step(params, start, obs, first, keys, global_ids)
        carry = jax.tree.map(lambda c, s: c.at[env_id].set(s), carry, state)
        if acting.values_while_acting:
            value = extras["value"]
        else:  # a feed-forward agent's act leaves the critic out
            value = acting.value(params, start, obs)
        out = PolicyOut(extras["env_action"], action, extras["log_prob"], value, start)
        return carry, out

    options = compiler_options(platform)
    return jax.jit(policy, donate_argnums=1, compiler_options=options)


def initial_carry(agent: Agent, num_envs: int) -> Any:
    """The policy's carry for a pool of `num_envs` environments about to start.

    Every leaf its own buffer: the policy donates the carry, and an LSTM's
    zero state may share one buffer between its two leaves.
    """
    return jax.tree.map(
        lambda x: jnp.array(x, copy=True), agent.acting.initial_state(num_envs)
    )


class Actor:
    """One actor thread: steps `env` with `policy` and fills `out` with Batches.

    Args:
      env: its pool of host environments.
      policy: `make_policy(agent, platform)`.
      carry: `initial_carry(agent, env.num_envs)`.
      params: where the parameters come from.
      out: the bounded queue of Batches to the learner.
      length: the unroll length T.
      key: this actor's key; step i acts with `fold_in(key, i)`.
      device: the index of its device in the published parameters' list.
      first_env: the run-wide index of its pool's first environment (the
        policy's `first_env`).
      first_batch: the number of the first batch it makes (a resumed run's
        first update).
      deterministic: act batch k with exactly version k - 1 (`first_batch`
        for the first batch).
      stop: set when the run stops.

    """

    def __init__(
        self,
        env: HostEnv,
        policy: ActorStep,
        carry: Any,
        params: ParamsBox,
        out: queue.Queue,
        length: int,
        key: PRNGKey,
        *,
        device: int,
        first_env: int,
        first_batch: int,
        deterministic: bool,
        stop: threading.Event,
    ):
        self.env, self.policy, self.params, self.out = env, policy, params, out
        self.carry = carry
        self.device, self.first_batch = device, first_batch
        self.first_env = np.int32(first_env)
        self.key, self.deterministic, self.stop = key, deterministic, stop
        spec = env.spec
        action_shape = getattr(spec.action, "shape", ())
        action_dtype = np.float32 if action_shape else np.int32
        self.builder = TrajectoryBuilder(
            env.num_envs,
            length,
            spec.observation.shape,
            spec.observation_dtype,
            action_shape,
            action_dtype,
            # One environment's shapes, read without indexing (an eager op that
            # compiles inside the timed run).
            core_state=jax.tree.map(
                lambda s: jax.ShapeDtypeStruct(s.shape[1:], s.dtype), carry
            ),
            metrics=spec.metrics,
        )
        self.stats = ActorStats()
        self.error: BaseException | None = None
        # What the loop is doing, so that an error says whether the user's
        # environments or the policy raised it (an attribute write per part
        # of a step: nothing next to the step).
        self.doing = "environments"
        # Seconds of the first policy call, which compiles it (for these shapes).
        self.first_call_seconds = 0.0

    def run(self) -> None:
        """The thread's body; an error is kept in `self.error` and stops the run."""
        try:
            self._loop()
        except Stopped:
            pass
        except BaseException as e:  # noqa: BLE001 - handed to the learner thread
            self.error = e
            self.stop.set()
            self.params.wake()

    def _loop(self) -> None:
        stats, batches = self.stats, self.first_batch
        version, params = self._params_for(batches)
        t = time.perf_counter()
        step = self.env.reset()
        stats.add("env_seconds", time.perf_counter() - t)
        for i in itertools.count():
            if self.stop.is_set():
                return
            t = time.perf_counter()
            self.doing = "policy"
            self.carry, out = self.policy(
                params,
                self.carry,
                step.observation,
                step.first,
                step.env_id,
                self.key,
                np.uint32(i),
                self.first_env,
            )
            out = jax.device_get(out)
            stats.add("act_seconds", time.perf_counter() - t)
            if i == 0:
                self.first_call_seconds = time.perf_counter() - t
            self.doing = "trajectory builder"
            self.builder.add(step, out, version)
            if self.builder.ready():
                self._put(self.builder.take())
                batches += 1
                version, params = self._params_for(batches)
            t = time.perf_counter()
            self.doing = "environments"
            self.env.send(out.env_action, step.env_id)
            step = self.env.recv()
            stats.add("env_seconds", time.perf_counter() - t)
            stats.add("env_steps", len(step.env_id))

    def _params_for(self, batch: int) -> tuple[int, Any]:
        t = time.perf_counter()
        if self.deterministic:
            version = max(batch - 1, self.first_batch)
            params = self.params.exactly(version)
        else:
            version, params = self.params.newest()
        self.stats.add("params_wait", time.perf_counter() - t)
        return version, params[self.device]

    def _put(self, batch: Batch) -> None:
        t = time.perf_counter()
        while True:
            try:
                self.out.put(batch, timeout=0.1)
                break
            except queue.Full:
                if self.stop.is_set():
                    raise Stopped from None
        self.stats.add("queue_wait", time.perf_counter() - t)
