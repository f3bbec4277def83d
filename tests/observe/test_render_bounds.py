"""What `--render` checks before anything plays, and what drawing costs after."""

import importlib
import sys

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.observe import gif
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.observe.players import DevicePlayer

# The module (the package's `render` is its function).
render = importlib.import_module("purejaxdrl.observe.render")


def _cartpole():
    """An untrained CartPole policy: its episodes end within tens of steps."""
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"env": {"id": "CartPole-v1"}, "devices": 1, "num_envs": 1}
    )
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    return exp, state.agent.params, state.env_params


class _Counting:
    """The environment, counting the steps it is made to play (host side)."""

    def __init__(self, env):
        self.env, self.steps = env, []

    def reset(self, key, params):
        return self.env.reset(key, params)

    def step(self, key, state, action, params):
        jax.debug.callback(lambda: self.steps.append(1))
        return self.env.step(key, state, action, params)


def test_recording_stops_after_the_block_its_episode_ends_in(monkeypatch):
    # One scan over all of max_steps played (and kept the state of) every
    # step long after the episode ended: 10,000 here, 2**31-1 allowed.
    monkeypatch.setattr(render, "RECORD_BLOCK", 8)
    exp, params, env_params = _cartpole()
    env = _Counting(exp.env)
    key = jax.random.key(3)
    episode = render.record_episode(env, exp.network, params, env_params, key, 10_000)
    assert 8 < episode.length < 100, episode.length  # it spans blocks
    # Played: the blocks up to the one it ended in, 8 steps each.
    assert len(env.steps) == 8 * -(-episode.length // 8), len(env.steps)
    assert len(episode.states) == len(episode.rewards) == episode.length


@pytest.mark.parametrize("max_steps", [13, 10_000])
def test_an_episode_recorded_in_blocks_is_the_one_evaluate_scored(
    monkeypatch, max_steps
):
    # Blocks of 5 steps: the step keys (by step number), the carried state and
    # the cap (13: inside the third block) must join up across them.
    monkeypatch.setattr(render, "RECORD_BLOCK", 5)
    exp, params, env_params = _cartpole()
    evaluate = make_evaluate(exp.env, exp.network, episodes=3, max_steps=max_steps)
    scored = jax.device_get(evaluate(params, env_params, jax.random.key(5)))
    episode = render.record_episode(
        exp.env, exp.network, params, env_params, jax.random.key(5), max_steps, 3
    )
    assert episode.length == int(scored.lengths[0]) > 5
    np.testing.assert_allclose(episode.rewards.sum(), scored.returns[0], rtol=1e-6)
    # The states are the episode's, in order: CartPole's step counter.
    assert [int(s.time) for s in episode.states] == list(range(episode.length))


def test_a_missing_pygame_is_refused_before_anything_plays(tmp_path, monkeypatch):
    # gymnax draws classic control with pygame; without it, the refusal came
    # after evaluating and recording, from the drawing itself.
    monkeypatch.setitem(sys.modules, "pygame", None)  # `import pygame` fails
    player = DevicePlayer(envs.make("CartPole-v1"), None, None)
    with pytest.raises(pjd.ConfigError, match="draws CartPole-v1 with pygame"):
        player.check_render(tmp_path / "x.gif")
    # MinAtar's drawings are matplotlib figures: no pygame needed.
    DevicePlayer(envs.make("Breakout-MinAtar"), None, None).check_render(
        tmp_path / "x.gif"
    )


def test_a_failed_gif_write_closes_its_frames_at_once(tmp_path):
    # A frame generator left open was closed at interpreter shutdown, where a
    # gymnasium drawer's cleanup printed a second traceback.
    closed = []

    def frames():
        try:
            while True:
                yield np.zeros((4, 4, 3), np.uint8)
        finally:
            closed.append(True)

    (tmp_path / "d.gif").mkdir()
    # The traceback is kept (as the CLI keeps it until it is printed): it
    # holds write_gif's frame, and so the generator, open.
    with pytest.raises(IsADirectoryError) as failed:
        gif.write_gif(frames(), tmp_path / "d.gif", 50)
    assert closed == [True], failed
