"""PBT's operators: ranking by hand, exploit against a NumPy gather, explore's law."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.parallel import make_sweep_mesh
from purejaxdrl.sweeps.compiled import make_programs, stack_hps
from purejaxdrl.sweeps.pbt.operators import (
    ExploredField,
    PBTConfig,
    bottom_count,
    choose_parents,
    exploit,
    explore,
    learner_mask,
    least_population,
    non_finite_members,
    perturbed,
    ready_step,
    recent_return,
)


def test_recent_return_is_nan_without_episodes():
    scores = recent_return(jnp.float32([10.0, 0.0, 9.0]), jnp.float32([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(scores, np.float32([5.0, np.nan, 3.0]))


def test_parents_by_hand():
    # Eight members and two of padding; quantile 0.25 of 8: k = 2.
    # Ascending: member 4 (NaN: no episode) 1 (ties with 7, lower index first)
    # 7, 0, 2, 3, 6, 5. Bottom: 4, 1; top: 6, 5.
    scores = jnp.float32([3, 1, 4, 5, np.nan, 9, 6, 1, 100, 100])
    parents = np.asarray(choose_parents(jax.random.key(0), scores, 8, 0.25))
    assert parents.dtype == np.int32
    unchanged = [0, 2, 3, 5, 6, 7, 8, 9]
    np.testing.assert_array_equal(parents[unchanged], unchanged)
    assert set(parents[[4, 1]]) <= {5, 6}
    # Over many keys each bottom member picks either top member.
    keys = jax.random.split(jax.random.key(1), 40)
    picks = jax.vmap(lambda k: choose_parents(k, scores, 8, 0.25))(keys)
    picks = np.asarray(picks)
    assert set(picks[:, 4]) == set(picks[:, 1]) == {5, 6}


def test_no_copy_without_evidence_that_the_parent_is_better():
    keys = jax.random.split(jax.random.key(2), 40)

    def parents(scores, quantile):
        choose = lambda k: choose_parents(k, jnp.float32(scores), 4, quantile)  # noqa: E731
        return np.asarray(jax.vmap(choose)(keys))

    # No member scored, or all scored the same: nobody copies anybody.
    assert (parents([np.nan] * 4, 0.5) == np.arange(4)).all()
    assert (parents([500.0] * 4, 0.5) == np.arange(4)).all()
    # Only member 3 scored: the bottom two (0, 1) copy it when they pick it,
    # never member 2, which ended no episode either; 2 and 3 are the top.
    picks = parents([np.nan, np.nan, np.nan, 5.0], 0.5)
    assert set(picks[:, 0]) == {0, 3} and set(picks[:, 1]) == {1, 3}
    np.testing.assert_array_equal(picks[:, 2:], [[2, 3]] * 40)


def test_a_diverged_member_ranks_last_and_is_never_a_parent():
    # Member 0's parameters are NaN, yet its episodes end with the best
    # return (30): unmasked, member 1 (10) would copy it about half the time.
    scores = jnp.float32([30, 10, 20, 25])
    diverged = jnp.array([True, False, False, False])
    keys = jax.random.split(jax.random.key(0), 40)
    choose = lambda k, bad: choose_parents(k, scores, 4, 0.25, bad)  # noqa: E731
    picks = np.asarray(jax.vmap(choose, in_axes=(0, None))(keys, diverged))
    # Ranked 0 (last), 1, 2, 3: member 0 copies the top one, 3; nobody copies 0.
    np.testing.assert_array_equal(picks, [[3, 1, 2, 3]] * 40)
    # Three diverged, quantile 0.5: the bottom (0, 1) pick from the top (2,
    # 3), and copy only the healthy 3, never the diverged 2 (its score is 80).
    three = jnp.array([True, True, True, False])
    scores = jnp.float32([50, 99, 80, 25])
    picks = np.asarray(
        jax.vmap(lambda k: choose_parents(k, scores, 4, 0.5, three))(keys)
    )
    assert set(picks[:, 0]) == {0, 3} and set(picks[:, 1]) == {1, 3}
    np.testing.assert_array_equal(picks[:, 2:], [[2, 3]] * 40)


def test_non_finite_members_follows_the_hosts_rule():
    # The host's first_non_finite: a NaN or infinite metric, or a positive
    # count of the environment's non-finite outputs; episode sums skipped.
    metrics = {
        "loss": jnp.float32([[0, 1], [0, np.nan], [0, 0], [0, 0], [0, 0]]),
        "non_finite/reward": jnp.float32([[0, 0], [0, 0], [0, 2], [0, 0], [0, 0]]),
        "episode/return_sum": jnp.float32([[0, 0]] * 3 + [[np.inf, 0], [0, 0]]),
        "entropy": jnp.float32([[0, 0], [0, 0], [0, 0], [0, 0], [-np.inf, 0]]),
    }
    np.testing.assert_array_equal(
        non_finite_members(metrics), [False, True, True, False, True]
    )


def test_the_quantile_counts_members_without_float_shortfall():
    scores = jnp.arange(100, dtype=jnp.float32)
    parents = np.asarray(choose_parents(jax.random.key(0), scores, 100, 0.29))
    moved = np.flatnonzero(parents != np.arange(100))
    np.testing.assert_array_equal(moved, np.arange(29))  # 0.29 x 100 = 29
    assert parents[moved].min() >= 71


@pytest.mark.parametrize(
    ("quantile", "least"), [(0.25, 4), (0.2, 5), (0.3, 4), (0.5, 2), (1 / 3, 3)]
)
def test_the_least_population_that_exploits_by_hand(quantile, least):
    # By hand: 0.3 x 3 = 0.9 holds no member, 0.3 x 4 = 1.2 holds one; 1/3 x 3
    # falls short of 1 in floats and still counts one.
    assert least_population(quantile) == least
    assert bottom_count(quantile, least) == 1
    assert bottom_count(quantile, least - 1) == 0


def test_no_exploit_below_one_member_per_quantile():
    scores = jnp.float32([1, 2, 3])
    parents = choose_parents(jax.random.key(0), scores, 3, 0.25)  # int(0.75) = 0
    np.testing.assert_array_equal(parents, [0, 1, 2])


def _population(algo: str, members: int, **overrides):
    """A random-valued population state of `algo` on CartPole, and its specs."""
    config = pjd.load_preset("cartpole", algo).config
    config = pjd.apply_overrides(config, {"devices": 1, **overrides})
    programs = make_programs(config, make_sweep_mesh(1, 1))
    rng = np.random.default_rng(0)

    def fill(shape):
        full = (members, *shape.shape)
        if jax.dtypes.issubdtype(shape.dtype, jax.dtypes.prng_key):
            keys = jax.random.split(jax.random.key(7), int(np.prod(full)))
            return keys.reshape(full)
        if np.issubdtype(shape.dtype, np.floating):
            return rng.standard_normal(full).astype(shape.dtype)
        if shape.dtype == np.bool_:
            return rng.random(full) < 0.5
        return rng.integers(0, 1000, full).astype(shape.dtype)

    states = jax.tree.map(fill, programs.state_shapes)
    hps = stack_hps([config] * members)
    hps = jax.tree.map(lambda x: rng.random(x.shape).astype(np.float32), hps)
    return config, programs, hps, states


def _copied_by_path(path: str, keep_buffer: bool) -> bool:
    """Which leaves PBT's exploit copies, written from the leaf's path."""
    if path.startswith(".agent"):
        return not (keep_buffer and ".buffer" in path)
    return path.startswith(".env_params") and ".obs_stats" in path


def _as_numpy(x):
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(x))
    return np.asarray(x)


@pytest.mark.parametrize(
    ("algo", "keep_buffer", "overrides"),
    [
        ("ppo", False, {"env": {"normalize_observations": True}}),
        ("dqn", False, {}),
        ("dqn", True, {}),
    ],
)
def test_exploit_copies_exactly_the_learner_state(algo, keep_buffer, overrides):
    _, programs, hps, states = _population(algo, 5, **overrides)
    parents = np.int32([3, 1, 2, 3, 0])
    mask = learner_mask(states, programs.specs.agent, keep_buffer=keep_buffer)
    gather = jax.jit(lambda h, s, p: exploit(h, s, p, mask))
    new_hps, new_states = gather(hps, states, jnp.asarray(parents))
    leaves = jax.tree_util.tree_flatten_with_path(states)[0]
    new_leaves = jax.tree.leaves(new_states)
    assert len(leaves) == len(new_leaves)
    copied_paths = []
    for (path, before), after in zip(leaves, new_leaves, strict=True):
        name = jax.tree_util.keystr(path)
        before, after = _as_numpy(before), _as_numpy(after)
        if _copied_by_path(name, keep_buffer):
            copied_paths.append(name)
            np.testing.assert_array_equal(after, before[parents], err_msg=name)
        else:
            np.testing.assert_array_equal(after, before, err_msg=name)
    assert any(".params" in p for p in copied_paths)
    assert any(".opt_state" in p for p in copied_paths)
    if "normalize_observations" in str(overrides):
        assert any(".obs_stats" in p for p in copied_paths)
    if algo == "dqn":
        assert any(".buffer" in p for p in copied_paths) != keep_buffer
    for field in dataclasses.fields(hps):
        if not field.metadata.get("static"):
            got = getattr(new_hps, field.name)
            np.testing.assert_array_equal(got, getattr(hps, field.name)[parents])


FIELDS = (
    ExploredField("learning_rate", "loguniform", 1e-5, 1e-2),
    ExploredField("entropy_cost", "uniform", 0.0, 0.05),
)


def _hps(n: int):
    config = pjd.load_preset("cartpole").config
    hps = stack_hps([config] * n)
    lr = np.geomspace(1e-5, 1e-2, n).astype(np.float32)
    return dataclasses.replace(
        hps, learning_rate=lr, entropy_cost=np.full(n, 0.045, np.float32)
    )


def test_explore_without_resampling_moves_by_a_factor_and_clips():
    n = 4000
    hps = _hps(n)
    copied = np.arange(n) % 2 == 0
    config = PBTConfig(resample_probability=0.0)
    new = jax.jit(explore, static_argnums=(3, 4))(
        jax.random.key(1), hps, jnp.asarray(copied), FIELDS, config
    )
    for field in FIELDS:
        old = np.asarray(getattr(hps, field.name), np.float32)
        got = np.asarray(getattr(new, field.name))
        np.testing.assert_array_equal(got[~copied], old[~copied])
        if field.kind == "loguniform":
            down, up = old * np.float32(0.8), old * np.float32(1.25)
        else:  # 0.8 and 1.25 move it 20% of the space, down or up
            step = 0.2 * (field.high - field.low)
            down, up = old - step, old + step
        down = np.clip(down, field.low, field.high)
        up = np.clip(up, field.low, field.high)
        is_down = np.isclose(got, down, rtol=1e-6, atol=0)
        is_up = np.isclose(got, up, rtol=1e-6, atol=0)
        assert np.all((is_down | is_up)[copied]), field.name
        assert np.all((got >= field.low) & (got <= field.high)), field.name
        # Each factor about half of the time (n/2 copied: 3 sigma is ~4%).
        share_up = np.mean(is_up[copied] & ~is_down[copied])
        assert 0.45 < share_up < 0.55, (field.name, share_up)
    # 0.045 + 0.2 x 0.05 is past the upper bound 0.05: clipped to it.
    assert np.asarray(new.entropy_cost).max() == np.float32(0.05)


@pytest.mark.parametrize(
    ("field", "value", "perturb", "expected"),
    [
        # By hand: a loguniform field is multiplied.
        (ExploredField("learning_rate", "loguniform", 1e-5, 1e-2), 1e-3,
         (0.8, 1.25), (8e-4, 1.25e-3)),
        # A uniform one moves (f - 1) / max(f, 1) of its width 0.099:
        # 0.8 -> -0.2 x 0.099 = -0.0198, 1.25 -> +0.2 x 0.099 = +0.0198.
        (ExploredField("gamma", "uniform", 0.9, 0.999), 0.95,
         (0.8, 1.25), (0.9302, 0.9698)),
        # The paper's 1.2 -> +(0.2 / 1.2) x 0.099 = +0.0165.
        (ExploredField("gamma", "uniform", 0.9, 0.999), 0.95,
         (0.8, 1.2), (0.9302, 0.9665)),
        # Clipped to the space: 0.99 + 0.0198 and 0.91 - 0.0198.
        (ExploredField("gamma", "uniform", 0.9, 0.999), 0.99,
         (0.8, 1.25), (0.9702, 0.999)),
        (ExploredField("gamma", "uniform", 0.9, 0.999), 0.91,
         (0.8, 1.25), (0.9, 0.9298)),
    ],
)  # fmt: skip
def test_perturbed_by_hand(field, value, perturb, expected):
    values = jnp.full(2, value, jnp.float32)
    got = perturbed(values, jnp.asarray([False, True]), field, perturb)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_a_discount_near_one_no_longer_always_lands_on_a_bound():
    # Multiplying any gamma in [0.9, 0.999] by 0.8 or 1.25 leaves the space,
    # so every perturb move used to clip to 0.9 or 0.999.
    field = ExploredField("gamma", "uniform", 0.9, 0.999)
    n = 1000
    old = np.linspace(0.9, 0.999, n).astype(np.float32)
    hps = dataclasses.replace(_hps(n), gamma=old)
    config = PBTConfig(resample_probability=0.0)
    new = explore(jax.random.key(4), hps, jnp.ones(n, bool), (field,), config)
    got = np.asarray(new.gamma)
    # The reference, in float64: old -/+ 0.2 x 0.099, clipped.
    down = np.clip(old.astype(np.float64) - 0.0198, 0.9, 0.999)
    up = np.clip(old.astype(np.float64) + 0.0198, 0.9, 0.999)
    on_down = np.isclose(got, down, rtol=0, atol=1e-6)
    on_up = np.isclose(got, up, rtol=0, atol=1e-6)
    assert np.all(on_down | on_up)
    assert 0.45 < np.mean(on_up) < 0.55
    # Only values within one step of a bound reach it: 0.0198 / 0.099 = 20%
    # of the space at each end, and half of those move towards it.
    on_bound = np.isclose(got, 0.9, atol=1e-7) | np.isclose(got, 0.999, atol=1e-7)
    assert 0.15 < np.mean(on_bound) < 0.25
    inner = (old > 0.9 + 0.0199) & (old < 0.999 - 0.0199)
    assert not on_bound[inner].any()


def test_explore_resamples_from_the_space_with_its_probability():
    n = 4000
    hps = _hps(n)
    hps = dataclasses.replace(hps, learning_rate=np.full(n, 1e-3, np.float32))
    copied = np.ones(n, bool)
    config = PBTConfig(resample_probability=0.3)
    new = explore(jax.random.key(2), hps, jnp.asarray(copied), FIELDS, config)
    lr = np.asarray(new.learning_rate)
    perturbed = np.isclose(lr, 8e-4, rtol=1e-6) | np.isclose(lr, 1.25e-3, rtol=1e-6)
    assert 0.27 < np.mean(~perturbed) < 0.33
    fresh = lr[~perturbed]
    assert fresh.min() >= 1e-5 and fresh.max() <= 1e-2
    # Log-uniform: about a third of the draws in each decade of [1e-5, 1e-2].
    decades = np.histogram(np.log10(fresh), bins=[-5, -4, -3, -2])[0] / fresh.size
    np.testing.assert_allclose(decades, 1 / 3, atol=0.06)


def test_ready_step_explores_exactly_the_copied_members():
    _, programs, hps, states = _population("ppo", 8)
    hps = dataclasses.replace(
        hps, learning_rate=np.geomspace(1e-4, 1e-3, 8).astype(np.float32)
    )
    scores = jnp.float32([8, 7, 6, 5, 4, 3, 2, 1])  # members 7, 6 are the bottom
    step = jax.jit(
        ready_step,
        static_argnames=("agent_spec", "fields", "num_members", "config"),
    )
    new_hps, _, parents = step(
        jax.random.key(3),
        hps,
        states,
        scores,
        agent_spec=programs.specs.agent,
        fields=FIELDS[:1],
        num_members=8,
        config=PBTConfig(quantile=0.25, resample_probability=0.0),
    )
    parents = np.asarray(parents)
    assert set(parents[[6, 7]]) <= {0, 1}
    np.testing.assert_array_equal(parents[:6], np.arange(6))
    lr, new_lr = np.asarray(hps.learning_rate), np.asarray(new_hps.learning_rate)
    np.testing.assert_array_equal(new_lr[:6], lr[:6])
    for i in (6, 7):
        assert np.isclose(new_lr[i], lr[parents[i]] * np.float32([0.8, 1.25])).any()
    # Unexplored fields: the parent's.
    np.testing.assert_array_equal(new_hps.gamma, np.asarray(hps.gamma)[parents])


def test_a_member_that_copies_a_healthy_one_is_no_longer_diverged():
    # Member 0 diverged at update 3 and copies member 3's learner at the
    # ready step of update 8: it goes on from a healthy state. Member 1
    # copies member 2, which diverged at 5: it has diverged since 5.
    from purejaxdrl.sweeps.pbt.lineage import PBTResult
    from purejaxdrl.sweeps.pbt.train import _record_ready

    result = PBTResult(
        base=pjd.TrainConfig(), fields=(), config=PBTConfig(), population=4,
        histories=[[] for _ in range(4)], diverged=[3, None, 5, None],
        lineage=[], final_params=[None] * 4,
    )  # fmt: skip
    said = []
    step = (8, np.array([3, 2, 2, 3]), np.array([np.nan, 1.0, 2.0, 9.0]), {})
    _record_ready(result, step, said.append)
    assert result.diverged == [None, 5, 5, None]
    assert said == ["pbt: update 8: members copied (member<-parent) 0<-3, 1<-2"]
