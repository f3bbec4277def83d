"""The guides name a sweep's and a PBT run's folder as the code does.

After the environment's id, not the `--env` preset: a preset name is known
only to the command line and `sweep("preset")`, not to a TrainConfig, so the
id is the name every sweep has.
"""

import dataclasses
import pathlib

import purejaxdrl as pjd
from purejaxdrl.sweeps.report import start_dir
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import make_plan

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide"


def test_the_guides_say_the_folder_is_named_after_the_environment_id():
    sweeps = " ".join((GUIDE / "sweeps.md").read_text().split())
    pbt = " ".join((GUIDE / "pbt.md").read_text().split())
    assert "`runs/sweep_<env.id>_<algo>_<time>/` (named after the environment's id" in (
        sweeps
    )
    assert "`runs/pbt_<env.id>_<algo>_<time>/`, named after the environment's id" in (
        pbt
    )


def test_a_presets_sweep_folder_is_named_after_its_environment_id(tmp_path):
    # cartpole_masked trains CartPole-v1 (masked): the guide's example.
    base = pjd.load_preset("cartpole_masked").config
    assert base.env.id == "CartPole-v1"
    base = dataclasses.replace(base, run_dir=str(tmp_path))
    result = SweepResult.before_training(make_plan(base), None, [])
    assert start_dir(result).name.startswith("sweep_CartPole-v1_ppo_")
