"""`train --resume` of a folder of runs names the runs inside, as eval does."""

import os

import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import to_dict


def test_resume_of_a_folder_of_runs_names_the_newest_run_inside(tmp_path, capsys):
    # `runs/` (train's default --run-dir) is the likeliest folder to pass by
    # mistake; --resume said only that it has no config.yaml.
    runs = tmp_path / "runs"
    for age, name in enumerate(["CartPole-v1_ppo_1", "CartPole-v1_ppo_2"]):
        (runs / name).mkdir(parents=True)
        config = runs / name / "config.yaml"
        config.write_text(yaml.safe_dump(to_dict(pjd.TrainConfig())))
        os.utime(runs / name, (1e9 + age, 1e9 + age))  # _2 is the newer
    assert cli.main(["train", "--resume", str(runs)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    newest = str(runs / "CartPole-v1_ppo_2")
    assert line == (
        f"purejaxdrl: error: {str(runs)!r} is a folder of runs (train --run-dir "
        f"makes one run inside it), not a run; it holds 2 runs, the newest "
        f"{newest!r}: pass one of them."
    )
    assert cli.main(["eval", str(runs)]) == 2  # the same words as eval's
    assert capsys.readouterr().err.strip() == line
