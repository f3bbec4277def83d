"""SAC's temperature learning rate is dynamic: one program per grid, PBT explores it."""

import purejaxdrl as pjd
from purejaxdrl.sweeps.pbt.inputs import member_configs
from purejaxdrl.sweeps.search import sampled_field
from purejaxdrl.sweeps.spec import make_plan

BASE = pjd.apply_overrides(pjd.TrainConfig(algo="sac"), {"sac.min_replay": 64})


def test_a_grid_over_alpha_learning_rate_is_one_program():
    plan = make_plan(BASE, grid={"alpha_learning_rate": [0.0, 1e-4, 3e-4]})
    assert plan.fields[0].path == "sac.alpha_learning_rate"
    assert plan.fields[0].dynamic
    assert plan.static_groups() == [[0, 1, 2]]
    rates = [c.sac.alpha_learning_rate for c in plan.configs]
    assert rates == [0.0, 1e-4, 3e-4]


def test_sweeps_may_sample_it_and_pbt_may_explore_it():
    space = ("loguniform", 1e-4, 1e-3)
    assert sampled_field(BASE, "alpha_learning_rate", space, []).dynamic
    configs, fields = member_configs(BASE, {"alpha_learning_rate": space}, 3, 0)
    assert [f.name for f in fields] == ["alpha_learning_rate"]
    rates = [c.sac.alpha_learning_rate for c in configs]
    assert all(1e-4 <= r <= 1e-3 for r in rates) and len(set(rates)) == 3
