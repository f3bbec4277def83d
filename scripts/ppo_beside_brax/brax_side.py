"""brax's PPO trainer on our configuration, and brax's evaluation protocol.

`run_brax` trains with `brax.training.agents.ppo.train` mapped from our
`TrainConfig` (`bench_brax.py`'s docstring lists the mapping);
`install_jax_shims` gives brax 0.14 the JAX APIs it needs; `make_evaluate`
scores either side's final policy the way brax's `acting.Evaluator` does.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from brax import envs as brax_envs
from brax.training.agents.ppo import networks as brax_networks
from brax.training.agents.ppo import train as brax_ppo
from device_time import TimedAfter
from flax import linen
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd

from .clock import ChunkClock, Result

# brax warns, at every env it builds, that its pipelines are not maintained.
warnings.filterwarnings("ignore", category=UserWarning, module="brax")

ACTIVATIONS = {
    "tanh": linen.tanh,
    "relu": linen.relu,
    "gelu": linen.gelu,
    "silu": linen.silu,
}
# The transition fields brax's PPO collects in every unroll.
BRAX_EXTRA_FIELDS = ("truncation", "episode_metrics", "episode_done")


def _device_put_replicated(x: Any, devices: Sequence[jax.Device]) -> Any:
    """Stand-in for `jax.device_put_replicated`, removed in JAX 0.8.

    Stacks `len(devices)` copies of every leaf on a new leading axis sharded over
    `devices`. The mesh axis is named like brax's pmap axis, because that is how
    JAX's pmap lays out its outputs: the first pmapped epoch then sees the same
    input sharding as every later one and compiles once, not twice.

    Args:
      x: a pytree of arrays.
      devices: the devices to replicate onto.

    Returns:
      The pytree with leaves `[len(devices), *leaf.shape]`.

    """
    axis = getattr(brax_ppo, "_PMAP_AXIS_NAME", "i")
    sharding = NamedSharding(Mesh(np.asarray(devices), (axis,)), P(axis))

    def put(leaf: Any) -> jax.Array:
        leaf = jnp.asarray(leaf)
        stacked = jnp.broadcast_to(leaf, (len(devices), *leaf.shape))
        return jax.device_put(stacked, sharding)

    return jax.tree.map(put, x)


def install_jax_shims() -> None:
    """Gives JAX back the APIs brax's trainers need, where JAX no longer has them."""
    if not hasattr(jax, "device_put_replicated"):
        jax.device_put_replicated = _device_put_replicated


def brax_env_name(config: pjd.TrainConfig) -> str:
    """The brax environment name of a `brax/<name>` env id."""
    prefix, _, name = config.env.id.partition("/")
    if prefix != "brax" or not name:
        raise SystemExit(f"{config.env.id!r} is not a brax environment (brax/<name>).")
    return name


def make_brax_env(config: pjd.TrainConfig) -> Any:
    """The unwrapped brax environment, on the preset's backend."""
    backend = config.env.options.get("backend", "positional")
    return brax_envs.get_environment(brax_env_name(config), backend=backend)


def episode_length(config: pjd.TrainConfig) -> int:
    """The time limit both runners use."""
    return int(config.env.options.get("episode_length", 1000))


def brax_network_factory(config: pjd.TrainConfig) -> Callable:
    """brax's PPO networks sized and activated like ours."""
    return functools.partial(
        brax_networks.make_ppo_networks,
        policy_hidden_layer_sizes=tuple(config.network.hidden_sizes),
        value_hidden_layer_sizes=tuple(config.network.hidden_sizes),
        activation=ACTIVATIONS[config.network.activation],
    )


def run_brax(config: pjd.TrainConfig, chunks: int) -> tuple[Result, Callable, Any]:
    """Trains with brax's `ppo.train` on the same configuration.

    Returns:
      The figures, brax's `make_policy`, and its final policy parameters.

    """
    clock = ChunkClock()
    first_epoch: list[float] = []
    timed = TimedAfter(1, chunks)  # a trace's timed region: the clock's window

    def progress(step: int, metrics: dict[str, Any]) -> None:
        del step
        clock.tick()
        timed.tick()
        if not first_epoch:
            first_epoch.append(float(metrics["training/walltime"]))

    with contextlib.closing(timed):
        make_policy, params = _brax_train(config, chunks, progress)
    if len(clock.stamps) != chunks:
        raise RuntimeError(f"brax ran {len(clock.stamps)} epochs, not {chunks}.")
    steps_per_epoch = config.total_steps // chunks
    rates = clock.rates(config.total_steps)
    figures = {
        **rates,
        # Its first epoch, timed by brax, less an epoch at the steady rate.
        "compile_s": first_epoch[0] - steps_per_epoch / rates["steps_per_s"],
    }
    return figures, make_policy, params


def _brax_train(
    config: pjd.TrainConfig, chunks: int, progress: Callable
) -> tuple[Callable, Any]:
    """brax's `ppo.train` on `config`: (its make_policy, its parameters)."""
    ppo = config.ppo
    make_policy, params, _ = brax_ppo.train(
        make_brax_env(config),
        num_timesteps=config.total_steps,
        num_envs=config.num_envs,
        episode_length=episode_length(config),
        action_repeat=1,
        learning_rate=float(ppo.learning_rate),
        entropy_cost=float(ppo.entropy_cost),
        discounting=float(ppo.gamma),
        unroll_length=config.unroll_length,
        batch_size=config.num_envs // ppo.num_minibatches,
        num_minibatches=ppo.num_minibatches,
        num_updates_per_batch=ppo.num_epochs,
        normalize_observations=config.env.normalize_observations,
        reward_scaling=float(ppo.reward_scale),
        clipping_epsilon=float(ppo.clip_eps),
        clipping_epsilon_value=float(ppo.clip_eps) if ppo.clip_value else None,
        gae_lambda=float(ppo.gae_lambda),
        max_grad_norm=float(ppo.max_grad_norm),
        normalize_advantage=ppo.normalize_advantages,
        vf_loss_coefficient=float(ppo.value_cost),
        network_factory=brax_network_factory(config),
        seed=config.seed,
        num_evals=chunks + 1,  # one training epoch per eval after the first
        run_evals=False,
        progress_fn=progress,
    )
    return make_policy, params


def make_evaluate(config: pjd.TrainConfig, num_envs: int) -> Callable:
    """One protocol for both policies: brax's `acting.Evaluator`'s, compiled once.

    `num_envs` brax envs (wrapped as for training: time limit, auto-reset) are
    reset from one fixed key and stepped for episode_length steps; each env's
    first episode counts. brax's Evaluator does the same, but compiles its
    unroll twice per policy (its first donated state differs in type from the
    later ones); this compiles once per policy kind.

    Returns:
      `evaluate(make_policy, params) -> mean episode return`, where
      `make_policy(params)` returns a brax policy `(obs, key) -> (action, extras)`.

    """
    length = episode_length(config)
    env = brax_envs.training.wrap(
        make_brax_env(config), episode_length=length, action_repeat=1
    )
    key_reset, key_act = jax.random.split(jax.random.PRNGKey(12345))

    @functools.partial(jax.jit, static_argnums=0)
    def run(make_policy: Callable, params: Any) -> jax.Array:
        policy = make_policy(params)
        state = env.reset(jax.random.split(key_reset, num_envs))

        def step(carry: tuple, key: jax.Array) -> tuple[tuple, None]:
            state, ret, active = carry
            action, _ = policy(state.obs, key)
            state = env.step(state, action)
            ret = ret + active * state.reward
            return (state, ret, active * (1.0 - state.done)), None

        zeros = jnp.zeros((num_envs,), jnp.float32)
        (_, ret, _), _ = jax.lax.scan(
            step, (state, zeros, zeros + 1.0), jax.random.split(key_act, length)
        )
        return ret.mean()

    def evaluate(make_policy: Callable, params: Any) -> float:
        return float(run(make_policy, params))

    return evaluate
