"""Playground options from Python read as `--env.option` reads them (pg16 #1, #2, #6).

`{"episode_length": "10"}` and `randomize="true"` from Python were refused
("'10' is not an integer") where the flag's same text trained; and every
refusal named only the flag, never the Python spelling.
"""

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mujoco_playground") is None,
    reason="needs the [playground] extra",
)

from purejaxdrl import env as envs  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.env import playground_options  # noqa: E402
from purejaxdrl.env.option_spelling import both  # noqa: E402

ID = "playground/CartpoleBalance"


@pytest.mark.parametrize(
    ("text", "randomize"),
    [("true", True), ("yes", True), (1, True), ("1", True), ("false", False),
     (0, False), ("no", False)],
)  # fmt: skip
def test_text_and_0_1_values_from_python_are_read_as_the_flag_reads_them(
    text, randomize
):
    env = envs.make(ID, randomize=text, episode_length="10")
    assert env.randomize is randomize and env.episode_length == 10
    assert env.env._config.episode_length == 10


def test_a_list_option_as_text_from_python_is_read_as_the_flag_reads_it():
    env = envs.make(ID, **{"vision_config.cam_res": "[32, 32]"})
    assert env.env._config.vision_config.cam_res == (32, 32)


def test_a_preset_config_with_text_options_builds_its_environment():
    import purejaxdrl as pjd

    config = pjd.load_preset("cartpole_balance").config
    overrides = {"env": {"options": {"episode_length": "10", "randomize": "yes"}}}
    config = pjd.apply_overrides(config, overrides)
    env = envs.make(config.env.id, **config.env.options)  # as a run makes it
    assert env.episode_length == 10 and env.randomize is True


@pytest.mark.parametrize(
    ("options", "python"),
    [
        ({"randomize": 2}, "(env.options={'randomize': False} in Python)."),
        ({"episode_length": "x"}, "(env.options={'episode_length': 1000} in Python)."),
        ({"episode_length": 0}, "(env.options={'episode_length': 1000} in Python)."),
        ({"auto_reset": "x"}, "(env.options={'auto_reset': 'fresh'} in Python)."),
        ({"impl": "warp"}, "(env.options={'impl': 'jax'} in Python) or leave"),
        ({"randomizer": "generic"}, "(env.options={'randomize': True} in Python)"),
        ({"randomize": True, "randomizer": "x"}, "{'randomizer': 'auto'} in Python)."),
        ({"randomise": True}, "(env.options={'KEY': VALUE} in Python, or the"),
    ],
)
def test_every_option_error_names_the_flag_and_the_python_spelling(options, python):
    with pytest.raises(ConfigError) as error:
        envs.make(ID, **options)
    message = str(error.value)
    assert "\n" not in message and "--env.option " in message
    assert python in message, message


def test_the_options_listed_leave_out_groups_refused_as_one_value():
    # `reward_config` was offered among "its options", then refused as "a
    # group ..., not one value"; its keys are what can be set.
    valid = {"episode_length", "reward_config", "reward_config.scales"}
    valid |= {"reward_config.scales.energy", "reward_config.sigma"}
    listed = playground_options.listed_options(valid, True)
    assert listed == (
        "episode_length, reward_config.scales.energy, reward_config.sigma"
    )


@pytest.mark.parametrize(
    ("options", "fix"),
    [
        ({"auto_reset": "cached"}, both("auto_reset", "cached_first_state")),
        ({"auto_reset": "frsh"}, both("auto_reset", "fresh")),
        ({"auto_reset": 3}, both("auto_reset", "fresh")),  # none close: the default
        ({"randomize": 1, "randomizer": "playgrond"}, both("randomizer", "playground")),
        ({"randomize": 1, "randomizer": "generc"}, both("randomizer", "generic")),
        ({"randomize": 1, "randomizer": "x"}, both("randomizer", "auto")),
    ],
)  # fmt: skip
def test_a_misspelt_choice_is_offered_its_close_match_not_the_default(options, fix):
    # pg18 #4: `auto_reset=cached` was told to pass auto_reset=fresh, the
    # opposite of what was meant; option names already had "did you mean".
    with pytest.raises(ConfigError) as error:
        envs.make(ID, **options)
    message = str(error.value)
    assert message.endswith(f"; pass {fix}.") and "\n" not in message, message


def test_a_count_of_zero_is_taken_and_minus_one_is_refused():
    # The rule says a count "must be >= 0": 0 is its own boundary and is
    # taken; refusing njmax=0 would contradict the message it gives (mut26 PO1).
    check = playground_options.check_physics
    check(ID, {"njmax": 0}, {"njmax": 4})
    with pytest.raises(ConfigError, match="njmax=-1: njmax is a count .* >= 0"):
        check(ID, {"njmax": -1}, {"njmax": 4})
