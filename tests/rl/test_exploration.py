import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl import rl


def test_epsilon_zero_is_greedy_and_epsilon_one_is_uniform():
    q = jnp.array([0.1, 2.0, -1.0, 0.5])
    keys = jax.random.split(jax.random.key(0), 4000)
    greedy = jax.vmap(lambda k: rl.epsilon_greedy(k, q, 0.0))(keys)
    assert greedy.dtype == jnp.int32 and np.all(np.asarray(greedy) == 1)
    uniform = np.asarray(jax.vmap(lambda k: rl.epsilon_greedy(k, q, 1.0))(keys))
    # 4000 draws over 4 actions: each count is 1000 +- ~27 (one std).
    assert np.all(np.abs(np.bincount(uniform, minlength=4) - 1000) < 150)


def test_epsilon_half_picks_the_greedy_action_five_eighths_of_the_time():
    # P(greedy) = (1 - ε) + ε / A = 0.5 + 0.5 / 4 = 0.625.
    q = jnp.array([0.0, 0.0, 3.0, 0.0])
    keys = jax.random.split(jax.random.key(1), 8000)
    actions = np.asarray(jax.vmap(lambda k: rl.epsilon_greedy(k, q, 0.5))(keys))
    assert abs(np.mean(actions == 2) - 0.625) < 0.02


def test_actor_epsilons_by_hand():
    # ε_i = 0.4^(1 + 7 i / 3) for i = 0..3.
    got = rl.actor_epsilons(0.4, 7.0, jnp.arange(4), 4)
    want = [0.4 ** (1 + 7 * i / 3) for i in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_epsilon_greedy_draws_legal_actions_uniformly_and_keeps_its_stream():
    q = jnp.asarray([5.0, -jnp.inf, 1.0, -jnp.inf, 0.0])
    keys = jax.random.split(jax.random.key(2), 6000)
    draws = np.asarray(jax.vmap(rl.epsilon_greedy, (0, None, None))(keys, q, 1.0))
    counts = np.bincount(draws, minlength=5)
    assert counts[1] == counts[3] == 0
    np.testing.assert_allclose(counts[[0, 2, 4]] / 6000, 1 / 3, atol=0.03)
    greedy = jax.vmap(rl.epsilon_greedy, (0, None, None))(keys[:50], q, 0.0)
    assert np.all(np.asarray(greedy) == 0)
    # Without illegal actions, the draw a plain randint would make.
    full = jnp.arange(5.0)
    got = jax.vmap(rl.epsilon_greedy, (0, None, None))(keys[:200], full, 1.0)
    want = jax.vmap(lambda k: jax.random.randint(jax.random.split(k)[1], (), 0, 5))(
        keys[:200]
    )
    np.testing.assert_array_equal(got, np.asarray(want))


def test_annealed_epsilon_by_hand_and_with_no_decay():
    from purejaxdrl.rl.exploration import annealed_epsilon

    # start 1, end 0.1 over half of 10 updates: 0.82 at update 1, end from 5 on.
    got = [
        float(annealed_epsilon(1.0, 0.1, 0.5, jnp.int32(s), 10)) for s in (0, 1, 5, 9)
    ]
    np.testing.assert_allclose(got, [1.0, 0.82, 0.1, 0.1], rtol=1e-6)
    # fraction 0: no decay, `end` from update 0 (once 0 / 0, a NaN that
    # stopped the run at its first update).
    got = [float(annealed_epsilon(1.0, 0.05, 0.0, jnp.int32(s), 10)) for s in (0, 3)]
    np.testing.assert_allclose(got, [0.05, 0.05], rtol=1e-6)
