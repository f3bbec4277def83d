"""A newcomer's guesses, round 2 (review fh18): preset paths and file keys."""

import pytest

from purejaxdrl import cli
from purejaxdrl.training.presets.load import presets_dir


def _error(argv, capsys):
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _copy(tmp_path, name, old, new):
    text = (presets_dir() / "cartpole.yaml").read_text()
    assert old in text
    (tmp_path / name).write_text(text.replace(old, new, 1))
    return name


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("envs/cartpole.yaml", "the shipped preset of that name is --env cartpole"),
        ("cartpol.yml", "the shipped preset closest to that name is --env cartpole"),
    ],
)
def test_a_missing_preset_file_names_the_shipped_preset(
    path, said, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # outside a clone: no envs/ folder here
    assert _error(["train", "--env", path, "--no-files"], capsys) == (
        f"purejaxdrl: error: Preset file {path!r} does not exist here "
        f"({tmp_path}); {said} (pjd.load_preset('cartpole') in Python)."
    )


def test_the_positional_hint_outside_a_clone_is_the_preset(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    line = _error(["train", "envs/cartpole.yaml", "--no-files"], capsys)
    assert "a preset file is passed with a flag: did you mean --env cartpole? " in line


def test_a_misspelt_env_key_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = _copy(tmp_path, "y2.yaml", "\nenv:", "\nenviroment:")
    assert _error(["train", "--env", name, "--no-files"], capsys) == (
        f"purejaxdrl: error: Preset {name!r}: unknown top-level key 'enviroment'; "
        "did you mean 'env'? A preset's environment is its env: mapping (env: "
        "{id: CartPole-v1})."
    )


def test_an_algorithm_key_in_capitals_is_matched(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = _copy(tmp_path, "y5.yaml", "\nppo:", "\nPPO:")
    line = _error(["train", "--env", name, "--no-files"], capsys)
    assert f"Preset {name!r}: unknown top-level key 'PPO'; did you mean 'ppo'? " in line


def test_a_misspelt_field_in_a_file_is_told_as_the_files_key(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    name = _copy(tmp_path, "y1.yaml", "  num_envs: ", "  num_env: ")
    line = _error(["train", "--env", name, "--no-files"], capsys)
    assert (
        "Unknown config field 'num_env': did you mean num_envs (num_envs: in the "
        "file)? "
    ) in line
    assert "--num-envs" not in line
