"""What a user's agent returns, checked; Python's own errors keep their traceback.

A user's algorithm here is A2C's record under another name, with its
`update` changed.
"""

import dataclasses
import pathlib

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents import registry

SMALL = {"unroll_length": 4, "total_steps": 4096, "num_logs": 1}


def _config(**overrides):
    return pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="mine").config, SMALL | overrides
    )


@pytest.fixture
def state_only(monkeypatch):
    """Registers `mine`, A2C whose update returns its state without metrics."""
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    a2c = registry.algorithm("a2c")

    def make_agent(config, network, obs_example, run):
        agent = a2c.make_agent(config, network, obs_example, run)
        update = agent.update
        return agent._replace(update=lambda *args: update(*args)[0])

    registry.register(dataclasses.replace(a2c, name="mine", make_agent=make_agent))


def test_an_update_that_returns_its_state_alone_is_named(state_only):
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(_config(num_envs=4, devices=1), console=False)
    assert str(e.value) == (
        "algo='mine': its agent's update returned an AgentState, but it must "
        "return (state, metrics), metrics a dict of arrays "
        "(agents.base.Agent.update); e.g. return state, {'loss': loss}."
    )


def test_the_command_line_names_update_not_pythons_unpacking(state_only, capsys):
    flags = ["--num-envs", "4", "--unroll-length", "4", "--total-steps", "64"]
    status = cli.main(
        ["train", "--env", "cartpole", "--algo", "mine", "--devices", "1", *flags]
    )
    err = capsys.readouterr().err
    assert status == 2, err
    assert "purejaxdrl: error: algo='mine': its agent's update returned" in err
    assert "values to unpack" not in err


@pytest.mark.parametrize(
    "message",
    [
        "too many values to unpack (expected 2)",
        "not enough values to unpack (expected 2, got 1)",
        "cannot unpack non-iterable AgentState object",
    ],
)
def test_pythons_unpacking_errors_in_purejaxdrl_keep_their_traceback(message):
    # Raised by a line of purejaxdrl's that unpacks a user's value: Python's
    # words name neither the function nor the fix, so the traceback must.
    where = str(pathlib.Path(pjd.__file__).parent / "runners" / "anakin.py")
    with pytest.raises(ValueError) as e:
        exec(compile(f"raise ValueError({message!r})", where, "exec"))
    assert not cli.raised_here(e.value)
    with pytest.raises(ValueError) as e:
        exec(compile("raise ValueError('num_envs=3 must be >= 4')", where, "exec"))
    assert cli.raised_here(e.value)  # purejaxdrl's own check: one line
