"""A replay run saved with `devices: 0` resumes on its saved device count."""

import json
import pathlib

import jax

from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.run import replay_devices


def _run_dir(tmp_path: pathlib.Path, devices: int) -> pathlib.Path:
    # What a checkpoint's meta holds, for the fields read here; an older one
    # and orbax's temporary folder beside it.
    for step, saved in (("3", devices), ("7", devices), ("9.orbax-tmp-1", 99)):
        meta = tmp_path / "checkpoints" / step / "meta"
        meta.mkdir(parents=True)
        (meta / "metadata").write_text(json.dumps({"devices": saved}))
    return tmp_path


def test_a_replay_run_left_to_auto_takes_its_saved_count_and_says_so(tmp_path):
    # conftest: 8 fake CPU devices. Before, the resume was refused: "resumes
    # only on 2 devices, not 8; pass --devices 2."
    assert jax.local_device_count() == 8
    config, note = replay_devices(TrainConfig(algo="dqn"), _run_dir(tmp_path, 2))
    assert config.devices == 2
    assert config == TrainConfig(algo="dqn", devices=2)
    assert note == (
        "resuming on 2 of 8 cpu devices: this dqn run keeps its replay buffer "
        "in 2 shards, one per device, and resumes only on as many."
    )


def test_other_runs_keep_their_config(tmp_path):
    run_dir = _run_dir(tmp_path, 2)
    for config in (
        TrainConfig(algo="ppo"),  # no replay: the environments re-split
        TrainConfig(algo="dqn", devices=4),  # chosen: `restore` says if it fits
    ):
        assert replay_devices(config, run_dir) == (config, None)
    # More than there are, or none saved: left to `restore`, which names them.
    more = _run_dir(tmp_path / "16", 16)
    auto = TrainConfig(algo="dqn")
    assert replay_devices(auto, more) == (auto, None)
    # All the devices: no note, but the count set, so that processes with
    # other local counts resolve the same `devices` (they must agree).
    every = _run_dir(tmp_path / "8", 8)
    assert replay_devices(TrainConfig(algo="dqn"), every) == (
        TrainConfig(algo="dqn", devices=8),
        None,
    )
    empty = TrainConfig(algo="dqn")
    assert replay_devices(empty, tmp_path / "none") == (empty, None)
