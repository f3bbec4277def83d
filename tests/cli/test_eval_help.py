"""Every option of `eval --help` and `plot --help` says what it does."""

import pytest

from purejaxdrl import cli


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        (
            "eval",
            [
                "how many episodes to play",
                "seeds the fresh environments",
                "best (the one --checkpoint.keep-best kept",
            ],
        ),
        ("export", ["best (the one --checkpoint.keep-best kept"]),
        (
            "plot",
            [
                "run, sweep or PBT directories",
                "its extension picks the format",
                "a file there is replaced (default: curves.png, in the current folder)",
            ],
        ),
    ],
)
def test_help_explains_each_option(capsys, command, wanted):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in wanted:
        assert text in out, (text, out)


def test_evals_line_counts_only_episodes_that_did_not_end_as_cut():
    import types

    import numpy as np

    from purejaxdrl.cli.eval import summary_line

    config = types.SimpleNamespace(algo="ppo", env=types.SimpleNamespace(id="E"))
    returns, lengths = np.array([500.0, 500.0, 37.0]), np.array([500, 500, 37])
    # CartPole-v1 truncates itself at 500: both 500-step episodes ended.
    ended = np.array([True, True, True])
    line = summary_line(config, 5, returns, lengths, max_steps=500, ended=ended)
    assert "cut" not in line, line
    ended = np.array([True, False, True])
    line = summary_line(config, 5, returns, lengths, max_steps=500, ended=ended)
    assert line.endswith(
        "; 1 cut at --max-steps 500 (their returns partial: raise it for whole "
        "episodes)"
    ), line


def test_evals_line_names_where_the_cap_came_from():
    import types

    import numpy as np

    from purejaxdrl.cli.eval import summary_line

    config = types.SimpleNamespace(algo="ppo", env=types.SimpleNamespace(id="E"))
    returns, lengths, ended = np.array([20.0]), np.array([20]), np.array([False])
    cap = "the run's eval.max_steps"
    line = summary_line(config, 5, returns, lengths, 20, ended, cap)
    assert line.endswith(
        "; 1 cut at the run's eval.max_steps 20 (their returns partial: pass a "
        "larger --max-steps for whole episodes)"
    ), line


@pytest.mark.parametrize(
    ("flags", "wanted"),
    [
        (["--seed", "-1"], "seed=-1 must be in [0, 2**32) (JAX keeps a seed's low 32"),
        (["--seed", str(2**32)], f"seed={2**32} must be in [0, 2**32)"),
        (["--seed", "9" * 20], f"seed={'9' * 20} must be in [0, 2**32)"),
        (
            ["--max-steps", "3000000000"],
            "--max-steps 3000000000 must be <= 2**31-1 (the compiled loop counts "
            "steps in int32); e.g. --max-steps 100000 (max_steps=100000 in Python).",
        ),
    ],
)
def test_eval_refuses_seeds_and_step_caps_that_alias_or_overflow(
    capsys, tmp_path, flags, wanted
):
    # Checked before the run is read: no run is needed to be refused.
    assert cli.main(["eval", str(tmp_path / "run"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and wanted in err, err
    # The largest allowed values pass these checks (and fail later, on the run).
    edge = ["--seed", str(2**32 - 1), "--max-steps", str(2**31 - 1)]
    assert cli.main(["eval", str(tmp_path / "run"), *edge]) == 2
    err = capsys.readouterr().err
    assert "run directory" in err and "does not exist" in err, err


@pytest.mark.parametrize(
    "error",
    [
        "RESOURCE_EXHAUSTED: Out of memory allocating 57200001352 bytes",
        MemoryError(),
    ],
)
def test_eval_out_of_memory_names_episodes_and_the_fix(monkeypatch, capsys, error):
    import types

    import jax

    from purejaxdrl.training.policy import evaluate as policy_eval

    def evaluate(state, *, episodes, max_steps, seed):
        # What a device with too little memory for the episodes does.
        raise jax.errors.JaxRuntimeError(error) if isinstance(error, str) else error

    player = types.SimpleNamespace(evaluate=evaluate)
    config = types.SimpleNamespace(eval=types.SimpleNamespace(max_steps=10))
    monkeypatch.setattr(policy_eval, "is_policy_folder", lambda path: True)
    monkeypatch.setattr(
        policy_eval, "policy_player", lambda path, *_: (config, player, None, 1)
    )
    assert cli.main(["eval", "pol", "--episodes", "100000000"]) == 2
    err = capsys.readouterr().err
    said = error if isinstance(error, str) else "MemoryError"
    assert err == (
        f"purejaxdrl: error: --episodes 100000000: out of memory ({said}); eval "
        "plays every episode at once, one environment each; pass fewer, e.g. "
        "--episodes 10000000, and other --seed values for more.\n"
    )


def test_eval_lets_other_runtime_errors_through(monkeypatch):
    import types

    import jax

    from purejaxdrl.training.policy import evaluate as policy_eval

    def evaluate(state, *, episodes, max_steps, seed):
        raise jax.errors.JaxRuntimeError("INTERNAL: something else")

    player = types.SimpleNamespace(evaluate=evaluate)
    config = types.SimpleNamespace(eval=types.SimpleNamespace(max_steps=10))
    monkeypatch.setattr(policy_eval, "is_policy_folder", lambda path: True)
    monkeypatch.setattr(
        policy_eval, "policy_player", lambda path, *_: (config, player, None, 1)
    )
    with pytest.raises(jax.errors.JaxRuntimeError, match="INTERNAL"):
        cli.main(["eval", "pol"])
