"""Evaluation on host environments: first episodes only, checked against Gymnasium
stepped by hand; evaluation during a host run's training."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.host.base import HostStep
from purejaxdrl.env.host.envpool import env_seeds
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.evaluation import (
    HostModePolicy,
    eval_seed,
    evaluate_host,
    play_host,
)
from purejaxdrl.rl.distributions import categorical

gym = pytest.importorskip("gymnasium")
pytest.importorskip("envpool")

# A hand-made policy: logits = obs @ W, so the mode pushes the cart toward the
# pole's lean (action 1, right, when the angle is positive). With a 40-step
# limit it keeps some poles up to the limit (truncation) and drops others
# sooner (termination): environments whose episodes end first run on, reset,
# while the others finish theirs.
W = np.array([[0, 0], [0, 0], [-1, 1], [0, 0]], np.float32)
LIMIT = 40


def lean_network() -> Network:
    """A stand-in for networks.Network: `apply` gives logits, the mode acts."""

    def apply(params, obs):
        return obs @ params, jnp.zeros(obs.shape[:-1])

    return Network(init=None, apply=apply, distribution=categorical())


def lean(obs, t):
    return int(np.argmax(obs @ W))


def by_hand(seed: int, episodes: int, max_steps: int = 10_000, choose=lean):
    """Gymnasium's CartPole stepped one environment at a time with W's action
    (or `choose(obs, step)`'s), seeded as the adapter seeds environment i
    (`env_seeds`)."""
    returns, lengths, first_observations = [], [], []
    for i, env_seed in enumerate(env_seeds(seed, episodes)):
        env = gym.make("CartPole-v1", max_episode_steps=LIMIT)
        obs, _ = env.reset(seed=env_seed)
        total, steps = 0.0, 0
        while steps < max_steps:
            if i == 0:
                first_observations.append(obs)
            obs, reward, terminated, truncated, _ = env.step(choose(obs, steps))
            total, steps = total + reward, steps + 1
            if terminated or truncated:
                break
        returns.append(total)
        lengths.append(steps)
    return np.array(returns), np.array(lengths), first_observations


def counting_network() -> RecurrentNetwork:
    """A recurrent stand-in whose state counts the steps of its episode: it
    plays W's action, but the other one every third step."""

    def step(params, count, obs, reset):
        count = jnp.where(reset, 0, count) + 1
        logits = obs @ params
        logits = jnp.where((count % 3 == 0)[:, None], logits[:, ::-1], logits)
        return count, (logits, jnp.zeros(obs.shape[:1]))

    return RecurrentNetwork(
        init=None,
        initial_state=lambda n: jnp.zeros(n, jnp.int32),
        step=step,
        unroll=None,
        distribution=categorical(),
    )


def evaluate(env_id: str, network=None, **kwargs):
    return evaluate_host(
        env_id,
        {"max_episode_steps": LIMIT},
        network or lean_network(),
        jnp.asarray(W),
        **{"episodes": 8, "seed": 3, "max_steps": 1000, **kwargs},
    )


def test_first_episodes_match_gymnasium_stepped_by_hand():
    returns, lengths, observations = by_hand(seed=3, episodes=8)
    # Both ways of ending occur, so some environments reset and run on while
    # others are still in their first episode.
    assert (lengths == LIMIT).any() and (lengths < LIMIT).any(), lengths
    result = evaluate("gymnasium:CartPole-v1", record=True)
    np.testing.assert_array_equal(result.lengths, lengths)
    np.testing.assert_array_equal(result.returns, returns)
    assert result.returns.dtype == np.float32 and result.lengths.dtype == np.int32
    # Environment 0's observations before each step of its episode.
    assert len(result.observations) == lengths[0]
    np.testing.assert_array_equal(np.stack(result.observations), observations)
    assert evaluate("gymnasium:CartPole-v1").observations is None


def test_a_recurrent_policy_carries_its_state_through_the_episode():
    def every_third_other(obs, t):  # t: steps taken before this one
        return 1 - lean(obs, t) if (t + 1) % 3 == 0 else lean(obs, t)

    returns, lengths, _ = by_hand(seed=3, episodes=8, choose=every_third_other)
    # It plays differently from W's policy (as it would from a zero state
    # at every step).
    assert not np.array_equal(lengths, by_hand(seed=3, episodes=8)[1])
    for env_id in ("gymnasium:CartPole-v1", "envpool:CartPole-v1"):
        result = evaluate(env_id, counting_network())
        np.testing.assert_array_equal(result.lengths, lengths)
        np.testing.assert_array_equal(result.returns, returns)


def test_max_steps_cuts_episodes_with_what_they_have_so_far():
    returns, lengths, _ = by_hand(seed=3, episodes=8, max_steps=20)
    assert (lengths == 20).any()
    result = evaluate("gymnasium:CartPole-v1", max_steps=20)
    np.testing.assert_array_equal(result.lengths, lengths)
    np.testing.assert_array_equal(result.returns, returns)
    # Cut: the episodes that had not ended by step 20 (stepped by hand with
    # no cap), not every one that reached it.
    whole = by_hand(seed=3, episodes=8)[1]
    np.testing.assert_array_equal(result.ended, whole <= 20)


def test_episodes_the_environment_ends_on_the_capped_step_are_not_cut():
    # The environment truncates its own episodes at LIMIT: with the cap at
    # LIMIT too, those episodes ended by themselves; none was cut.
    _, lengths, _ = by_hand(seed=3, episodes=8)
    result = evaluate("gymnasium:CartPole-v1", max_steps=LIMIT)
    np.testing.assert_array_equal(result.lengths, lengths)
    assert (lengths == LIMIT).any() and result.ended.all(), result
    result = evaluate("envpool:CartPole-v1", max_steps=LIMIT)  # seeded otherwise
    assert (result.lengths == LIMIT).any() and result.ended.all(), result


def test_envpool_counts_first_episodes_only_and_repeats_with_its_seed():
    result = evaluate("envpool:CartPole-v1")
    # CartPole pays 1 per step; no environment counts past its first
    # episode's end (at most the 40-step limit), whatever it plays after.
    np.testing.assert_array_equal(result.returns, result.lengths)
    assert np.all((result.lengths >= 1) & (result.lengths <= LIMIT))
    again = evaluate("envpool:CartPole-v1")
    np.testing.assert_array_equal(again.lengths, result.lengths)


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="eval.episodes=0"):
        evaluate("gymnasium:CartPole-v1", episodes=0)


def _host_run(**overrides):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "impala").config,
        {
            "env": {"id": "envpool:CartPole-v1"},
            "total_steps": 32 * 16 * 4,
            "num_logs": 4,
            "devices": 1,
            "host": {"deterministic": True},
            **overrides,
        },
    )
    return config, pjd.train(config)


@pytest.mark.timeout(180)
def test_host_runs_evaluate_during_training_and_stop_at_works():
    config, result = _host_run(eval={"episodes": 4, "every": 1})
    assert len(result.history) == 4
    for record in result.history:
        assert 1 <= record["eval/mean_return"] <= 500
        assert record["eval/mean_length"] == record["eval/mean_return"]
    assert result.eval_return == result.history[-1]["eval/mean_return"]
    # The last evaluation played the final learner parameters on a pool
    # seeded from (seed, updates done).
    params = result.state.agent.params
    network, _ = algorithm("impala").make_networks(
        config.impala, config.network, Box((4,)), Discrete(2)
    )
    final = evaluate_host(
        config.env.id,
        {},
        network,
        jax.tree.map(np.asarray, params),
        episodes=4,
        seed=eval_seed(config.seed, result.updates),
        max_steps=config.eval.max_steps,
    )
    assert np.mean(final.returns) == result.eval_return
    # Evaluation plays its own environments: deterministic training is the
    # same without it.
    _, plain = _host_run()
    assert all("eval/mean_return" not in r for r in plain.history)
    same = np.testing.assert_array_equal
    jax.tree.map(same, params, plain.state.agent.params)
    # eval.stop_at stops the run after the evaluation that reaches it.
    _, stopped = _host_run(eval={"episodes": 4, "every": 1, "stop_at": 0.0})
    assert stopped.stopped_by.startswith("eval.stop_at (")
    assert len(stopped.history) == 1 and stopped.updates == 1


class _LivesEnv:
    """One scripted environment of 2 lives: rewards 1, 2 (life lost), the
    reset step, 4 (game over), then 100 more: the first game returns 7."""

    num_envs = 1

    class spec:  # noqa: N801 - the attribute `play_host` reads
        metrics = ()

    def reset(self):
        self.t = 0
        return self._row(0.0, first=True)

    def step(self, action):
        self.t += 1
        # (reward, terminated, life_lost, first) of step t; then rewards of 100.
        script = {
            1: (1.0, False, False, False),
            2: (2.0, True, True, False),  # a life lost: learning's episode ends
            3: (0.0, False, False, True),  # its reset step
            4: (4.0, True, False, False),  # the game's end
        }
        return self._row(*script.get(self.t, (100.0, False, False, False)))

    def _row(self, reward, terminated=False, lost=False, first=False):
        one = lambda x, t=bool: np.array([x], t)  # noqa: E731
        return HostStep(
            one(float(self.t), np.float32)[:, None],
            one(reward, np.float32),
            one(terminated),
            one(False),
            one(first),
            one(0, np.int32),
            life_lost=one(lost),
        )


def test_an_evaluated_episode_runs_on_across_a_lost_life():
    # EnvPool's episodic_life: the evaluation's episode is the game, so its
    # return sums both lives (1 + 2 + 4) and its length counts their three
    # transitions, not the reset step between them.
    policy = HostModePolicy(
        lambda n: (), lambda p, s, o: (s, np.zeros(len(o), np.int32))
    )
    result = play_host(_LivesEnv(), policy, None, max_steps=20)
    assert result.returns.tolist() == [7.0] and result.lengths.tolist() == [3]
    assert result.ended.tolist() == [True]
