"""Sebulba runner: host-env actors feed a learner sharded over its own devices.

The shape of Podracer's Sebulba (Hessel et al., 2021), IMPALA's and SEED RL's:
actor threads step pools of host environments (EnvPool, Gymnasium) and act with
a jitted policy on an actor device (`actor.py`); their `[T, B]` batches flow
through bounded queues to the learner, `jit(shard_map(agent.update))` over the
learner devices' `data` axis (the very `Agent.update` the Anakin runner calls,
gradients `pmean`-ed over the axis); each new parameter version flows back to
the actors without stalling them. Every update takes one batch from each actor
thread, in thread order, so B is the run's `num_envs`.

Policy lag (how many versions the acting parameters are behind the learner's)
is measured per update. In deterministic mode the actors act batch k's new
steps with exactly version k - 1: a run is the same for a seed, run after run.
"""

import contextlib
import functools
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.agents.host_rules import host_choices
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.agents.replay_sizes import host_replay_refusal
from purejaxdrl.config import ConfigError
from purejaxdrl.env.host.base import HostEnv, HostSpec
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.actor import Actor, ParamsBox, initial_carry, make_policy
from purejaxdrl.runners.base import Ready, replicated_metrics
from purejaxdrl.runners.host_batches import host_metrics, join, transition_specs
from purejaxdrl.runners.host_waits import ABORT_JOIN_S, JOIN_S, Abandoned, next_batch
from purejaxdrl.runners.host_waits import HostEnvError as HostEnvError
from purejaxdrl.runners.placement import HostConfig, make_host_envs
from purejaxdrl.runners.trajectories import Batch
from purejaxdrl.types import Metrics, PRNGKey, Transition


class HostRunState(NamedTuple):
    """A host run's state on the device: the learner's (envs live on the host)."""

    agent: AgentState


class Update(NamedTuple):
    """What the learner yields after an update.

    Its new state, its metrics, and whether a process was asked to stop
    (every process reads the same answer after the same update).
    """

    state: AgentState
    metrics: dict[str, float]
    stop: bool = False


class SebulbaRunner:
    """Actors on host environments and a sharded learner, for one run.

    A `Runner` (`base.py`): `session` starts the actor threads on this
    process's pools and `chunk(n)` pulls the next n updates from them. A run
    resumed at update u > 0 closes the first pools and starts fresh ones
    seeded for u (`placement.host_env_seed`): host environments cannot be
    snapshotted.

    Args:
      spec: the pools' observation and action spaces.
      agent: the algorithm, built with `axis_name=DATA_AXIS` when the learner
        mesh has more than one device; it must keep no replay buffer.
      actor_devices: this process's devices the actor threads act on
        (threads round-robin).
      learner_mesh: the learner's mesh, axis `data`, over every process.
      config: the run's TrainConfig (`num_envs`, `unroll_length`,
        `num_updates`, `host`, and `env` and `seed` for fresh pools).
      envs: this process's pools for a run starting at update 0, one per
        actor thread; the runner owns them (`close`).

    """

    dispatch_ahead = False  # a chunk returns when its updates are done
    compiles_late = True  # the learner's update, on its first batch

    def __init__(
        self,
        spec: HostSpec,
        agent: Agent,
        actor_devices: list[jax.Device],
        learner_mesh: Mesh,
        config: Any,
        envs: list[HostEnv],
    ):
        if agent.state_spec != P():
            record, section = algorithm(config.algo), config.algo_config
            runs = host_choices()
            raise ConfigError(host_replay_refusal(record, section, config.env.id, runs))
        self.spec, self.agent, self.run_config = spec, agent, config
        self.host: HostConfig = config.host
        self.actor_devices, self.mesh = actor_devices, learner_mesh
        self.num_envs, self.unroll_length = config.num_envs, config.unroll_length
        self.steps_per_update = self.num_envs * self.unroll_length
        self.envs = envs
        self.update = self._make_update()
        self._compiled_update: Callable | None = None
        self.late_compile_seconds = 0.0
        self.policy = make_policy(agent, actor_devices[0].platform)
        self._updates: Iterator[Update] | None = None
        # The running chunk's stop request (`chunk`), polled after each update.
        self._stop: Callable[[], bool] | None = None

    def _make_update(self) -> Callable:
        agent = self.agent

        def update(state: AgentState, traj: Transition, key: PRNGKey):
            traj = traj._replace(
                observation=traj.observation.astype(jnp.float32),
                final_observation=traj.final_observation.astype(jnp.float32),
            )
            state, metrics = agent.update(state, traj, key)
            return state, replicated_metrics(agent, metrics)

        sharded = jax.shard_map(
            update,
            mesh=self.mesh,
            in_specs=(P(), transition_specs(), P()),
            out_specs=(P(), P()),
            # As `anakin`'s: on one learner device the agent runs as outside
            # shard_map (axis_name None), and nothing is all-reduced.
            check_vma=self.mesh.shape[DATA_AXIS] > 1,
        )
        platform = self.mesh.devices.flat[0].platform
        return jax.jit(
            sharded, donate_argnums=0, compiler_options=compiler_options(platform)
        )

    def init(self, key: PRNGKey) -> HostRunState:
        """The learner state, replicated over the learner mesh."""
        replicated = NamedSharding(self.mesh, P())
        return HostRunState(jax.jit(self.agent.init, out_shardings=replicated)(key))

    def abstract_state(self, key: PRNGKey) -> HostRunState:
        """The shapes, dtypes and shardings of `init(key)`, computing nothing."""
        replicated = NamedSharding(self.mesh, P())
        return jax.tree.map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=replicated),
            HostRunState(jax.eval_shape(self.agent.init, key)),
        )

    def lower(
        self,
        abstract: HostRunState,
        key: PRNGKey,
        lengths: list[int],
        *,
        need_init: bool,
    ) -> dict[Any, Callable[[], Ready]]:
        """Host-side chunks (the learner's update compiles on its first call)."""
        del abstract  # the update's shapes come from the actors' batches
        self._warm_up(key)
        lower: dict[Any, Callable[[], Ready]] = {
            n: functools.partial(Ready, self.chunk(n)) for n in dict.fromkeys(lengths)
        }
        if need_init:
            lower["init"] = functools.partial(Ready, self.init)
        return lower

    def _warm_up(self, key: PRNGKey) -> None:
        """Runs the session's eager ops once: they compile here, not in a chunk.

        The first chunk is timed as training (steps/s): its keys' split and
        fold_in, and the actors' first carries, must be compiled before it.
        """
        _, key_learner = self._keys(key, 0, len(self.envs))
        jax.random.fold_in(key_learner, 0)
        for num_envs in {env.num_envs for env in self.envs}:
            initial_carry(self.agent, num_envs)

    def chunk(self, length: int) -> Callable[..., tuple[HostRunState, Metrics]]:
        """`(state, stop=None) -> (state, metrics [n])`: the next n <= `length` updates.

        The session's pipeline carries the state from the one it started
        with, so the argument only stands for it. `stop` (() -> bool, this
        process asked to stop) is polled after each update: once it holds in
        any process, every process's chunk ends after that same update (n is
        at least 1), so a stop never waits for the rest of a chunk that host
        environments may take minutes to step. In a one-process run a stop
        waits `STOP_WAIT_S` for the update under way's batches, then ends the
        chunk without it: n is 0 where it was the chunk's first
        (`host_waits.next_batch`).
        """

        def pull(
            state: HostRunState, stop: Callable[[], bool] | None = None
        ) -> tuple[HostRunState, Metrics]:
            if self._updates is None:
                raise RuntimeError("SebulbaRunner.chunk runs inside its session()")
            chunk, self._stop = [], stop
            try:
                while len(chunk) < length:
                    chunk.append(next(self._updates))
                    if chunk[-1].stop:
                        break
            except Abandoned:
                if not chunk:  # `state` is the last update's, not yet donated
                    return state, {}
            finally:
                self._stop = None
            metrics = {
                k: np.array([u.metrics[k] for u in chunk]) for k in chunk[0].metrics
            }
            return HostRunState(chunk[-1].state), metrics

        return pull

    @contextlib.contextmanager
    def session(self, state: HostRunState, key: PRNGKey, start: int) -> Iterator[None]:
        """Actor threads on this process's pools for updates `start` onward.

        A run resumed at `start` > 0 closes the first pools and acts on fresh
        ones seeded for `start`; the pools are closed at the end.
        """
        if start:
            # Setup inside the timed chunks, not training: taken out of
            # steps/s with the late compiles.
            t = time.perf_counter()
            self.close()
            self.envs = make_host_envs(self.run_config, len(self.envs), start)
            self.late_compile_seconds += time.perf_counter() - t
        stop_after = self.run_config.num_updates
        self._updates = self.updates(self.envs, state.agent, key, start, stop_after)
        try:
            yield
        finally:
            self._updates.close()
            self._updates = None
            self.close()

    def resume_notes(self, saved_devices: int | None) -> list[str]:
        """A resumed run's environments are new: host pools cannot be saved."""
        del saved_devices  # the learner state is replicated on any device count
        return ["the host environments restart with new seeds"]

    def close(self) -> None:
        """Closes this process's pools."""
        for env in self.envs:
            env.close()

    def _to_learner(self, batches: list[Batch]) -> Transition:
        # This process's batches side by side along B; with the other
        # processes' they make the global batch, split over `data`.
        joined = join([b.transitions for b in batches])
        sharding = NamedSharding(self.mesh, P(None, DATA_AXIS))
        shardings = jax.tree.map(lambda _: sharding, joined._replace(core_state=()))
        by_env = NamedSharding(self.mesh, P(DATA_AXIS))
        shardings = shardings._replace(
            core_state=jax.tree.map(lambda _: by_env, joined.core_state)
        )
        if jax.process_count() == 1:
            return jax.device_put(joined, shardings)
        return jax.tree.map(jax.make_array_from_process_local_data, shardings, joined)

    def updates(
        self,
        envs: list[HostEnv],
        state: AgentState,
        key: PRNGKey,
        start: int,
        stop_after: int,
    ) -> Iterator[Update]:
        """The learner's updates `start` .. `stop_after - 1` on `envs`, one by one.

        The generator `session` starts and `chunk` pulls from (the run is
        `training.train`'s).

        One actor thread per pool of `envs` (this process's share of
        `num_envs`); they start here and stop when the generator is closed or
        exhausted; an actor's error (an environment that raised) is raised
        here. `key`: the run's key; actor i of process p acts with
        `fold_in(key, (start, p, i))`, update u uses `fold_in(key_learner, u)`.
        Its environments are the run's `(p * len(envs) + i) * per_pool`
        onward for the agent (`make_policy`'s `first_env`): the order of the
        learner's batch, and the device runner's numbering.
        """
        stop = threading.Event()
        box = ParamsBox(stop)
        key_actors, key_learner = self._keys(key, start, len(envs))
        queues = [queue.Queue(self.host.queue_size) for _ in envs]
        first_pool = jax.process_index() * len(envs)
        actors = [
            Actor(
                env,
                self.policy,
                jax.device_put(
                    initial_carry(self.agent, env.num_envs),
                    self.actor_devices[i % len(self.actor_devices)],
                ),
                box,
                q,
                self.unroll_length,
                key_actors[i],
                device=i % len(self.actor_devices),
                first_env=(first_pool + i) * env.num_envs,
                first_batch=start,
                deterministic=self.host.deterministic,
                stop=stop,
            )
            for i, (env, q) in enumerate(zip(envs, queues, strict=True))
        ]
        self._publish(box, start, state)
        threads = [threading.Thread(target=a.run, daemon=True) for a in actors]
        for thread in threads:
            thread.start()
        ended = False  # by `session` (its close) or at the last update
        try:
            yield from self._learn(
                state, key_learner, range(start, stop_after), actors, queues, box
            )
            ended = True
        except GeneratorExit:
            ended = True
            raise
        finally:
            stop.set()
            box.wake()
            # For all of them, not each; after an error, a second Ctrl-C or a
            # stop that gave up on a batch, only a moment: an actor stuck in
            # its environments' step never holds a stopping run.
            deadline = time.monotonic() + (JOIN_S if ended else ABORT_JOIN_S)
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _keys(
        self, key: PRNGKey, start: int, pools: int
    ) -> tuple[list[PRNGKey], PRNGKey]:
        """The actors' keys for a session starting at `start`, and the learner's."""
        key_actors, key_learner = jax.random.split(key)
        key_actors = jax.random.fold_in(key_actors, start)
        key_actors = jax.random.fold_in(key_actors, jax.process_index())
        return [jax.random.fold_in(key_actors, i) for i in range(pools)], key_learner

    def _learn(
        self,
        state: AgentState,
        key: PRNGKey,
        updates: range,
        actors: list[Actor],
        queues: list[queue.Queue],
        box: ParamsBox,
    ) -> Iterator[Update]:
        for u in updates:
            t = time.perf_counter()
            batches = [
                next_batch(i, q, actors, u, self._stop) for i, q in enumerate(queues)
            ]
            wait = time.perf_counter() - t
            traj = self._to_learner(batches)
            step_key = jax.random.fold_in(key, u)
            if self._compiled_update is None:
                # The first batch gives the update its shapes: compiled here,
                # and timed as compilation, not training (the loop's steps/s),
                # with the actors' first policy calls, which compiled theirs
                # (in parallel: the slowest held the first batch back).
                t = time.perf_counter()
                self._compiled_update = self.update.lower(
                    state, traj, step_key
                ).compile()
                self.late_compile_seconds += time.perf_counter() - t
                self.late_compile_seconds += max(a.first_call_seconds for a in actors)
            state, metrics = self._compiled_update(state, traj, step_key)
            self._publish(box, u + 1, state)
            stopping = self._stop is not None and self._stop()
            host, stop = host_metrics(u, batches, actors, stopping)
            host["time/learner_wait"] = wait
            yield Update(state, {**jax.device_get(metrics), **host}, stop)

    def _publish(self, box: ParamsBox, version: int, state: AgentState) -> None:
        params = self.agent.acting_params(state)
        # This process's copy of the replicated params, copied (never aliased:
        # the next update donates the learner's buffers) to each actor device.
        local = jax.tree.map(lambda x: x.addressable_data(0), params)
        box.publish(
            version,
            [jax.device_put(local, d, may_alias=False) for d in self.actor_devices],
        )
