"""How a run's environments split over devices: one rule, one line, both paths.

The rule (`parallel.split_share`) and its message (`env_multiple_message`) are
shared by PPO's minibatches, a record's `env_multiple`, the device choice and
sweeps; the host-env learner's explicit device count is held to it up front.
"""

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo
from purejaxdrl.agents.base import RunShape
from purejaxdrl.parallel import make_mesh, split_share
from purejaxdrl.training.experiment import make_experiment


def test_split_share_is_each_devices_share_or_none():
    # By hand: 12 over 3 is 4 each; 4 is a multiple of 2 and 4, not of 3.
    assert split_share(12, 3) == 4
    assert split_share(12, 3, 2) == 4
    assert split_share(12, 3, 4) == 4
    assert split_share(12, 3, 3) is None
    assert split_share(12, 5) is None  # uneven
    assert split_share(10, 4, 1) is None  # uneven, though 10 // 4 = 2 is even
    assert split_share(10, 4, 2) is None


@pytest.mark.parametrize(("processes", "fewer"), [(1, 4), (2, 2)])
def test_ppos_device_hint_counts_devices_per_process(monkeypatch, processes, fewer):
    # 32 minibatches of unroll_length=16: groups of 2 environments (M / gcd(M,
    # T) = 32 / 16), so each device needs an even share. 8 environments over 8
    # devices is 1 each. One process: --devices 4 (2 each). Two processes of 4
    # devices: --devices counts per process, so 2 (2 x 2 = 4 devices, 2 each);
    # the hint used to name 4 there, the global count (4 x 2 = 8: 1 each again).
    monkeypatch.setattr(jax, "process_count", lambda: processes)
    shape = RunShape(8, 16, num_devices=8)
    with pytest.raises(pjd.ConfigError) as e:
        ppo.validate(ppo.PPOConfig(num_minibatches=32), shape)
    assert str(e.value) == (
        "ppo.num_minibatches=32 with unroll_length=16 needs each device's "
        "environments to be a multiple of 2, got num_envs=8 over 8 devices = 1 "
        "each; pass --num-envs 16 (num_envs=16 in Python) or "
        f"--devices {fewer} (devices={fewer} in Python), or make num_minibatches "
        "a divisor of unroll_length, e.g. "
        "--ppo.num-minibatches 16 (ppo.num_minibatches=16 in Python)."
    )


def test_an_uneven_split_is_said_as_one():
    # 10 environments over 4 devices: 2 "each" would read as a fit.
    shape = RunShape(10, 16, num_devices=4)
    with pytest.raises(pjd.ConfigError) as e:
        ppo.validate(ppo.PPOConfig(num_minibatches=32), shape)
    # 16 = 2 x 4 devices x 2; one device takes all 10, an even count.
    assert str(e.value) == (
        "ppo.num_minibatches=32 with unroll_length=16 needs each device's "
        "environments to be a multiple of 2, got num_envs=10 over 4 devices (an "
        "uneven split); pass --num-envs 16 (num_envs=16 in Python) or --devices 1 "
        "(devices=1 in Python), "
        "or make num_minibatches a divisor of unroll_length, e.g. "
        "--ppo.num-minibatches 16 (ppo.num_minibatches=16 in Python)."
    )


def _envpool_config(**host):
    pytest.importorskip("envpool")
    config = pjd.load_preset("cartpole_envpool").config  # PPO, num_envs 8
    assert (config.num_envs, jax.device_count()) == (8, 8)
    return pjd.apply_overrides(config, {"host": host} if host else {})


def test_an_explicit_learner_count_that_does_not_split_is_refused_up_front():
    # 8 devices: one acts, up to 7 learn; 8 environments split over 4, 2, 1.
    # Once: a JAX IndivisibleError on the first batch, after training began.
    config = _envpool_config(learner_devices=3)
    with pytest.raises(pjd.ConfigError) as e:
        make_experiment(config)
    assert str(e.value) == (
        "host.learner_devices=3 does not fit the run: num_envs=8 does not split "
        "over 3 devices; pass --host.learner-devices 4 or 2 or 1 "
        "(host.learner_devices=4 or 2 or 1 in Python), or 0 to let the run choose."
    )
    exp = make_experiment(_envpool_config(learner_devices=2))
    try:
        assert exp.runner.mesh.size == 2 and exp.device_note is None
    finally:
        exp.runner.close()


def test_the_host_learners_note_names_the_python_form():
    config = _envpool_config()
    exp = make_experiment(config)
    try:
        assert exp.runner.mesh.size == 4
        assert exp.device_note == (
            "learner on 4 of 7 cpu devices: num_envs=8 does not split over 7 "
            "devices; pass --host.learner-devices N to choose "
            "(host.learner_devices=N in Python)."
        )
    finally:
        exp.runner.close()


def test_a_mesh_for_host_environments_is_refused():
    # It was ignored: the learner went on 4 devices, not on the 1 asked for.
    config = _envpool_config()
    with pytest.raises(pjd.ConfigError) as e:
        make_experiment(config, make_mesh(1))
    assert str(e.value) == (
        "make_experiment was given a mesh, but envpool:CartPole-v1 steps on the "
        "host, whose actors and learner take their devices from config.host; "
        "pass no mesh, and set host.actor_devices / host.learner_devices "
        "(--host.actor-devices / --host.learner-devices)."
    )
