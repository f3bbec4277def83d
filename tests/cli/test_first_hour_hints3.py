"""A newcomer's first hour, round 3 (review fh20): extras, paths, hints."""

import pathlib
import sys
import types

import pytest

from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.env.imports import import_modules
from purejaxdrl.training.presets.load import presets_dir


def _error(argv, capsys):
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


WANDB_MISSING = (
    "purejaxdrl: error: --logger wandb (log_to=['wandb'] in Python) needs the "
    "wandb package, which is not installed: pip install 'purejaxdrl[wandb]', or "
    "drop it"
)


def test_wandb_missing_is_one_line_before_anything_trains(
    tmp_path, monkeypatch, capsys
):
    # It was an ImportError's traceback, exit 1, once the run had started.
    monkeypatch.setitem(sys.modules, "wandb", None)  # as if not installed
    argv = ["train", "--logger", "wandb", "--total-steps", "2048",
            "--run-dir", str(tmp_path / "runs")]  # fmt: skip
    assert _error(argv, capsys) == WANDB_MISSING
    assert not (tmp_path / "runs").exists()  # no run folder: nothing started
    from purejaxdrl.observe.loggers import WandbLogger

    with pytest.raises(ConfigError, match=r"pip install 'purejaxdrl\[wandb\]'"):
        WandbLogger(tmp_path, "ppo", {})


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    """own/fh65_reach.py under tmp_path; sys.path and modules restored after."""
    (tmp_path / "own").mkdir()
    file = tmp_path / "own" / "fh65_reach.py"
    file.write_text("REACHED = True\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("fh65_reach", "own", "own.fh65_reach"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield file
    for name in ("fh65_reach", "own", "own.fh65_reach"):
        sys.modules.pop(name, None)


def test_a_file_outside_the_current_folder_is_named_by_its_folder_and_stem(
    own_module, tmp_path, monkeypatch
):
    # It suggested tmp.….own.fh65_reach, which imports from nowhere.
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(ConfigError) as error:
        import_modules([str(own_module)])
    assert str(error.value) == (
        f"env.imports: {str(own_module)!r} is not a module name; run from its "
        f"folder {own_module.parent} (or add that folder to PYTHONPATH), then "
        "pass --env.imports fh65_reach (env.imports=['fh65_reach'] in Python)."
    )
    monkeypatch.chdir(own_module.parent)  # the advice, followed
    import_modules(["fh65_reach"])
    assert sys.modules["fh65_reach"].REACHED


@pytest.mark.parametrize("given", ["own/fh65_reach.py", "own/fh65_reach"])
def test_a_file_under_the_current_folder_is_named_as_it_imports(
    given, own_module, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as error:
        import_modules([given])
    assert str(error.value) == (
        f"env.imports: {given!r} is not a module name; own/fh65_reach.py in the "
        "current folder imports as --env.imports own.fh65_reach "
        "(env.imports=['own.fh65_reach'] in Python)."
    )
    import_modules(["own.fh65_reach"])  # the advice, followed
    assert sys.modules["own.fh65_reach"].REACHED


def test_list_has_a_header_the_extra_each_needs_and_a_presets_source(
    monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "envpool", None)  # as if not installed
    assert cli.main(["list", "--env", "breakout"]) == 0
    source, header, *rows = capsys.readouterr().out.splitlines()
    assert source.startswith(f"# {presets_dir() / 'breakout.yaml'}: Breakout ")
    assert "Machado et al. (2018)" in source
    assert header.split() == ["preset", "env", "algo", "needs", "target"]
    assert rows and all(r.split()[3] == "[envpool](missing)" for r in rows)
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == header.split()
    needs = {tuple(x.split()[:4:3]) for x in lines[1:]}
    assert {("cartpole", "-"), ("breakout", "[envpool](missing)")} <= needs
    assert ("craftax_classic", "[craftax]") in needs  # installed here


@pytest.mark.parametrize(
    ("preset", "module", "line"),
    [
        (
            "craftax_classic",
            "craftax",
            "env.id='Craftax-Classic-Symbolic-v1' needs the craftax package, which "
            "is not installed: pip install 'purejaxdrl[craftax]'.",
        ),
        (
            "cartpole_balance",
            "mujoco_playground",
            "env.id='playground/CartpoleBalance' needs the mujoco_playground "
            "package, which is not installed: pip install 'purejaxdrl[playground]'.",
        ),
    ],
)
def test_a_missing_package_is_said_before_the_budget(
    preset, module, line, monkeypatch, capsys
):
    # Too small a budget was refused first; raised, the package then was.
    monkeypatch.setitem(sys.modules, module, None)
    argv = ["train", "--env", preset, "--total-steps", "2048", "--no-files"]
    assert _error(argv, capsys) == f"purejaxdrl: error: {line}"


def test_an_activation_in_capitals_is_offered_in_lower_case(capsys):
    argv = ["train", "--network.activation", "Relu", "--total-steps", "2048",
            "--no-files"]  # fmt: skip
    assert _error(argv, capsys).endswith(
        "pick one of them, e.g. --network.activation relu "
        "(network.activation='relu' in Python)."
    )


@pytest.mark.parametrize(
    ("grid", "meant"),
    [("lr=1e-3,1e-4", "learning_rate"), ("ppo.lr=1e-3,1e-4", "learning_rate"),
     ("budget=2048,4096", "total_steps")],
)  # fmt: skip
def test_a_sweeps_grid_knows_the_aliases_train_knows(grid, meant, capsys):
    argv = ["sweep", "--env", "cartpole", "--grid", grid, "--total-steps", "2048"]
    field = grid.split("=")[0]
    assert _error(argv, capsys).startswith(
        f"purejaxdrl: error: unknown sweep field {field!r}: did you mean {meant!r}? "
    )


def test_an_unevaluated_target_of_a_saved_run_is_checked_by_eval():
    # After a 51 s run it advised training again with --eval.episodes 32;
    # `eval RUN --episodes 32` plays the same evaluation of the saved policy.
    import purejaxdrl as pjd
    from purejaxdrl.cli.target import target_line

    pqn = pjd.load_preset("cartpole", "pqn")
    nan = float("nan")
    run_dir = pathlib.Path("/tmp/my runs/pqn-1")
    saved = types.SimpleNamespace(mean_return=nan, eval_return=nan, run_dir=run_dir)
    assert target_line(pqn.config, pqn, saved).endswith(
        "no evaluation ran; check it with `purejaxdrl eval '/tmp/my runs/pqn-1' "
        "--episodes 32` (the same evaluation, of the saved policy), or train "
        "with --eval.episodes 32"
    )
    unsaved = types.SimpleNamespace(mean_return=nan, eval_return=nan, run_dir=None)
    assert target_line(pqn.config, pqn, unsaved).endswith(
        "no evaluation ran; run with --eval.episodes 32 to check"
    )
