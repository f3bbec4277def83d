"""Every option of `eval --help` and `plot --help` says what it does."""

import pytest

from purejaxdrl import cli


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        ("eval", ["how many episodes to play", "seeds the fresh environments"]),
        ("plot", ["run, sweep or PBT directories", "its extension picks the format"]),
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
