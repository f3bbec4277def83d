"""The compiled init and chunk programs of a group of runs, vmapped and sharded."""

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.registry import make_agent
from purejaxdrl.parallel import DATA_AXIS, SWEEP_AXIS
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState, run_functions
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import make_env, make_networks, zero_observation
from purejaxdrl.types import Metrics

# Runs are split over `sweep`; each run's environments over `data`.
_STATE_SPECS = RunnerState(
    agent=P(SWEEP_AXIS),
    actor=P(SWEEP_AXIS, DATA_AXIS),
    env_params=P(SWEEP_AXIS),
    key=P(SWEEP_AXIS),
)


@dataclasses.dataclass(frozen=True)
class Programs:
    """One static group's compiled functions, for a fixed layout."""

    init: Callable[[Any, jax.Array], RunnerState]
    chunk: Callable[[int], Callable[[Any, RunnerState], tuple[RunnerState, Metrics]]]
    state_shapes: RunnerState  # of one run


def make_programs(config: TrainConfig, mesh: Mesh) -> Programs:
    """The init and chunk programs of runs sharing `config`'s static fields.

    The agent is built inside the compiled program from a traced algorithm
    config, so runs that differ only in dynamic fields (and seeds) share it:
    each device vmaps its runs, the runs are split over the `sweep` mesh axis
    and each run's environments over `data`.

    Args:
      config: any run of the group (its static fields decide the programs).
      mesh: the (sweep, data) mesh the runs are laid out on.

    Returns:
      `init(hps, keys)` and `chunk(length)(hps, states)`, taking algorithm
      configs with float32 [R] leaves (`stack_hps`) and keys [R], R a multiple
      of the mesh's sweep size, and the shapes of one run's state.

    """
    env, env_params = make_env(config)
    network, _ = make_networks(config, env, env_params)  # no SAC in sweeps
    obs_example = zero_observation(env, env_params)
    data = mesh.shape[DATA_AXIS]
    local_envs = config.num_envs // data

    def functions(hp: Any) -> Any:
        agent = make_agent(
            config.algo,
            hp,
            network,
            obs_example,
            num_updates=config.num_updates,
            # As `make_experiment`: no all-reduce when a run is on one device.
            axis_name=DATA_AXIS if data > 1 else None,
        )
        return run_functions(
            env,
            env_params,
            agent,
            local_envs=local_envs,
            unroll_length=config.unroll_length,
            scan_unroll=config.scan_unroll,
        )

    def init_runs(hps: Any, keys: jax.Array) -> RunnerState:
        return jax.vmap(lambda hp, key: functions(hp).init(key))(hps, keys)

    platform = mesh.devices.flat[0].platform
    init = jax.jit(
        jax.shard_map(
            init_runs,
            mesh=mesh,
            in_specs=(P(SWEEP_AXIS), P(SWEEP_AXIS)),
            out_specs=_STATE_SPECS,
            check_vma=env.vma_checked,
        ),
        compiler_options=compiler_options(platform, runs_once=True),
    )

    @functools.cache
    def chunk(length: int) -> Callable:
        def sweep_chunk(hps: Any, states: RunnerState) -> tuple[RunnerState, Metrics]:
            def one(hp: Any, state: RunnerState) -> tuple[RunnerState, Metrics]:
                return jax.lax.scan(functions(hp).step, state, None, length=length)

            return jax.vmap(one)(hps, states)

        sharded = jax.shard_map(
            sweep_chunk,
            mesh=mesh,
            in_specs=(P(SWEEP_AXIS), _STATE_SPECS),
            out_specs=(_STATE_SPECS, P(SWEEP_AXIS)),
            check_vma=env.vma_checked,
        )
        return jax.jit(
            sharded, donate_argnums=1, compiler_options=compiler_options(platform)
        )

    hp = getattr(config, config.algo)
    one = jax.eval_shape(
        init,
        jax.tree.map(lambda x: np.full(mesh.shape[SWEEP_AXIS], x, np.float32), hp),
        jnp.stack([make_key(0, config.rng_impl)] * mesh.shape[SWEEP_AXIS]),
    )
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), one)
    return Programs(init, chunk, shapes)


def stack_hps(configs: Sequence[TrainConfig]) -> Any:
    """The algorithm configs of `configs` as one config of float32 [R] leaves."""
    sections = [getattr(c, c.algo) for c in configs]
    return jax.tree.map(lambda *xs: np.asarray(xs, np.float32), *sections)
