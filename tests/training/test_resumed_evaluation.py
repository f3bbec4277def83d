"""What a resumed session that evaluates nothing reports of the run's evaluations."""

import json

import pytest

import purejaxdrl as pjd


@pytest.mark.timeout(600)
def test_a_resume_without_evaluation_keeps_the_last_one_and_says_why(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 2,
         "num_logs": 2, "devices": 1, "ppo": {"num_minibatches": 2},
         "eval": {"episodes": 2, "max_steps": 20, "every": 1},
         "checkpoint": {"wait": True}, "run_dir": str(tmp_path)},
    )  # fmt: skip
    first = pjd.train(config, write_files=True, console=False)
    last = first.history[-1]["eval/mean_return"]
    assert first.eval_return == last
    # Resumed complete, with evaluation turned off: nothing trains, nothing
    # evaluates (nothing compiles); a summary lost before is written again.
    (first.run_dir / "summary.json").unlink()
    changes = {"eval": {"episodes": 0, "every": 2}}
    resumed_config, _ = pjd.resume_config(first.run_dir, changes)
    resumed = pjd.train(resumed_config, resume=first.run_dir, console=False)
    assert resumed.updates == first.updates and resumed.eval_return == last
    summary = json.loads((first.run_dir / "summary.json").read_text())
    assert summary["eval_return"] == last
    # eval.every without episodes is new at this resume: said, as to a new run.
    assert (
        "eval.every=2 with eval.episodes=0: no evaluation will run; pass e.g. "
        "--eval.episodes 16 to evaluate"
    ) in resumed.messages
