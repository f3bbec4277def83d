"""`eval --render` refuses what its arguments alone rule out, before playing.

An MP4 without imageio-ffmpeg was refused only after the run was restored
and played (37 s on a 2-core CPU, pg16 #5), where a folder that does not
exist was refused at once.
"""

import importlib.util

from purejaxdrl import cli
from purejaxdrl.cli import eval as eval_command
from purejaxdrl.observe import mujoco_render


def test_an_mp4_without_imageio_ffmpeg_is_refused_before_the_run_loads(
    monkeypatch, tmp_path, capsys
):
    real = importlib.util.find_spec

    def without_ffmpeg(name, *args):
        return None if name == "imageio_ffmpeg" else real(name, *args)

    monkeypatch.setattr(mujoco_render.importlib.util, "find_spec", without_ffmpeg)
    played = []
    monkeypatch.setattr(eval_command, "_play", lambda args: played.append(args) or 0)
    out = tmp_path / "episode.mp4"
    status = cli.main(["eval", str(tmp_path), "--render", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and played == []
    assert err == (
        f"purejaxdrl: error: --render {out}: an MP4 needs imageio-ffmpeg, which "
        "is not installed; pip install imageio imageio-ffmpeg, or name the file "
        "*.gif.\n"
    )
