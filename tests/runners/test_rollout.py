"""unroll's values and bootstrap values against a direct per-step reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.agents.base import Acting, Agent, feed_forward
from purejaxdrl.env.registry import make
from purejaxdrl.runners.rollout import reset_actors, unroll
from tests.probe import ProbeEnv, ProbeParams


def _value(params: jax.Array, obs: jax.Array) -> jax.Array:
    # Distinct for every (t, episode) observation, and nonzero after a reset.
    return params * (obs[..., 0] + 10.0 * obs[..., 1] + 1.0)


def _act(params, obs, key):
    zeros = jnp.zeros(obs.shape[:-1], jnp.int32)
    return zeros, {"log_prob": jnp.zeros(zeros.shape), "env_action": zeros}


AGENT = Agent(init=None, acting=feed_forward(_act, _value), update=None)


def _unroll(terminate_at: int, time_limit: int, length: int, num_envs: int, params):
    env = ProbeEnv()
    env_params = ProbeParams(jnp.int32(terminate_at), jnp.int32(time_limit))
    actor = reset_actors(
        env, env_params, jax.random.key(0), jnp.arange(num_envs, dtype=jnp.int32)
    )
    _, traj = unroll(env, env_params, AGENT, params, actor, jax.random.key(1), length)
    return traj


@pytest.mark.parametrize(
    ("terminate_at", "time_limit", "length", "num_envs", "truncations"),
    [
        (0, 5, 8, 3, 3),  # one truncation per env: their values gathered
        (0, 2, 8, 2, 8),  # more truncations than envs: one pass over all
        (3, 100, 8, 2, 0),  # terminations only: nothing to bootstrap from
        (4, 3, 9, 2, 6),  # truncated at 3, never reaches 4
        (3, 3, 9, 2, 0),  # both at 3: termination wins
    ],
)
def test_bootstrap_values_are_values_of_final_observations(
    terminate_at, time_limit, length, num_envs, truncations
):
    params = jnp.float32(0.5)
    traj = jax.jit(_unroll, static_argnums=(0, 1, 2, 3))(
        terminate_at, time_limit, length, num_envs, params
    )
    obs, final = np.asarray(traj.observation), np.asarray(traj.final_observation)
    reference = 0.5 * (final[..., 0] + 10.0 * final[..., 1] + 1.0)
    reference = np.where(np.asarray(traj.discount) == 0.0, 0.0, reference)
    np.testing.assert_allclose(traj.bootstrap_value, reference)
    np.testing.assert_allclose(
        traj.value, 0.5 * (obs[..., 0] + 10.0 * obs[..., 1] + 1.0)
    )
    assert int(np.asarray(traj.truncated).sum()) == truncations  # the case's point


def test_bootstrap_values_under_vmap():
    # Sweeps vmap the whole runner: the truncation count becomes batched.
    params = jnp.array([0.5, 2.0])
    batched = jax.jit(jax.vmap(lambda p: _unroll(0, 5, 8, 3, p)))(params)
    for i, p in enumerate([0.5, 2.0]):
        single = _unroll(0, 5, 8, 3, jnp.float32(p))
        np.testing.assert_allclose(batched.bootstrap_value[i], single.bootstrap_value)
        np.testing.assert_allclose(batched.value[i], single.value)


def test_scan_unroll_by_platform_gives_the_same_trajectory(monkeypatch):
    # 0 picks the loop by platform; both branches must unroll the same steps.
    # The accelerator's branch (4 steps an iteration) is run on CPU by making
    # platform_scan take its default branch everywhere.
    import purejaxdrl.runners.rollout as rollout
    from purejaxdrl import scans

    env = ProbeEnv()
    env_params = ProbeParams(jnp.int32(3), jnp.int32(5))
    actor = reset_actors(env, env_params, jax.random.key(0), jnp.arange(3))

    def run(scan_unroll: int):
        _, traj = unroll(
            env, env_params, AGENT, 1.0, actor, jax.random.key(1), 10, scan_unroll
        )
        return traj

    rolled = run(1)

    def assert_equal(a, b):
        jax.tree.map(np.testing.assert_array_equal, a, b)

    assert_equal(run(0), rolled)

    def accelerator_scan(step, init, xs):
        return jax.lax.scan(step, init, xs, unroll=scans.ACCELERATOR_UNROLL)

    monkeypatch.setattr(rollout, "platform_scan", accelerator_scan)
    assert_equal(run(0), rolled)


def _phi(obs):
    return obs[..., 0] + 10.0 * obs[..., 1] + 1.0


def _core_step(params, carry, obs, reset, keys, env_ids):
    # A core whose state sums the episode's observations so far: a value that
    # depends on the carry, so a wrong or stale carry gives another number.
    carry = jnp.where(reset, 0.0, carry) + _phi(obs)
    zeros = jnp.zeros(obs.shape[:-1], jnp.int32)
    extras = {"log_prob": jnp.zeros(zeros.shape), "env_action": zeros}
    return carry, zeros, extras | {"value": params * carry}


def _core_value(params, carry, obs):
    return params * (carry + _phi(obs))


CORE_AGENT = Agent(
    init=None,
    acting=Acting(
        lambda b: jnp.zeros(b), _core_step, _core_value, values_while_acting=True
    ),
    update=None,
)


@pytest.mark.parametrize(("terminate_at", "time_limit"), [(0, 3), (4, 3), (3, 100)])
def test_a_core_bootstraps_from_its_carried_state_and_the_next_observation(
    terminate_at, time_limit
):
    # Reference by replaying the definition in NumPy: the core restarts where
    # the previous step ended its episode (terminated or truncated); a step's
    # bootstrap value is the core's value of its final observation (the one
    # after the unroll for the last step), 0 where it terminated.
    env = ProbeEnv()
    env_params = ProbeParams(jnp.int32(terminate_at), jnp.int32(time_limit))
    actor = reset_actors(env, env_params, jax.random.key(0), jnp.arange(2))
    actor = actor._replace(core=jnp.zeros(2))
    params, length = jnp.float32(0.5), 8
    run = jax.jit(
        lambda a: unroll(
            env, env_params, CORE_AGENT, params, a, jax.random.key(1), length
        )
    )
    _, traj = run(actor)
    obs, final = np.asarray(traj.observation), np.asarray(traj.final_observation)
    discount, truncated = np.asarray(traj.discount), np.asarray(traj.truncated)
    carry = np.zeros(2, np.float32)
    ended = np.zeros(2, bool)
    for t in range(length):
        carry = np.where(ended, 0.0, carry) + np.asarray(_phi(obs[t]))
        np.testing.assert_allclose(traj.value[t], 0.5 * carry)
        boot = 0.5 * (carry + np.asarray(_phi(final[t])))
        boot = np.where(discount[t] == 0.0, 0.0, boot)
        np.testing.assert_allclose(traj.bootstrap_value[t], boot, err_msg=f"t={t}")
        ended = (discount[t] == 0.0) | truncated[t]
    assert (discount == 0).any() or truncated.any()  # the case's point


def _acting_with_a_value_extra(values_while_acting: bool) -> Acting:
    # A feed-forward policy whose step also returns a "value" extra (-1, a
    # number no real value here has): only the static flag says whether the
    # rollout takes it as the values, not the extra being there.
    def step(params, carry, obs, reset, keys, env_ids):
        zeros = jnp.zeros(obs.shape[:-1], jnp.int32)
        extras = {"log_prob": jnp.zeros(zeros.shape), "env_action": zeros}
        return carry, zeros, extras | {"value": -jnp.ones(zeros.shape)}

    return Acting(
        lambda b: (),
        step,
        lambda params, _, obs: _value(params, obs),
        values_while_acting=values_while_acting,
    )


@pytest.mark.parametrize("values_while_acting", [False, True])
def test_the_rollout_takes_values_from_the_step_only_where_the_policy_says_so(
    values_while_acting,
):
    env = ProbeEnv()
    env_params = ProbeParams(jnp.int32(100), jnp.int32(2))  # truncates at 2
    agent = Agent(None, _acting_with_a_value_extra(values_while_acting), None)
    actor = reset_actors(env, env_params, jax.random.key(0), jnp.arange(2))
    _, traj = unroll(
        env, env_params, agent, jnp.float32(0.5), actor, jax.random.key(1), 4
    )
    obs = np.asarray(traj.observation)
    if values_while_acting:  # the step's values, its reset flags and carry
        np.testing.assert_array_equal(traj.value, -np.ones((4, 2)))
        # Where the step before ended its episode: the time limit, at t = 1.
        np.testing.assert_array_equal(
            traj.reset, [[False] * 2, [False] * 2, [True] * 2, [False] * 2]
        )
    else:  # valued after the scan; nothing a core would need is stored
        np.testing.assert_allclose(
            traj.value, 0.5 * (obs[..., 0] + 10.0 * obs[..., 1] + 1.0)
        )
        assert traj.reset is None
    assert traj.core_state == ()


def test_each_environment_starts_from_its_own_draw():
    # (mut22 RO3) one key for all would start every environment alike.
    env = make("CartPole-v1")
    params = env.default_params
    ids = jnp.arange(4, dtype=jnp.int32)
    actor = reset_actors(env, params, jax.random.key(0), ids)
    obs = np.asarray(actor.timestep.observation)
    assert len({tuple(row) for row in obs.round(6)}) == 4
    # And environment i starts the same whichever batch holds it.
    again = reset_actors(env, params, jax.random.key(0), ids[2:])
    np.testing.assert_array_equal(np.asarray(again.timestep.observation), obs[2:])
