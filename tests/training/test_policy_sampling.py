"""An exported policy samples as its algorithm's record says, not by its config's type.

A Q-learner's record sets `exported_sampler` (ε-greedy) and `policy_extras`
(policy.json's ε); a user's Q-learner whose config has no `EpsilonFields`
explores as its own record says. The built-in exports act as they did before
the record said so: their actions on fixed keys were recorded with the code
of a9d2bab, which chose ε-greedy by `isinstance(section, EpsilonFields)`.
Policies are written from fresh parameters: nothing trains.
"""

import dataclasses
import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.agents.base import Algorithm, distribution_sample, no_policy_extras
from purejaxdrl.agents.fields import EpsilonFields
from purejaxdrl.agents.q_learning import epsilon_greedy_sampler
from purejaxdrl.networks import make_q_network
from purejaxdrl.setup_warnings import SetupWarning, forget_warnings
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import PolicySource

NET = {"hidden_sizes": [8], "activation": "tanh"}
RUN = {"devices": 1, "num_envs": 4, "unroll_length": 4, "total_steps": 640}
# name: (algo, overrides, updates done of the run's 40).
CASES = {
    "dqn": ("dqn", {"dqn": {"epsilon_start": 1.0, "epsilon_end": 0.5,
                            "epsilon_fraction": 0.8, "dueling": True}}, 2),
    "apex": ("apex", {"apex": {"epsilon": 0.9, "epsilon_alpha": 1.0}}, 3),
    "pqn": ("pqn", {"pqn": {"epsilon_start": 1.0, "epsilon_end": 0.5,
                            "epsilon_fraction": 0.8}}, 2),
    "r2d2": ("r2d2", {"r2d2": {"per_actor_epsilon": False, "epsilon_start": 1.0,
                              "epsilon_end": 0.5, "epsilon_fraction": 0.8}}, 2),
    "ppo": ("ppo", {}, 3),
}  # fmt: skip
# policy.json's epsilon and the actions of two `step`s, as a9d2bab exported
# and loaded them ("_old": policy.json without its epsilon, as exported
# before it kept one: epsilon_end, or Ape-X's mean ε_i).
BEFORE = {
    "dqn": (
        0.96875,
        "1000001010001010110110111111111010001110011000111001110101111101",
    ),
    "dqn_old": (
        None,
        "1000101010001000110110111111111010111110000000011001010101111100",
    ),
    "apex": (
        0.8544732928276062,
        "1000001010001000110110111111111010001110010000111001110101111101",
    ),
    "apex_old": (
        None,
        "1000001010001000110110111111111010001110010000111001110101111101",
    ),
    "pqn": (
        0.96875,
        "1000001010001010110110111111111010001110011000111001110101111101",
    ),
    "pqn_old": (
        None,
        "1000101010001000110110110110111010111110000000011001110101111100",
    ),
    "r2d2": (
        0.96875,
        "1000001010001010110110111111111010001110011000111001110101111101",
    ),
    "r2d2_old": (
        None,
        "1000101010001000110110111111111010111110000000011001010101111100",
    ),
    "ppo": (None, "1010011101100100101101101111010011010101011001100101100101001000"),
}


def _specs():
    env = pjd.env.make("CartPole-v1")
    return env.observation_spec(env.default_params), env.action_spec(None)


def _config(algo, overrides):
    try:
        base = pjd.load_preset("cartpole", algo).config
    except pjd.training.presets.NoSectionError as e:
        base = e.untuned
    return pjd.apply_overrides(base, {**RUN, "network": NET, **overrides})


def _export(out, config, updates):
    """Writes `config`'s policy from fresh parameters: (them, acting network)."""
    record = registry.algorithm(config.algo)
    specs = _specs()
    network, _ = record.make_networks(config.algo_config, config.network, *specs)
    params = network.init(jax.random.key(0), jnp.zeros(4))
    write_policy(out, PolicySource(config, params, None, updates, specs))
    return params, network


def _two_steps(policy):
    obs = jax.random.normal(jax.random.key(7), (32, 4))
    state, reset, actions = policy.initial_state(32), jnp.ones(32, bool), []
    for step_key in jax.random.split(jax.random.key(3), 2):
        state, action = policy.step(state, obs, reset, step_key)
        reset = jnp.zeros(32, bool)
        actions += np.asarray(action).tolist()
    return "".join(map(str, actions))


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_built_in_exports_act_as_before_the_record_said_how(case, tmp_path):
    name, old = case.removesuffix("_old"), case.endswith("_old")
    algo, overrides, updates = CASES[name]
    _export(tmp_path, _config(algo, overrides), updates)
    spec = json.loads((tmp_path / "policy.json").read_text())
    epsilon, actions = BEFORE[case]
    if old:
        del spec["epsilon"]
        (tmp_path / "policy.json").write_text(json.dumps(spec))
    else:
        assert spec.get("epsilon") == epsilon
    assert _two_steps(pjd.load_policy(tmp_path)) == actions


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class ExploringQConfig:
    """A user's Q-learner: its own exploration rate, no EpsilonFields.

    Attributes:
      explore: the chance of a uniformly random action.

    """

    explore: float | jax.Array = 0.3


def _q_networks(config, network, obs_spec, action_spec):
    q = make_q_network(network, obs_spec, action_spec, dueling=False)
    return q, q


USER_Q = Algorithm(
    name="explorer",
    summary="a user's Q-learner that explores with its own rate",
    config_type=ExploringQConfig,
    make_agent=lambda config, network, obs_example, run: None,  # never trained
    make_networks=_q_networks,
    validate=lambda config, shape: None,
    action_kinds=("discrete",),
    policy_extras=lambda config, shape, updates: {"explore": float(config.explore)},
    exported_sampler=lambda config, spec, dist: epsilon_greedy_sampler(spec["explore"]),
)


@pytest.fixture
def own_registry(monkeypatch):
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))


def _user_export(out, record):
    registry.register(record)
    config = pjd.apply_overrides(
        pjd.training.config_class()(algo=record.name),
        {**RUN, "network": NET, "env": {"id": "CartPole-v1"}},
    )
    return _export(out, config, updates=5)


def test_a_user_q_learner_exports_the_exploration_its_record_names(
    own_registry, tmp_path
):
    assert not issubclass(ExploringQConfig, EpsilonFields)
    params, network = _user_export(tmp_path / "p", USER_Q)
    policy = pjd.load_policy(tmp_path / "p")
    assert policy.spec["explore"] == pytest.approx(0.3)
    # Two actions: ε-greedy takes the other action ε / 2 = 0.15 of the time.
    obs = jnp.zeros((20_000, 4))
    greedy = np.asarray(policy.mode(obs))
    other = np.mean(np.asarray(jax.jit(policy.act)(obs, jax.random.key(3))) != greedy)
    assert abs(other - 0.15) < 0.015, other  # 6 standard deviations
    # Left at the default, the record's export samples its distribution, a
    # softmax over Q: the other action with probability e^q' / (e^q + e^q').
    default = dataclasses.replace(
        USER_Q,
        name="softmaxer",
        policy_extras=no_policy_extras,
        exported_sampler=distribution_sample,
    )
    _user_export(tmp_path / "s", default)
    softmax = pjd.load_policy(tmp_path / "s")
    assert "explore" not in softmax.spec
    q = np.asarray(network.apply(params, jnp.zeros(4))[0], np.float64)
    want = np.exp(q.min()) / np.exp(q).sum()
    other = np.mean(np.asarray(jax.jit(softmax.act)(obs, jax.random.key(3))) != greedy)
    assert abs(other - want) < 0.025, (other, want)
    assert abs(want - 0.15) > 0.1  # the two policies differ here


@pytest.mark.parametrize(
    ("extras", "said"),
    [
        (lambda c, s, u: [0.1], "returned list, but it must return a dict"),
        (lambda c, s, u: {"algo": 1}, "the key 'algo', which policy.json holds"),
        (lambda c, s, u: {"eps": jnp.ones(2)}, "which policy.json cannot hold"),
    ],
)
def test_extras_policy_json_cannot_hold_are_one_line_naming_the_field(
    extras, said, own_registry, tmp_path
):
    record = dataclasses.replace(USER_Q, policy_extras=extras)
    with pytest.raises(pjd.ConfigError) as e:
        _user_export(tmp_path, record)
    assert str(e.value).startswith("Algorithm 'explorer': policy_extras ")
    assert said in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "policy.json").exists()


def test_a_sampler_that_returns_no_function_is_one_line(own_registry, tmp_path):
    record = dataclasses.replace(USER_Q, exported_sampler=lambda c, s, d: 0.3)
    _user_export(tmp_path, record)
    with pytest.raises(pjd.ConfigError, match=r"^Algorithm 'explorer': "
                       r"exported_sampler returned float, but it must return a "
                       r"function sample\(output, key\) -> action"):  # fmt: skip
        pjd.load_policy(tmp_path)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class EpsilonQConfig(EpsilonFields):
    """A user's Q-learner config with the library's ε fields."""


def test_a_record_with_epsilon_fields_and_the_default_sampler_is_warned(
    own_registry,
):
    forget_warnings()
    record = dataclasses.replace(
        USER_Q,
        name="epsq",
        config_type=EpsilonQConfig,
        policy_extras=no_policy_extras,
        exported_sampler=distribution_sample,
    )
    said = r"^Algorithm 'epsq': its config has ε fields .* set exported_sampler="
    with pytest.warns(SetupWarning, match=said + "exported_epsilon_greedy"):
        registry.register(record)
    # DQN's sampler set, or a config without ε fields: nothing to say.
    with warnings.catch_warnings():
        warnings.simplefilter("error", SetupWarning)
        dqn = registry.algorithm("dqn")
        registry.register(
            dataclasses.replace(
                record,
                name="epsq2",
                exported_sampler=dqn.exported_sampler,
                policy_extras=dqn.policy_extras,
            )
        )
        registry.register(dataclasses.replace(USER_Q, name="plain"))
