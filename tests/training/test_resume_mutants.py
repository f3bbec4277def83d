"""Which changes a resume may make, checked on configs alone (no training).

Details the end-to-end resume tests leave open (found by mutation testing).
"""

import dataclasses

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.training.resume import changes_the_run, check_continues


@pytest.fixture(scope="module")
def saved() -> pjd.TrainConfig:
    return pjd.load_preset("cartpole").config  # PPO


@pytest.mark.filterwarnings("ignore:algo .* keeps this config:UserWarning")
def test_another_environment_or_algorithm_is_refused_even_with_override(saved):
    other_env = dataclasses.replace(
        saved, env=dataclasses.replace(saved.env, id="Acrobot-v1")
    )
    with pytest.raises(ConfigError, match=r"^env.id='Acrobot-v1' differs from the"):
        check_continues("run", saved, other_env, allow_changes=True)
    other_algo = pjd.apply_overrides(saved, {"algo": "dqn"})
    with pytest.raises(ConfigError, match=r"^algo='dqn' differs from the run's"):
        check_continues("run", saved, other_algo, allow_changes=True)


@pytest.mark.parametrize(
    ("change", "binding"),
    [
        ("checkpoint.every: 1 -> 5", False),
        ("checkpoint.keep_best: False -> True", False),
        ("eval.episodes: 10 -> 20", False),
        ("devices: 1 -> 4", False),
        ("run_dir: 'a' -> 'b'", False),
        ("total_steps: 100 -> 200", True),
        ("ppo.learning_rate: 0.001 -> 0.01", True),
        ("seed: 0 -> 1", True),
    ],
)
def test_only_where_and_how_often_it_saves_evaluates_and_runs_are_free(change, binding):
    assert changes_the_run(change) is binding


def test_free_changes_resume_without_override_and_binding_ones_need_it(saved):
    free = pjd.apply_overrides(saved, {"checkpoint": {"every": 7}, "run_dir": "x"})
    changes = check_continues("here", saved, free, allow_changes=False)
    assert sorted(changes) == [
        f"checkpoint.every: {saved.checkpoint.every!r} -> 7",
        f"run_dir: {saved.run_dir!r} -> 'x' (ignored: a resumed run writes into here)",
    ]
    rate = saved.ppo.learning_rate
    binding = pjd.apply_overrides(saved, {"ppo": {"learning_rate": rate * 2}})
    with pytest.raises(
        ConfigError, match=r"with changes that alter the run \(ppo.learning_rate"
    ):
        check_continues("here", saved, binding, allow_changes=False)
    assert check_continues("here", saved, binding, allow_changes=True) == [
        f"ppo.learning_rate: {rate!r} -> {rate * 2!r}"
    ]
    # A device run's seed: refused even with allow_changes (its keys are
    # saved), unless the config may be for a new run (kept=False).
    seed = pjd.apply_overrides(saved, {"seed": saved.seed + 1})
    for allow in (False, True):
        with pytest.raises(ConfigError, match=r"refused even with --override"):
            check_continues("here", saved, seed, allow_changes=allow)
    assert check_continues("here", saved, seed, True, kept=False) == [
        f"seed: {saved.seed!r} -> {saved.seed + 1!r}"
    ]


def test_resume_config_goes_on_with_a_replay_run_that_normalised_before_the_rule(
    tmp_path,
):
    # Saved by a version before replay learners refused normalised
    # observations: its config reads back, and resumes as it began (warned).
    from purejaxdrl.config import to_dict
    from purejaxdrl.setup_warnings import SetupWarning, forget_warnings

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {"env": {"normalize_observations": True}},
    )
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(config)))
    forget_warnings()
    with pytest.warns(SetupWarning, match="this resumed run normalises as it"):
        resumed, changes = pjd.resume_config(tmp_path, {})
    assert resumed == config and changes == []
    # A new run so configured is still refused.
    with pytest.raises(ConfigError, match=r"^env.normalize_observations=true"):
        pjd.training.validate(config)
