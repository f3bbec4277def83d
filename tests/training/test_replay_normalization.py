"""Replay learners refuse normalised observations: stored ones keep their scale."""

import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.training.config import validate

NORMALIZED = {"env": {"normalize_observations": True}}


def _message(algo: str) -> str:
    return (
        f"env.normalize_observations=true with algo={algo!r}, which keeps a "
        "replay buffer: stored observations would stay at the scale of their "
        "time while the statistics move; pass --env.normalize-observations false "
        "(env.normalize_observations=False in Python)."
    )


@pytest.mark.parametrize(
    ("preset", "algo", "section"),
    [
        ("cartpole", "dqn", {}),
        ("cartpole", "apex", {}),
        ("cartpole_masked", "r2d2", {}),
        ("inverted_pendulum", "sac", {}),
        ("cartpole", "impala", {"replay_ratio": 0.5}),
    ],
)
def test_a_replay_learner_with_normalised_observations_is_one_line(
    preset, algo, section
):
    # The normaliser acts on observations before the agent stores them: an
    # item stored early stays at the early statistics' scale, while the
    # network, trained on it, acts on observations at the current one.
    config = pjd.load_preset(preset, algo).config
    overrides = {algo: section} if section else {}
    config = pjd.apply_overrides(config, overrides)
    validate(config)  # the preset as it is: no normalisation
    normalized = pjd.apply_overrides(config, NORMALIZED)
    with pytest.raises(ConfigError) as error:
        validate(normalized)
    assert str(error.value) == _message(algo)
    # A saved run is still read (evaluated, exported); a resume trains, so
    # it is refused where it validates for training.
    validate(normalized, budget=False)


def test_a_resumed_replay_learner_that_normalises_goes_on_with_a_warning():
    # A run begun before the rule holds its normaliser's statistics in its
    # state: dropping the flag no longer fits its checkpoint, so refusing it
    # would leave the run nothing to do. It goes on as it started, warned once.
    from purejaxdrl.setup_warnings import SetupWarning, forget_warnings

    config = pjd.load_preset("cartpole", "dqn").config
    normalized = pjd.apply_overrides(config, NORMALIZED)
    forget_warnings()
    with pytest.warns(SetupWarning) as caught:
        assert validate(normalized, normalised_before=True) is normalized
        validate(normalized, normalised_before=True)  # once, not per check
    assert [str(w.message) for w in caught] == [
        "env.normalize_observations=true with algo='dqn': this resumed run "
        "normalises as it started, and its stored observations keep the scale "
        "of their time's statistics (new runs refuse this)."
    ]
    forget_warnings()
    with pytest.raises(ConfigError, match=r"^env.normalize_observations=true"):
        validate(normalized)  # a new run still refuses


def test_learners_without_replay_keep_normalising():
    for algo in ("ppo", "impala", "pqn"):
        validate(
            pjd.apply_overrides(pjd.load_preset("cartpole", algo).config, NORMALIZED)
        )


def test_no_preset_trains_a_replay_learner_on_normalised_observations():
    from purejaxdrl.agents.registry import algorithm
    from purejaxdrl.training.presets.load import preset_algorithms, preset_names

    checked = 0
    for name in preset_names():
        for algo in preset_algorithms(name):
            config = pjd.load_preset(name, algo).config
            if algorithm(algo).keeps_replay(config.algo_config):
                assert not config.env.normalize_observations, (name, algo)
                checked += 1
    assert checked >= 10


def test_a_sweep_over_normalisation_is_refused_alike():
    # The plan validates every setting before anything compiles (pjd.sweep
    # and PBT make it first), so no run of the sweep trains.
    from purejaxdrl.sweeps.spec import make_plan

    base = pjd.load_preset("cartpole", "dqn").config
    with pytest.raises(ConfigError) as error:
        make_plan(base, grid={"env.normalize_observations": [False, True]})
    prefix = "grid['env.normalize_observations']: "
    # The fix in the sweep's own spelling, not the flag of one run.
    flag = "--env.normalize-observations false (env.normalize_observations=False"
    grid = "--grid env.normalize_observations=false (grid={'env.normalize_o"
    wanted = _message("dqn").replace(flag, grid + "bservations': [False]}")
    assert str(error.value) == prefix + wanted
    with pytest.raises(ConfigError, match=r"^env.normalize_observations=true"):
        make_plan(pjd.apply_overrides(base, NORMALIZED), seeds=2)


@pytest.mark.timeout(300)
def test_a_run_begun_before_the_rule_resumes_through_train(tmp_path, monkeypatch):
    # Written as an older version did (the rule switched off), then resumed by
    # this one: Python's train(resume=) and the CLI's both pass `resumed`.
    from purejaxdrl.setup_warnings import SetupWarning, forget_warnings
    from purejaxdrl.training import config as config_module

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {**NORMALIZED, "num_envs": 4, "unroll_length": 4, "total_steps": 256,
         "num_logs": 2, "run_dir": str(tmp_path), "devices": 1,
         "dqn": {"min_replay": 32, "batch_size": 16}},
    )  # fmt: skip
    with monkeypatch.context() as older:
        older.setattr(config_module, "check_observations", lambda *_: None)
        first = pjd.train(config, write_files=True, console=False)
    forget_warnings()
    longer = pjd.apply_overrides(config, {"total_steps": 512, "num_logs": 4})
    with pytest.warns(SetupWarning, match="this resumed run normalises"):
        again = pjd.train(
            longer, resume=first.run_dir, allow_changes=True, console=False
        )
    assert again.env_steps == 512


@pytest.mark.timeout(300)
def test_a_resume_cannot_switch_normalisation_on_for_a_replay_learner(tmp_path):
    # Only a run that normalised before the rule goes on so: a resume turning
    # it on (with no checkpoint to fit, it would start anew) is refused.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {"num_envs": 4, "unroll_length": 4, "total_steps": 256, "num_logs": 1,
         "run_dir": str(tmp_path), "devices": 1,
         "dqn": {"min_replay": 32, "batch_size": 16}},
    )  # fmt: skip
    first = pjd.train(config, write_files=True, console=False)
    turned_on = pjd.apply_overrides(config, NORMALIZED)
    with pytest.raises(ConfigError, match=r"^env.normalize_observations=true"):
        pjd.train(turned_on, resume=first.run_dir, allow_changes=True, console=False)
    with pytest.raises(ConfigError, match=r"^env.normalize_observations=true"):
        pjd.resume_config(first.run_dir, NORMALIZED)
