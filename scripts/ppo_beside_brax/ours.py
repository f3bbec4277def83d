"""Our side of `bench_brax.py`: the preset resized, trained, and its policy.

`make_config` resizes our preset as brax's trainer needs it (Adam's ε and a
constant learning rate as brax's); `run_ours` trains it under the chunk
clock; `our_policy_fn` is our policy in brax's `make_policy` form.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import purejaxdrl as pjd

from .clock import ChunkClock, Result


def make_config(args: argparse.Namespace, chunks: int) -> pjd.TrainConfig:
    """Our preset for `args.env`, resized; lr constant and Adam's ε 1e-8, as brax's.

    The step budget is rounded down to a whole number of updates per chunk, so
    both runners take exactly the same number of env steps.
    """
    config = pjd.load_preset(args.env).config
    overrides: dict[str, Any] = {
        "ppo": {"anneal_lr": False, "eps": 1e-8},
        "num_logs": chunks,
    }
    if args.num_envs is not None:
        overrides["num_envs"] = args.num_envs
    if args.unroll_length is not None:
        overrides["unroll_length"] = args.unroll_length
    config = pjd.apply_overrides(config, overrides)
    step = config.steps_per_update * chunks
    total = max(step, args.total_steps // step * step)
    config = pjd.apply_overrides(config, {"total_steps": total})
    if config.num_envs % config.ppo.num_minibatches:
        raise SystemExit(
            f"num_envs={config.num_envs} must be divisible by ppo.num_minibatches="
            f"{config.ppo.num_minibatches}: brax's minibatches are whole env "
            "trajectories (batch_size = num_envs / num_minibatches)."
        )
    return config


def run_ours(config: pjd.TrainConfig) -> tuple[Result, Any]:
    """Trains with `purejaxdrl.training.train`.

    Returns:
      The figures, and the final (parameters, observation statistics or None).

    """
    clock = ChunkClock()
    result = pjd.train(config, loggers=[clock])
    state = jax.device_get(result.state)
    stats = (
        state.env_params.obs_stats
        if isinstance(state.env_params, pjd.env.NormalizedParams)
        else None
    )
    figures = {
        **clock.rates(config.total_steps),
        "compile_s": result.compile_seconds,
        "own_steps_per_s": result.steps_per_second,  # all chunks after compiling
        "train_return": result.mean_return,
    }
    return figures, (state.agent.params, stats)


def our_policy_fn(agent: pjd.agents.Agent) -> Callable:
    """Our policy as a brax `make_policy`: (params, obs stats) -> policy.

    The policy standardises observations with our statistics, as our wrapper
    does, and samples our (stochastic) action for every env in the batch.
    """

    def make_policy(policy_params: Any) -> Callable:
        params, stats = policy_params

        def policy(obs: jax.Array, key: jax.Array) -> tuple[jax.Array, dict]:
            if stats is not None:
                obs = pjd.env.normalize(stats, obs)
            keys = jax.random.split(key, obs.shape[0])
            env_ids = jnp.arange(obs.shape[0], dtype=jnp.int32)
            _, _, extras = agent.acting.step(params, (), obs, None, keys, env_ids)
            return extras["env_action"], {}

        return policy

    return make_policy
