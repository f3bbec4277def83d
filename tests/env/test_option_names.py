"""The "did you mean" of an unknown environment option offers only usable names."""

import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.env.option_names import check_options
from purejaxdrl.env.playground_options import listed_options, unusable_options

# A Playground task's option names (CartpoleBalance's, shortened): it loads no
# Menagerie model, so menagerie_path and the pixel options are not usable.
VALID = {
    "action_repeat",
    "ctrl_dt",
    "episode_length",
    "impl",
    "menagerie_path",
    "vision",
    "vision_config.cam_res",
}


def _message(option: str) -> str:
    unusable = unusable_options(VALID, menagerie=False)
    listed = listed_options(VALID, menagerie=False)
    with pytest.raises(ConfigError) as error:
        check_options("playground:X", [option], VALID, listed, unusable)
    return str(error.value)


@pytest.mark.parametrize(
    ("option", "closest"), [("menagerie_pth", "menagerie_path"), ("visoin", "vision")]
)
def test_an_unusable_closest_name_is_said_to_be_unusable_not_suggested(option, closest):
    message = _message(option)
    assert "did you mean" not in message
    assert f"{closest!r} (the closest name) is not usable here; its options" in message


def test_a_usable_closest_name_is_suggested():
    assert "did you mean 'episode_length'? its options" in _message("episode_lenght")


def test_with_several_unknown_names_the_hint_says_which_it_is_for():
    # Sorted, the first is the one hinted at; the hint names it, so that it
    # is not read as the other's.
    unusable = unusable_options(VALID, menagerie=False)
    with pytest.raises(ConfigError) as error:
        check_options("playground:X", ["zzz", "episode_lenght"], VALID, None, unusable)
    assert str(error.value).startswith(
        "env.options 'episode_lenght', 'zzz' are not options of playground:X: "
        "did you mean 'episode_length' for 'episode_lenght'? its options are "
    )
    with pytest.raises(ConfigError) as error:
        check_options("playground:X", ["visoin", "zzz"], VALID, None, unusable)
    assert "'vision' (the closest name to 'visoin') is not usable here; " in str(
        error.value
    )


def test_without_unusable_names_every_name_may_be_suggested():
    with pytest.raises(ConfigError, match="did you mean 'vision'"):
        check_options("env", ["visio"], VALID)


@pytest.mark.parametrize("option", ["randomize", "randomizer"])
def test_randomising_another_backends_env_says_it_is_playgrounds(option):
    # pg18 #6: `--env cartpole --env.option randomize=true` listed CartPole's
    # options and never said that only playground/ ids randomise.
    with pytest.raises(ConfigError) as error:
        check_options("CartPole-v1", [option], {"gravity", "force_mag"})
    assert str(error.value) == (
        f"env.options {option!r} is not an option of CartPole-v1: domain "
        "randomisation (randomize, randomizer) is MuJoCo Playground's only: use "
        "a playground/<Name> task, e.g. --env.id playground/CartpoleBalance "
        "(env.id='playground/CartpoleBalance' in Python), or drop it; its "
        "options are force_mag, gravity; fix the name in --env.option KEY=VALUE "
        "(env.options={'KEY': VALUE} in Python, or the preset's env.options), or "
        "drop it."
    )
