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
from purejaxdrl.env.contract import check_on_devices
from purejaxdrl.env.registry import registered_by_user
from purejaxdrl.parallel import DATA_AXIS, SWEEP_AXIS
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState, run_functions
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import build_agent, make_networks, zero_observation
from purejaxdrl.training.run_env import make_env
from purejaxdrl.types import Metrics


def state_specs(agent_spec: Any) -> RunnerState:
    """The PartitionSpecs of a sweep's stacked RunnerState.

    Runs are split over `sweep`; each run's environments over `data`, and so
    is any replay buffer the agent keeps (`agent_spec`, its `Agent.state_spec`:
    a leaf P("data") becomes P("sweep", "data"), P() becomes P("sweep")).
    """
    agent = jax.tree.map(
        lambda spec: P(SWEEP_AXIS, *spec),
        agent_spec,
        is_leaf=lambda x: isinstance(x, P),
    )
    return RunnerState(
        agent=agent,
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
    specs: RunnerState  # of the stacked runs (`state_specs`)


def make_programs(config: TrainConfig, mesh: Mesh) -> Programs:
    """The init and chunk programs of runs sharing `config`'s static fields.

    The agent is built inside the compiled program from a traced algorithm
    config, so runs that differ only in dynamic fields (and seeds) share it:
    each device vmaps its runs' training (and initialises them one after
    another, as each alone), the runs are split over the `sweep` mesh axis
    and each run's environments (and replay shards) over `data`.

    Args:
      config: any run of the group (its static fields decide the programs).
      mesh: the (sweep, data) mesh the runs are laid out on.

    Returns:
      `init(hps, keys)` and `chunk(length)(hps, states)`, taking algorithm
      configs with float32 [R] leaves (`stack_hps`) and keys [R], R a multiple
      of the mesh's sweep size, and the shapes of one run's state.

    """
    env, env_params = make_env(config)
    _, learner_network = make_networks(config, env, env_params)
    obs_example = zero_observation(env, env_params)
    data = mesh.shape[DATA_AXIS]
    if registered_by_user(config.env.id):
        check_on_devices(env, config.env.id, data, make_key(0, config.rng_impl))
    local_envs = config.num_envs // data
    # As `make_experiment`'s agent: no all-reduce when a run is on one device.
    specs = state_specs(
        build_agent(config, learner_network, obs_example, data).state_spec
    )

    def functions(hp: Any) -> Any:
        agent = build_agent(config, learner_network, obs_example, data, section=hp)
        return run_functions(
            env,
            env_params,
            agent,
            local_envs=local_envs,
            unroll_length=config.unroll_length,
            scan_unroll=config.scan_unroll,
        )

    def init_runs(hps: Any, keys: jax.Array) -> RunnerState:
        # One run after another, not vmapped: each run's initialisation is then
        # the computation of its run alone, on the same shapes. XLA:CPU compiles
        # initialisation at -O0 with its loop emitters (`compiler_options`),
        # and there a vmapped brax reset rounded differently from the unbatched
        # one (1e-10 in a rotation), which physics and Adam grew into 6e-4 in
        # SAC's parameters after 16 gradient steps (3e-8 run by run; derived
        # velocities still differ by 1e-9 at -O0, bitwise equal at -O1 or -O3,
        # whose init compiles 1.5-2x slower). Initialisation runs once.
        return jax.lax.map(lambda run: functions(run[0]).init(run[1]), (hps, keys))

    # As `runners.anakin`: the type check guards all-reduces over `data`;
    # runs on one device each (axis_name None) have none, and runs never
    # communicate over `sweep`.
    check_vma = env.vma_checked and data > 1
    platform = mesh.devices.flat[0].platform
    init = jax.jit(
        jax.shard_map(
            init_runs,
            mesh=mesh,
            in_specs=(P(SWEEP_AXIS), P(SWEEP_AXIS)),
            out_specs=specs,
            check_vma=check_vma,
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
            in_specs=(P(SWEEP_AXIS), specs),
            out_specs=(specs, P(SWEEP_AXIS)),
            check_vma=check_vma,
        )
        return jax.jit(
            sharded, donate_argnums=1, compiler_options=compiler_options(platform)
        )

    hp = config.algo_config
    one = jax.eval_shape(
        init,
        jax.tree.map(lambda x: np.full(mesh.shape[SWEEP_AXIS], x, np.float32), hp),
        jnp.stack([make_key(0, config.rng_impl)] * mesh.shape[SWEEP_AXIS]),
    )
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), one)
    return Programs(init, chunk, shapes, specs)


def stack_hps(configs: Sequence[TrainConfig]) -> Any:
    """The algorithm configs of `configs` as one config of float32 [R] leaves."""
    sections = [c.algo_config for c in configs]
    return jax.tree.map(lambda *xs: np.asarray(xs, np.float32), *sections)
