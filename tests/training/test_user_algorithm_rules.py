"""What a user's record asks of a run, held; what its agent returns, checked.

A user's algorithm here is A2C's record under another name (A2C's config
has no `num_minibatches`), with the record's fields changed; Python's own
errors keep their traceback.
"""

import dataclasses
import pathlib

import jax
import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents import registry
from purejaxdrl.parallel import make_mesh
from purejaxdrl.training.device_choice import choose_devices
from purejaxdrl.training.experiment import (
    check_fits,
    make_experiment,
    make_networks,
    zero_observation,
)
from purejaxdrl.training.run_env import make_env

SMALL = {"unroll_length": 4, "total_steps": 4096, "num_logs": 1}


@pytest.fixture
def mine():
    """Registers `mine`, A2C whose environments come in multiples of 4."""
    a2c = registry.algorithm("a2c")
    with registry.registered(
        dataclasses.replace(a2c, name="mine", env_multiple=lambda c, s: 4)
    ):
        yield


def _config(**overrides):
    return pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="mine").config, SMALL | overrides
    )


@pytest.mark.parametrize("devices", [0, 1])
def test_a_num_envs_that_is_no_multiple_is_one_line_on_any_device_count(mine, devices):
    # 6 environments, a multiple of 4: no device count splits them.
    config = _config(num_envs=6, devices=devices)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(config, console=False)
    assert str(e.value) == (
        "mine (its record's env_multiple) needs num_envs divisible by 4, got "
        "num_envs=6; make num_envs a multiple of 4, e.g. --num-envs 8 (num_envs=8 in "
        "Python)."
    )
    with pytest.raises(pjd.ConfigError, match="divisible by 4, got num_envs=6"):
        pjd.sweep(config, seeds=2, console=False)


def test_a_device_count_is_chosen_by_the_records_multiple(mine):
    # 8 environments split over 2 devices (4 each), not over 4 or 8.
    config = _config(num_envs=8)
    experiment = make_experiment(config)
    assert experiment.runner is not None
    env, env_params = make_env(config)
    _, learner = make_networks(config, env, env_params)
    observation = zero_observation(env, env_params)
    _, note = choose_devices(
        0, lambda n: check_fits(config, learner, observation, n), available=8
    )
    assert note == (
        "using 2 of 8 cpu devices: mine (its record's env_multiple) needs each "
        "device's environments to be a multiple of 4, got num_envs=8 over 8 "
        "devices = 1 each; pass --devices N to choose (devices=N in Python)."
    )


def test_the_device_note_keeps_an_algorithms_own_words():
    # PPO's minibatches: the note named "ppo" alone (the record's generic
    # rule answered before PPO's own check).
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        SMALL | {"num_envs": 16, "ppo.num_minibatches": 4},
    )
    config = pjd.apply_overrides(config, {"network.core": "gru"})
    note = make_experiment(config).device_note
    assert note.startswith(
        "using 4 of 8 cpu devices: ppo.num_minibatches=4 with a recurrent core"
    ), note


def test_the_fix_names_the_flag_and_counts_per_process(mine, monkeypatch):
    from purejaxdrl.training import run_rules

    record, shape = registry.algorithm("mine"), pjd.training.config.run_shape
    config = _config(num_envs=8)
    learner = r"or --host.learner-devices 2 \(host.learner_devices=2 in Python\)\.$"
    with pytest.raises(pjd.ConfigError, match=learner):
        run_rules.check_env_multiple(
            config, record, shape(config)._replace(num_devices=4),
            "--host.learner-devices", "host.learner_devices",
        )  # fmt: skip
    # 2 processes of 4 devices: 16 environments fit 2 devices per process.
    monkeypatch.setattr("jax.process_count", lambda: 2)
    config = _config(num_envs=16)
    with pytest.raises(
        pjd.ConfigError, match=r"or --devices 2 \(devices=2 in Python\)\.$"
    ):
        run_rules.check_env_multiple(
            config, record, shape(config)._replace(num_devices=8)
        )


def test_a_chosen_device_count_is_held_to_the_multiple_before_compiling(mine):
    # 8 environments on 4 devices: 2 each.
    with pytest.raises(pjd.ConfigError) as e:
        make_experiment(_config(num_envs=8), make_mesh(4))
    assert str(e.value) == (
        "mine (its record's env_multiple) needs each device's environments to "
        "be a multiple of 4, got num_envs=8 over 4 devices = 2 each; pass "
        "--num-envs 16 (num_envs=16 in Python) or --devices 2 (devices=2 in "
        "Python)."
    )


def _register_mine(monkeypatch, change):
    """Registers `mine`: A2C whose agent is `change(agent)`."""
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    a2c = registry.algorithm("a2c")

    def make_agent(config, network, obs_example, run):
        return change(a2c.make_agent(config, network, obs_example, run))

    registry.register(dataclasses.replace(a2c, name="mine", make_agent=make_agent))


def _update_then(then):
    """An agent change: its update's (state, metrics) passed through `then`,
    which also gets the batch."""

    def change(agent):
        def update(state, batch, key):
            return then(*agent.update(state, batch, key), batch)

        return agent._replace(update=update)

    return change


@pytest.fixture
def state_only(monkeypatch):
    """Registers `mine`, A2C whose update returns its state without metrics."""
    _register_mine(monkeypatch, _update_then(lambda state, metrics, batch: state))


def test_an_update_that_returns_its_state_alone_is_named(state_only):
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(_config(num_envs=4, devices=1), console=False)
    assert str(e.value) == (
        "algo='mine': its agent's update returned an AgentState, but it must "
        "return (state, metrics), metrics a dict of arrays "
        "(agents.base.Agent.update); e.g. return state, {'loss': loss}."
    )


def test_an_init_whose_state_has_no_params_is_named(monkeypatch):
    # It failed in the runner's first step: "'dict' object has no attribute
    # 'params'", an AttributeError through the library's frames.
    def change(agent):
        return agent._replace(init=lambda key: dict(agent.init(key)._asdict()))

    _register_mine(monkeypatch, change)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(_config(num_envs=4, devices=1), console=False)
    assert str(e.value) == (
        "algo='mine': its agent's init returned a dict, but it must return a "
        "state with a `params` field (agents.base.Agent.init); e.g. return "
        "AgentState(params, opt_state, jnp.zeros((), jnp.int32))."
    )


def test_an_update_loop_from_a_constant_on_two_devices_is_named(monkeypatch):
    # JAX's check of varying types refused it in 8 lines under a traceback
    # through the runner; one device leaves the check off and trains it.
    def summing(state, metrics, batch):
        total = jax.lax.fori_loop(
            0, 2, lambda i, c: c + jnp.mean(batch.reward), jnp.zeros(())
        )
        return state, {**metrics, "total": total}

    _register_mine(monkeypatch, _update_then(summing))
    assert (
        pjd.train(_config(num_envs=4, devices=1, total_steps=64), console=False).updates
        == 4
    )
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(_config(num_envs=4, devices=2, total_steps=64), console=False)
    assert str(e.value) == (
        "algo='mine': its agent's update has a lax.scan / fori_loop / while_loop "
        "whose carry (loop_carry[1]) starts from a constant but takes values that "
        "differ per device over axis 'data'; start that carry from the batch "
        "(jnp.zeros_like(traj.reward[0]), not jnp.zeros(B)) or make it varying, "
        "jax.lax.pcast(x, 'data', to='varying') (guide 'Adding an algorithm', "
        "'The update on several devices')."
    )


@pytest.mark.parametrize(
    ("metric", "named"),
    [(lambda x: x, "'returns'"), (lambda x: {"per_env": x}, "'returns/per_env'")],
)
def test_an_update_whose_metric_is_not_a_scalar_is_named(metric, named, monkeypatch):
    # It failed inside the runner, stacking the chunk's metrics: "Cannot
    # stack arrays with different numbers of dimensions", 56 lines.
    def with_vector(state, metrics, batch):
        return state, {**metrics, "returns": metric(batch.reward[0])}

    _register_mine(monkeypatch, _update_then(with_vector))
    with pytest.raises(pjd.ConfigError, match=f"metric {named} of shape") as e:
        pjd.train(_config(num_envs=4, devices=1), console=False)
    assert "must be a scalar" in str(e.value) and "jnp.mean(x)" in str(e.value)


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


@pytest.mark.parametrize(
    ("change", "got"),
    [
        (lambda agent: None, "None"),  # a factory that forgot its `return`
        (lambda agent: (agent.init, agent.update), "a tuple of 2 (function, function)"),
    ],
)
def test_a_factory_that_returns_no_agent_is_named(change, got, monkeypatch):
    # It failed where the agent was first read: "'NoneType' object has no
    # attribute 'state_spec'", an AttributeError through the library's frames.
    _register_mine(monkeypatch, change)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.train(_config(num_envs=4, devices=1), console=False)
    assert str(e.value) == (
        f"algo='mine': its record's make_agent returned {got}, not an "
        "agents.base.Agent (agents.base.AgentFactory); e.g. return "
        "Agent(init=init, acting=acting, update=update)."
    )
