"""Watching a policy: `purejaxdrl eval --render`, GIFs and brax HTML."""

import re

import jax
import numpy as np
import pytest
from PIL import Image

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.observe.render import record_episode, render


def test_eval_command_renders_one_gif_frame_per_step(tmp_path, capsys):
    argv = ["train", "--no-compile-cache", "--quiet", "--total-steps", "1024",
            "--devices", "1", "--run-dir", str(tmp_path / "runs"),
            "--eval.max-steps", "5", "--eval.episodes", "2"]  # fmt: skip
    assert cli.main(argv) == 0
    (run,) = (tmp_path / "runs").iterdir()
    # Training's summary counts the evaluation episodes its cap cut too.
    assert "(deterministic policy, 2 episodes, 2 cut at eval.max_steps 5)" in (
        capsys.readouterr().out
    )
    # Without --max-steps, the run's eval.max_steps caps the episodes (no
    # CartPole episode ends within 5 steps), and the line says so: it named
    # --max-steps, a flag not given.
    capsys.readouterr()
    assert cli.main(["eval", str(run), "--episodes", "2"]) == 0
    cut = "; 2 cut at the run's eval.max_steps 5 (their returns partial: pass a "
    assert cut + "larger --max-steps for whole episodes)" in capsys.readouterr().out
    gif = tmp_path / "cartpole.gif"
    argv = ["eval", str(run), "--episodes", "3", "--render", str(gif),
            "--max-steps", "40"]  # fmt: skip
    capsys.readouterr()
    assert cli.main(argv) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    out = captured.out
    assert "over 3 episode(s) (deterministic policy)" in out
    steps = int(re.search(r"rendered one episode \((\d+) steps", out).group(1))
    assert 1 <= steps <= 40
    with Image.open(gif) as image:
        assert image.n_frames == steps
        assert image.size[0] >= 300
    # Progress while drawing (stderr is no terminal here: a line per quarter).
    progress = captured.err.splitlines()
    assert progress[0] == f"drawing cartpole.gif: {steps} frames…", progress
    assert progress[-1] == f"drawing cartpole.gif: {steps}/{steps} frames"
    # Exported (as a sweep's best is), the policy plays and draws the same
    # episodes on its environment made again from policy.json.
    assert cli.main(["export", str(run), "--out", str(tmp_path / "policy")]) == 0
    capsys.readouterr()
    argv = ["eval", str(tmp_path / "policy"), "--episodes", "3", "--render",
            str(tmp_path / "again.gif"), "--max-steps", "40"]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    again = capsys.readouterr().out
    assert again.replace("again.gif", "cartpole.gif") == out


def _episode(env_id, max_steps, **options):
    """An untrained policy's recorded episode (and the experiment)."""
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"env": {"id": env_id, "options": options}, "devices": 1, "num_envs": 1},
    )
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    params, env_params = state.agent.params, state.env_params
    key = jax.random.key(1)
    episode = record_episode(exp.env, exp.network, params, env_params, key, max_steps)
    return exp, episode


def test_minatar_gif_has_one_frame_per_step(tmp_path):
    exp, episode = _episode("Breakout-MinAtar", 12)
    assert episode.length == len(episode.states) == len(episode.rewards)
    drawn = []
    render(exp.env, episode, tmp_path / "breakout.gif", progress=drawn.append)
    assert drawn == list(range(1, episode.length + 1))
    with Image.open(tmp_path / "breakout.gif") as image:
        assert image.n_frames == episode.length


def test_classic_control_frames_come_from_one_environment(tmp_path, monkeypatch):
    # gymnax's Visualizer made (and closed) a gymnasium environment per frame,
    # ~0.1 s of a frame's ~0.2 s; one environment draws them all now.
    import gymnasium

    made = []
    make = gymnasium.make
    monkeypatch.setattr(
        gymnasium, "make", lambda *a, **k: made.append(a) or make(*a, **k)
    )
    exp, episode = _episode("CartPole-v1", 12)
    drawn = []
    render(exp.env, episode, tmp_path / "cartpole.gif", progress=drawn.append)
    assert len(made) == 1 and drawn == list(range(1, episode.length + 1))
    with Image.open(tmp_path / "cartpole.gif") as image:
        assert image.n_frames == episode.length
        assert image.size == (600, 428)  # gymnasium's 600 x 400, a title above


def test_render_needs_the_right_file_type(tmp_path):
    exp, episode = _episode("CartPole-v1", 3)
    with pytest.raises(pjd.ConfigError, match="renders to a GIF; name the file"):
        render(exp.env, episode, tmp_path / "x.html")


def test_the_drawn_episode_is_the_first_one_evaluate_scored_and_brax_html_names_it(
    tmp_path,
):
    # `eval --render` draws the first of the episodes it scored: the same
    # reset and step keys, so the same length and return (brax's physics
    # starts from a random state, so another key plays another episode).
    # Brax's episode is drawn as HTML (one brax experiment compiled, not two).
    from purejaxdrl.observe.evaluation import make_evaluate

    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"env": {"id": "brax/inverted_pendulum"}, "devices": 1, "num_envs": 1},
    )
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    params, env_params = state.agent.params, state.env_params
    evaluate = make_evaluate(exp.env, exp.network, episodes=3, max_steps=200)
    scored = jax.device_get(evaluate(params, env_params, jax.random.key(5)))
    episode = record_episode(
        exp.env, exp.network, params, env_params, jax.random.key(5), 200, episodes=3
    )
    assert episode.length == int(scored.lengths[0])
    np.testing.assert_allclose(episode.rewards.sum(), scored.returns[0], rtol=1e-5)
    drawn = []  # the progress ends at its total, not at 0 of it (nb21 #4)
    page = render(exp.env, episode, tmp_path / "pendulum.html", drawn.append)
    page = page.read_text()
    assert drawn == [episode.length]
    assert "<title>brax/inverted_pendulum:" in page
    assert "viewer" in page  # brax's own viewer
