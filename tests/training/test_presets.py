"""A preset file's shape is checked: one line naming the key and the fix."""

import re

import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.training.presets.load import NoSectionError

ENV = "env: {id: CartPole-v1}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The target block: a mapping of known keys with numbers in them.
        ("dqn: {target: 5}\n", "dqn.target=5 is not a mapping"),
        (
            "dqn: {target: {mean_return: high, env_steps: 1000}}\n",
            "dqn.target.mean_return='high' is not a number",
        ),
        (
            "dqn: {target: {mean_return: .nan, env_steps: 1000}}\n",
            "dqn.target.mean_return=nan is not a number",
        ),
        (
            "dqn: {target: {mean_return: .inf, env_steps: 1000}}\n",
            "dqn.target.mean_return=inf is not finite",
        ),
        (
            "dqn: {target: {mean_retrun: 475, env_steps: 1000}}\n",
            "unknown key 'mean_retrun'; did you mean 'mean_return'?",
        ),
        (
            "dqn: {target: {mean_return: 475, env_steps: abc}}\n",
            "dqn.target.env_steps='abc' is not a positive integer",
        ),
        (
            "dqn: {target: {mean_return: 475, env_steps: 0}}\n",
            "dqn.target.env_steps=0 is not a positive integer",
        ),
        ("dqn: {target: {mean_return: 475}}\n", "dqn.target has no env_steps"),
        (
            "dqn: {target: {mean_return: 1, env_steps: 10, of: best}}\n",
            "dqn.target.of='best' is not one of",
        ),
        (
            "dqn: {target: {mean_return: 1, env_steps: 10, measured: no_idea}}\n",
            "dqn.target.measured='no_idea' is not true or false",
        ),
        # Top-level keys: env, description and algorithm names only.
        (
            "num_envs: 64\ndqn: {num_envs: 4}\n",
            "unknown top-level key 'num_envs'; top-level keys are env, "
            "description and algorithm names; run fields go inside",
        ),
        ("descripton: x\ndqn: {}\n", "did you mean 'description'?"),
        ("dqnn: {}\n", "unknown top-level key 'dqnn'; did you mean 'dqn'?"),
        ("DQN: {}\n", "unknown top-level key 'DQN'; did you mean 'dqn'?"),
        # A section's misspelt target is named as the target, not a run field.
        (
            "dqn: {taget: {mean_return: 475, env_steps: 1000}}\n",
            "unknown key 'taget': did you mean target (the section's target score",
        ),
        # A run's config.yaml is no preset: the fix is to resume the run.
        (
            "algo: dqn\nseed: 0\ntotal_steps: 1000\ndqn: {}\n",
            "is a run's resolved config (algo: dqn, seed, total_steps), not a preset",
        ),
        # A section that is not a mapping says so, not that it is missing.
        ("dqn: [1, 2]\n", "its 'dqn' section is a list, not a mapping"),
    ],
)
def test_a_bad_preset_file_is_refused_in_one_line(tmp_path, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(ENV + text)
    with pytest.raises(ConfigError) as raised:
        pjd.load_preset(str(path), "dqn")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_good_target_loads_with_its_measured_flag(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        ENV + "description: ok\n"
        "dqn: {target: {mean_return: 10, env_steps: 1.0e+6, measured: false}}\n"
    )
    preset = pjd.load_preset(str(path), "dqn")
    assert (preset.target_return, preset.target_steps) == (10, 1_000_000)
    assert preset.target_measured is False
    assert pjd.load_preset("cartpole", "ppo").target_measured is True


def test_a_bad_target_ends_the_train_command_with_exit_status_2(tmp_path, capsys):
    from purejaxdrl import cli

    path = tmp_path / "p.yaml"
    path.write_text(ENV + "dqn: {target: {mean_return: high, env_steps: 10}}\n")
    assert cli.main(["train", "--env", str(path), "--algo", "dqn", "--no-files"]) == 2
    err = capsys.readouterr().err.strip()
    assert "mean_return='high' is not a number" in err and "\n" not in err


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        # An id with no preset: a preset's settings, the id replaced.
        (
            "MountainCar-v0",
            "--env cartpole --env.id MountainCar-v0 (pjd.apply_overrides("
            "pjd.load_preset('cartpole').config, {'env': {'id': 'MountainCar-v0'}})"
            " in Python).",
        ),
        ("brax/hopper", "--env ant --env.id brax/hopper (pjd.apply_overrides("),
        # An id a shipped preset trains: that preset.
        ("brax/ant", "the ant preset trains it: --env ant (pjd.load_preset("),
        (
            "CartPole-v1",
            "the cartpole preset trains it: --env cartpole "
            "(pjd.load_preset('cartpole') in Python).",
        ),
    ],
)
def test_an_environment_id_as_a_preset_names_env_id(name, hint):
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(name)
    assert f"{name!r} is an environment id, not a preset" in str(e.value)
    assert hint in str(e.value)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        # Host ids need a host preset (bring-your-own-env.md's command).
        (
            "gymnasium:CartPole-v1",
            "--env cartpole_envpool --env.id gymnasium:CartPole-v1 (",
        ),
        ("envpool:CartPole-v1", "the cartpole_envpool preset trains it"),
        # Misspelt: nothing checks a host id before an actor starts.
        ("envpool:Seaquest-v5x", "--env cartpole_envpool"),
    ],
)
def test_a_host_id_as_a_preset_only_looks_like_an_id(name, hint):
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(name)
    assert f"{name!r} looks like an environment id, not a preset" in str(e.value)
    assert hint in str(e.value)


def _suggested(name: str, algo: str) -> str:
    """The preset that the hint for `--algo algo --env name` suggests."""
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(name, algo)
    match = re.search(
        r"--env (\w+)(?: --env\.id (\S+))? \(.* in Python\)\.$", str(e.value)
    )
    assert match, str(e.value)
    if match.group(2):
        assert match.group(2) == name, str(e.value)
    return match.group(1)


@pytest.mark.parametrize(
    ("name", "algo", "base"),
    [
        ("Pendulum-v1", "sac", "inverted_pendulum"),
        ("brax/hopper", "sac", "inverted_pendulum"),
        ("MountainCar-v0", "r2d2", "cartpole_masked"),
        ("MountainCar-v0", "dqn", "cartpole"),
        ("brax/ant", "ppo", "ant"),
        ("playground/CheetahRun", "sac", "cheetah_run"),
        # Kin by suffix or prefix, not only by family/.
        ("Seaquest-MinAtar", "ppo", "asterix_minatar"),
        ("Seaquest-MinAtar", "impala", "breakout_minatar"),
        ("Craftax-Symbolic-v1", "pqn", "craftax_classic"),
        ("envpool:Seaquest-v5", "ppo", "battle_zone"),
        ("envpool:Seaquest-v5", "pqn", "pong"),
        ("gymnasium:Acrobot-v1", "impala", "cartpole_envpool"),
    ],
)
def test_an_environment_ids_hint_names_a_preset_with_the_algorithm(name, algo, base):
    assert _suggested(name, algo) == base
    # The suggested command loads: the preset has a section for the algorithm.
    preset = pjd.load_preset(base, algo)
    assert preset.config.algo == algo


@pytest.mark.parametrize(
    ("name", "algo"),
    [("brax/ant", "dqn"), ("envpool:Pong-v5", "sac"), ("Seaquest-MinAtar", "r2d2")],
)
def test_an_environment_id_no_preset_of_the_algorithm_trains_says_so(name, algo):
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(name, algo)
    assert f"no shipped preset with a {algo} section trains such an" in str(e.value)
    assert "--env " not in str(e.value)


def test_an_unknown_name_that_is_no_id_lists_the_presets():
    with pytest.raises(ConfigError, match="did you mean 'cartpole'\\? choose one of"):
        pjd.load_preset("cartpol")


def test_a_missing_section_says_how_to_train_its_untuned_defaults_from_python():
    # From Python there is no --algo or --env: the message says what to pass,
    # and the error holds the environment with A2C's own defaults to train.
    with pytest.raises(NoSectionError) as missing:
        pjd.load_preset("acrobot", algo="a2c")
    said = str(missing.value)
    assert "copy that file to a .yaml of your own, add a section 'a2c:'" in said
    assert "; or pick another --algo, or an --env with one (" in said
    assert "From Python: pass another algo= or preset, or take a2c's untuned" in said
    assert "except pjd.training.presets.NoSectionError as e: config = e.untuned" in (
        said
    )
    untuned = missing.value.untuned
    assert untuned.algo == "a2c" and untuned.a2c == pjd.agents.A2CConfig()
    assert untuned.env == pjd.load_preset("acrobot").config.env
    pjd.validate(untuned)  # a config to train as it is
    assert ".untuned" in pjd.load_preset.__doc__


def test_exponent_notation_in_a_preset_is_a_number_as_on_the_command_line(tmp_path):
    # PyYAML read `1e3` as the string '1e3': typed fields converted it, but
    # env.options reached the environment as a string (`--env.option
    # max_steps_in_episode=1e3` was already a float).
    path = tmp_path / "mc.yaml"
    path.write_text(
        "env: {id: CartPole-v1, options: {max_steps_in_episode: 1e3, name: '1e3'}}\n"
        "ppo: {num_envs: 4, total_steps: 1024, ppo: {learning_rate: 1e-3}}\n"
    )
    config = pjd.load_preset(str(path)).config
    assert config.env.options == {"max_steps_in_episode": 1000.0, "name": "1e3"}
    assert type(config.env.options["max_steps_in_episode"]) is float
    assert config.ppo.learning_rate == 1e-3


def test_a_sections_env_options_add_to_the_files_as_the_command_lines_do(tmp_path):
    # A section's options replaced the file's whole: the file's time limit was
    # dropped, silently, where `--env.option` adds to a preset's.
    path = tmp_path / "merge.yaml"
    path.write_text(
        "env: {id: CartPole-v1, options: {max_steps_in_episode: 200, gravity: 9.8}}\n"
        "ppo:\n  env:  # merged into the file's env\n    options: {gravity: 12.0}\n"
        "dqn:\n  env: {id: Acrobot-v1, options: {max_steps_in_episode: 100}}\n"
        "a2c:\n  env: {normalize_observations: true}\n"
    )
    ppo = pjd.load_preset(str(path)).config.env
    assert ppo.options == {"max_steps_in_episode": 200, "gravity": 12.0}
    # Another id: the file's options are CartPole's, so not passed to Acrobot.
    dqn = pjd.load_preset(str(path), "dqn").config.env
    assert (dqn.id, dqn.options) == ("Acrobot-v1", {"max_steps_in_episode": 100})
    a2c = pjd.load_preset(str(path), "a2c").config.env
    assert a2c.options == {"max_steps_in_episode": 200, "gravity": 9.8}


def test_a_sections_dotted_env_options_add_to_the_files_as_the_nested_do(tmp_path):
    # `env.options: {...}` in a section (apply_overrides reads dotted keys)
    # replaced the file's options whole, dropping its time limit silently.
    path = tmp_path / "dot.yaml"
    path.write_text(
        "env: {id: CartPole-v1, options: {max_steps_in_episode: 200, gravity: 9.8}}\n"
        "ppo: {env.options: {gravity: 12.0}}\n"
        "a2c: {env.options.gravity: 12.0}\n"
        "dqn: {env.id: Acrobot-v1, env.options: {max_steps_in_episode: 100}}\n"
        "sac: {env.options: {gravity: 12.0}, env: {options: {gravity: 11.0}}}\n"
    )
    merged = {"max_steps_in_episode": 200, "gravity": 12.0}
    assert pjd.load_preset(str(path)).config.env.options == merged
    assert pjd.load_preset(str(path), "a2c").config.env.options == merged
    dqn = pjd.load_preset(str(path), "dqn").config.env
    assert (dqn.id, dqn.options) == ("Acrobot-v1", {"max_steps_in_episode": 100})
    # Both spellings of one option: refused, as apply_overrides refuses them.
    with pytest.raises(
        pjd.ConfigError, match=r"section sac: env\.options\.gravity is set twice"
    ):
        pjd.load_preset(str(path), "sac")


@pytest.mark.parametrize("name", ["ant", "halfcheetah"])
def test_the_physics_presets_comments_say_their_towers_are_not_shared(name):
    # They said "one shared 4x128 silu network for the policy and value
    # towers", but set no network.shared_torso: two separate towers load.
    from purejaxdrl.training.presets.load import presets_dir

    text = (presets_dir() / f"{name}.yaml").read_text()
    network = pjd.load_preset(name).config.network
    assert network.shared_torso is False and network.hidden_sizes == (128,) * 4
    assert "one shared" not in text and "separate, not shared" in text


def test_the_missing_sections_fix_trains_the_untuned_defaults(tmp_path):
    # The fix it names: a copy of the shipped file with `a2c: {}` is a preset
    # of a2c's untuned defaults on acrobot, the config `.untuned` holds.
    with pytest.raises(NoSectionError) as missing:
        pjd.load_preset("acrobot", algo="a2c")
    shipped = pjd.training.presets.presets_dir() / "acrobot.yaml"
    copy = tmp_path / "my.yaml"
    copy.write_text(shipped.read_text() + "a2c: {}\n")
    assert pjd.load_preset(str(copy), algo="a2c").config == missing.value.untuned
    # A file of the user's own is not copied: the section goes into it.
    with pytest.raises(NoSectionError) as own:
        pjd.load_preset(str(copy), algo="dqn")
    assert "copy" not in own.value.for_flags(None, None)
    assert "add a section 'dqn:' ('dqn: {}' takes dqn's untuned defaults) to it" in (
        own.value.for_flags(None, None)
    )
