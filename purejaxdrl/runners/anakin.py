"""Anakin runner: `chunk = jit(shard_map(scan(train_step)))` over many updates.

Environments, rollouts and learner updates run in one compiled program; the host
only dispatches chunks of updates and reads their metrics (see `train.py`).
"""

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.env.base import Env, EnvParams
from purejaxdrl.env.normalization import RAW_FINAL_NON_FINITE
from purejaxdrl.parallel import (
    DATA_AXIS,
    make_mesh,
    manual_axes,
    named_shardings,
    per_device,
    replicated,
    varying,
)
from purejaxdrl.runners.base import (
    ENV_METRIC,
    Lowered,
    no_session,
    replicated_metrics,
)
from purejaxdrl.runners.rollout import ActorState, reset_actors, unroll
from purejaxdrl.types import Metrics, PRNGKey, PyTree, Transition


class RunnerState(NamedTuple):
    """Everything a training run carries from one update to the next."""

    agent: AgentState
    actor: ActorState
    env_params: EnvParams
    key: PRNGKey


class AnakinRunner(NamedTuple):
    """The Anakin runner: a `Runner` (`base.py`) whose chunks are XLA programs.

    `init(key) -> RunnerState`; `chunk(length)` returns a jitted function
    that runs `length` updates, donates its input, and returns metrics `[length]`
    (replicated). `steps_per_update` counts all devices' environment steps.
    `specs` is a RunnerState of PartitionSpecs: learner state (but for a
    replay buffer in it: `Agent.state_spec`), env params and key replicated,
    actors split over `data` (see `shardings`).
    """

    init: Callable[[PRNGKey], RunnerState]
    chunk: Callable[[int], Callable[[RunnerState], tuple[RunnerState, Metrics]]]
    steps_per_update: int
    mesh: Mesh
    specs: RunnerState
    num_envs: int
    dispatch_ahead: bool = True  # a chunk is queued; the host reads it later
    late_compile_seconds: float = 0.0  # every program compiles before training
    compiles_late: bool = False

    def shardings(self, state: RunnerState) -> RunnerState:
        """A NamedSharding for every leaf of `state` (or of its `jax.eval_shape`)."""

        def subtree(sharding: NamedSharding, sub: RunnerState) -> RunnerState:
            return jax.tree.map(lambda _: sharding, sub)

        return jax.tree.map(subtree, named_shardings(self.mesh, self.specs), state)

    def abstract_state(self, key: PRNGKey) -> RunnerState:
        """The shapes, dtypes and shardings of `init(key)`, computing nothing.

        Programs lowered against it compile before (or while) the state is made.
        """
        abstract = jax.eval_shape(self.init, key)
        return jax.tree.map(
            lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s),
            abstract,
            self.shardings(abstract),
        )

    def lower(
        self,
        abstract: RunnerState,
        key: PRNGKey,
        lengths: list[int],
        *,
        need_init: bool,
    ) -> dict[Any, Callable[[], Lowered]]:
        """The chunk programs of `lengths` (and `init`), lowered on demand."""
        lower: dict[Any, Callable[[], Lowered]] = {
            n: functools.partial(self.chunk(n).lower, abstract)
            for n in dict.fromkeys(lengths)
        }
        if need_init:
            lower["init"] = functools.partial(self.init.lower, key)
        return lower

    def session(self, state: RunnerState, key: PRNGKey, start: int) -> Any:
        """Nothing to start: the environments live in the state."""
        del state, key, start
        return no_session()

    def close(self) -> None:
        """Nothing to close: the environments live in the state."""

    def resume_notes(self, saved_devices: int | None) -> list[str]:
        """The environments re-split when the device count changed."""
        devices = self.mesh.size
        if saved_devices is None or saved_devices == devices:  # None: not saved
            return []
        return [
            f"saved on {saved_devices} device(s), resumed on {devices}: learner "
            f"state replicated, the {self.num_envs} environments (with any "
            f"replay kept per environment) re-split to {self.num_envs // devices} "
            "per device"
        ]


def episode_metrics(info: dict[str, jax.Array]) -> Metrics:
    """Sums over the episodes that ended in `info` [T, B] (EpisodeStatistics).

    Sums, not means: the host divides totals over a whole chunk, so updates in
    which no episode ended do not bias the mean and never report a fake 0.
    An environment's own metrics' episode sums are summed as
    `episode/env/<name>_sum` (`schedule.summarize_chunk` names their means).
    """
    if "episode_done" not in info:
        return {}
    done = info["episode_done"]
    out = {
        "episode/count": done.sum(dtype=jnp.float32),
        "episode/return_sum": jnp.where(done, info["episode_return"], 0.0).sum(),
        "episode/length_sum": jnp.where(done, info["episode_length"], 0).sum(
            dtype=jnp.float32
        ),
    }
    for name, total in info.get("episode_metrics", {}).items():
        out[f"{ENV_METRIC}{name}_sum"] = total.sum()  # 0 where no episode ended
    return out


NON_FINITE = "non_finite/"
"""Prefix of the per-update counts of non-finite entries the environments
returned: `non_finite/observation`, `non_finite/reward` and
`non_finite/final_observation` (0 in a healthy run)."""


def non_finite_counts(traj: Transition, actor: ActorState) -> Metrics:
    """How many entries of what the environments returned in an unroll are not finite.

    Counted before observation normalisation (`info["raw_observation"]`
    and `info[RAW_FINAL_NON_FINITE]` where a `NormalizeObservation` keeps
    them; normalising clips an infinite observation to a finite one and
    would hide it), so a NaN or inf from the
    environment is named at the update it happened, not later as a learner
    metric (`approx_kl is nan`). Observations are those acted on and the one
    after the last step (its value bootstraps the unroll); integer
    observations hold none and are skipped. A side output: nothing trains on it.

    Args:
      traj: the unroll's Transitions [T, B].
      actor: the actor state after it (its observations [B, ...]).

    Returns:
      Counts, float32 [] each, keyed `NON_FINITE + output`, this device's.

    """
    observations = traj.info.get("raw_observation")
    if observations is None:
        observations = (traj.observation, actor.timestep.observation)
    outputs = {"observation": observations, "reward": traj.reward}
    counts = {NON_FINITE + name: _count(tree) for name, tree in outputs.items()}
    final = traj.info.get(RAW_FINAL_NON_FINITE)  # normalised: counted before
    counts[NON_FINITE + "final_observation"] = (
        _count(traj.final_observation) if final is None else final.sum()
    )
    return counts


def _count(tree: PyTree) -> jax.Array:
    # Non-finite entries of a pytree's floating-point leaves, float32 [].
    counts = [
        (~jnp.isfinite(x)).sum(dtype=jnp.float32)
        for x in jax.tree.leaves(tree)
        if jnp.issubdtype(x.dtype, jnp.inexact)
    ]
    return sum(counts, jnp.zeros((), jnp.float32))


class RunFunctions(NamedTuple):
    """One run's un-jitted functions, to be called inside `shard_map`.

    `init(key) -> RunnerState` for this device's environments; `step(state, None)
    -> (state, metrics)` is one update, the body of `chunk`'s scan. Sweeps
    build them per run (`sweeps/compiled.py`: `step` vmapped over a group's
    runs, `init` mapped one run after another); `make_runner` wraps them for
    one run.
    """

    init: Callable[[PRNGKey], RunnerState]
    step: Callable[[RunnerState, None], tuple[RunnerState, Metrics]]


def run_functions(
    env: Env,
    env_params: EnvParams,
    agent: Agent,
    *,
    local_envs: int,
    unroll_length: int,
    scan_unroll: int = 0,
) -> RunFunctions:
    """The init and update-step functions of one run on a `data` mesh axis.

    Args:
      env: an unbatched environment (wrapped with `EpisodeStatistics` for returns).
      env_params: its initial parameters.
      agent: the algorithm (its `axis_name` is DATA_AXIS or None).
      local_envs: this device's number of environments.
      unroll_length: steps T per environment per update.
      scan_unroll: unroll factor of the rollout's `lax.scan` (0: by platform).

    Returns:
      RunFunctions; both must run inside a `shard_map` with a `data` axis.

    """

    def init(key: PRNGKey) -> RunnerState:
        key_agent, key_env, key_run = jax.random.split(key, 3)
        first = jax.lax.axis_index(DATA_AXIS) * local_envs
        env_ids = first + jnp.arange(local_envs, dtype=jnp.int32)
        actor = reset_actors(env, env_params, key_env, env_ids)
        carry = agent.acting.initial_state(local_envs)  # () without a core
        actor = actor._replace(core=varying(carry, manual_axes()))
        return RunnerState(agent.init(key_agent), actor, env_params, key_run)

    def step(state: RunnerState, _: None) -> tuple[RunnerState, Metrics]:
        key, key_unroll, key_update = jax.random.split(state.key, 3)
        actor, traj = unroll(
            env,
            state.env_params,
            agent,
            agent.acting_params(state.agent),
            state.actor,
            key_unroll,
            unroll_length,
            scan_unroll,
            DATA_AXIS,
        )
        # Global observation statistics and episode sums, whatever the agent does.
        env_params = env.update_statistics(state.env_params, traj.info, DATA_AXIS)
        agent_state, metrics = agent.update(state.agent, _strip_info(traj), key_update)
        metrics = replicated_metrics(agent, metrics)
        episodes = jax.lax.psum(episode_metrics(traj.info), DATA_AXIS)
        non_finite = jax.lax.psum(non_finite_counts(traj, actor), DATA_AXIS)
        metrics = {**metrics, **episodes, **non_finite}
        return RunnerState(agent_state, actor, env_params, key), metrics

    return RunFunctions(init, step)


def make_runner(
    env: Env,
    env_params: EnvParams,
    agent: Agent,
    *,
    num_envs: int,
    unroll_length: int,
    mesh: Mesh | None = None,
    scan_unroll: int = 0,
) -> AnakinRunner:
    """Builds the Anakin runner: `jit(shard_map(scan(train_step)))` over a mesh.

    Each device steps its own `num_envs / devices` environments and computes
    gradients on their data; `agent.update` averages them over the mesh's `data`
    axis, so the learner state stays identical (replicated) everywhere. Episode
    sums and observation statistics are combined over all devices.

    Args:
      env: an unbatched environment (wrapped with `EpisodeStatistics` for returns).
      env_params: its initial parameters (observation statistics live here).
      agent: the algorithm, built with `axis_name=DATA_AXIS` when the mesh has
        more than one device (on one device, None saves the no-op collectives
        and leaves `agent.update` callable outside `shard_map`).
      num_envs: global number of environments B, divisible by the device count.
      unroll_length: steps T per environment per update.
      mesh: devices to run on (`parallel.make_mesh`); None for one device.
      scan_unroll: unroll factor of the rollout's `lax.scan` (0: by platform).

    Raises:
      ValueError: for non-positive sizes, `num_envs` not divisible by the device
        count, or an agent that does not all-reduce over the mesh.

    """
    if num_envs < 1 or unroll_length < 1:
        raise ValueError(
            f"num_envs={num_envs} and unroll_length={unroll_length} must be >= 1."
        )
    mesh = make_mesh(1) if mesh is None else mesh
    num_devices = mesh.shape[DATA_AXIS]
    if num_devices > 1 and agent.axis_name != DATA_AXIS:
        raise ValueError(
            f"the agent all-reduces over axis_name={agent.axis_name!r}, but the mesh "
            f"has {num_devices} devices on axis {DATA_AXIS!r}; build the agent "
            f"with axis_name={DATA_AXIS!r}."
        )
    local_envs = per_device(num_envs, mesh)
    # shard_map's type check (varying vs replicated values) guards the
    # all-reduces of 2+ devices. On one the agent is told it runs outside
    # shard_map (axis_name None) and nothing is reduced: a user's loop whose
    # carry starts from a constant is correct JAX there and must train.
    check_vma = env.vma_checked and num_devices > 1
    specs = RunnerState(
        agent=agent.state_spec, actor=P(DATA_AXIS), env_params=P(), key=P()
    )
    init_shard, train_step = run_functions(
        env,
        env_params,
        agent,
        local_envs=local_envs,
        unroll_length=unroll_length,
        scan_unroll=scan_unroll,
    )

    platform = mesh.devices.flat[0].platform
    # Explicit, not inferred: jit gives a zero-size leaf (an MJX `Data` field
    # such as `act` [B, 0]) a replicated sharding otherwise, which the chunks,
    # compiled for `P("data")`, then refuse on 2+ devices.
    out_shardings = named_shardings(mesh, specs)

    @functools.cache  # the same length returns the same jitted function
    def chunk(length: int) -> Callable:
        def updates(state: RunnerState) -> tuple[RunnerState, Metrics]:
            return jax.lax.scan(train_step, state, None, length=length)

        sharded = jax.shard_map(
            updates,
            mesh=mesh,
            in_specs=(specs,),
            out_specs=(specs, P()),
            check_vma=check_vma,
        )
        return jax.jit(
            sharded,
            donate_argnums=0,
            out_shardings=(out_shardings, replicated(mesh)),
            compiler_options=compiler_options(platform),
        )

    # Jitted so that outputs are distinct buffers: eager code may alias two leaves
    # (observation and final_observation after a reset), which donation rejects.
    init = jax.jit(
        jax.shard_map(
            init_shard,
            mesh=mesh,
            in_specs=P(),
            out_specs=specs,
            check_vma=check_vma,
        ),
        out_shardings=out_shardings,
        compiler_options=compiler_options(platform, runs_once=True),
    )
    return AnakinRunner(init, chunk, num_envs * unroll_length, mesh, specs, num_envs)


def _strip_info(traj: Transition) -> Transition:
    # The learner needs no env info; dropping it keeps it out of the update.
    return traj._replace(info={})
