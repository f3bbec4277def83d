import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl import rl
from purejaxdrl.rl.distributions import LOG_STD_MAX, LOG_STD_MIN


def test_categorical_log_prob_and_entropy_match_numpy():
    logits = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]], np.float32)
    actions = np.array([1, 2])
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    dist = rl.categorical()
    np.testing.assert_allclose(
        dist.log_prob(jnp.asarray(logits), jnp.asarray(actions)),
        np.log(p[[0, 1], actions]),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        dist.entropy(jnp.asarray(logits), None), -(p * np.log(p)).sum(-1), rtol=1e-6
    )


def test_categorical_samples_follow_probabilities():
    logits = jnp.log(jnp.array([0.2, 0.8]))
    keys = jax.random.split(jax.random.key(0), 20000)
    samples = jax.vmap(rl.categorical().sample, in_axes=(None, 0))(logits, keys)
    assert abs(float(samples.mean()) - 0.8) < 0.01


# Two rows with masked (-inf) actions, as an action mask leaves them.
MASKED_LOGITS = np.array(
    [[1.0, -np.inf, 2.0, 0.5], [-np.inf, -3.0, -np.inf, -1.0]], np.float32
)


def _numpy_masked_categorical(logits):
    # Probabilities and entropy in float64, summing p log p over p > 0 only.
    logits = np.asarray(logits, np.float64)
    valid = np.isfinite(logits)
    e = np.where(valid, np.exp(logits - logits.max(-1, keepdims=True)), 0.0)
    p = e / e.sum(-1, keepdims=True)
    logp = np.where(valid, np.log(np.where(valid, p, 1.0)), -np.inf)
    entropy = -np.where(valid, p * np.where(valid, logp, 0.0), 0.0).sum(-1)
    return p, logp, entropy


def test_categorical_entropy_with_masked_logits_matches_numpy():
    _, _, entropy = _numpy_masked_categorical(MASKED_LOGITS)
    got = rl.categorical().entropy(jnp.asarray(MASKED_LOGITS), None)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, entropy, rtol=1e-6)


def test_categorical_entropy_gradient_with_masked_logits_is_finite_and_exact():
    # dH/dz_i = -p_i (log p_i + H) where p_i > 0, and 0 at a masked logit.
    p, logp, entropy = _numpy_masked_categorical(MASKED_LOGITS)
    want = np.where(p > 0, -p * (np.where(p > 0, logp, 0.0) + entropy[:, None]), 0.0)
    entropy_sum = lambda z: rl.categorical().entropy(z, None).sum()  # noqa: E731
    grad = jax.grad(entropy_sum)(jnp.asarray(MASKED_LOGITS))
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-7)
    # So an entropy term with a zero cost leaves a loss's gradient finite.
    loss = lambda z: 0.0 * entropy_sum(z) + z[:, 0].sum()  # noqa: E731
    assert np.all(np.isfinite(jax.grad(loss)(jnp.asarray(MASKED_LOGITS))))


def test_categorical_log_prob_mode_and_sample_with_masked_logits():
    p, logp, _ = _numpy_masked_categorical(MASKED_LOGITS)
    dist, logits = rl.categorical(), jnp.asarray(MASKED_LOGITS)
    actions = np.array([[0, 1, 2, 3], [0, 1, 2, 3]])
    got = jax.vmap(dist.log_prob, in_axes=(None, 1), out_axes=1)(
        logits, jnp.asarray(actions)
    )
    np.testing.assert_allclose(got, logp, rtol=1e-6)
    # The log-prob of an allowed action has a finite gradient.
    grad = jax.grad(lambda z: dist.log_prob(z, jnp.array([2, 3])).sum())(logits)
    assert np.all(np.isfinite(grad))
    np.testing.assert_array_equal(dist.mode(logits), [2, 3])
    keys = jax.random.split(jax.random.key(0), 20000)
    samples = np.asarray(jax.vmap(dist.sample, in_axes=(None, 0))(logits, keys))
    for row in range(2):
        freq = np.bincount(samples[:, row], minlength=4) / len(keys)
        assert np.all(freq[p[row] == 0] == 0)  # never a masked action
        np.testing.assert_allclose(freq, p[row], atol=0.015)


def _numpy_tanh_gaussian_log_prob(mean, log_std, u):
    # Change of variables a = tanh(u): log p(a) = log N(u) - sum log(1 - tanh(u)^2).
    u, mean, log_std = (np.asarray(x, np.float64) for x in (u, mean, log_std))
    std = np.exp(log_std)
    log_n = -0.5 * ((u - mean) / std) ** 2 - np.log(std) - 0.5 * np.log(2 * np.pi)
    return (log_n - np.log(1 - np.tanh(u) ** 2)).sum(-1)


def test_tanh_gaussian_log_prob_matches_change_of_variables():
    dist = rl.tanh_gaussian()
    mean = np.array([0.3, -1.0], np.float32)
    raw = np.array([0.0, 0.5], np.float32)
    params = jnp.concatenate([mean, raw])
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (np.tanh(raw) + 1)
    u = np.array([0.7, -2.5], np.float32)
    np.testing.assert_allclose(
        dist.log_prob(params, jnp.asarray(u)),
        _numpy_tanh_gaussian_log_prob(mean, log_std, u),
        rtol=1e-5,
    )


def test_tanh_gaussian_log_prob_is_finite_for_saturated_actions():
    # |u| = 12 gives tanh(u) == 1.0 in float32; atanh of it would be infinite.
    dist = rl.tanh_gaussian()
    params = jnp.array([0.0, 0.0])
    value = dist.log_prob(params, jnp.array([12.0]))
    assert np.isfinite(value)
    np.testing.assert_allclose(
        value,
        _numpy_tanh_gaussian_log_prob([0.0], [LOG_STD_MIN + 3.5], [12.0]),
        rtol=1e-5,
    )


def test_tanh_gaussian_log_std_is_bounded():
    dist = rl.tanh_gaussian()
    for raw in (-1e6, 1e6):
        params = jnp.array([0.0, raw])
        u = dist.sample(params, jax.random.key(0))
        lp = dist.log_prob(params, u)
        assert np.isfinite(lp)
    assert np.all(np.abs(dist.to_env(jnp.array([100.0, -100.0]))) <= 1.0)


def _raw_log_std(log_std):
    # Inverse of the head's squash of the raw log-std into [LOG_STD_MIN, LOG_STD_MAX].
    half_range = 0.5 * (LOG_STD_MAX - LOG_STD_MIN)
    return np.arctanh((log_std - LOG_STD_MIN) / half_range - 1.0)


def _numpy_squashed_entropy(mean, log_std, num=2_000_000):
    # -∫ p(a) log p(a) da over a in (-1, 1) by the midpoint rule in float64, with
    # p(a) = N(atanh(a); μ, σ²) / (1 - a²), the density of a = tanh(u). For
    # σ <= 1 only: wider, p piles up at |a| -> 1, finer than the grid.
    h = 2.0 / num
    a = -1.0 + h * (np.arange(num) + 0.5)
    u = np.arctanh(a)
    std = np.exp(log_std)
    p = np.exp(-0.5 * ((u - mean) / std) ** 2) / (std * np.sqrt(2 * np.pi))
    p = p / (1.0 - a**2)
    assert abs(p.sum() * h - 1.0) < 1e-6
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -plogp.sum() * h


def test_tanh_gaussian_entropy_matches_a_numerical_integral():
    dist = rl.tanh_gaussian()
    means, log_stds = np.array([0.3, -1.2, 0.0]), np.array([-0.5, -2.0, 0.0])
    params = jnp.asarray(np.concatenate([means, _raw_log_std(log_stds)]), jnp.float32)
    references = [
        _numpy_squashed_entropy(m, s) for m, s in zip(means, log_stds, strict=True)
    ]
    # One action dimension, then three: the entropy of independent dimensions adds.
    one = jnp.asarray([means[0], _raw_log_std(log_stds[0])], jnp.float32)
    np.testing.assert_allclose(dist.entropy(one, None), references[0], atol=1e-4)
    np.testing.assert_allclose(dist.entropy(params, None), sum(references), atol=3e-4)
    # Deterministic: the key changes nothing, so no device split can either.
    keys = jax.random.split(jax.random.key(0), 3)
    values = [dist.entropy(params, k) for k in keys]
    assert values[0] == values[1] == values[2]


def test_tanh_gaussian_entropy_gradient_matches_the_integral():
    dist = rl.tanh_gaussian()
    mean, log_std = 0.3, -0.5
    params = jnp.asarray([mean, _raw_log_std(log_std)], jnp.float32)
    grad = jax.grad(lambda p: dist.entropy(p, None))(params)
    # dH/dμ by central differences of the float64 integral.
    eps = 1e-3
    d_mean = (
        _numpy_squashed_entropy(mean + eps, log_std)
        - _numpy_squashed_entropy(mean - eps, log_std)
    ) / (2 * eps)
    np.testing.assert_allclose(grad[0], d_mean, atol=1e-4)


def test_tanh_gaussian_mode_is_the_mean_and_acts_with_its_tanh():
    dist = rl.tanh_gaussian()
    mean = np.array([[0.3, -2.0], [1.5, 0.0]], np.float32)
    raw = np.array([[0.4, -1.0], [2.0, 0.0]], np.float32)
    params = jnp.asarray(np.concatenate([mean, raw], axis=-1))
    mode = dist.mode(params)
    np.testing.assert_array_equal(mode, mean)
    np.testing.assert_allclose(dist.to_env(mode), np.tanh(mean), rtol=1e-6)
