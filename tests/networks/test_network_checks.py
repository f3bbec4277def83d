"""Network settings no network is built with: one line each, naming the fix.

Sizes of the conv torsos, empty observation keys, and a recurrent core or a
Q-network on dict observations (whose fix is the environment's
`observation_key` option, as docs/guide/environments.md says).
"""

import ast
import functools
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.contract import check_user_env
from purejaxdrl.networks import NetworkConfig, make_actor_critic, make_q_network
from purejaxdrl.networks.base import check_network, network_faults
from tests.env.test_contract import Flawed

DICT_SPEC = {"state": Box((5,)), "privileged_state": Box((9,))}
DOCS = pathlib.Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize(
    ("fields", "start"),
    [
        ({"torso": "cnn", "conv_features": 0}, "network.conv_features=0 must be"),
        ({"torso": "cnn", "conv_features": -2}, "network.conv_features=-2 must be"),
        (
            {"torso": "impala_resnet", "resnet_channels": (0, 8)},
            "network.resnet_channels=[0, 8] must be",
        ),
        (
            {"torso": "impala_resnet", "resnet_channels": (16, -1)},
            "network.resnet_channels=[16, -1] must be",
        ),
        (
            {"torso": "impala_resnet", "resnet_channels": ()},
            "network.resnet_channels=[] must be",
        ),
    ],
)
def test_conv_sizes_below_one_are_one_line(fields, start):
    # Before: ZeroDivisionError or TypeError from inside JAX's initialisers.
    with pytest.raises(ConfigError) as error:
        config = pjd.apply_overrides(
            pjd.load_preset("breakout_minatar").config,
            {"total_steps": 8192, "devices": 1, "network": fields},
        )
        pjd.training.make_experiment(config)
    message = str(error.value)
    assert message.startswith(start), message
    assert "\n" not in message


_BAD_FIELDS = [
    {"hidden_sizes": ()},
    {"hidden_sizes": (64, 0)},
    {"conv_features": 0},
    {"resnet_channels": (16, -1)},
    {"policy_obs_key": ""},
    {"value_obs_key": ""},
    {"core": "grue"},
    {"core": "transformer"},
    {"core": "gru", "core_size": 0},
    # rec19 #2: one rule each, both spelt (was one line of both rules).
    {"core": "gru", "head_sizes": (0,)},
    {"head_sizes": (64,)},
]


@pytest.mark.parametrize("fields", _BAD_FIELDS)
def test_each_network_fix_is_spelt_both_ways_and_mends_the_config(fields):
    # The fix is both spellings of one good value (before: the sizes' fixes
    # gave the flag alone); following the Python spelling passes the check.
    (rule, fix), *_ = network_faults(NetworkConfig(**fields))
    assert rule.startswith("network.") and "--network." in fix, (rule, fix)
    (path, python), *_ = re.findall(r"\((network\.\w+)=(.*?) in Python\)", fix)
    mended = {**fields, path.removeprefix("network."): ast.literal_eval(python)}
    assert list(network_faults(NetworkConfig(**mended))) == []
    with pytest.raises(ConfigError) as error:
        check_network(NetworkConfig(**fields))
    assert str(error.value) == f"{rule}; {fix}."


@pytest.mark.parametrize("channels", [(0, 8), (16, -1), ()])
def test_the_network_builder_refuses_bad_channels_itself(channels):
    # Networks built without a training config (the API) are checked too.
    config = NetworkConfig(torso="impala_resnet", resnet_channels=channels)
    with pytest.raises(ConfigError, match=r"^network\.resnet_channels="):
        make_actor_critic(config, Box((64, 64, 3)), Discrete(4))


@pytest.mark.parametrize("field", ["policy_obs_key", "value_obs_key"])
def test_an_empty_observation_key_is_one_line(field):
    # Before: policy_obs_key="" built a network whose init raised IndexError;
    # value_obs_key="" was silently the policy's entry.
    config = NetworkConfig(**{field: ""})
    with pytest.raises(ConfigError, match=rf"^network\.{field}='' names no entry"):
        make_actor_critic(config, Box((4,)), Discrete(2))
    with pytest.raises(ConfigError, match=rf"^network\.{field}='' names no entry"):
        make_actor_critic(config, DICT_SPEC, Discrete(2))


@pytest.mark.parametrize(
    "keys",
    [{}, {"policy_obs_key": "state", "value_obs_key": "privileged_state"}],
)
def test_a_core_on_dict_observations_names_the_observation_key_option(keys):
    # Before: without keys, the error asked for them; with them, a second
    # error said a core is impossible. Now the first error says both ways out.
    config = NetworkConfig(core="gru", **keys)
    with pytest.raises(ConfigError) as error:
        make_actor_critic(config, DICT_SPEC, Discrete(3))
    message = str(error.value)
    assert message.startswith("network.core='gru' takes array observations"), message
    assert "--env.option observation_key=state" in message, message
    assert "--network.core none" in message, message


def test_a_q_network_on_dict_observations_names_the_observation_key_option():
    with pytest.raises(ConfigError) as error:
        make_q_network(NetworkConfig(), DICT_SPEC, Discrete(3), dueling=False)
    assert "--env.option observation_key=state" in str(error.value)


def test_forward_mode_is_refused_and_documented_reverse_over_reverse_works():
    net = make_actor_critic(NetworkConfig(hidden_sizes=(8,)), Box((3,)), Discrete(2))
    x = jnp.linspace(-1.0, 1.0, 6).reshape(2, 3)
    params = net.init(jax.random.key(0), x)

    def f(x):
        return net.apply(params, x)[1].sum()

    # custom_vjp (networks/matmul.py) has no forward-mode rule: what the
    # docstrings and the guide say.
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(f, (x,), (x,))
    # Their way around it: a Hessian-vector product by reverse over reverse
    # equals a central difference of the gradient along the vector.
    v = jnp.flip(x)
    hvp = jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)
    eps = 1e-2
    diff = (jax.grad(f)(x + eps * v) - jax.grad(f)(x - eps * v)) / (2 * eps)
    assert jnp.allclose(hvp, diff, atol=1e-3)
    for text in (
        pjd.networks.matmul.__doc__,
        pjd.networks.__doc__,
        pjd.networks.base.dense.__doc__,
        (DOCS / "guide" / "adding-an-algorithm.md").read_text(),
    ):
        assert "jax.jvp" in text and "reverse" in text


@pytest.mark.parametrize("argv", [["--algo", "dqn"], ["--network.core", "gru"]])
def test_the_command_lines_dict_refusals_name_the_observation_key_option(argv, capsys):
    # What a Q-learner or a core on dict observations is told from the command
    # line: one line that names the one-entry option (the training check for
    # the Q-learners, the network's for a core).
    base = ["train", "--no-files", "--no-compile-cache", "--env.imports"]
    base += ["tests.dict_env", "--env.id", "DictSignal-v0"]
    status = cli.main([*base, "--network.policy-obs-key", "state", *argv])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(lines) == 1, lines
    assert "--env.option observation_key=state" in lines[0], lines[0]


FACTORIES = {
    "make_actor_critic": make_actor_critic,
    "make_q_network": functools.partial(make_q_network, dueling=False),
    "make_sac_networks": pjd.networks.make_sac_networks,
}


OBS_RULE = "is not a purejaxdrl.env.Box or a non-empty dict of them; use "
ACTION_RULE = "is not a purejaxdrl.env.Discrete or a 1-D purejaxdrl.env.Box; use "
SIZELESS = (
    "purejaxdrl.env.Discrete(num_actions), or a 1-D purejaxdrl.env.Box("
    "(num_dims,)) of actions in [-1, 1]."
)


class ForeignDiscrete:
    """A gymnax- or Gymnasium-style Discrete: `.n` (a numpy int) and `.shape` ()."""

    n = np.int64(6)
    shape = ()

    def __repr__(self):
        return "Discrete(6)"


class ForeignBox:
    """A gymnax- or Gymnasium-style Box: its `.shape`."""

    def __init__(self, *shape):
        self.shape = shape

    def __repr__(self):
        return f"Box{self.shape}"


FOREIGN = "(a tests.networks.test_network_checks."


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(
    ("obs_spec", "action_spec", "message"),
    [
        ((4,), Discrete(2), f"obs_spec=(4,) {OBS_RULE}purejaxdrl.env.Box((4,)), "
         "the shape of one observation."),
        (3, Box((2,)), f"obs_spec=3 {OBS_RULE}purejaxdrl.env.Box((3,)), the "
         "shape of one observation."),
        (Box((4,)), 2, f"action_spec=2 {ACTION_RULE}purejaxdrl.env.Discrete(2) "
         "for 2 actions, or purejaxdrl.env.Box((2,)) for 2 dimensions of actions "
         "in [-1, 1]."),
        (Box((4,)), (3,), f"action_spec=(3,) {ACTION_RULE}purejaxdrl.env.Discrete"
         "(3) for 3 actions, or purejaxdrl.env.Box((3,)) for 3 dimensions of "
         "actions in [-1, 1]."),
        # Sizes read from numpy ints and foreign spaces, not made up (cr12 #6).
        (np.int64(8), Discrete(2), f"obs_spec=np.int64(8) (a numpy.int64) "
         f"{OBS_RULE}purejaxdrl.env.Box((8,)), the shape of one observation."),
        (ForeignBox(5, 2), Discrete(2), f"obs_spec=Box(5, 2) {FOREIGN}ForeignBox)"
         f" {OBS_RULE}purejaxdrl.env.Box((5, 2)), the shape of one observation."),
        (Box((4,)), ForeignDiscrete(), f"action_spec=Discrete(6) {FOREIGN}"
         f"ForeignDiscrete) {ACTION_RULE}purejaxdrl.env.Discrete(6)."),
        (Box((4,)), ForeignBox(3), f"action_spec=Box(3,) {FOREIGN}ForeignBox) "
         f"{ACTION_RULE}purejaxdrl.env.Box((3,)) of actions in [-1, 1]."),
        # A dict must be non-empty, and of Boxes only (its odd entry named).
        ({}, Discrete(2), f"obs_spec={{}} {OBS_RULE}purejaxdrl.env.Box(shape), "
         "the shape of one observation."),
        ({"a": Box((2,)), "b": (3,)}, Discrete(2), "obs_spec={'a': Box(shape="
         f"(2,)), 'b': (3,)}} {OBS_RULE}a dict of purejaxdrl.env.Box, one per "
         "entry ('b' is not one)."),
        # Nothing to read: no numbers.
        ("four", Discrete(2), f"obs_spec='four' {OBS_RULE}purejaxdrl.env.Box("
         "shape), the shape of one observation."),
        (Box((4,)), "two", f"action_spec='two' {ACTION_RULE}{SIZELESS}"),
        # No size to read: not >= 1, a bool, a foreign Box not 1-D, several
        # sizes, no sizes (before, made-up sizes would pass unnoticed).
        (Box((4,)), 0, f"action_spec=0 {ACTION_RULE}{SIZELESS}"),
        (Box((4,)), True, f"action_spec=True {ACTION_RULE}{SIZELESS}"),
        (Box((4,)), ForeignBox(2, 3), f"action_spec=Box(2, 3) {FOREIGN}ForeignBox)"
         f" {ACTION_RULE}{SIZELESS}"),
        (Box((4,)), (3, 4), f"action_spec=(3, 4) {ACTION_RULE}{SIZELESS}"),
        ((), Discrete(2), f"obs_spec=() {OBS_RULE}purejaxdrl.env.Box(shape), the "
         "shape of one observation."),
        # The contract's 1-D rule: before, this failed as a bare unpack (cr12 #7).
        (Box((4,)), Box((2, 3)), f"action_spec=Box(shape=(2, 3)) {ACTION_RULE}"
         f"{SIZELESS}"),
    ],
)  # fmt: skip
def test_a_spec_not_purejaxdrls_names_the_spec_to_pass(
    factory, obs_spec, action_spec, message
):
    # Before: AttributeError: 'int' object has no attribute 'shape' (and from
    # make_q_network, "Q-learning needs discrete actions, got 2").
    with pytest.raises(ConfigError) as error:
        FACTORIES[factory](NetworkConfig(), obs_spec, action_spec)
    assert str(error.value) == f"{factory}: {message}"


def test_a_two_d_action_box_is_the_clis_one_line():
    # Before: the unpacking ValueError in the head, which the CLI shows with a
    # traceback (`cli.raised_here` is False for "too many values to unpack").
    with pytest.raises(ConfigError) as error:
        make_actor_critic(NetworkConfig(), Box((4,)), Box((2, 3)))
    assert cli.raised_here(error.value)


@pytest.mark.parametrize(
    "action", [Box((2, 3)), Box(()), ForeignDiscrete(), ForeignBox(3), 2, "two"]
)
def test_the_contract_and_the_networks_refuse_a_spec_alike(action):
    # One rule: the two refusals differ only in their prefix and the names.
    with pytest.raises(ConfigError) as by_networks:
        make_actor_critic(NetworkConfig(), Box((2,)), action)
    with pytest.raises(ConfigError) as by_contract:
        check_user_env(Flawed(action=action), "Flawed-v0")
    want = str(by_networks.value).replace("make_actor_critic: action_spec=", "")
    got = str(by_contract.value).replace("Flawed-v0: action_spec(params)=", "")
    assert got == want


@pytest.mark.parametrize(
    ("core", "meant"), [("grue", "gru"), ("LSTM", "lstm"), ("minGRU", "mingru")]
)
def test_a_misspelt_core_is_told_the_close_one(core, meant):
    with pytest.raises(ConfigError) as e:
        check_network(NetworkConfig(core=core))
    assert str(e.value).endswith(
        f"did you mean {meant!r}? Pass --network.core {meant} "
        f"(network.core={meant!r} in Python)."
    ), e.value


def test_a_core_like_none_of_them_is_told_the_list():
    with pytest.raises(ConfigError, match=r"\('none', 'lstm', 'gru', 'mingru'\); pick"):
        check_network(NetworkConfig(core="transformer"))
