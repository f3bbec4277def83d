"""Host environments: each library's auto-reset probed, then our normalisation.

EnvPool and Gymnasium (NEXT_STEP mode) reset on the step after an episode ends,
ignoring that step's action and returning reward 0: the probes below pin that
down on CartPole with a 3-step limit (truncation) and a constant push
(termination), so an upgrade that changes it fails here, not in a loss.
"""

import warnings

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.env.host import base as host_base
from purejaxdrl.env.host import make_host_env

pytest.importorskip("envpool")
pytest.importorskip("gymnasium")

IDS = ["envpool:CartPole-v1", "gymnasium:CartPole-v1"]


@pytest.mark.parametrize("env_id", IDS)
def test_a_time_limit_truncates_and_the_next_step_is_a_reset_step(env_id):
    env = make_host_env(env_id, 2, 0, max_episode_steps=3)
    first = env.reset()
    assert first.first.all() and first.env_id.tolist() == [0, 1]
    push = np.zeros(2, np.int32)
    steps = [env.step(push) for _ in range(5)]
    # Steps 1, 2 continue; step 3 hits the limit: truncated, not terminated,
    # and its observation is the true final one (it continues the push).
    assert [s.truncated.tolist() for s in steps[:3]] == [[False] * 2] * 2 + [[True] * 2]
    assert not any(s.terminated.any() for s in steps)
    assert [s.reward.tolist() for s in steps[:3]] == [[1.0, 1.0]] * 3
    velocity = [s.observation[0, 1] for s in (first, *steps[:3])]
    assert np.all(np.diff(velocity) < 0)  # pushed left every step: no reset yet
    # Step 4 is the reset step: reward 0, `first`, a fresh start (|v| small).
    reset = steps[3]
    assert reset.first.all() and reset.reward.tolist() == [0.0, 0.0]
    assert np.all(np.abs(reset.observation) < 0.05)
    assert not steps[4].first.any() and steps[4].reward.tolist() == [1.0, 1.0]
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_termination_is_never_truncation(env_id):
    env = make_host_env(env_id, 1, 0)
    env.reset()
    steps = [env.step(np.zeros(1, np.int32)) for _ in range(30)]
    ends = [i for i, s in enumerate(steps) if s.terminated[0]]
    assert ends, "pushing left for 30 steps must topple the pole"
    end = ends[0]
    assert not steps[end].truncated[0]
    assert abs(steps[end].observation[0, 2]) > 0.2  # past the 12 degree limit
    assert steps[end + 1].first[0] and steps[end + 1].reward[0] == 0.0


@pytest.mark.parametrize("env_id", IDS)
def test_seeds_derive_from_the_run_seed_and_the_env_index(env_id):
    a = make_host_env(env_id, 3, 7).reset().observation
    b = make_host_env(env_id, 3, 7).reset().observation
    c = make_host_env(env_id, 3, 8).reset().observation
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a[0], a[1])


def test_envpool_async_returns_batches_with_their_env_ids():
    env = make_host_env("envpool:CartPole-v1", 4, 0, batch_size=2)
    step = env.reset()
    assert len(step.env_id) == 2 and step.first.all()
    seen = set(step.env_id.tolist())
    for _ in range(4):
        env.send(np.zeros(2, np.int32), step.env_id)
        step = env.recv()
        seen |= set(step.env_id.tolist())
    assert seen == {0, 1, 2, 3}


def test_atari_follows_machado_et_al_and_stays_uint8():
    env = make_host_env("envpool:Pong-v5", 2, 0)
    assert env.spec.observation.shape == (4, 84, 84)
    assert env.spec.observation_dtype == np.uint8
    assert env.spec.action.num_values == 18  # the full action set
    config = env.pool.config
    assert config["repeat_action_probability"] == 0.25
    assert not config["episodic_life"] and not config["reward_clip"]
    assert config["max_episode_steps"] == 27_000 and config["frame_skip"] == 4
    assert env.reset().observation.dtype == np.uint8


def test_unknown_ids_and_missing_packages_say_what_to_do(monkeypatch):
    # Whole ids: a bare Pong-v5 or CartPole-v1 would not name the host env.
    with pytest.raises(pjd.ConfigError, match="did you mean envpool:Pong-v5"):
        make_host_env("envpool:Pongg-v5", 1, 0)
    with pytest.raises(pjd.ConfigError, match="no such gymnasium environment") as e:
        make_host_env("gymnasium:CartPoleX-v1", 1, 0)
    assert "did you mean gymnasium:CartPole-v1, " in str(e.value)
    assert "?; " not in str(e.value) and "? If a module of your own" in str(e.value)
    with pytest.raises(pjd.ConfigError, match="host ids start with"):
        make_host_env("dmc:cheetah", 1, 0)

    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(host_base.importlib, "import_module", missing)
    with pytest.raises(pjd.ConfigError, match=r"pip install 'purejaxdrl\[envpool\]'"):
        make_host_env("envpool:Pong-v5", 1, 0)


def test_gymnasium_options_are_type_checked_against_the_environments_defaults():
    # Gymnasium passes them on unchecked: a string trained as a truthy flag, a
    # fractional or negative time limit failed in a traceback or trained.
    refusals = {
        "sutton_barto_reward": ("maybe", "is not true or false"),
        "max_episode_steps": (2.5, "is not an integer"),
    }
    for name, (value, why) in refusals.items():
        with pytest.raises(pjd.ConfigError) as e:
            make_host_env("gymnasium:CartPole-v1", 1, 0, **{name: value})
        assert str(e.value).startswith(f"env.options {name}={value!r} {why}")
        assert "gymnasium:CartPole-v1's default: " in str(e.value)
    with pytest.raises(pjd.ConfigError) as e:
        make_host_env("gymnasium:CartPole-v1", 1, 0, max_episode_steps=0)
    assert str(e.value) == (
        "env.options max_episode_steps=0 must be >= 1 (the time limit, in "
        "steps); pass e.g. --env.option max_episode_steps=500 "
        "(env.options={'max_episode_steps': 500} in Python)."
    )
    # A float parameter written with an integer default (goal_velocity=0),
    # unannotated: any number.
    make_host_env("gymnasium:MountainCar-v0", 1, 0, goal_velocity=0.05).close()
    env = make_host_env("gymnasium:CartPole-v1", 1, 0, max_episode_steps=2.0)
    try:  # a whole float is the integer it means
        env.reset()
        ends = [env.step(np.zeros(1, np.int32)).truncated[0] for _ in range(2)]
        assert ends == [False, True]
    finally:
        env.close()


def test_clipped_rewards_warn_that_returns_are_not_the_games():
    # With EnvPool's reward_clip its rewards are signs: the logged returns
    # follow them. Life-loss episodes do not change the logs (next test).
    with pytest.warns(UserWarning, match=r"reward_clip=True: .* clipped rewards") as w:
        make_host_env("envpool:Breakout-v5", 1, 0, reward_clip=True).close()
    assert w[0].filename == __file__  # the caller's line, not make_host_env's
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the protocol's defaults, life loss: no notice
        make_host_env("envpool:Breakout-v5", 1, 0).close()
        make_host_env("envpool:Breakout-v5", 1, 0, episodic_life=True).close()


def test_a_lost_life_is_a_termination_whose_game_goes_on():
    # Breakout has 5 lives. With episodic_life each loss is `terminated`
    # (learning does not bootstrap across it) and `life_lost`, and a reset
    # step follows; the fifth, the game's end, is no `life_lost`. Without the
    # option no row is ever `life_lost`.
    env = make_host_env("envpool:Breakout-v5", 1, 0, episodic_life=True)
    try:
        env.reset()
        ends = []  # (terminated, first, life_lost) of every end and reset step
        for t in range(3000):
            step = env.step(np.array([1 if t % 2 else 3], np.int32))
            if step.terminated[0] or step.first[0]:
                ends.append((step.terminated[0], step.first[0], step.life_lost[0]))
            if step.game_over()[0]:
                break
    finally:
        env.close()
    loss, reset, end = (True, False, True), (False, True, False), (True, False, False)
    assert ends == [loss, reset] * 4 + [end]
    plain = make_host_env("envpool:Breakout-v5", 1, 0)
    try:
        assert plain.reset().life_lost is None
        assert plain.step(np.ones(1, np.int32)).life_lost is None
    finally:
        plain.close()


@pytest.mark.parametrize("env_id", IDS)
def test_a_second_reset_marks_every_row_first(env_id):
    # `first` came from the previous step's ends: after a step that ended no
    # episode, a second reset's rows were not `first`, and an evaluator
    # reusing the pool would count the old episode's return across it.
    env = make_host_env(env_id, 2, 0)
    env.reset()
    assert not env.step(np.zeros(2, np.int32)).first.any()
    again = env.reset()
    assert again.first.all() and again.reward.tolist() == [0.0, 0.0]
    assert np.all(np.abs(again.observation) < 0.05)  # a fresh start
    assert not env.step(np.zeros(2, np.int32)).first.any()
    env.close()
