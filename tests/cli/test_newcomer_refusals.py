"""Refusals a newcomer meets first: each names the value, the rule and a fix."""

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config_types import coerce


def _refusal(argv: list[str], capsys) -> str:
    """`purejaxdrl ARGV`'s one stderr line; it exits with status 2."""
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_an_int_fields_example_is_its_current_value(capsys):
    # cartpole's ppo section trains 500,000 steps: the example, not a fixed 4
    # (4 steps would be less than one update, the next refusal).
    total = pjd.load_preset("cartpole").config.total_steps
    assert total == 500_000
    assert _refusal(["train", "--total-steps", "10k"], capsys) == (
        "purejaxdrl: error: total_steps='10k' is not an integer; pass e.g. "
        "--total-steps 500000 (total_steps=500000 in Python).\n"
    )


@pytest.mark.parametrize(
    "current, example", [(None, "4"), (0, "4"), (True, "4"), (256, "256")]
)
def test_without_a_positive_current_value_the_example_is_4(current, example):
    with pytest.raises(pjd.ConfigError) as error:
        coerce("abc", int, "num_envs", current)
    assert str(error.value) == (
        f"num_envs='abc' is not an integer; pass e.g. --num-envs {example} "
        f"(num_envs={example} in Python)."
    )


def test_a_float_fields_example_is_its_current_value(capsys):
    # A fixed 0.001 told a user who mistyped gamma to train with γ 0.001, an
    # agent that looks one step ahead; cartpole's pqn section has γ 0.99.
    argv = ["train", "--algo", "pqn", "--no-files"]
    assert _refusal([*argv, "--pqn.gamma", "abc"], capsys) == (
        "purejaxdrl: error: pqn.gamma='abc' is not a number; pass e.g. "
        "--pqn.gamma 0.99 (pqn.gamma=0.99 in Python).\n"
    )
    assert "e.g. --pqn.q-lambda 0.95 (" in _refusal(
        [*argv, "--pqn.q-lambda", "abc"], capsys
    )


@pytest.mark.parametrize(
    "current, example", [(None, "0.001"), (True, "0.001"), (2, "2.0"), (0.2, "0.2")]
)
def test_without_a_current_number_the_float_example_is_0_001(current, example):
    with pytest.raises(pjd.ConfigError) as error:
        coerce("abc", float, "ppo.gamma", current)
    assert str(error.value) == (
        f"ppo.gamma='abc' is not a number; pass e.g. --ppo.gamma {example} "
        f"(ppo.gamma={example} in Python)."
    )


def test_max_grad_norms_refusal_offers_the_inf_it_takes(capsys):
    # inf is documented as "not clipped" and trains; "finite" said it could not.
    argv = ["train", "--algo", "pqn", "--no-files", "--pqn.max-grad-norm"]
    assert _refusal([*argv, "0"], capsys) == (
        "purejaxdrl: error: pqn.max_grad_norm=0.0 must be > 0 (inf turns it "
        "off); pass a positive number, e.g. --pqn.max-grad-norm 10.0 "
        "(pqn.max_grad_norm=10.0 in Python).\n"
    )
    assert " must be > 0 and finite;" in _refusal(
        ["train", "--ppo.learning-rate", "inf", "--no-files"], capsys
    )


def test_a_preset_file_in_the_working_folder_named_without_its_suffix(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "my4.yaml").write_text("env: {id: CartPole-v1}\nppo: {}\n")
    monkeypatch.chdir(tmp_path)
    assert _refusal(["train", "--env", "my4"], capsys) == (
        "purejaxdrl: error: Unknown environment preset 'my4': my4.yaml is here: "
        "--env my4.yaml (a file with its suffix).\n"
    )
    # Without the file: the presets, as before.
    assert "choose one of acrobot, " in _refusal(["train", "--env", "my5"], capsys)


def test_a_preset_passed_as_an_environment_id(capsys):
    argv = ["train", "--env.id", "cartpole", "--devices", "1", "--no-files"]
    assert _refusal(argv, capsys) == (
        "purejaxdrl: error: Unknown environment 'cartpole': cartpole is a "
        "preset, not an environment id; pass --env cartpole "
        "(pjd.load_preset('cartpole') in Python), or its environment's id: "
        "--env.id CartPole-v1.\n"
    )
    with pytest.raises(pjd.env.UnknownEnvironmentError):  # still that error
        config = pjd.load_preset("cartpole").config
        pjd.train(pjd.apply_overrides(config, {"env": {"id": "pong"}}))


def test_a_mistyped_choice_gets_a_did_you_mean(capsys):
    # argparse's own "invalid choice" line had no fix, unlike every other typo.
    assert _refusal(["train", "--logger", "tensorbord"], capsys) == (
        "purejaxdrl: error: argument --logger: invalid choice: 'tensorbord' "
        "(choose from 'tensorboard', 'wandb'); did you mean --logger tensorboard? "
        "`purejaxdrl train --help` lists every option.\n"
    )
    assert _refusal(["train", "--logger", "zzz"], capsys).endswith(
        "; pass one of those (see `purejaxdrl train --help`).\n"
    )


def test_a_missing_required_flag_gets_an_example(capsys):
    assert _refusal(["export", "RUN"], capsys) == (
        "purejaxdrl: error: the following arguments are required: --out; e.g. "
        "`purejaxdrl export RUN_DIR --out policy/` (`purejaxdrl export --help` "
        "lists every option).\n"
    )
