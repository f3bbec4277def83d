"""Which one-field changes a resume takes without --override, field by field.

The table is the rule of field_roles.FREE_ON_RESUME written out by hand:
where and how often a run saves, evaluates and logs, the modules it imports
and the scan's unrolling are free; what the updates or the host runner's
actors are made of binds. Configs alone, no training.
"""

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.resume import binding_changes

SAVED = pjd.load_preset("cartpole").config  # PPO


@pytest.mark.parametrize(
    ("change", "binds"),
    [
        ({"env": {"imports": ["math"]}}, False),
        ({"num_logs": SAVED.num_logs * 2}, False),
        ({"scan_unroll": SAVED.scan_unroll + 1}, False),
        ({"devices": SAVED.devices + 1}, False),
        ({"eval": {"episodes": SAVED.eval.episodes + 1}}, False),
        ({"checkpoint": {"keep": SAVED.checkpoint.keep + 1}}, False),
        ({"num_envs": SAVED.num_envs * 2}, True),
        ({"unroll_length": SAVED.unroll_length * 2}, True),
        ({"network": {"hidden_sizes": [32]}}, True),
        ({"host": {"env_threads": SAVED.host.env_threads + 1}}, True),
        ({"host": {"learner_devices": SAVED.host.learner_devices + 1}}, True),
        ({"env": {"hide_observations": [0]}}, True),
    ],
    ids=repr,
)
def test_a_resume_binds_exactly_the_fields_that_change_the_updates(change, binds):
    changed = pjd.apply_overrides(SAVED, change)
    lines = binding_changes(SAVED, changed)
    assert len(lines) == int(binds), lines


def test_a_recurrent_runs_shared_torso_binds_nothing_a_feed_forward_ones_does():
    # With a core the policy and the value share torso and core whatever
    # network.shared_torso says (field_roles.ignored_fields): the resume
    # was refused as a change "that alters the run", which it did not.
    flip = {"network": {"shared_torso": not SAVED.network.shared_torso}}
    recurrent = pjd.apply_overrides(SAVED, {"network": {"core": "gru"}})
    assert binding_changes(recurrent, pjd.apply_overrides(recurrent, flip)) == []
    assert len(binding_changes(SAVED, pjd.apply_overrides(SAVED, flip))) == 1
    # Dropping the core with it: both change the network.
    unrolled = pjd.apply_overrides(recurrent, {"network": {"core": "none"}})
    unrolled = pjd.apply_overrides(unrolled, flip)
    assert len(binding_changes(recurrent, unrolled)) == 2
