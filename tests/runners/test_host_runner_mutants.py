"""Gaps a mutation run found in the host-env runner's parts (mutants5_MD).

The policy, the parameter box, an actor's choice of version and the learner's
host-side figures, each checked on small inputs worked out by hand.
"""

import queue
import threading
import types

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.agents.base import Acting
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.host.base import HostSpec, HostStep
from purejaxdrl.runners.actor import Actor, ActorStats, ParamsBox, make_policy
from purejaxdrl.runners.host_batches import host_metrics
from purejaxdrl.runners.trajectories import Batch, PolicyOut


def _counting_agent():
    """Carry [N]: steps taken per environment; log_prob: the global env id."""

    def step(params, carry, obs, first, keys, env_ids):
        action = jax.vmap(jax.random.uniform)(keys)
        extras = {"env_action": action, "log_prob": env_ids.astype(jnp.float32)}
        return carry + 1.0, action, extras

    def value(params, carry, obs):
        return params * obs[:, 0]

    acting = Acting(lambda n: jnp.zeros(n), step, value, values_while_acting=False)
    return types.SimpleNamespace(acting=acting)


def test_the_policy_steps_its_rows_with_global_ids_and_a_key_per_step():
    policy = make_policy(_counting_agent(), "cpu")
    obs = np.array([[1.0], [2.0]], np.float32)
    first, env_id = np.zeros(2, bool), np.array([3, 1], np.int32)
    key, first_env = jax.random.key(0), np.int32(8)

    def call(step):  # a fresh carry each time: the policy donates it
        carry = jnp.array([10.0, 20.0, 30.0, 40.0])
        return policy(2.0, carry, obs, first, env_id, key, np.uint32(step), first_env)

    carry, out = call(0)
    # Rows 3 and 1 stepped once, rows 0 and 2 untouched.
    np.testing.assert_array_equal(carry, [10.0, 21.0, 30.0, 41.0])
    np.testing.assert_array_equal(out.start_state, [40.0, 20.0])  # before the step
    np.testing.assert_array_equal(out.log_prob, [11.0, 9.0])  # 8 + env_id
    np.testing.assert_array_equal(out.value, [2.0, 4.0])  # critic: 2 * obs
    _, again = call(0)
    _, later = call(1)
    np.testing.assert_array_equal(again.action, out.action)  # a step's key: fixed
    assert not np.any(later.action == out.action)  # the next step's: new


def test_the_box_keeps_the_two_newest_versions():
    box = ParamsBox(threading.Event())
    for version in range(4):
        box.publish(version, [f"p{version}"])
    assert sorted(box.versions) == [2, 3]
    assert box.newest() == (3, ["p3"])
    assert box.exactly(2) == ["p2"]


def test_a_deterministic_actor_acts_batch_k_with_version_k_minus_1():
    spec = HostSpec(Box((1,)), np.dtype(np.float32), Discrete(2))
    env = types.SimpleNamespace(num_envs=1, spec=spec)
    box, stop = ParamsBox(threading.Event()), threading.Event()
    actor = Actor(
        env, None, (), box, queue.Queue(), 2, jax.random.key(0),
        device=0, first_env=0, first_batch=3, deterministic=True, stop=stop,
    )  # fmt: skip
    box.publish(3, ["p3"])
    box.publish(4, ["p4"])
    assert actor._params_for(3) == (3, "p3")  # a resumed run's first batch
    assert actor._params_for(4) == (3, "p3")  # one update behind


def _stats(**totals):
    stats = ActorStats()
    for name, amount in totals.items():
        stats.add(name, amount)
    return types.SimpleNamespace(stats=stats)


def test_host_metrics_sum_every_batch_and_actor_and_measure_the_lag():
    episodes = [
        {"episode/count": 2.0, "episode/return_sum": 5.0},
        {"episode/count": 1.0, "episode/return_sum": 4.0},
    ]
    batches = [
        Batch(None, np.array([[4, 5], [3, 5]]), episodes[0]),  # [T=2, B=2]
        Batch(None, np.array([[5], [2]]), episodes[1]),  # [T=2, B=1]
    ]
    actors = [_stats(env_steps=10.0, env_seconds=0.5), _stats(env_steps=6.0)]
    out, stop = host_metrics(5, batches, actors, stopping=True)
    assert stop
    assert out["episode/count"] == 3.0 and out["episode/return_sum"] == 9.0
    assert out["actor/env_steps"] == 16.0 and out["actor/env_seconds"] == 0.5
    # Lags 5 - version: 1, 0, 2, 0 and 0, 3: mean 6 / 6, max 3.
    assert out["lag/mean"] == 1.0 and out["lag/max"] == 3.0


def _bare_runner(monkeypatch, made, published, learner_keys):
    """A SebulbaRunner whose actors and learner record what they are given."""
    from purejaxdrl.runners import sebulba

    class FakeActor:
        def __init__(self, env, policy, carry, box, q, length, key, **kw):
            self.key, self.first_env, self.error = key, kw["first_env"], None
            self.stats, self.first_call_seconds = ActorStats(), 0.0
            made.append(self)

        def run(self):
            pass

    def update(state, traj, key):
        learner_keys.append(np.asarray(jax.random.key_data(key)))
        return state, {}

    monkeypatch.setattr(sebulba, "Actor", FakeActor)
    runner = object.__new__(sebulba.SebulbaRunner)
    runner.host = types.SimpleNamespace(queue_size=1, deterministic=True)
    runner.policy, runner.agent = None, _counting_agent()
    runner.actor_devices, runner.unroll_length = jax.devices()[:1], 2
    runner._publish = lambda box, version, state: published.append(version)
    monkeypatch.setattr(
        sebulba,
        "next_batch",
        lambda i, q, actors, update, stop: Batch(None, np.zeros((2, 2), np.int32), {}),
    )
    runner._to_learner = lambda batches: None
    runner._compiled_update, runner._stop = update, None
    return runner


def test_each_actor_and_update_draws_its_own_key_and_a_resume_new_ones(
    monkeypatch,
):
    made, published, learner_keys = [], [], []
    runner = _bare_runner(monkeypatch, made, published, learner_keys)
    envs = [types.SimpleNamespace(num_envs=2)] * 2
    key = jax.random.key(0)
    assert len(list(runner.updates(envs, 0, key, 0, 2))) == 2
    # Versions: the start's, then one after each update.
    assert published == [0, 1, 2]
    assert [a.first_env for a in made] == [0, 2]  # pools of 2, numbered in order
    actor_keys = [np.asarray(jax.random.key_data(a.key)) for a in made]
    assert not np.array_equal(actor_keys[0], actor_keys[1])
    assert not np.array_equal(learner_keys[0], learner_keys[1])
    # Resumed at update 1: fresh actor keys; update 1's key is the same.
    made.clear()
    assert len(list(runner.updates(envs, 0, key, 1, 2))) == 1
    resumed = [np.asarray(jax.random.key_data(a.key)) for a in made]
    assert not any(np.array_equal(r, k) for r in resumed for k in actor_keys)
    np.testing.assert_array_equal(learner_keys[2], learner_keys[1])


def test_a_chunk_ends_after_the_update_that_asked_to_stop():
    from purejaxdrl.runners.sebulba import SebulbaRunner, Update

    runner = object.__new__(SebulbaRunner)
    runner._updates = iter(
        [Update(1, {"m": 1.0}), Update(2, {"m": 2.0}, stop=True), Update(3, {"m": 3.0})]
    )
    state, metrics = runner.chunk(3)(None)
    assert state.agent == 2 and metrics["m"].tolist() == [1.0, 2.0]


class TwoEnvs:
    """A pool of 2 host environments whose episodes never end."""

    num_envs, batch_size = 2, 2
    spec = HostSpec(Box((1,)), np.dtype(np.float32), Discrete(2))

    def __init__(self):
        self.recvs = 0

    def _step(self, first):
        ids = np.arange(2, dtype=np.int32)
        no = np.zeros(2, bool)
        obs = np.full((2, 1), self.recvs, np.float32)
        return HostStep(obs, np.ones(2, np.float32), no, no, first | no, ids)

    def reset(self):
        return self._step(True)

    def send(self, action, env_id):
        pass

    def recv(self):
        self.recvs += 1
        return self._step(False)


def test_an_actor_records_its_acting_version_and_counts_env_rows():
    def policy(params, carry, obs, first, env_id, key, step, first_env):
        n = len(env_id)
        zeros = np.zeros(n, np.float32)
        return carry, PolicyOut(
            np.zeros(n, np.int32), np.zeros(n, np.int32), zeros, zeros, ()
        )

    env, out, stop = TwoEnvs(), queue.Queue(), threading.Event()
    box = ParamsBox(stop)
    box.publish(0, ["p0"])
    actor = Actor(
        env, policy, (), box, out, 2, jax.random.key(0),
        device=0, first_env=0, first_batch=0, deterministic=True, stop=stop,
    )  # fmt: skip
    thread = threading.Thread(target=actor.run)
    thread.start()
    batches = [out.get(timeout=60) for _ in range(2)]  # then it waits for version 1
    stop.set()
    box.wake()
    thread.join(timeout=60)
    assert actor.error is None
    # Batches 0 and 1 are both acted with version 0 (batch k: version k - 1).
    assert [b.versions.tolist() for b in batches] == [[[0, 0], [0, 0]]] * 2
    assert actor.stats.take()["env_steps"] == 2 * env.recvs  # rows, not calls


def test_join_puts_the_actors_batches_side_by_side_along_b():
    from purejaxdrl.runners.host_batches import join
    from purejaxdrl.types import Transition

    def batch(b, first):  # [T=2, b] fields numbered by column; core [b, 3]
        cols = np.arange(first, first + b, dtype=np.float32)
        tm = np.stack([cols, cols + 100])
        fields = dict.fromkeys(Transition._fields[:9], tm)
        core = np.repeat(cols[:, None], 3, axis=1)
        return Transition(**fields, info={}, reset=tm > 0, core_state=core)

    joined = join([batch(1, 0), batch(2, 1)])
    np.testing.assert_array_equal(joined.reward, [[0, 1, 2], [100, 101, 102]])
    np.testing.assert_array_equal(joined.reset, [[False, True, True], [True] * 3])
    np.testing.assert_array_equal(joined.core_state[:, 0], [0, 1, 2])
    assert joined.core_state.shape == (3, 3)


def test_the_slowest_actors_first_policy_call_counts_as_compilation(monkeypatch):
    # (mut22 S05) else the first records' steps/s count the actors' compile.
    from purejaxdrl.runners import sebulba

    made = []
    runner = _bare_runner(monkeypatch, made, [], [])

    class SlowFirstCall:  # actor i's first policy call took 2 + i seconds
        def __init__(self, env, policy, carry, box, q, length, key, **kw):
            self.error, self.stats = None, ActorStats()
            self.first_call_seconds = 2.0 + len(made)
            made.append(self)

        def run(self):
            pass

    monkeypatch.setattr(sebulba, "Actor", SlowFirstCall)
    update = runner._compiled_update
    lowered = types.SimpleNamespace(compile=lambda: update)
    runner.update = types.SimpleNamespace(lower=lambda *a: lowered)
    runner._compiled_update, runner.late_compile_seconds = None, 0.0
    envs = [types.SimpleNamespace(num_envs=2)] * 2
    assert len(list(runner.updates(envs, 0, jax.random.key(0), 0, 2))) == 2
    # The learner's compile plus the slowest actor's first call (3 s), once.
    assert 3.0 <= runner.late_compile_seconds < 4.0


def test_a_session_resumed_past_update_0_acts_on_fresh_pools_seeded_for_it(monkeypatch):
    # (mut22 S08) "the host environments restart with new seeds" (resume_notes).
    from purejaxdrl.runners import sebulba

    closed, made = [], []
    first = [
        types.SimpleNamespace(close=lambda i=i: closed.append(i)) for i in range(2)
    ]

    def make_host_envs(config, pools, start):
        made.append((pools, start))
        return [types.SimpleNamespace(close=lambda: None) for _ in range(pools)]

    monkeypatch.setattr(sebulba, "make_host_envs", make_host_envs)
    runner = object.__new__(sebulba.SebulbaRunner)
    runner.envs, runner.late_compile_seconds = first, 0.0
    runner.run_config = types.SimpleNamespace(num_updates=4)
    acted_on = []

    def updates(envs, state, key, start, stop_after):
        acted_on.append((envs, start, stop_after))
        return (x for x in ())  # a generator: the session closes it

    runner.updates = updates
    with runner.session(types.SimpleNamespace(agent=None), jax.random.key(0), 2):
        pass
    assert made == [(2, 2)]  # two fresh pools, seeded for update 2
    assert closed[:2] == [0, 1]  # the first pools closed before
    [(envs, start, stop_after)] = acted_on
    assert envs is not first and (start, stop_after) == (2, 4)
