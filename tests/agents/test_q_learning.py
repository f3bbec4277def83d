"""What the Q-learners share: warnings about fields that do nothing, their step."""

import dataclasses
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import PQNConfig, dqn_config, pqn, r2d2
from purejaxdrl.agents.apex import default_config as apex_config
from purejaxdrl.agents.q_learning import target_network_step
from purejaxdrl.config import ConfigError
from purejaxdrl.setup_warnings import forget_warnings, quiet_setup_warnings, warn_once


@pytest.fixture(autouse=True)
def _fresh_warnings():
    forget_warnings()  # each test sees its warnings, whatever ran before


def _unused(caught):
    """The messages of the ε-mode warnings among `caught`."""
    return [str(w.message) for w in caught if "but unused" in str(w.message)]


def test_per_actor_fields_set_without_per_actor_epsilon_warn_once():
    config = PQNConfig(epsilon=0.01, epsilon_alpha=3.0)
    with pytest.warns(UserWarning) as record:
        pqn.validate(config)
        pqn.validate(config)  # each check of a run validates again: still once
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith("pqn.epsilon and pqn.epsilon_alpha are set")
    assert "unused: with pqn.per_actor_epsilon=false" in message
    assert "--pqn.per-actor-epsilon true" in message


def test_annealed_fields_set_with_per_actor_epsilon_warn():
    with pytest.warns(UserWarning, match=r"^r2d2.epsilon_fraction is set .* unused"):
        r2d2.validate(r2d2.R2D2Config(epsilon_fraction=0.3))  # per-actor by default
    with pytest.warns(UserWarning, match=r"^apex.epsilon_end is set .*-epsilon false"):
        config = dqn_config.DQNConfig(per_actor_epsilon=True, epsilon_end=0.2)
        dqn_config.validate(config, name="apex")


def test_the_fields_of_the_mode_in_use_and_defaults_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pqn.validate(PQNConfig(epsilon_end=0.2, epsilon_fraction=0.3))
        pqn.validate(PQNConfig(per_actor_epsilon=True, epsilon=0.1))
        dqn_config.validate(apex_config(), name="apex")
        r2d2.validate(r2d2.R2D2Config(per_actor_epsilon=False, epsilon_end=0.01))


def test_other_values_of_the_same_fields_do_not_warn_again():
    # A sweep validates each value it tries (its range's ends, each draw):
    # the warning is about the field, so it is shown once for all of them.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for value in (0.01, 0.1, 0.067, 0.034):
            pqn.validate(PQNConfig(epsilon=value))
        pqn.validate(PQNConfig(epsilon=0.01, epsilon_alpha=3.0))  # another field
        r2d2.validate(r2d2.R2D2Config(per_actor_epsilon=False, epsilon=0.3))
    assert [m.split(" is", 1)[0].split(" are", 1)[0] for m in _unused(caught)] == [
        "pqn.epsilon",
        "pqn.epsilon and pqn.epsilon_alpha",
        "r2d2.epsilon",
    ]
    assert "0." not in "".join(_unused(caught))  # names no value


def test_fields_a_preset_set_are_named_unused_not_to_be_left_out():
    # The cartpole preset sets apex.epsilon (0.1) for per-actor ε; a user who
    # switches the mode off did not set it, and nothing tells them to drop it.
    config = pjd.load_preset("cartpole", "apex").config.apex
    config = pjd.apply_overrides(config, {"per_actor_epsilon": False})
    with pytest.warns(UserWarning) as record:
        dqn_config.validate(config, name="apex")
    (message,) = _unused(record)
    assert message.startswith("apex.epsilon is set (by a preset or by you) but unused")
    assert "--apex.per-actor-epsilon true" in message
    assert "leave" not in message and "no effect" not in message


@pytest.mark.timeout(600)
def test_an_apex_run_warns_once_naming_apex():
    # The run validates its config and its agent factory validates it again;
    # the factory is DQN's and must name the section it was given: apex.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "apex").config,
        {
            "num_envs": 4,
            "total_steps": 4 * 128 * 2,
            "num_logs": 1,
            "devices": 1,
            "apex": {"min_replay": 256, "batch_size": 32, "epsilon_end": 0.02},
        },
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjd.train(config, console=False)
    (message,) = _unused(caught)
    assert message.startswith("apex.epsilon_end is set")
    assert "--apex.per-actor-epsilon false" in message
    assert not any("dqn" in str(w.message) for w in caught)


def test_quiet_setup_warnings_neither_show_nor_use_up_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with quiet_setup_warnings():
            warn_once("a", key="k")
            pqn.validate(PQNConfig(epsilon=0.5))
    # Outside, a run set up afterwards is still told.
    with pytest.warns(UserWarning, match="^a$"):
        warn_once("a", key="k")
    with pytest.warns(UserWarning, match="pqn.epsilon is set"):
        pqn.validate(PQNConfig(epsilon=0.5))


def test_prioritised_fields_set_under_uniform_replay_warn_once():
    # DQN's replay is uniform by default: β, α and the priority ε do nothing
    # there, and a run that sets them is told so, as for the ε fields.
    config = dqn_config.DQNConfig(beta_start=0.7, priority_alpha=0.9)
    with pytest.warns(UserWarning) as record:
        dqn_config.validate(config)
        dqn_config.validate(dataclasses.replace(config, beta_start=0.5))  # once
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith(
        "dqn.priority_alpha and dqn.beta_start are set (by a preset or by you) "
        "but unused: with dqn.prioritised=false, replay is uniform"
    )
    assert message.endswith("pass --dqn.prioritised true for prioritised replay.")
    with pytest.warns(UserWarning, match=r"^apex.priority_eps is set .* uniform"):
        config = dqn_config.DQNConfig(prioritised=False, priority_eps=0.01)
        dqn_config.validate(config, name="apex")


def test_prioritised_fields_under_prioritised_replay_or_at_defaults_are_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dqn_config.validate(dqn_config.DQNConfig())  # defaults: not set
        prioritised = dqn_config.DQNConfig(prioritised=True, beta_start=0.7)
        dqn_config.validate(prioritised)
        dqn_config.validate(
            pjd.load_preset("cartpole", "apex").config.apex, name="apex"
        )


def test_rescale_eps_set_without_value_rescaling_warns_once():
    # R2D2's loss reads ε of h only with value rescaling on; the cartpole_masked
    # preset turns it off, and a run that sets or sweeps r2d2.rescale_eps there
    # is told that it changes nothing, as for the ε and priority fields.
    config = r2d2.R2D2Config(value_rescaling=False, rescale_eps=0.05)
    with pytest.warns(UserWarning) as record:
        r2d2.validate(config)
        r2d2.validate(dataclasses.replace(config, rescale_eps=0.01))  # once
    assert len(_unused(record)) == 1
    message = str(record[0].message)
    assert message.startswith(
        "r2d2.rescale_eps is set (by a preset or by you) but unused: "
        "with r2d2.value_rescaling=false"
    )
    assert message.endswith("pass --r2d2.value-rescaling true to learn h(Q).")
    assert "0.05" not in message  # names the field, not its value


def test_rescale_eps_with_value_rescaling_or_at_its_default_is_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r2d2.validate(r2d2.R2D2Config(rescale_eps=0.05))  # rescaling on
        r2d2.validate(r2d2.R2D2Config(value_rescaling=False))  # default ε
        r2d2.validate(pjd.load_preset("cartpole_masked", "r2d2").config.r2d2)


def test_a_burn_in_without_a_core_warns_once_and_with_one_is_quiet():
    # rec19 #4: a feed-forward Q-network has no state to warm up, yet each
    # sequence stores and unrolls the burn-in steps: said, once, with the fix.
    from purejaxdrl.agents import RunShape

    forget_warnings()
    config = r2d2.R2D2Config(burn_in=8)
    shape = RunShape(4, 16)
    with pytest.warns(pjd.SetupWarning) as record:
        r2d2.validate(config, shape)
        r2d2.validate(dataclasses.replace(config, burn_in=4), shape)  # once
    burn = [str(w.message) for w in record if "burn_in" in str(w.message)]
    assert burn == [
        "r2d2.burn_in=8 has no effect without a recurrent core "
        "(network.core='none'): it only warms up a core's state, yet each "
        "sequence stores and unrolls 8 more steps; drop it, --r2d2.burn-in 0 "
        "(r2d2.burn_in=0 in Python)."
    ]
    forget_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r2d2.validate(config, shape._replace(recurrent=True))
        r2d2.validate(dataclasses.replace(config, burn_in=0), shape)


class _Learner(NamedTuple):
    params: dict
    target_params: dict
    opt_state: tuple
    grad_steps: jax.Array


@pytest.mark.parametrize(
    ("returned", "got"),
    [
        (lambda loss, td: loss, "float32[] alone"),  # forgot ", td"
        (lambda loss, td: (loss, {"loss": loss}), "(float32[], dict)"),
        (lambda loss, td: (loss, td, {}), "(float32[], float32[3], dict)"),
    ],
)
def test_a_q_loss_that_returns_no_total_and_td_pair_is_refused_in_one_line(
    returned, got
):
    # Unpacked as it was, a loss alone failed with JAX's "iteration over a
    # 0-d array", naming neither the loss nor what it must return.
    params = {"w": jnp.ones(3)}
    sgd = optax.sgd(0.1)
    state = _Learner(params, params, sgd.init(params), jnp.int32(0))

    def loss_fn(params):
        td = params["w"] - 0.5
        return returned(jnp.mean(td**2), td)

    with pytest.raises(ConfigError) as error:
        target_network_step(
            state, loss_fn, sgd, jnp.bool_(True), target_every=1, target_tau=1.0,
            axis_name=None,
        )  # fmt: skip
    assert str(error.value) == (
        f"a loss returns (total, TD errors ([B], or [T, B] for sequences)); got "
        f"{got}; e.g. return "
        "jnp.mean(td**2), td."
    )
