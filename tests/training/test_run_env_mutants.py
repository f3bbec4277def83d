"""`run_env.validate`'s acting check: what it makes, imports and passes (mut14).

On a refused config, `pjd.validate` makes the device environment (a host one:
one, in this process) from the config's own `env.imports` and `env.options`,
to say an algorithm cannot act in its actions before the config's advice on
sizes.
"""

import sys

import pytest

import purejaxdrl as pjd
from purejaxdrl.training import run_env
from tests import dict_env  # registered before any test copies the registry
from tests.helpers import env_registrations_undone

ACTING = (
    "dqn needs discrete actions, {id}'s are continuous; pick --algo ppo "
    "(algo='ppo' in Python) or another that acts in them (impala, a2c, sac), "
    "or an --env with discrete actions."
)


def _dqn(env: dict, **fields) -> pjd.TrainConfig:
    base = pjd.load_preset("cartpole", "dqn").config
    return pjd.apply_overrides(base, {"env": env, **fields})


@pytest.fixture
def own_registry():
    """Registrations made in the test are undone after it."""
    with env_registrations_undone():
        yield


def test_the_acting_refusal_is_the_whole_line_with_its_period():
    config = _dqn({"id": "Pendulum-v1"}, total_steps=2048)
    with pytest.raises(pjd.ConfigError) as error:
        pjd.validate(config)
    assert str(error.value) == ACTING.format(id="Pendulum-v1")


def test_a_refused_host_config_makes_one_environment_in_this_process(monkeypatch):
    # hr17 #9: none was made, so PQN on Pendulum was told to raise its budget
    # first. Now one environment, synchronous (no worker process), only on
    # the failing path.
    made, real = [], run_env.make_host_env
    monkeypatch.setattr(
        run_env, "make_host_env", lambda *a, **k: made.append((a, k)) or real(*a, **k)
    )
    options = {"vectorization_mode": "async", "batch_size": 2}
    config = _dqn({"id": "gymnasium:Pendulum-v1", "options": options}, num_envs=0)
    with pytest.raises(pjd.ConfigError) as error:
        pjd.validate(config)
    assert str(error.value) == (
        "dqn needs discrete actions, gymnasium:Pendulum-v1's are continuous; pick "
        "--algo ppo (algo='ppo' in Python) or another that acts in them (impala, "
        "a2c), or an --env with discrete actions."
    )
    assert made == [(("gymnasium:Pendulum-v1", 1, 0), {})]
    made.clear()
    pjd.validate(pjd.load_preset("cartpole_envpool", "ppo").config)
    assert made == []  # a config that passes makes none


def test_the_env_imports_module_is_imported_to_ask_its_actions(
    own_registry, tmp_path, monkeypatch
):
    # A fresh process: the user's module is not yet imported, and only its
    # import registers the environment.
    name = "pjd_mu_continuous_env"
    (tmp_path / f"{name}.py").write_text(
        "from purejaxdrl import env as envs\n"
        "from tests.dict_env import DictSignalEnv\n"
        "envs.register('MuContinuous-v0', lambda: DictSignalEnv(continuous=True))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert name not in sys.modules
    config = _dqn({"id": "MuContinuous-v0", "imports": [name]}, total_steps=2048)
    try:
        with pytest.raises(pjd.ConfigError) as error:
            pjd.validate(config)
    finally:
        sys.modules.pop(name, None)
    assert str(error.value) == ACTING.format(id="MuContinuous-v0")


@pytest.mark.parametrize("continuous", [True, False])
def test_the_env_options_make_the_environment_whose_actions_are_asked(continuous):
    # DictSignal-v0's option `continuous` picks its actions' kind.
    env = {"id": dict_env.ENV_ID, "imports": ["tests.dict_env"]}
    config = _dqn({**env, "options": {"continuous": continuous}}, num_envs=0)
    with pytest.raises(pjd.ConfigError) as error:
        pjd.validate(config)
    if continuous:
        assert str(error.value) == ACTING.format(id=dict_env.ENV_ID)
    else:  # DQN acts in its discrete actions: the config's fault stands
        assert str(error.value).startswith("num_envs=0 must be >= 1")
