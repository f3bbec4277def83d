"""A diverged PBT member ranks last and is never a parent, on the device too."""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.sweeps.pbt.population import pbt


def _four_updates(**kwargs):
    """A PBT run of 4 cartpole PPO members on 4 devices, ready at each update."""
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    base = pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * 4, "num_logs": 4, "devices": 4},
    )
    return pbt(base, population=4, ready=1, quantile=0.5, **kwargs)


@pytest.mark.timeout(300)
def test_diverged_members_copy_nobody_whatever_their_episodes_return(capsys):
    # A reward scale of 1e37 or more turns every member non-finite in its
    # first update. Their NaN parameters still act and end episodes with
    # unequal returns (about 9 to 11), so ranked by returns alone the bottom
    # half would copy the top half at every ready step.
    result = _four_updates(
        explore={"reward_scale": ("uniform", 1e37, 1e38)}, search_seed=1
    )
    assert result.diverged == [1, 1, 1, 1]
    later = result.lineage[2:]  # the ready steps after updates 2 and 3
    assert [s.updates for s in later] == [2, 3]
    for step in later:
        assert len(set(step.scores)) == 4 and not np.isnan(step.scores).any()
        assert step.parents == (0, 1, 2, 3)
    err = capsys.readouterr().err
    assert "pbt: update 2 of 4: all 4 members diverged, " in err


@pytest.mark.timeout(300)
def test_a_healed_member_is_ranked_by_its_score_at_later_ready_steps():
    # Reward scales above ~1e19 overflow float32: some members diverge in the
    # first update, copy a healthy one at the first ready step (no resampling,
    # no perturbation: the copy's reward scale is its parent's), and are healthy.
    result = _four_updates(
        explore={"reward_scale": ("loguniform", 1.0, 1e38)},
        resample_probability=0.0,
        perturb=(1.0, 1.0),
        search_seed=3,
        console=False,
    )
    first = result.lineage[1]
    healed = [i for i, p in enumerate(first.parents) if p != i]
    assert healed, "the seed should make some member copy at the first ready step"
    assert result.diverged == [None] * 4  # every member healthy at the end
    for step in result.lineage[2:]:
        scores = np.asarray(step.scores, float)
        order = np.argsort(np.where(np.isnan(scores), -np.inf, scores), kind="stable")
        bottom = set(order[:2].tolist())
        copiers = {i for i, p in enumerate(step.parents) if p != i}
        assert copiers <= bottom, (step.updates, step.scores, step.parents)
        # and a top member may be a parent whoever it copied earlier
        assert all(p not in bottom for i, p in enumerate(step.parents) if p != i)
