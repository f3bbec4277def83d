"""Shared pieces of the agent tests, compiled once per test session.

Agent configs are pytrees whose dynamic fields are array leaves, so `learner`
jits init and update with the config as an argument: tests that differ only in
dynamic hyper-parameters (learning rate, γ, λ, clipping ...) share one program.
"""

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.agents import RunShape, make_agent
from purejaxdrl.agents.actor_critic import actor_critic_acting
from purejaxdrl.runners.rollout import reset_actors, unroll
from tests.helpers import flat  # noqa: F401  (the agent tests' import of it)

NETWORKS = {
    "mlp": pjd.NetworkConfig(hidden_sizes=(16, 16)),
    "cnn": pjd.NetworkConfig(torso="cnn", shared_torso=True, hidden_sizes=(32,)),
}


@functools.cache
def setup(env_id="CartPole-v1", torso="mlp"):
    """(env, network, obs_example) for a gymnax environment."""
    env = envs.make(env_id)
    params = env.default_params
    spec = env.observation_spec(params)
    action_spec = env.action_spec(params)
    network = pjd.networks.make_actor_critic(NETWORKS[torso], spec, action_spec)
    return env, network, np.zeros(spec.shape, np.float32)


@functools.cache
def _collector(env_id, torso, length, num_envs):
    env, network, _ = setup(env_id, torso)
    policy = types.SimpleNamespace(acting=actor_critic_acting(network))

    @jax.jit
    def collect(params, key):
        key_reset, key_unroll = jax.random.split(key)
        ids = jnp.arange(num_envs, dtype=jnp.int32)
        actor = reset_actors(env, env.default_params, key_reset, ids)
        _, traj = unroll(
            env, env.default_params, policy, params, actor, key_unroll, length
        )
        return traj._replace(info={})

    return collect


def batch(params, *, length=16, num_envs=8, seed=0, env_id="CartPole-v1", torso="mlp"):
    """Transitions [T, B] of the policy with `params` (info stripped)."""
    collect = _collector(env_id, torso, length, num_envs)
    return collect(params, jax.random.key(seed))


@functools.cache
def learner(algo, env_id="CartPole-v1", torso="mlp"):
    """(build, init, update): build(config) -> Agent; init and update jitted
    with the config as their first argument."""
    _, network, obs = setup(env_id, torso)

    def build(config, axis_name=None):
        run = RunShape(num_updates=10, axis_name=axis_name)
        return make_agent(algo, config, network, obs, run)

    init = jax.jit(lambda config, key: build(config).init(key))
    update = jax.jit(lambda config, *args: build(config).update(*args))
    return build, init, update


@functools.cache
def data_parallel_update(algo, num_devices, env_id="CartPole-v1"):
    """`update(config, state, traj, key)` on a `data` mesh of `num_devices`:
    the learner state replicated, transitions [T, B] split over B."""
    build, _, _ = learner(algo, env_id)
    mesh = Mesh(np.array(jax.devices()[:num_devices]), ("data",))

    def update(config, state, traj, key):
        return jax.shard_map(
            build(config, "data").update,
            mesh=mesh,
            in_specs=(P(), P(None, "data"), P()),
            out_specs=P(),
        )(state, traj, key)

    return jax.jit(update)


def assert_update_is_the_same_on_two_devices(
    algo, config, state, traj, key, *, metrics_atol=1e-6, env_id="CartPole-v1"
):
    """`update` on one device and data-parallel on two give the same parameters
    (to 1e-6) and metrics (rtol 1e-5): gradients and statistics are global."""
    _, _, update = learner(algo, env_id)
    one, m_one = update(config, state, traj, key)
    two, m_two = data_parallel_update(algo, 2, env_id)(config, state, traj, key)
    np.testing.assert_allclose(flat(two.params), flat(one.params), atol=1e-6)
    for name, value in m_one.items():
        np.testing.assert_allclose(m_two[name], value, rtol=1e-5, atol=metrics_atol)


def experiment(algo, devices=1, **overrides):
    """A small training run: 8 CartPole envs x 8 steps per update."""
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "algo": algo,
            "num_envs": 8,
            "unroll_length": 8,
            "total_steps": 8 * 8 * 8,
            "devices": devices,
            **overrides,
        },
    )
    return pjd.training.make_experiment(config)


def numpy_lambda_returns(r, disc, truncated, v, v_next, lam):
    """λ-returns by their recursive definition, one env at a time, in NumPy.

    G_s = r_s + γ_s ((1 - λ) V(x'_s) + λ G_{s+1}) within an episode; at an
    episode's end (or the batch's) G_s = r_s + γ_s V(x'_s), γ_s = 0 on
    termination. λ = 1 gives A3C's n-step returns: rewards to the end of the
    unroll plus the discounted value there.
    """
    returns = np.zeros_like(r)
    for b in range(r.shape[1]):
        g = 0.0
        for s in reversed(range(r.shape[0])):
            last = s == r.shape[0] - 1 or truncated[s, b]
            future = v_next[s, b] if last else (1 - lam) * v_next[s, b] + lam * g
            g = r[s, b] + disc[s, b] * future
            returns[s, b] = g
    return returns
