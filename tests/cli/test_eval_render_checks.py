"""`eval --render` refuses what its arguments alone rule out, before playing.

An MP4 without imageio-ffmpeg was refused only after the run was restored
and played (37 s on a 2-core CPU, pg16 #5), where a folder that does not
exist was refused at once. Only a MuJoCo Playground run draws an MP4: any
other says so before imageio-ffmpeg is named (pq18 #1).
"""

import importlib.util

from purejaxdrl import cli
from purejaxdrl import env as envs
from purejaxdrl.cli import eval as eval_command
from purejaxdrl.observe import mujoco_render
from purejaxdrl.observe.render import check_renderable


def test_an_mp4_without_imageio_ffmpeg_is_refused_before_the_run_loads(
    monkeypatch, tmp_path, capsys
):
    _without_imageio_ffmpeg(monkeypatch)
    played = []
    monkeypatch.setattr(eval_command, "_play", lambda args: played.append(args) or 0)
    out = tmp_path / "episode.mp4"
    run = _run_on(tmp_path, "playground/CartpoleBalance")
    status = cli.main(["eval", str(run), "--render", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and played == []
    assert err == (
        f"purejaxdrl: error: --render {out}: an MP4 needs imageio-ffmpeg, which "
        "is not installed; pip install imageio imageio-ffmpeg, or name the file "
        "*.gif.\n"
    )
    # An exported policy's folder names its environment in policy.json.
    policy = tmp_path / "policy"
    policy.mkdir()
    (policy / "policy.json").write_text('{"env_id": "playground/CartpoleBalance"}')
    assert cli.main(["eval", str(policy), "--render", str(out)]) == 2
    assert played == [] and "needs imageio-ffmpeg" in capsys.readouterr().err


def _without_imageio_ffmpeg(monkeypatch):
    """As on a machine where imageio-ffmpeg is not installed."""
    real = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "imageio_ffmpeg" else real(name, *args)

    monkeypatch.setattr(mujoco_render.importlib.util, "find_spec", find_spec)


def _run_on(tmp_path, env_id):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(f"env:\n  id: {env_id}\n")
    return run


def test_an_mp4_of_a_gif_only_env_names_the_gif_not_imageio_ffmpeg(
    monkeypatch, tmp_path, capsys
):
    # pq18 #1: installing imageio-ffmpeg cannot help CartPole draw an MP4.
    _without_imageio_ffmpeg(monkeypatch)
    run, out = _run_on(tmp_path, "CartPole-v1"), tmp_path / "episode.mp4"

    def play(args):  # the player's own check, before anything plays
        check_renderable(envs.make("CartPole-v1"), args.render)

    monkeypatch.setattr(eval_command, "_play", play)
    assert cli.main(["eval", str(run), "--render", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"purejaxdrl: error: --render {out}: CartPole-v1 renders to a GIF; name "
        "the file *.gif.\n"
    )
