"""Evaluation counts what the fast suite let change (mutants7_M7A).

A device environment whose episodes have known totals, by hand: non-unit
rewards (a return is not its length), a metric, episodes that end both ways,
and rewards, metrics and steps that go on after the first episode ends. A
host pool stand-in with a metric. The host evaluation seeds and what a host
run's evaluation passes on.
"""

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.env.base import METRICS
from purejaxdrl.env.host.base import HostSpec, HostStep
from purejaxdrl.networks import RecurrentNetwork
from purejaxdrl.observe import evaluation
from purejaxdrl.observe.evaluation import (
    eval_seed,
    host_mode_policy,
    make_evaluate,
    make_host_evaluate,
    play_host,
)
from purejaxdrl.rl.distributions import categorical
from purejaxdrl.rng import make_key
from purejaxdrl.runners.placement import host_env_seed
from purejaxdrl.types import TimeStep

EPISODES = 16


class Ladder(envs.Env):
    """Episodes of L in [2, 7] steps (drawn at each reset); step t of an
    episode pays 0.5 t + action and logs the metric t. An even L terminates,
    an odd one is truncated. The metric `repeat` is 1 on a step whose key is
    the previous step's (a key reused)."""

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box((2,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def _timestep(self, t, length, reward, terminated, truncated, repeat):
        obs = jnp.stack([t, length]).astype(jnp.float32)
        metrics = {"t": t.astype(jnp.float32), "repeat": repeat.astype(jnp.float32)}
        return TimeStep(
            observation=obs,
            reward=jnp.asarray(reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=obs,
            info={METRICS: metrics},
        )

    def reset(self, key, params):
        length = jax.random.randint(key, (), 2, 8)
        no = jnp.bool_(False)
        ts = self._timestep(jnp.int32(0), length, 0.0, no, no, no)
        return (jnp.int32(0), length, jnp.uint32(0)), ts

    def step(self, key, state, action, params):
        t, length, last = state
        bits = jax.random.bits(key, (), jnp.uint32)
        t = t + 1
        end = t >= length
        terminated = end & (length % 2 == 0)
        truncated = end & (length % 2 == 1)
        reward = 0.5 * t + action
        ts = self._timestep(t, length, reward, terminated, truncated, bits == last)
        # Auto-reset: a new episode (and length) after the end.
        new_length = jnp.where(end, jax.random.randint(key, (), 2, 8), length)
        return (jnp.where(end, 0, t), new_length, bits), ts


def odd_steps_network() -> RecurrentNetwork:
    """Its core counts the steps since a reset; the mode plays action 1 on the
    odd counts (1st, 3rd, ... step of the episode), 0 on the even ones."""

    def step(params, count, obs, reset):
        count = jnp.where(reset, 0, count) + 1
        one = (count % 2 == 1).astype(jnp.float32)
        return count, (jnp.stack([1.0 - one, one], -1), jnp.zeros(obs.shape[:1]))

    return RecurrentNetwork(
        init=None,
        initial_state=lambda n: jnp.zeros(n, jnp.int32),
        step=step,
        unroll=None,
        distribution=categorical(),
    )


def _ladder_totals(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(return, sum of t) of `steps` steps of an episode, by hand: step t pays
    0.5 t, plus 1 on the odd steps (ceil(steps / 2) of them)."""
    triangle = steps * (steps + 1) / 2
    return 0.5 * triangle + np.ceil(steps / 2), triangle


@functools.cache
def _evaluate(max_steps: int = 100_000):
    evaluate = make_evaluate(
        Ladder(), odd_steps_network(), episodes=EPISODES, max_steps=max_steps
    )
    return jax.device_get(evaluate(None, (), make_key(0)))


def test_device_first_episodes_return_their_own_rewards_metrics_and_steps():
    result = _evaluate()
    lengths = result.lengths
    # Fresh environments start apart (a reset key each), both ways of ending.
    assert len(set(lengths.tolist())) >= 3, lengths
    assert (lengths % 2 == 0).any() and (lengths % 2 == 1).any(), lengths
    assert np.all((lengths >= 2) & (lengths <= 7)) and result.ended.all()
    returns, t_sums = _ladder_totals(lengths)
    np.testing.assert_allclose(result.returns, returns)
    np.testing.assert_allclose(result.metrics["t"], t_sums)
    # Every step of an episode had a key of its own.
    np.testing.assert_array_equal(result.metrics["repeat"], 0)
    assert result.returns.dtype == np.float32 and result.lengths.dtype == np.int32


def test_device_episodes_cut_at_max_steps_keep_what_they_had():
    whole = _evaluate()
    cut = _evaluate(max_steps=3)
    # The same environments (same key), stopped after 3 steps.
    steps = np.minimum(whole.lengths, 3)
    np.testing.assert_array_equal(cut.lengths, steps)
    returns, t_sums = _ladder_totals(steps)
    np.testing.assert_allclose(cut.returns, returns)
    np.testing.assert_allclose(cut.metrics["t"], t_sums)
    np.testing.assert_array_equal(cut.ended, whole.lengths <= 3)
    assert (whole.lengths == 3).any() and (whole.lengths > 3).any(), whole.lengths


@pytest.mark.parametrize("factory", ["device", "host"])
def test_a_step_cap_of_zero_is_refused(factory):
    with pytest.raises(ValueError, match=r"eval.max_steps=0 must be >= 1"):
        if factory == "device":
            make_evaluate(Ladder(), odd_steps_network(), episodes=2, max_steps=0)
        else:
            make_host_evaluate(
                "gymnasium:CartPole-v1", {}, odd_steps_network(), episodes=2,
                max_steps=0,
            )  # fmt: skip


class _Pool:
    """A synchronous host pool stand-in: environment i's episodes last
    `lengths[i]` steps; each step pays 1 + i and logs the metric 10; the step
    after an episode's end is the reset step (reward 0, `first`). Environment
    0's episodes are truncated, the others terminate."""

    def __init__(self, lengths):
        self.lengths = np.asarray(lengths)
        self.num_envs = self.batch_size = len(lengths)
        self.spec = HostSpec(
            envs.Box((1,)), np.dtype(np.float32), envs.Discrete(2), ("m",)
        )
        self.t = np.zeros(self.num_envs, np.int64)

    def _step(self, reward, ended, first):
        n = self.num_envs
        terminated = ended & (np.arange(n) > 0)
        return HostStep(
            observation=self.t[:, None].astype(np.float32),
            reward=reward.astype(np.float32),
            terminated=terminated,
            truncated=ended & ~terminated,
            first=first,
            env_id=np.arange(n, dtype=np.int32),
            metrics={"m": np.where(first, 0.0, 10.0).astype(np.float32)},
        )

    def reset(self):
        self.t[:] = 0
        return self._step(
            np.zeros(self.num_envs),
            np.zeros(self.num_envs, bool),
            np.ones(self.num_envs, bool),
        )

    def step(self, action):
        first = self.t >= self.lengths  # the step after an end resets
        self.t = np.where(first, 0, self.t + 1)
        reward = np.where(first, 0.0, 1.0 + np.arange(self.num_envs))
        return self._step(reward, self.t == self.lengths, first)

    def close(self):
        pass


def _constant_policy():
    return evaluation.HostModePolicy(
        lambda n: (), lambda params, state, obs: (state, np.zeros(len(obs), np.int32))
    )


def test_host_first_episodes_sum_their_metrics_and_record_their_own_steps():
    result = play_host(_Pool([2, 5, 3]), _constant_policy(), None, 100, record=True)
    # Environment 0's observations (its step count) before each of its 2
    # steps, none after its episode, though the others play on.
    np.testing.assert_array_equal(result.observations, [[0.0], [1.0]])
    np.testing.assert_array_equal(result.lengths, [2, 5, 3])
    np.testing.assert_allclose(result.returns, [2 * 1, 5 * 2, 3 * 3])
    np.testing.assert_allclose(result.metrics["m"], [20, 50, 30])
    assert result.ended.all()  # environment 0's truncation ended it too
    cut = play_host(_Pool([2, 5, 3]), _constant_policy(), None, max_steps=3)
    np.testing.assert_array_equal(cut.lengths, [2, 3, 3])
    np.testing.assert_allclose(cut.metrics["m"], [20, 30, 30])
    np.testing.assert_array_equal(cut.ended, [True, False, True])


def test_host_policy_gets_float32_observations_of_uint8_frames():
    seen = []

    def step(params, state, obs, reset):
        seen.append(obs.dtype)
        return state, (jnp.zeros((*obs.shape[:1], 2)), jnp.zeros(obs.shape[:1]))

    network = RecurrentNetwork(None, lambda n: jnp.zeros(n), step, None, categorical())
    policy = host_mode_policy(network)
    _, action = policy.act(None, policy.initial_state(2), np.zeros((2, 3), np.uint8))
    assert seen == [jnp.float32] and isinstance(action, np.ndarray)


def test_eval_seeds_differ_per_update_and_seed_and_from_the_training_pools():
    # A pool seeded each evaluation alike would score every chunk's policy on
    # the same episodes; EnvPool wants 30 bits (seed + i fits an int32).
    seeds = [eval_seed(seed, updates) for seed in (0, 1) for updates in range(16)]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**30 for s in seeds) and max(seeds) >= 2**29
    # Never a training pool's seed (seed, restart, thread 0..3).
    training = {
        host_env_seed(s, u, t) for s in (0, 1) for u in range(16) for t in range(4)
    }
    assert training.isdisjoint(seeds)


def test_a_host_runs_evaluation_plays_its_config_on_a_pool_per_update(monkeypatch):
    made, played = [], []

    def fake_make(env_id, options, network, *, episodes, max_steps):
        made.append((env_id, options, episodes, max_steps))

        def evaluate(params, seed, record=False):
            played.append((np.asarray(params), seed))
            return evaluation.HostEvalResult(
                np.array([1.0, 3.0], np.float32), np.array([4, 6], np.int32), None,
                {"m": np.array([2.0, 2.0], np.float32)}, np.array([True, False]),
            )  # fmt: skip

        return evaluate

    monkeypatch.setattr(evaluation, "make_host_evaluate", fake_make)
    config = types.SimpleNamespace(
        env=types.SimpleNamespace(id="gymnasium:X", options={"a": 1}),
        eval=types.SimpleNamespace(episodes=2, max_steps=77),
        seed=5,
    )
    ready = evaluation.host_evaluation(config, None, None, None)
    state = types.SimpleNamespace(agent=types.SimpleNamespace(params=jnp.arange(3.0)))
    run = ready.compile()
    first, second = run(state, 4), run(state, 9)
    assert made == [("gymnasium:X", {"a": 1}, 2, 77)]
    assert [seed for _, seed in played] == [eval_seed(5, 4), eval_seed(5, 9)]
    np.testing.assert_array_equal(played[0][0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(first.returns, [1.0, 3.0])
    np.testing.assert_array_equal(first.lengths, [4, 6])
    np.testing.assert_array_equal(second.ended, [True, False])
    np.testing.assert_array_equal(second.metrics["m"], [2.0, 2.0])


@pytest.mark.parametrize(("episodes", "max_steps"), [(0, 10), (-1, 10), (1, 0)])
def test_the_evaluation_refuses_no_episodes_or_steps(episodes, max_steps):
    # The public entry points refuse these first; the factories' own guard
    # is what a new caller meets.
    with pytest.raises(ValueError, match="must be >= 1"):
        evaluation._check_counts(episodes, max_steps)
    evaluation._check_counts(1, 1)
