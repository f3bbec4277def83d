"""`bench_brax.py --profile`: where one update's time goes, on both sides.

Each part (env alone, each side's env stack, rollout, our learner) runs in
a program of its own for one update's worth, timed interleaved; `profile`
adds the table's lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from brax import envs as brax_envs
from brax.training import acting
from harness import Report, compile_ahead, interleave, time_call

import purejaxdrl as pjd

from .brax_side import BRAX_EXTRA_FIELDS, episode_length, make_brax_env
from .clock import Result


def checksum(tree: Any) -> jax.Array:
    """Sum of every float leaf of `tree`, so XLA cannot drop any of their work.

    (A reward alone is not enough: inverted_pendulum's is a constant 1.)
    """
    leaves = [
        jnp.sum(x, dtype=jnp.float32)
        for x in jax.tree.leaves(tree)
        if jnp.issubdtype(x.dtype, jnp.floating)
    ]
    return sum(leaves, jnp.zeros((), jnp.float32))


def compile_program(fn: Callable, *args: Any) -> Callable[[], Any]:
    """Compiles `fn(*args)` ahead of time and runs it once (first-run costs).

    Returns:
      A thunk that runs the compiled program on `args` and waits for it.

    """
    _, program = compile_ahead(fn, *args)
    time_call(program, *args)
    return lambda: time_call(program, *args)


def best_times(programs: dict[str, Callable[[], Any]], rounds: int) -> dict:
    """Least wall and CPU seconds of each program over `rounds` interleaved runs.

    Interleaving and the minimum keep other processes' load out of the figures
    as far as possible.
    """

    def timed(run: Callable[[], Any]) -> Callable[[int], dict[str, float]]:
        def once(repeat: int) -> dict[str, float]:
            cpu = time.process_time()
            wall, _ = run()
            return {"wall_s": wall, "cpu_s": time.process_time() - cpu}

        return once

    runs = interleave({name: timed(run) for name, run in programs.items()}, rounds)
    return {
        name: {k: min(r[k] for r in rs) for k in ("wall_s", "cpu_s")}
        for name, rs in runs.items()
    }


def our_programs(config: pjd.TrainConfig) -> dict[str, Callable[[], Any]]:
    """Our rollout alone and our learner alone, one update each.

    The rollout is `unroll` as the runner calls it: env stack, per-env keys,
    policy sampling and the batched value pass over observations and final
    observations. The learner is PPO's `update` on that trajectory.
    """
    exp = pjd.training.make_experiment(config)
    state = jax.device_get(
        exp.runner.init(pjd.rng.make_key(config.seed, config.rng_impl))
    )
    params = state.agent.params

    def rollout(state: pjd.runners.RunnerState) -> tuple:
        actor, traj = pjd.runners.unroll(
            exp.env,
            state.env_params,
            exp.agent,
            params,
            state.actor,
            state.key,
            config.unroll_length,
            config.scan_unroll,
        )
        return actor, traj._replace(info={})

    # An agent that all-reduces over no axis, to run outside the runner's mesh.
    spec = exp.env.observation_spec(exp.env_params)
    network = pjd.networks.make_actor_critic(
        config.network, spec, exp.env.action_spec(exp.env_params)
    )
    agent = pjd.agents.make_ppo(
        config.ppo,
        network,
        np.zeros(spec.shape, np.float32),
        pjd.agents.RunShape(num_updates=config.num_updates),
    )
    traj = jax.jit(rollout)(state)[1]

    def learner(agent_state: pjd.agents.AgentState, traj: Any, key: jax.Array) -> Any:
        return agent.update(agent_state, traj, key)

    return {
        "ours: rollout": compile_program(lambda state: checksum(rollout(state)), state),
        "ours: learner": compile_program(learner, state.agent, traj, state.key),
    }


def brax_rollout(
    config: pjd.TrainConfig, make_policy: Callable, params: Any
) -> Callable[[], Any]:
    """brax's rollout alone, one update, as its training step runs it."""
    env = brax_envs.training.wrap(
        make_brax_env(config), episode_length=episode_length(config), action_repeat=1
    )
    key_reset, key_run = jax.random.split(jax.random.PRNGKey(config.seed))
    env_state = jax.jit(env.reset)(jax.random.split(key_reset, config.num_envs))
    policy = make_policy(params)

    def run(env_state: Any, key: jax.Array) -> jax.Array:
        return checksum(
            acting.generate_unroll(
                env,
                env_state,
                policy,
                key,
                config.unroll_length,
                extra_fields=BRAX_EXTRA_FIELDS,
            )
        )

    return compile_program(run, env_state, key_run)


def env_steps(
    config: pjd.TrainConfig,
    reset: Callable[[jax.Array], Any],
    step: Callable[[Any, jax.Array, jax.Array], Any],
) -> Callable[[], Any]:
    """unroll_length batched env steps with uniform random actions, no policy.

    Args:
      config: gives num_envs, unroll_length and the env.
      reset: keys [B] -> batched env state.
      step: (state, actions [B, A], keys [B]) -> (state, outputs to checksum).

    """
    action_size = make_brax_env(config).action_size
    n = config.num_envs
    state = jax.jit(reset)(jax.random.split(jax.random.PRNGKey(0), n))

    def run(state: Any) -> jax.Array:
        def body(state: Any, key: jax.Array) -> tuple:
            key_act, key_env = jax.random.split(key)
            action = jax.random.uniform(key_act, (n, action_size), minval=-1.0)
            state, out = step(state, action, jax.random.split(key_env, n))
            return state, checksum(out)

        keys = jax.random.split(jax.random.PRNGKey(1), config.unroll_length)
        return jax.lax.scan(body, state, keys)[1].sum()

    return compile_program(run, state)


def env_programs(config: pjd.TrainConfig) -> dict[str, Callable[[], Any]]:
    """The raw brax env and each runner's env stack, one update's steps each.

    brax: VmapWrapper + EpisodeWrapper + AutoResetWrapper (auto-reset selects a
    cached first state). Ours: BraxEnv (time limit; auto-reset computes a fresh
    reset every step and selects it) + EpisodeStatistics + NormalizeObservation.
    """
    raw = make_brax_env(config)
    wrapped = brax_envs.training.wrap(
        raw, episode_length=episode_length(config), action_repeat=1
    )
    exp = pjd.training.make_experiment(config)
    env, params = exp.env, exp.env_params

    def raw_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        del keys
        state = jax.vmap(raw.step)(state, action)
        return state, state.obs

    def brax_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        del keys
        state = wrapped.step(state, action)
        return state, state.obs

    def our_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        return jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, state, action, params)

    def our_reset(keys: jax.Array) -> Any:
        return jax.vmap(env.reset, in_axes=(0, None))(keys, params)[0]

    return {
        "raw brax env step": env_steps(config, jax.vmap(raw.reset), raw_step),
        "brax env wrappers": env_steps(config, wrapped.reset, brax_step),
        "our env stack": env_steps(config, our_reset, our_step),
    }


def profile(
    report: Report,
    config: pjd.TrainConfig,
    ours: Result,
    brax: Result,
    brax_policy: tuple,
    rounds: int = 7,
) -> None:
    """Reports where an update's time goes: env, rollout and learner, for both.

    Each part runs alone in a program of its own, for one update's worth, and
    the parts are timed interleaved, keeping the least of `rounds` runs. brax's
    learner cannot be run alone (it lives inside `ppo.train`), so its share is
    its training time per update (median, from the runs above) less its
    rollout; ours is shown both ways.
    """
    spu = config.steps_per_update
    programs = {
        **our_programs(config),
        "brax: rollout": brax_rollout(config, *brax_policy),
        **env_programs(config),
    }
    best = best_times(programs, rounds)

    def training(r: Result) -> Result:
        return {"wall_s": spu / r["steps_per_s"], "cpu_s": spu / r["cpu_steps_per_s"]}

    def minus(a: Result, b: Result) -> Result:
        return {k: a[k] - b[k] for k in a}

    rows = [
        ("purejaxdrl: training", training(ours)),
        ("  rollout (env + policy + values)", best["ours: rollout"]),
        ("  learner, alone", best["ours: learner"]),
        ("  learner, training - rollout", minus(training(ours), best["ours: rollout"])),
        ("brax ppo.train: training", training(brax)),
        ("  rollout (env + policy)", best["brax: rollout"]),
        ("  learner, training - rollout", minus(training(brax), best["brax: rollout"])),
        ("raw brax env step (no wrappers)", best["raw brax env step"]),
        ("brax env wrappers (incl. env)", best["brax env wrappers"]),
        ("our env stack (incl. env)", best["our env stack"]),
    ]
    row = f"profile: ms per update ({spu:,} env steps), parts alone, least of {rounds}"
    for name, r in rows:
        ms = {"wall_ms": 1e3 * r["wall_s"], "cpu_ms": 1e3 * r["cpu_s"]}
        report.add(row, name.strip(), [ms])
