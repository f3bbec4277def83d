"""Result fields the files name otherwise are documented so, and truly."""

import json
import re

import pytest

import purejaxdrl as pjd


def _attribute(cls: type, name: str) -> str:
    """The entry of `name` in `cls`'s docstring Attributes."""
    doc = cls.__doc__ or ""
    found = re.search(rf"\n      {name}: (.*?)(?=\n      \w+: |\n\n)", doc, re.S)
    assert found, f"{cls.__name__}'s docstring documents no {name}"
    return " ".join(found.group(1).split())


@pytest.mark.timeout(300)
def test_num_devices_and_sweep_histories_say_what_the_files_hold(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 4, "total_steps": 4 * 4 * 2,
         "num_logs": 2, "devices": 1, "run_dir": str(tmp_path),
         "ppo": {"num_minibatches": 1, "num_epochs": 1}},
    )  # fmt: skip
    run = pjd.train(config, write_files=True, console=False)
    summary = json.loads((run.run_dir / "summary.json").read_text())
    record = json.loads((run.run_dir / "metrics.jsonl").read_text().splitlines()[-1])
    assert run.num_devices == summary["devices"] == record["devices"] == 1
    assert "call `devices`" in _attribute(pjd.TrainResult, "num_devices")
    # The keys a sweep's records lack are the ones its docstring lists.
    said = _attribute(pjd.sweeps.SweepResult, "histories")
    lacking = re.search(r"record \(`train`'s\) but (.*?), as the runs", said)
    assert lacking, said
    listed = set(re.findall(r"`(\w+)`", lacking.group(1)))
    swept = pjd.sweep(config, seeds=1, console=False)
    for history in swept.histories:
        for kept in history:
            assert set(kept) <= set(record)
            assert set(record) - set(kept) == listed
