"""`--render` takes a gymnax environment only where gymnax has a drawing of it."""

import ast
import inspect
import textwrap

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl import env as envs
from purejaxdrl.observe import gif
from purejaxdrl.observe.render import check_renderable
from tests.env.test_user_gymnax_env import Corridor


def _refused(name: str) -> str:
    """The one line for `name`: what gymnax draws named, and the fix."""
    drawings = ", ".join(gif._PYGAME + gif._FIGURE)
    return (
        f"--render: gymnax has no drawing of {name} (its drawings are of "
        f"{drawings}); evaluate without --render."
    )


def _names_visualizer_branches_on(method: str) -> set[str]:
    """The names gymnax's `Visualizer.<method>` compares `self.env.name` with.

    Read from gymnax's installed source, not from ours: the reference the
    drawable ids are checked against. Any other name falls through every
    branch, and its frames stay blank axes.
    """
    from gymnax.visualize import visualizer

    source = inspect.getsource(getattr(visualizer.Visualizer, method))
    names = set()
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        if isinstance(node, ast.Compare) and ast.unparse(node.left) == "self.env.name":
            for value in ast.walk(ast.Module(node.comparators, [])):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    names.add(value.value)
    return names


def test_the_ids_accepted_are_exactly_those_gymnax_draws(tmp_path):
    from gymnax.visualize import vis_gym

    drawn = _names_visualizer_branches_on("init")
    assert drawn == _names_visualizer_branches_on("update")
    assert len(drawn) == 15, drawn  # classic control, Catch, MinAtar, mazes, ...
    # Classic control is ours (one pygame environment for all frames), the
    # others gymnax's figure; together, what gymnax draws.
    assert set(gif._PYGAME) == set(vis_gym.SUPPORTED_GYM_ENVS)
    assert set(gif._PYGAME) | set(gif._FIGURE) == drawn
    assert not set(gif._PYGAME) & set(gif._FIGURE)
    for env_id in ("CartPole-v1", "Breakout-MinAtar"):  # still accepted
        out = tmp_path / f"{env_id}.gif"
        assert check_renderable(envs.GymnaxEnv(env_id), out) == out


@pytest.mark.parametrize("env_id", ["DeepSea-bsuite", "MemoryChain-bsuite"])
def test_a_gymnax_id_gymnax_cannot_draw_is_refused_in_one_line(tmp_path, env_id):
    out = tmp_path / "x.gif"
    with pytest.raises(pjd.ConfigError) as error:
        check_renderable(envs.GymnaxEnv(env_id), out)
    assert str(error.value) == _refused(env_id)
    assert not out.exists()


def test_a_gymnax_class_of_the_users_own_is_refused(tmp_path):
    # gymnax's Visualizer picks a drawing by the class's `name` (its class
    # name unless it says otherwise), and has none for a class it never saw.
    envs.register("RenderCorridor-v0", lambda: envs.GymnaxEnv.wrap(Corridor()))
    with pytest.raises(pjd.ConfigError) as error:
        check_renderable(envs.make("RenderCorridor-v0"), tmp_path / "walk.gif")
    assert str(error.value) == _refused("Corridor")  # the class's name
    assert not (tmp_path / "walk.gif").exists()


def test_eval_refuses_before_it_plays_and_writes_nothing(tmp_path, capsys):
    argv = ["train", "--no-compile-cache", "--quiet", "--total-steps", "1024",
            "--devices", "1", "--env.id", "DeepSea-bsuite",
            "--run-dir", str(tmp_path / "runs")]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    (run,) = (tmp_path / "runs").iterdir()
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    capsys.readouterr()
    gif_path = tmp_path / "deepsea.gif"
    assert cli.main(["eval", str(run), "--render", str(gif_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no return: nothing was evaluated
    assert captured.err.splitlines() == [
        "purejaxdrl: error: " + _refused("DeepSea-bsuite")
    ]
    assert not gif_path.exists()
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before
