"""Playground options given as nested dicts mean their dotted keys (pg18 #1).

`{'reward_config': {'scales': {'energy': 0}}}` (or the flag's
`reward_config={scales: {energy: 0}}`) passed every check and reached
Playground nested, where `update_from_flattened_dict` replaced the whole group
with it: the task's other keys gone, a misspelt key a traceback, a wrong type
stored. DM Control's CartpoleBalance has one group, `vision_config`.
"""

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mujoco_playground") is None,
    reason="needs the [playground] extra",
)

from purejaxdrl import env as envs  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.env import playground_env  # noqa: E402

ID = "playground/CartpoleBalance"


@pytest.fixture
def overrides(monkeypatch):
    """The `config_overrides` the adapter hands Playground's registry.load."""
    registry = playground_env.import_registry()
    seen = {}

    class Registry:
        def __getattr__(self, name):
            return getattr(registry, name)

        def load(self, name, config_overrides=None):
            seen.update(config_overrides or {})
            return registry.load(name, config_overrides=config_overrides)

    monkeypatch.setattr(playground_env, "import_registry", lambda *_: Registry())
    return seen


def test_a_nested_dict_sets_its_keys_and_keeps_the_groups_others(overrides):
    env = envs.make(ID, vision_config={"cam_res": [32, 32]})
    assert overrides == {"vision_config.cam_res": (32, 32), "impl": "jax"}
    group = env.env._config.vision_config
    assert group.cam_res == (32, 32)
    # The rest of the group is the task's own, not dropped.
    assert group.cam_active == (True, False) and group.nworld == 1024


def test_the_flags_yaml_mapping_reaches_playground_as_its_dotted_keys(overrides):
    import purejaxdrl as pjd
    from purejaxdrl.cli.option_values import read_option

    config = pjd.load_preset("cartpole_balance").config
    option = {"vision_config": read_option("{cam_res: [16, 16], nworld: 8}")}
    config = pjd.apply_overrides(config, {"env": {"options": option}})
    env = envs.make(config.env.id, **config.env.options)  # as a run makes it
    assert overrides["vision_config.cam_res"] == (16, 16)
    assert overrides["vision_config.nworld"] == 8
    assert env.env._config.vision_config.use_textures is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"vision_config": {"cam_rez": [8, 8]}},
            "env.options 'vision_config.cam_rez' is not an option of "
            "playground/CartpoleBalance: 'vision_config.cam_res' (the closest",
        ),
        (
            {"vision_config": {"nworld": "abc"}},
            "env.options vision_config.nworld='abc' is not an integer "
            "(playground/CartpoleBalance's default: 1024)",
        ),
        (
            {"vision_config": {}},
            "env.options vision_config={}: vision_config is a group of ",
        ),
        (
            {"vision_config": {"nworld": 3}, "vision_config.nworld": 4},
            "env.options 'vision_config.nworld' is set twice (dotted and in a "
            "nested dict: 3 and 4); keep one.",
        ),
    ],
)
def test_a_nested_dicts_keys_are_checked_as_dotted_ones(overrides, options, message):
    with pytest.raises(ConfigError) as error:
        envs.make(ID, **options)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not overrides  # refused before Playground saw it
