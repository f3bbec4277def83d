"""Host-env steps to Transitions: no reset step ever enters a batch."""

import numpy as np

from purejaxdrl.env.host.base import HostStep
from purejaxdrl.runners.trajectories import PolicyOut, TrajectoryBuilder


def _step(obs, reward=0.0, terminated=False, truncated=False, first=False, ids=(0,)):
    n = len(ids)
    return HostStep(
        observation=np.array(obs, np.float32).reshape(n, 1),
        reward=np.full(n, reward, np.float32),
        terminated=np.full(n, terminated),
        truncated=np.full(n, truncated),
        first=np.full(n, first),
        env_id=np.array(ids, np.int32),
    )


def _add(builder, step, action, version):
    # The policy's value of an observation x is x + 0.5; log-prob -action.
    value = step.observation[:, 0] + 0.5
    out = PolicyOut(
        None, np.array([action]), -np.array([action], np.float32), value, ()
    )
    builder.add(step, out, version)


def test_one_environment_by_hand():
    builder = TrajectoryBuilder(1, 2, (1,), np.float32, (), np.int32)
    stream = [
        _step([0], first=True),  # reset
        _step([1], reward=1.0),
        _step([2], reward=2.0, truncated=True),  # the true final observation
        _step([100], first=True),  # reset step: its action (12) was ignored
        _step([101], reward=3.0, terminated=True),
        _step([200], first=True),  # reset step: action 14 ignored
        _step([201], reward=4.0),
    ]
    batches = []
    for i, step in enumerate(stream):
        _add(builder, step, 10 + i, version=i)
        if builder.ready():
            batches.append(builder.take())
    assert len(batches) == 2
    first, second = (b.transitions for b in batches)
    col = lambda x: np.asarray(x)[:, 0].tolist()  # noqa: E731
    assert col(first.observation[..., 0]) == [0, 1]
    assert col(first.action) == [10, 11]
    assert col(first.log_prob) == [-10, -11]
    assert col(first.value) == [0.5, 1.5]
    assert col(first.reward) == [1, 2]
    assert col(first.discount) == [1, 1]
    assert col(first.truncated) == [False, True]
    assert col(first.final_observation[..., 0]) == [1, 2]
    # Truncation bootstraps from V(final observation) = 2.5, from the reset
    # step's inference on it.
    assert col(first.bootstrap_value) == [1.5, 2.5]
    assert col(batches[0].versions) == [0, 1]
    # The reset steps (actions 12 and 14) are in no batch.
    assert col(second.observation[..., 0]) == [100, 200]
    assert col(second.action) == [13, 15]
    assert col(second.reward) == [3, 4]
    assert col(second.discount) == [0, 1]  # terminated: discount 0 ...
    assert col(second.bootstrap_value) == [0, 201.5]  # ... and no bootstrap
    assert col(second.final_observation[..., 0]) == [101, 201]
    assert batches[0].episodes == {
        "episode/count": 1.0,
        "episode/return_sum": 3.0,
        "episode/length_sum": 2.0,
        "actor/dropped": 0.0,
    }
    assert batches[1].episodes["episode/length_sum"] == 1.0
    # Its own return alone: the first episode's 3 restarted at 0 (not 3 + 3).
    assert batches[1].episodes["episode/return_sum"] == 3.0


def test_an_environments_own_metrics_are_summed_per_episode():
    # Two environments; "hits" counted per transition, reset steps' ignored.
    builder = TrajectoryBuilder(2, 2, (1,), np.float32, (), np.int32, metrics=("hits",))

    def step(reward, hits, terminated=(False, False), first=(False, False)):
        out = _step([[0], [0]], ids=(0, 1))._replace(
            reward=np.float32(reward),
            terminated=np.array(terminated),
            first=np.array(first),
            metrics={"hits": np.float32(hits)},
        )
        return out

    stream = [
        step([0, 0], [9, 9], first=(True, True)),  # reset: its metrics are none
        step([1, 1], [1, 2]),
        step([1, 1], [3, 0], terminated=(True, False)),  # env 0: hits 1 + 3
        step([0, 1], [9, 5], first=(True, False)),  # env 0 resets: 9 ignored
    ]
    for i, s in enumerate(stream):
        zeros = np.zeros(2, np.float32)
        builder.add(s, PolicyOut(None, np.zeros(2, np.int32), zeros, zeros, ()), i)
    assert builder.ready()
    episodes = builder.take().episodes
    assert episodes["episode/count"] == 1.0 and episodes["episode/return_sum"] == 2.0
    assert episodes["episode/env/hits_sum"] == 4.0
    assert builder.episode_metrics["hits"].tolist() == [0.0, 7.0]  # env 1: open


def _reference(events, num_envs, length):
    """Per-environment lists, the definition written out step by step.

    A batch takes `length` transitions of every column once each holds them;
    a column then more than a batch ahead loses its oldest transitions.
    """
    columns = {i: [] for i in range(num_envs)}
    taken = {i: [] for i in range(num_envs)}
    last = {}

    def take():
        while min(len(c) for c in columns.values()) >= length:
            for env, column in columns.items():
                taken[env] += column[:length]
                columns[env] = column[length:][-length:]

    for step, action, value in events:
        take()
        for row, env in enumerate(step.env_id.tolist()):
            if not step.first[row]:
                obs, act, v = last[env]
                ended = step.terminated[row] or step.truncated[row]
                disc = 0.0 if step.terminated[row] else 1.0
                columns[env].append(
                    (
                        obs,
                        act,
                        v,
                        step.reward[row],
                        disc,
                        step.truncated[row],
                        step.observation[row, 0],
                        value[row] * disc,
                    )
                )
                del last[env]
                if ended:
                    continue
            last[env] = (step.observation[row, 0], action[row], value[row])
    take()
    return taken


def test_random_streams_with_asynchronous_rows_match_the_reference():
    rng = np.random.default_rng(0)
    num_envs, length = 3, 4
    builder = TrajectoryBuilder(num_envs, length, (1,), np.float32, (), np.int32)
    events, batches, ended, dropped = [], [], np.ones(num_envs, bool), 0
    obs = 0.0
    for _ in range(200):
        ids = np.sort(rng.choice(num_envs, size=2, replace=False))  # async subset
        first = ended[ids]
        end = rng.random(2) < 0.2
        terminated = end & (rng.random(2) < 0.5) & ~first
        truncated = end & ~terminated & ~first
        ended[ids] = terminated | truncated
        obs += 1
        step = HostStep(
            np.arange(obs, obs + 2, dtype=np.float32)[:, None],
            rng.random(2).astype(np.float32) * ~first,
            terminated,
            truncated,
            first,
            ids.astype(np.int32),
        )
        obs += 2
        action = rng.integers(0, 100, 2)
        value = rng.random(2).astype(np.float32)
        events.append((step, action, value))
        builder.add(
            step, PolicyOut(None, action, np.zeros(2, np.float32), value, ()), 0
        )
        while builder.ready():
            batch = builder.take()
            batches.append(batch.transitions)
            dropped += batch.episodes["actor/dropped"]
    assert dropped > 0  # the reference's drops are exercised
    reference = _reference(events, num_envs, length)
    assert batches and len(reference[0]) == len(batches) * length
    for env in range(num_envs):
        got = [
            (
                float(b.observation[t, env, 0]),
                int(b.action[t, env]),
                float(b.value[t, env]),
                float(b.reward[t, env]),
                float(b.discount[t, env]),
                bool(b.truncated[t, env]),
                float(b.final_observation[t, env, 0]),
                float(b.bootstrap_value[t, env]),
            )
            for b in batches
            for t in range(length)
        ]
        want = [
            tuple(
                float(x) if not isinstance(x, (bool, np.bool_)) else bool(x) for x in r
            )
            for r in reference[env]
        ]
        want = [(w[0], int(w[1]), *w[2:]) for w in want]
        np.testing.assert_allclose(
            np.array([g[:5] + g[6:] for g in got], float),
            np.array([w[:5] + w[6:] for w in want], float),
            rtol=1e-6,
        )
        assert [g[5] for g in got] == [w[5] for w in want]


def test_termination_bootstraps_zero_even_from_a_non_finite_value():
    # The terminal observation is inf, so its value (obs + 0.5) is inf: a
    # terminated transition bootstraps from nothing, 0, never inf * 0 = NaN.
    builder = TrajectoryBuilder(1, 2, (1,), np.float32, (), np.int32)
    stream = [
        _step([0], first=True),
        _step([1.5], reward=1.0),
        _step([np.inf], reward=2.0, terminated=True),
    ]
    for i, step in enumerate(stream):
        _add(builder, step, 10 + i, version=i)
    assert builder.ready()
    batch = builder.take().transitions
    np.testing.assert_array_equal(batch.discount[:, 0], [1.0, 0.0])
    np.testing.assert_array_equal(batch.bootstrap_value[:, 0], [2.0, 0.0])


def _synchronous_pool(num_envs, length, steps, seed):
    """Batches from a synchronous pool with random episode lengths 1-11.

    An observation is (env, t, episode); the policy's action, value and core
    state are functions of it, so every field of a transition can be checked
    against the observation it came from.
    """
    rng = np.random.default_rng(seed)
    core = np.zeros(3, np.float32)
    builder = TrajectoryBuilder(num_envs, length, (3,), np.float32, (), np.int32, core)
    env_t, episode = np.zeros(num_envs, int), np.zeros(num_envs, int)
    end = rng.integers(1, 12, num_envs)
    first, ended = np.ones(num_envs, bool), np.zeros(num_envs, bool)
    reward = np.zeros(num_envs, np.float32)
    terminated = truncated = np.zeros(num_envs, bool)
    ids = np.arange(num_envs, dtype=np.int32)
    batches = []
    for it in range(steps):
        obs = np.stack([ids, env_t, episode], 1).astype(np.float32)
        step = HostStep(obs, reward, terminated, truncated, first, ids)
        action = (obs @ np.array([7, 3, 1]) % 5).astype(np.int32)
        value = (obs @ np.array([100, 1, 0.01])).astype(np.float32)
        out = PolicyOut(action, action, -action.astype(np.float32), value, obs)
        builder.add(step, out, it)
        while builder.ready():
            batches.append((it, builder.take()))
        # The pool steps: an ended episode resets (reward 0, action ignored).
        first = ended.copy()
        env_t = np.where(first, 0, env_t + 1)
        episode += first
        end = np.where(first, rng.integers(1, 12, num_envs), end)
        reward = np.where(first, 0, 1000 * ids + env_t + action).astype(np.float32)
        ended = ~first & (env_t == end)
        terminated = ended & (episode % 2 == 0)
        truncated = ended & ~terminated
    return batches


def test_a_column_ending_an_episode_in_the_last_row_is_kept_whole():
    # Reset steps cost a column a transition, so columns drift apart; when the
    # one furthest ahead ended an episode in the buffer's last row, `take` once
    # tried to keep one row more than the buffer holds (ValueError).
    for length in (1, 4):
        for seed in range(3):
            batches = _synchronous_pool(8, length, 1000, seed)
            assert len(batches) > 1000 // (length + 11)
            for _, batch in batches:
                tr = batch.transitions
                obs, final = tr.observation, tr.final_observation
                cols = np.arange(8)[None, :]
                assert (obs[..., 0] == cols).all() and (final[..., 0] == cols).all()
                # Each transition stays within one episode, one step further.
                assert (final[..., 2] == obs[..., 2]).all()
                assert (final[..., 1] == obs[..., 1] + 1).all()
                want = obs @ np.array([7, 3, 1]) % 5
                assert (tr.action == want).all()
                want = 1000 * obs[..., 0] + final[..., 1] + tr.action
                assert (tr.reward == want).all()
                # Consecutive rows chain unless an episode ended between them.
                ended = (tr.discount[:-1] == 0) | tr.truncated[:-1]
                chained = (obs[1:] == final[:-1]).all(-1)
                assert (chained | ended).all()
                assert (tr.reset == (obs[..., 1] == 0)).all()
                # The start state is the one the first transition was acted from.
                np.testing.assert_array_equal(tr.core_state, obs[0])


def test_columns_more_than_a_batch_ahead_drop_their_oldest_transitions():
    # Without the drop a column runs ever further ahead (reset steps), and its
    # transitions reach the learner ever more batches late. With it, batch j
    # holds only transitions acted after batch j - 2 was taken.
    for length in (1, 4):
        batches = _synchronous_pool(8, length, 1000, seed=0)
        taken_at = [it for it, _ in batches]
        for j, (_, batch) in enumerate(batches[2:], start=2):
            assert batch.versions.min() >= taken_at[j - 2]
        assert sum(b.episodes["actor/dropped"] for _, b in batches) > 0


def test_a_lost_life_ends_learning_s_episode_but_not_the_logged_one():
    # EnvPool's episodic_life: a lost life is a termination (discount 0, a
    # reset step next) but the game goes on; the logs count the whole game:
    # rewards 1 + 2 (life lost) + 4 (game over) in 3 transitions, 1 episode.
    builder = TrajectoryBuilder(1, 4, (1,), np.float32, (), np.int32)
    lost = np.array([True])
    stream = [
        _step([0], first=True),
        _step([1], reward=1.0),
        _step([2], reward=2.0, terminated=True)._replace(life_lost=lost),
        _step([3], first=True),  # the game's own reset step: its action ignored
        _step([4], reward=4.0, terminated=True)._replace(life_lost=~lost),
        _step([5], first=True),
        _step([6], reward=8.0),
    ]
    for i, step in enumerate(stream):
        _add(builder, step, 10 + i, version=i)
    assert builder.ready()
    batch = builder.take()
    col = lambda x: np.asarray(x)[:, 0].tolist()  # noqa: E731
    assert col(batch.transitions.discount) == [1, 0, 0, 1]
    assert col(batch.transitions.action) == [10, 11, 13, 15]
    assert batch.episodes["episode/count"] == 1.0
    assert batch.episodes["episode/return_sum"] == 7.0
    assert batch.episodes["episode/length_sum"] == 3.0
