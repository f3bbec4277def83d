"""What a sweep or population is given: the base config and its target."""

import math
import re
import warnings

import pytest

import purejaxdrl as pjd
from purejaxdrl.setup_warnings import forget_warnings
from purejaxdrl.sweeps import inputs
from purejaxdrl.sweeps.inputs import base_and_target
from purejaxdrl.sweeps.spec import make_plan


def test_an_evaluation_target_is_not_judged_on_training_returns():
    # cartpole's pqn target (475) is the greedy evaluation's; its ε = 0.2
    # actors' training return sits below it, so a sweep must not judge it.
    with pytest.warns(UserWarning, match=r"cartpole's pqn target \(475\).*--target"):
        base, target = base_and_target("cartpole", "pqn", None)
    assert base.algo == "pqn"
    assert target is None


def test_an_explicit_target_is_kept_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, target = base_and_target("cartpole", "pqn", 400.0)
    assert target == 400.0


def test_a_training_target_is_the_default():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, target = base_and_target("cartpole", "ppo", None)
    assert target == 475.0  # the preset's training target


@pytest.mark.parametrize("target", [math.nan, math.inf, -math.inf, "475", True])
def test_a_target_must_be_a_finite_number(target):
    # NaN would judge every run short of it, -inf every run past it.
    with pytest.raises(
        pjd.ConfigError,
        match=rf"^target_return={re.escape(repr(target))} must be a finite return; "
        r"e\.g\. target_return=475",
    ):
        base_and_target("cartpole", "ppo", target)
    config = pjd.load_preset("cartpole").config
    with pytest.raises(pjd.ConfigError, match="must be a finite return"):
        base_and_target(config, None, target)


@pytest.mark.timeout(600)
def test_a_sweep_over_an_unused_field_warns_once():
    # Ape-X explores with its fixed ε_i, so epsilon_end is unused. The sweep
    # checks its range's ends and each of 3 draws, and its agent factory
    # (DQN's) checks a config again: one warning, naming apex, for them all.
    forget_warnings()
    base, _ = base_and_target("cartpole", "apex", None)
    base = pjd.apply_overrides(
        base,
        {"num_envs": 4, "total_steps": 512, "num_logs": 1,
         "apex": {"min_replay": 64, "batch_size": 32}},
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = pjd.sweep(
            base,
            sample={"epsilon_end": ("uniform", 0.01, 0.1)},
            num_samples=3,
            console=False,
        )
    assert result.plan.num_runs == 3
    said = [str(w.message) for w in caught if "epsilon" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("apex.epsilon_end is set")


def test_each_reason_a_preset_target_is_not_judged():
    from purejaxdrl.sweeps.inputs import unjudged
    from purejaxdrl.training.presets.load import load_preset

    ppo, pqn = load_preset("cartpole", "ppo"), load_preset("cartpole", "pqn")
    assert unjudged(ppo, "CartPole-v1") is None
    assert "greedy evaluation's" in unjudged(pqn, "CartPole-v1")
    other = unjudged(ppo, "Acrobot-v1")
    assert other == "the preset's target (475) is CartPole-v1's, not Acrobot-v1's"


def test_a_base_config_setting_what_sweeps_do_without_is_warned_of():
    # The command line refuses these flags; a config from Python that sets
    # them must not be silently trained without them.
    base = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"eval": {"episodes": 32}, "checkpoint": {"keep": 5, "wait": True}},
    )
    with pytest.warns(pjd.SetupWarning) as caught:
        base_and_target(base, None, None)
    said = [str(w.message) for w in caught]
    assert said == [
        "checkpoint.keep=5: sweeps and PBT keep their newest 2 checkpoints (all "
        "a resume needs); drop it.",
        "checkpoint.wait=True: sweeps and PBT always write every save (a due "
        "save is never replaced), so it would change nothing; drop it.",
        "eval.episodes=32: sweeps do not play evaluation episodes (the table "
        "reports each run's training return); drop it.",
    ]
    # Warned of, and trained without: the plan refuses none of them after.
    make_plan(base)
    # A preset's own config sets none of them.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base_and_target("cartpole", None, None)


def test_a_training_target_judges_only_runs_measured_as_the_preset():
    # As train gives no verdict: the target is the last chunk's mean return
    # within the preset's budget; one chunk (num_logs 1) is a mean over the
    # whole run, and another budget is another race.
    from purejaxdrl.sweeps.inputs import off_budget

    preset = pjd.load_preset("cartpole")
    base = preset.config
    assert off_budget(preset, [base]) is None
    assert off_budget(preset, [base], swept={"ppo.learning_rate"}) is None
    same_updates = pjd.apply_overrides(base, {"total_steps": base.total_steps - 1})
    assert off_budget(preset, [base, same_updates]) is None
    short = pjd.apply_overrides(base, {"total_steps": 20480})
    assert off_budget(preset, [base, short]) == (
        "the preset's target (475) is its return within its 500,000 steps, and "
        "these runs train 20,480"
    )
    logged = pjd.apply_overrides(base, {"num_logs": 1})
    assert off_budget(preset, [logged]) == (
        "the preset's target (475) is its last chunk's mean return at "
        "num_logs=20, and these runs' num_logs=1 makes it another mean"
    )
    assert "these runs sweep total_steps" in off_budget(
        preset, [base], swept={"total_steps"}
    )


def test_a_python_sweep_off_the_presets_budget_drops_its_target(monkeypatch):
    # Said before anything trains, in Python's spelling (target_return=).
    from purejaxdrl.sweeps import program

    loads = []

    def load_preset(*args):
        loads.append(args)
        return pjd.load_preset(*args)

    monkeypatch.setattr(program, "_train_plan", lambda result, *_: result)
    monkeypatch.setattr(program, "load_preset", load_preset)
    monkeypatch.setattr(inputs, "load_preset", load_preset)
    result = pjd.sweep("cartpole", grid={"total_steps": [4096]}, console=False)
    assert loads == [("cartpole", "ppo")]  # read once, not again for its budget
    assert result.target_return is None
    assert result.messages[0] == (
        "sweep: the preset's target (475) is its return within its 500,000 "
        "steps, and these runs train 4,096: not judged (target_return= sets one)"
    )


def test_console_lines_go_to_stderr_and_in_a_notebook_to_stdout(monkeypatch, capsys):
    # stderr keeps a script's stdout its own; a notebook shades stderr as
    # errors, and `pjd.train` draws in the cell.
    inputs.shown(None, True)("a")
    assert capsys.readouterr() == ("", "a\n")
    monkeypatch.setattr(inputs, "in_notebook", lambda: True)
    inputs.shown(None, True)("b")
    assert capsys.readouterr() == ("b\n", "")
    assert inputs.shown(None, False) is None
    assert inputs.shown(print, False) is print
