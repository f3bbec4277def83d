"""A newcomer's guesses (review fh16): each refusal names what was meant."""

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config_docs import both_ways, field_example, in_yaml
from purejaxdrl.training.presets.load import presets_dir


def _error(argv, capsys):
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _copy(tmp_path, name, edit):
    text = (presets_dir() / "cartpole.yaml").read_text()
    lines = text.splitlines()
    path = tmp_path / name
    path.write_text("\n".join(edit(lines)) + "\n")
    return path


def _gamma_twice(lines):
    # cartpole's ppo.ppo holds `gamma: 0.99` further down.
    at = lines.index("  ppo:")
    return [*lines[: at + 1], "    gamma: 0.9", *lines[at + 1 :]]


def test_a_key_written_twice_in_a_preset_is_refused(tmp_path, monkeypatch, capsys):
    path = _copy(tmp_path, "typo5.yaml", _gamma_twice)
    first = _gamma_twice(path.read_text().splitlines()).index("    gamma: 0.9")
    second = next(
        i
        for i, line in enumerate(path.read_text().splitlines())
        if "gamma: 0.99" in line
    )
    expected = (
        f"Preset {str(path)!r} line {second + 1}: key 'gamma' appears twice in "
        f"section ppo.ppo (lines {first + 1} and {second + 1}); keep one."
    )
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_preset(str(path))
    assert str(e.value) == expected
    monkeypatch.chdir(tmp_path)
    assert _error(["train", "--env", "typo5.yaml", "--no-files"], capsys) == (
        "purejaxdrl: error: " + expected.replace(str(path), "typo5.yaml")
    )


def test_a_top_level_key_twice_is_named_so(tmp_path):
    path = _copy(tmp_path, "two.yaml", lambda lines: [*lines, "env: {id: Acrobot-v1}"])
    with pytest.raises(pjd.ConfigError, match=r"key 'env' appears twice at the top"):
        pjd.load_preset(str(path))


@pytest.mark.parametrize("env_id", ["Breakout-v5", "ALE/Breakout-v5"])
def test_an_atari_id_names_the_envpool_id_and_its_preset(env_id, capsys):
    line = _error(["train", "--no-files", "--env.id", env_id], capsys)
    assert f"Unknown environment {env_id!r}: did you mean envpool:Breakout-v5 " in line
    assert "the breakout preset trains it: --env breakout" in line
    assert "MinAtar" not in line


def test_list_offers_no_path_for_an_unknown_name(capsys):
    line = _error(["list", "--env", "cartpol"], capsys)
    assert "did you mean 'cartpole'?" in line
    assert ".yaml" not in line and "path" not in line


def test_a_preset_file_as_a_positional_word_hints_its_flag(capsys):
    path = str(presets_dir() / "cartpole.yaml")
    line = _error(["train", path, "--no-files"], capsys)
    assert f"did you mean --env {path}?" in line


def test_a_misspelt_target_is_named(tmp_path):
    path = _copy(
        tmp_path,
        "typo4.yaml",
        lambda ls: [x.replace("  target:", "  taget:") for x in ls],
    )
    with pytest.raises(
        pjd.ConfigError, match=r"unknown key 'taget': did you mean target "
    ):
        pjd.load_preset(str(path))


def test_a_mapping_key_that_is_no_section_names_the_top_level_field():
    config = pjd.load_preset("cartpole").config
    with pytest.raises(pjd.ConfigError) as e:
        pjd.apply_overrides(config, {"train": {"total_steps": 10}})
    assert "'train' is no section; total_steps is a top-level field: " in str(e.value)
    assert "{'total_steps': 10}" in str(e.value)


def test_a_preset_files_fix_is_spelt_as_yaml(tmp_path):
    def edit(lines):
        at = next(i for i, x in enumerate(lines) if x.startswith("  network:"))
        lines[at] = "  network: {hidden_sizes: 64,64, activation: tanh}"
        return lines

    path = _copy(tmp_path, "y3.yaml", edit)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_preset(str(path))
    assert str(e.value).endswith(
        "network.hidden_sizes=64 is not a list; pass e.g. "
        "network.hidden_sizes: [64, 64] in the file."
    )


@pytest.mark.parametrize("command", ["eval", "export"])
def test_a_folder_inside_a_run_names_the_run(command, tmp_path, capsys):
    run = tmp_path / "run"
    (run / "checkpoints" / "976").mkdir(parents=True)
    (run / "config.yaml").write_text("algo: ppo\n")
    out = ["--out", str(tmp_path / "out")] if command == "export" else []
    line = _error([command, str(run / "checkpoints"), *out], capsys)
    assert f"inside run {str(run)!r} (its checkpoints), not a run" in line
    line = _error([command, str(run / "checkpoints" / "976"), *out], capsys)
    assert f"pass the run, {str(run)!r} with --checkpoint 976 for that save" in line
    # Python's spelling is export_policy's step=; eval has no Python function
    # taking checkpoint= (reviews/ck17.md #5).
    python = " (step=976 in Python)" if command == "export" else ""
    assert line.endswith(f"for that save{python}.")


def test_a_run_dir_refusal_is_spelt_for_python_too(tmp_path):
    from purejaxdrl.training.run_files import new_dir

    (tmp_path / "file").write_text("")
    with pytest.raises(pjd.ConfigError) as e:
        new_dir(tmp_path / "file" / "runs", "x")
    assert str(e.value).endswith("--run-dir DIR (run_dir='DIR' in Python).")
    with pytest.raises(pjd.ConfigError) as e:  # mkdir's OSError (root too)
        new_dir("/proc/nope", "x")
    assert str(e.value).endswith(
        "pass a folder you can write to: --run-dir DIR (run_dir='DIR' in Python)."
    )


# mut18: each test below failed with one mutant of the hints above.
def test_a_misspelt_field_in_a_section_is_not_taken_for_target(tmp_path):
    text = (presets_dir() / "cartpole.yaml").read_text()
    path = tmp_path / "typo.yaml"
    path.write_text(text.replace("  ppo:\n", "  num_env: 8\n  ppo:\n", 1))
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_preset(str(path))
    assert "did you mean target" not in str(e.value)
    assert "num_envs" in str(e.value)


def test_a_scalar_fix_is_spelt_as_yaml_without_the_document_end():
    assert in_yaml("pass --num-envs 4 (num_envs=4 in Python).") == (
        "pass num_envs: 4 in the file."
    )


@pytest.mark.parametrize(
    ("fix", "key", "value"),
    [
        (
            field_example("network.hidden_sizes", "64 64", (64, 64)),
            "network.hidden_sizes",
            [64, 64],
        ),
        (field_example("network.core", "gru", repr("gru")), "network.core", "gru"),
        (field_example("ppo.learning_rate", 0.0003), "ppo.learning_rate", 0.0003),
        (
            both_ways(
                "--env.option episode_length=",
                "env.options",
                "100",
                {"episode_length": 100},
            ),
            "env.options",
            {"episode_length": 100},
        ),
        (
            field_example("env.normalize_observations", "true", True),
            "env.normalize_observations",
            True,
        ),
    ],
)
def test_every_fix_the_builder_writes_reads_back_as_the_file_s_key(fix, key, value):
    # The builder and its reader live side by side (config_docs): what
    # `both_ways` writes, `in_yaml` spells as the key and YAML value a preset
    # file takes.
    text = in_yaml(f"bad; pass {fix}.")
    prefix, written = text.removeprefix("bad; pass ").split(": ", 1)
    assert prefix == key
    assert written.endswith(" in the file.")
    assert yaml.safe_load(written.removesuffix(" in the file.")) == value


def test_list_of_a_yml_file_says_list_shows_shipped_presets(tmp_path, capsys):
    path = tmp_path / "mine.yml"
    path.write_text((presets_dir() / "cartpole.yaml").read_text())
    line = _error(["list", "--env", str(path)], capsys)
    assert "list shows shipped presets only" in line


def test_list_hints_a_preset_whatever_the_case(capsys):
    line = _error(["list", "--env", "CARTPOL"], capsys)
    assert "did you mean 'cartpole'?" in line


def test_a_dashed_top_level_key_in_a_mapping_is_named():
    config = pjd.load_preset("cartpole").config
    with pytest.raises(pjd.ConfigError) as e:
        pjd.apply_overrides(config, {"train": {"total-steps": 10}})
    assert "'train' is no section; total-steps is a top-level field" in str(e.value)
