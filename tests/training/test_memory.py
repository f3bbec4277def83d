"""A replay learner's memory: said before training, refused before compiling.

A CartPole transition is stored as two float32 observations of 4 (32 B) and
an int32 action, a float32 reward and discount (12 B): 44 B, so a buffer of
n transitions is 44 n bytes, the figure a sweep plans with (`run_bytes`).
"""

import dataclasses
import importlib

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.rng import make_key
from purejaxdrl.training import memory
from purejaxdrl.training.experiment import make_experiment

# The module, not the function the package exports under its name.
train_module = importlib.import_module("purejaxdrl.training.train")
TRAIN = ["train", "--no-files", "--no-compile-cache", "--quiet", "--env", "cartpole"]


def _dqn(**fields):
    config = pjd.load_preset("cartpole", "dqn").config
    config = dataclasses.replace(config, devices=1, total_steps=8192)
    return dataclasses.replace(config, dqn=dataclasses.replace(config.dqn, **fields))


def _tight(monkeypatch, free):
    """A device with `free` bytes of host memory, whatever the machine has."""
    monkeypatch.setattr(memory, "free_bytes", lambda device=None: (free, "host memory"))


def _one_line(argv, capsys):
    status = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    return lines[0]


def test_the_replay_figure_is_the_buffers_own_size():
    config = _dqn(buffer_size=100_000)
    exp = make_experiment(config)
    abstract = exp.runner.abstract_state(make_key(0, config.rng_impl))
    line = memory.check_replay_fits(config, abstract, exp.runner.mesh.size)
    # 100,000 x 44 B = 4.4e6 B = 4.2 MiB.
    assert line.startswith("dqn: one run needs ~")
    assert ", its replay of 100,000 transitions ~4.2 MiB of it, of the " in line
    # IMPALA's replay, sized by replay_size (trajectories), is said too.
    impala = pjd.load_preset("cartpole", "impala").config
    impala = dataclasses.replace(
        impala, impala=dataclasses.replace(impala.impala, replay_ratio=0.5)
    )
    exp = make_experiment(impala)
    abstract = exp.runner.abstract_state(make_key(0, impala.rng_impl))
    line = memory.check_replay_fits(impala, abstract, exp.runner.mesh.size)
    assert (
        line.startswith("impala: one run needs ~") and "replay of 1,024 items" in line
    )
    # PPO keeps no replay: nothing to say.
    ppo = pjd.load_preset("cartpole").config
    exp = make_experiment(ppo)
    abstract = exp.runner.abstract_state(make_key(0, ppo.rng_impl))
    assert memory.check_replay_fits(ppo, abstract, exp.runner.mesh.size) == ""


def test_a_buffer_over_the_memory_is_refused_before_compiling(monkeypatch, capsys):
    _tight(monkeypatch, 64 * 2**20)  # 64 MiB: 2M transitions need 88e6 B
    monkeypatch.setattr(train_module, "compile_programs", pytest.fail)
    argv = [*TRAIN, "--algo", "dqn", "--total-steps", "8192", "--devices", "1"]
    line = _one_line([*argv, "--dqn.buffer-size", "2000000"], capsys)
    assert line.startswith("purejaxdrl: error: dqn.buffer_size=2000000 needs ~")
    assert line.endswith(
        " on each device (~44 B per transition), more than the 64.0 MiB of host "
        "memory a device has; lower it, e.g. --dqn.buffer-size 760000 "
        "(dqn.buffer_size=760000 in Python), or split it over --devices "
        f"{jax.local_device_count()} (devices={jax.local_device_count()} in Python)."
    )
    # The suggested size fits the share a sweep plans with (half the host's).
    assert 760_000 * 44 < 32 * 2**20
    # The Python caller gets the same refusal.
    with pytest.raises(ConfigError, match=r"^dqn.buffer_size=2000000 needs ~"):
        pjd.train(_dqn(buffer_size=2_000_000), console=False)


def test_running_out_of_memory_anyway_is_one_line(monkeypatch, capsys):
    def exhausted(*args, **kwargs):
        raise jax.errors.JaxRuntimeError(
            "RESOURCE_EXHAUSTED: Out of memory allocating 16000000000 bytes."
        )

    monkeypatch.setattr(train_module, "train", exhausted)
    line = _one_line([*TRAIN, "--algo", "dqn", "--total-steps", "8192"], capsys)
    assert line == (
        "purejaxdrl: error: out of memory (RESOURCE_EXHAUSTED: Out of memory "
        "allocating 16000000000 bytes.); the run's state and rollout do not fit "
        "the device; lower what it holds, e.g. --dqn.buffer-size 5000 "
        "(dqn.buffer_size=5000 in Python) or --num-envs 8 (num_envs=8 in Python)."
    )


# The fit rule's edge (a run needing exactly the free bytes fits), a replay
# split over devices said per device, and a RESOURCE_EXHAUSTED that is not
# about memory left alone.
def _abstract(devices, buffer_size):
    config = pjd.load_preset("cartpole", "dqn").config
    config = dataclasses.replace(config, devices=devices, total_steps=8192)
    config = dataclasses.replace(
        config, dqn=dataclasses.replace(config.dqn, buffer_size=buffer_size)
    )
    exp = make_experiment(config)
    abstract = exp.runner.abstract_state(make_key(0, config.rng_impl))
    return config, abstract, exp.runner.mesh.size


def _tight(monkeypatch, free):
    monkeypatch.setattr(memory, "free_bytes", lambda device=None: (free, "host memory"))


def test_a_run_needing_exactly_the_free_memory_fits(monkeypatch):
    config, abstract, data = _abstract(1, 100_000)
    specs = jax.tree.map(lambda x: x.sharding.spec, abstract)
    need = memory.config_run_bytes(abstract, config, data, specs)
    _tight(monkeypatch, need)
    assert memory.check_replay_fits(config, abstract, data).startswith("dqn: one run")
    _tight(monkeypatch, need - 1)
    with pytest.raises(ConfigError):
        memory.check_replay_fits(config, abstract, data)


@pytest.mark.skipif(jax.local_device_count() < 2, reason="needs 2 devices")
def test_a_replay_split_over_devices_is_said_per_device(monkeypatch):
    config, abstract, data = _abstract(2, 100_000)
    assert data == 2
    line = memory.check_replay_fits(config, abstract, data)
    # 100,000 x 44 B over 2 devices: 2.2e6 B = 2.1 MiB on each.
    assert ", its replay of 100,000 transitions ~2.1 MiB of it, of the " in line


def test_a_resource_exhausted_not_about_memory_is_not_out_of_memory():
    full_disk = jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: No space left")
    assert memory.out_of_memory(full_disk) is None
    oom = jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory")
    assert memory.out_of_memory(oom) is not None
