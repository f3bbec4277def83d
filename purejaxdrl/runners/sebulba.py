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
is measured per update. In deterministic mode the actors act batch k with
exactly version k - 1, so a run is the same for the same seed, run after run.
"""

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.env.host.base import HostEnv, HostSpec
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.actor import Actor, ParamsBox, initial_carry, make_policy
from purejaxdrl.runners.trajectories import Batch
from purejaxdrl.types import PRNGKey, Transition


@dataclasses.dataclass(frozen=True, kw_only=True)
class HostConfig:
    """How a run on host environments places its actors and learner.

    Attributes:
      actor_devices: local devices the actor threads act on (0: the first
        device).
      learner_devices: local devices the learner is sharded over (0: all but
        the actors' when there are more devices than actors, else the first).
      actor_threads: actor threads per actor device, each with its own pool
        of `num_envs / (actor threads in all)` environments.
      env_threads: EnvPool worker threads per pool (0: EnvPool's default).
      queue_size: batches each actor may have waiting for the learner.
      deterministic: actors act batch k with exactly parameter version k - 1,
        so runs repeat exactly (asynchronous pools are not allowed then).

    """

    actor_devices: int = 0
    learner_devices: int = 0
    actor_threads: int = 1
    env_threads: int = 0
    queue_size: int = 1
    deterministic: bool = False


def split_devices(
    devices: list[jax.Device], config: HostConfig
) -> tuple[list[jax.Device], list[jax.Device]]:
    """(actor devices, learner devices) from one process's local `devices`.

    One device is shared. With more, the actors take the first
    `actor_devices` (default 1) and the learner the next `learner_devices`
    (default: the rest).

    Raises:
      ValueError: the counts do not fit the devices.

    """
    n = len(devices)
    actors = config.actor_devices or 1
    if n == 1 and config.actor_devices <= 1 and config.learner_devices <= 1:
        return devices, devices
    learners = config.learner_devices or n - actors
    if actors + learners > n or learners < 1:
        raise ValueError(
            f"host.actor_devices={config.actor_devices} and host.learner_devices="
            f"{config.learner_devices} do not fit {n} local devices (actors and "
            "learner get their own); lower them, or pass 0 for the defaults"
        )
    return devices[:actors], devices[actors : actors + learners]


def place(
    config: HostConfig, devices_per_process: int | None = None
) -> tuple[list[jax.Device], Mesh]:
    """The actor devices of this process, and the learner mesh of all processes.

    Each process splits its first `devices_per_process` local devices alike
    (`split_devices`); the learner mesh's `data` axis spans the learner
    devices of every process, process by process, so each process holds its
    slice of the learner and feeds it its own actors' batches.

    Raises:
      ValueError: the counts do not fit the devices.

    """
    actors, learners = [], []
    for p in range(jax.process_count()):
        local = sorted(
            (d for d in jax.devices() if d.process_index == p), key=lambda d: d.id
        )
        own_actors, own_learners = split_devices(
            local[: devices_per_process or None], config
        )
        learners += own_learners
        if p == jax.process_index():
            actors = own_actors
    mesh = jax.make_mesh(
        (len(learners),), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=learners
    )
    return actors, mesh


class HostEnvError(RuntimeError):
    """An actor's environments (or policy) raised; the run stopped."""


class Update:
    """What the learner yields after an update: its new state and its metrics."""

    def __init__(self, state: AgentState, metrics: dict[str, float]):
        self.state, self.metrics = state, metrics


class SebulbaRunner:
    """Actors on host environments and a sharded learner, for one run.

    The runner does not own environments: `train` takes the pools it steps,
    so a resumed run can start fresh ones (`host_env_seed`).

    Args:
      spec: the pools' observation and action spaces.
      agent: the algorithm, built with `axis_name=DATA_AXIS` when the learner
        mesh has more than one device; it must keep no replay buffer and act
        alike in every environment (no `actor_act`).
      actor_devices: this process's devices the actor threads act on
        (threads round-robin).
      learner_mesh: the learner's mesh, axis `data`, over every process.
      num_envs: environments in all, every process's actor threads together.
      unroll_length: T.
      config: queue size and deterministic mode.

    """

    def __init__(
        self,
        spec: HostSpec,
        agent: Agent,
        actor_devices: list[jax.Device],
        learner_mesh: Mesh,
        num_envs: int,
        unroll_length: int,
        config: HostConfig,
    ):
        if agent.state_spec != P() or agent.actor_act is not None:
            raise ValueError(
                "this algorithm keeps a replay buffer or acts per environment, "
                "which the host-env runner does not run yet; use ppo, impala "
                "(without replay) or a2c"
            )
        self.spec, self.agent, self.config = spec, agent, config
        self.actor_devices, self.mesh = actor_devices, learner_mesh
        self.num_envs, self.unroll_length = num_envs, unroll_length
        self.steps_per_update = num_envs * unroll_length
        self.update = self._make_update()
        self.policy = make_policy(agent, actor_devices[0].platform)

    def _make_update(self) -> Callable:
        agent = self.agent

        def update(state: AgentState, traj: Transition, key: PRNGKey):
            traj = traj._replace(
                observation=traj.observation.astype(jnp.float32),
                final_observation=traj.final_observation.astype(jnp.float32),
            )
            state, metrics = agent.update(state, traj, key)
            if agent.axis_name is None:  # one device: mark metrics replicated
                metrics = jax.lax.pmean(metrics, DATA_AXIS)
            return state, metrics

        sharded = jax.shard_map(
            update,
            mesh=self.mesh,
            in_specs=(P(), transition_specs(), P()),
            out_specs=(P(), P()),
        )
        platform = self.mesh.devices.flat[0].platform
        return jax.jit(
            sharded, donate_argnums=0, compiler_options=compiler_options(platform)
        )

    def init(self, key: PRNGKey) -> AgentState:
        """The learner state, replicated over the learner mesh."""
        replicated = NamedSharding(self.mesh, P())
        return jax.jit(self.agent.init, out_shardings=replicated)(key)

    def abstract_state(self, key: PRNGKey) -> AgentState:
        """The shapes, dtypes and shardings of `init(key)`, computing nothing."""
        replicated = NamedSharding(self.mesh, P())
        return jax.tree.map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=replicated),
            jax.eval_shape(self.agent.init, key),
        )

    def _to_learner(self, batches: list[Batch]) -> Transition:
        # This process's batches side by side along B; with the other
        # processes' they make the global batch, split over `data`.
        joined = _join([b.transitions for b in batches])
        sharding = NamedSharding(self.mesh, P(None, DATA_AXIS))
        shardings = jax.tree.map(lambda _: sharding, joined._replace(core_state=()))
        by_env = NamedSharding(self.mesh, P(DATA_AXIS))
        shardings = shardings._replace(
            core_state=jax.tree.map(lambda _: by_env, joined.core_state)
        )
        if jax.process_count() == 1:
            return jax.device_put(joined, shardings)
        return jax.tree.map(jax.make_array_from_process_local_data, shardings, joined)

    def train(
        self,
        envs: list[HostEnv],
        state: AgentState,
        key: PRNGKey,
        start: int,
        stop_after: int,
    ) -> Iterator[Update]:
        """Runs updates `start` .. `stop_after - 1` on `envs`, yielding after each.

        One actor thread per pool of `envs` (this process's share of
        `num_envs`); they start here and stop when the generator is closed or
        exhausted; an actor's error (an environment that raised) is raised
        here. `key`: the run's key; actor i of process p acts with
        `fold_in(key, (start, p, i))`, update u uses `fold_in(key_learner, u)`.
        """
        stop = threading.Event()
        box = ParamsBox(stop)
        key_actors, key_learner = jax.random.split(key)
        key_actors = jax.random.fold_in(key_actors, start)
        key_actors = jax.random.fold_in(key_actors, jax.process_index())
        queues = [queue.Queue(self.config.queue_size) for _ in envs]
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
                jax.random.fold_in(key_actors, i),
                device=i % len(self.actor_devices),
                first_batch=start,
                deterministic=self.config.deterministic,
                stop=stop,
            )
            for i, (env, q) in enumerate(zip(envs, queues, strict=True))
        ]
        self._publish(box, start, state)
        threads = [threading.Thread(target=a.run, daemon=True) for a in actors]
        for thread in threads:
            thread.start()
        try:
            yield from self._learn(
                state, key_learner, range(start, stop_after), actors, queues, box
            )
        finally:
            stop.set()
            box.wake()
            for thread in threads:
                thread.join(timeout=60)

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
            batches = [self._get(q, actors) for q in queues]
            wait = time.perf_counter() - t
            traj = self._to_learner(batches)
            state, metrics = self.update(state, traj, jax.random.fold_in(key, u))
            self._publish(box, u + 1, state)
            host = host_metrics(u, batches, actors)
            host["time/learner_wait"] = wait
            yield Update(state, {**jax.device_get(metrics), **host})

    def _publish(self, box: ParamsBox, version: int, state: AgentState) -> None:
        params = self.agent.acting_params(state)
        # This process's copy of the replicated params, copied (never aliased:
        # the next update donates the learner's buffers) to each actor device.
        local = jax.tree.map(lambda x: x.addressable_data(0), params)
        box.publish(
            version,
            [jax.device_put(local, d, may_alias=False) for d in self.actor_devices],
        )

    def _get(self, q: queue.Queue, actors: list[Actor]) -> Batch:
        while True:
            for i, actor in enumerate(actors):
                if actor.error is not None:
                    e = actor.error
                    raise HostEnvError(
                        f"actor {i}'s environments raised {type(e).__name__}: {e}"
                    ) from e
            try:
                return q.get(timeout=0.1)
            except queue.Empty:
                continue


def _join(transitions: list[Transition]) -> Transition:
    # Batches side by side along B: the time-major fields' second axis, the
    # start states' (`core_state`, [B, ...]) first.
    if len(transitions) == 1:
        return transitions[0]
    joined = jax.tree.map(
        lambda *x: np.concatenate(x, axis=1),
        *[t._replace(core_state=()) for t in transitions],
    )
    return joined._replace(
        core_state=jax.tree.map(
            lambda *x: np.concatenate(x), *[t.core_state for t in transitions]
        )
    )


def transition_specs() -> Transition:
    """How a batch's Transition is split over the learner's `data` axis.

    A prefix of any batch's Transition: time-major fields along their second
    axis, a recurrent core's start states (`core_state`, [B, ...]) along
    their first.
    """
    batch = P(None, DATA_AXIS)
    return Transition(*[batch] * 10, reset=batch, core_state=P(DATA_AXIS))


def host_metrics(
    update: int, batches: list[Batch], actors: list[Actor]
) -> dict[str, float]:
    """An update's host-side figures, summed over every process's actors.

    Policy lag (versions behind `update`, mean and max), the episodes that
    ended in the batches, and the actors' time split since the last update.
    """
    lag = update - np.concatenate([b.versions for b in batches], axis=1)
    sums = {
        name: sum(b.episodes[name] for b in batches) for name in batches[0].episodes
    }
    for actor in actors:
        for name, amount in actor.stats.take().items():
            metric = f"actor/{name}"
            sums[metric] = sums.get(metric, 0.0) + amount
    names = sorted(sums)
    values = np.array([sums[n] for n in names] + [lag.sum(), lag.size, lag.max()])
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        gathered = multihost_utils.process_allgather(values)
        values = np.concatenate([gathered[:, :-1].sum(0), gathered[:, -1:].max(0)])
    out = {n: float(v) for n, v in zip(names, values, strict=False)}
    out["lag/mean"] = float(values[-3] / values[-2])
    out["lag/max"] = float(values[-1])
    return out
