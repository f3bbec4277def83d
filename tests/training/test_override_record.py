"""`overrides.jsonl`: each --override resume's update and what it changed.

A user auditing a run reads there which fields an override changed, from
which value to which; the resume reads the update back (`overridden_since`).
"""

import json

import purejaxdrl as pjd
from purejaxdrl.training.saved_config import (
    OVERRIDES_FILE,
    overridden_since,
    override_record,
)


def test_the_record_lists_each_changed_field_with_its_old_and_new_value():
    saved = pjd.apply_overrides(pjd.load_preset("cartpole").config, {"num_envs": 4})
    changed = {
        "total_steps": 30720,
        "ppo": {"learning_rate": 0.01},
        "network": {"hidden_sizes": [32, 16]},
        "checkpoint": {"keep": 5},  # free to change, still recorded
        "run_dir": "elsewhere",  # ignored by a resume: not a change
    }
    config = pjd.apply_overrides(saved, changed)
    record = json.loads(override_record(40, saved, config))
    assert record["resumed_at"] == 40
    by_field = {c["field"]: (c["old"], c["new"]) for c in record["changes"]}
    assert by_field == {
        "total_steps": (saved.total_steps, 30720),
        "ppo.learning_rate": (saved.ppo.learning_rate, 0.01),
        "network.hidden_sizes": (list(saved.network.hidden_sizes), [32, 16]),
        "checkpoint.keep": (saved.checkpoint.keep, 5),
    }


def test_a_resume_reads_the_update_of_each_record_back(tmp_path):
    saved = pjd.load_preset("cartpole").config
    config = pjd.apply_overrides(saved, {"total_steps": 1024})
    lines = override_record(3, saved, config) + override_record(7, saved, config)
    (tmp_path / OVERRIDES_FILE).write_text(lines)
    assert overridden_since(tmp_path, 7)
    assert not overridden_since(tmp_path, 8)
