"""Watching a host-env policy: GIFs of pixels and of Gymnasium's drawings,
and `purejaxdrl eval` on host runs."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image, ImageSequence

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box
from purejaxdrl.env.host import HostSpec, make_host_env
from purejaxdrl.networks import Network
from purejaxdrl.observe.evaluation import evaluate_host, host_mode_policy
from purejaxdrl.observe.gif import PIXEL_FRAME_MS, newest_frame, upscale, write_gif
from purejaxdrl.observe.numbers import mean_std_text
from purejaxdrl.observe.render import check_host_renderable, record_host_episode
from purejaxdrl.rl.distributions import categorical
from purejaxdrl.training.restored import restore_run

gym = pytest.importorskip("gymnasium")
pytest.importorskip("envpool")

LEAN = np.array([[0, 0], [0, 0], [-1, 1], [0, 0]], np.float32)  # push toward the lean


def linear_network() -> Network:
    """A stand-in for networks.Network: logits = obs @ params (flattened)."""

    def apply(params, obs):
        return obs.reshape(*obs.shape[:1], -1) @ params, None

    return Network(init=None, apply=apply, distribution=categorical())


def durations(gif) -> list[int]:
    with Image.open(gif) as image:
        return [frame.info["duration"] for frame in ImageSequence.Iterator(image)]


def test_pong_gif_draws_the_newest_frame_of_each_stack_3x(tmp_path):
    # All-zero logits: the mode is NOOP (action 0) on every frame.
    params = jnp.zeros((4 * 84 * 84, 18))
    episode = record_host_episode(
        "envpool:Pong-v5", {}, linear_network(), params, seed=0, max_steps=12
    )
    assert episode.length == len(episode.frames) == 12
    assert all(f.shape == (252, 252) and f.dtype == np.uint8 for f in episode.frames)
    # The first frame is the newest of the first observation's four (what the
    # agent sees), each pixel a 3x3 square.
    env = make_host_env("envpool:Pong-v5", 1, 0)
    first = env.reset().observation[0]
    env.close()
    assert first.shape == (4, 84, 84)
    np.testing.assert_array_equal(episode.frames[0], upscale(first[-1]))
    gif = write_gif(episode.frames, tmp_path / "pong.gif", episode.frame_ms)
    with Image.open(gif) as image:
        assert image.size == (252, 252)
        np.testing.assert_array_equal(
            np.asarray(image.convert("L")), upscale(first[-1])
        )
    # Pillow merges identical frames (Pong's first ones are), adding their
    # times: the GIF plays 12 steps long.
    shown = durations(gif)
    assert len(shown) <= 12 and sum(shown) == 12 * PIXEL_FRAME_MS


def test_newest_frame_of_either_stack_layout():
    rng = np.random.default_rng(0)
    stack = rng.integers(0, 256, (4, 84, 84), dtype=np.uint8)  # oldest first
    np.testing.assert_array_equal(newest_frame(stack), stack[-1])
    last = np.moveaxis(stack, 0, -1)  # [84, 84, 4]
    np.testing.assert_array_equal(newest_frame(last), stack[-1])
    rgb = np.zeros((84, 84, 3), np.uint8)
    assert newest_frame(rgb) is rgb
    grey = np.zeros((84, 84), np.uint8)
    assert newest_frame(grey) is grey
    # Planes that are not the smallest axis are read last, as the cnn torso
    # reads them: 16 planes of 8x8, not 8 of 8x16.
    planes = rng.integers(0, 256, (8, 8, 16), dtype=np.uint8)
    np.testing.assert_array_equal(newest_frame(planes), planes[..., -1])


def test_gymnasium_cartpole_gif_replays_the_first_evaluation_episode(tmp_path):
    pytest.importorskip("pygame", reason="gymnasium draws CartPole with pygame")
    options = {"max_episode_steps": 40}
    network, params = linear_network(), jnp.asarray(LEAN)
    episode = record_host_episode(
        "gymnasium:CartPole-v1", options, network, params, seed=3, max_steps=100
    )
    # Seeded as evaluation environment 0: the same episode.
    evaluated = evaluate_host(
        "gymnasium:CartPole-v1",
        options,
        network,
        params,
        episodes=4,
        seed=3,
        max_steps=100,
    )
    assert episode.length == evaluated.lengths[0] == len(episode.frames)
    assert episode.episode_return == evaluated.returns[0]
    assert episode.frames[0].shape == (400, 600, 3)
    gif = write_gif(episode.frames, tmp_path / "cartpole.gif", episode.frame_ms)
    with Image.open(gif) as image:
        assert image.size == (600, 400)
    assert sum(durations(gif)) == episode.length * 20  # CartPole's 50 frames/s


def test_what_cannot_be_drawn_is_refused_in_one_line():
    spec = HostSpec(Box((4,)), np.dtype(np.float32), None)
    with pytest.raises(ConfigError, match="--env.id gymnasium:CartPole-v1"):
        check_host_renderable("envpool:CartPole-v1", spec, "cartpole.gif")
    with pytest.raises(ConfigError, match=r"name the file \*.gif"):
        check_host_renderable("gymnasium:CartPole-v1", spec, "cartpole.mp4")
    assert check_host_renderable("gymnasium:CartPole-v1", spec, "a.gif").name == "a.gif"


class _NoDrawing(gym.Env):
    """Observations of 2 numbers, no render modes at all."""

    metadata = {"render_modes": []}

    def __init__(self, render_mode=None):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, True, False, {}


def test_a_gymnasium_env_without_rgb_array_is_refused():
    if "PurejaxdrlNoDrawing-v0" not in gym.registry:
        gym.register("PurejaxdrlNoDrawing-v0", entry_point=_NoDrawing)
    params = jnp.zeros((2, 2))
    with pytest.raises(ConfigError, match="draws no frames .* needs 'rgb_array'"):
        record_host_episode(
            "gymnasium:PurejaxdrlNoDrawing-v0",
            {},
            linear_network(),
            params,
            seed=0,
            max_steps=5,
        )


class _NoRenderMode(_NoDrawing):
    """A constructor without Gymnasium's render_mode argument."""

    def __init__(self):
        super().__init__()


def test_a_gymnasium_env_whose_constructor_takes_no_render_mode_is_refused():
    if "PurejaxdrlNoRenderMode-v0" not in gym.registry:
        gym.register("PurejaxdrlNoRenderMode-v0", entry_point=_NoRenderMode)
    with pytest.raises(ConfigError, match="takes no render_mode") as refused:
        record_host_episode(
            "gymnasium:PurejaxdrlNoRenderMode-v0",
            {},
            linear_network(),
            jnp.zeros((2, 2)),
            seed=0,
            max_steps=5,
        )
    assert "\n" not in str(refused.value)


def _train(tmp_path, env_id):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "impala").config,
        {
            "env": {"id": env_id},
            "total_steps": 32 * 16 * 4,
            "num_logs": 2,
            "devices": 1,
            "run_dir": str(tmp_path / "runs"),
        },
    )
    return pjd.train(config, write_files=True)


@pytest.mark.timeout(180)
def test_eval_command_on_an_envpool_run(tmp_path, capsys):
    result = _train(tmp_path, "envpool:CartPole-v1")
    _, exp, restored = restore_run(result.run_dir, "evaluate")
    exp.runner.close()
    params = jax.device_get(restored.state.agent.params)
    assert restored.step == 4
    same = np.testing.assert_array_equal
    jax.tree.map(same, params, result.state.agent.params)
    capsys.readouterr()
    argv = ["eval", str(result.run_dir), "--episodes", "3", "--max-steps", "50"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith("impala on envpool:CartPole-v1, update 4: mean return ")
    assert "over 3 episode(s) (deterministic policy)" in out
    expected = evaluate_host(
        "envpool:CartPole-v1",
        {},
        exp.network,
        params,
        episodes=3,
        seed=0,
        max_steps=50,
    )
    mean, std = np.mean(expected.returns), np.std(expected.returns)
    scored = f"mean return {mean_std_text(mean, std)} (std)"
    assert scored in out
    # EnvPool draws no CartPole: refused before evaluating, naming the fix.
    assert cli.main([*argv, "--render", str(tmp_path / "cp.gif")]) == 2
    captured = capsys.readouterr()
    assert "--env.id gymnasium:CartPole-v1" in captured.err and not captured.out
    # Exported, the policy holds the run's parameters and acts as evaluation
    # does.
    out = tmp_path / "policy"
    assert cli.main(["export", str(result.run_dir), "--out", str(out)]) == 0
    policy = pjd.load_policy(out)
    assert policy.spec["env_id"] == "envpool:CartPole-v1"
    assert policy.spec["updates"] == 4
    jax.tree.map(same, jax.device_get(policy.params), params)
    obs = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    _, expected = host_mode_policy(exp.network).act(params, (), obs)
    np.testing.assert_array_equal(jax.jit(policy.mode)(obs), expected)
    # `purejaxdrl eval POLICY_DIR` plays it on fresh pools as the run's eval.
    capsys.readouterr()
    assert cli.main(["eval", str(out), *argv[2:]]) == 0, capsys.readouterr().err
    played = capsys.readouterr().out
    assert played.startswith("impala on envpool:CartPole-v1, update 4: mean return ")
    assert scored in played


@pytest.mark.timeout(180)
def test_eval_command_renders_a_gymnasium_run(tmp_path, capsys):
    pytest.importorskip("pygame", reason="gymnasium draws CartPole with pygame")
    result = _train(tmp_path, "gymnasium:CartPole-v1")
    gif = tmp_path / "cartpole.gif"
    capsys.readouterr()
    argv = ["eval", str(result.run_dir), "--episodes", "2", "--max-steps", "30",
            "--render", str(gif)]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "impala on gymnasium:CartPole-v1, update 4" in out
    steps = int(re.search(r"rendered one episode \((\d+) steps", out).group(1))
    assert 1 <= steps <= 30
    assert sum(durations(gif)) == steps * 20
