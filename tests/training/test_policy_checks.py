"""A policy folder that does not fit itself is refused in one line at load."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.normalization import RunningStatistics
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import VERSION, PolicySource


def _export(out, normalize=False, hidden=(16, 16)):
    """A PPO CartPole policy folder, parameters fresh from the network's init."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"network": {"hidden_sizes": list(hidden)}, "devices": 1},
    )
    env = pjd.env.make("CartPole-v1")
    specs = (env.observation_spec(env.default_params), env.action_spec(None))
    record = algorithm("ppo")
    network, _ = record.make_networks(config.algo_config, config.network, *specs)
    params = network.init(jax.random.key(0), jnp.zeros(4))
    stats = None
    if normalize:
        stats = RunningStatistics(jnp.float32(1), jnp.zeros(4), jnp.ones(4))
    return write_policy(out, PolicySource(config, params, stats, 1, specs))


def _edit(folder, **changes):
    spec = json.loads((folder / "policy.json").read_text())
    for key, value in changes.items():
        if value is None:
            del spec[key]
        else:
            spec[key] = value
    (folder / "policy.json").write_text(json.dumps(spec))


def test_a_fitting_policy_loads_and_leaves_no_temporary_files(tmp_path):
    folder = _export(tmp_path / "p", normalize=True)
    assert sorted(p.name for p in folder.iterdir()) == ["params.msgpack", "policy.json"]
    policy = pjd.load_policy(folder)
    assert policy.mode(jnp.zeros((3, 4))).shape == (3,)


def test_params_of_another_network_are_refused(tmp_path):
    folder = _export(tmp_path / "p")
    other = _export(tmp_path / "q", hidden=(8,))
    (folder / "params.msgpack").write_bytes((other / "params.msgpack").read_bytes())
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_policy(folder)
    message = str(e.value)
    assert "params.msgpack does not fit the network" in message
    assert str(folder) in message and "re-export" in message
    assert "\n" not in message


def test_observation_statistics_must_match_normalize_observations(tmp_path):
    plain = _export(tmp_path / "plain")
    normalised = _export(tmp_path / "norm", normalize=True)
    (normalised / "params.msgpack").write_bytes((plain / "params.msgpack").read_bytes())
    with pytest.raises(pjd.ConfigError, match="says the policy normalises .* has no"):
        pjd.load_policy(normalised)
    _edit(plain, normalize_observations=True)
    with pytest.raises(pjd.ConfigError, match="re-export"):
        pjd.load_policy(plain)


def test_statistics_a_plain_policy_json_does_not_name_are_refused(tmp_path):
    # Files copied from two exports: acting on raw observations would be wrong.
    plain = _export(tmp_path / "plain")
    normalised = _export(tmp_path / "norm", normalize=True)
    (plain / "params.msgpack").write_bytes((normalised / "params.msgpack").read_bytes())
    said = "says the policy does not normalise observations but params.msgpack has"
    with pytest.raises(pjd.ConfigError, match=said):
        pjd.load_policy(plain)


@pytest.mark.parametrize("key", ["network", "algo", "env_id", "action"])
def test_a_missing_field_is_one_line(tmp_path, capsys, key):
    folder = _export(tmp_path / "p")
    _edit(folder, **{key: None})
    with pytest.raises(pjd.ConfigError, match=f"has no '{key}' field; re-export"):
        pjd.load_policy(folder)
    assert cli.main(["eval", str(folder), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"'{key}'" in err, err


@pytest.mark.parametrize("newer", [VERSION + 1, 99])
def test_a_newer_format_version_is_refused(tmp_path, newer):
    folder = _export(tmp_path / "p")
    _edit(folder, version=newer)
    with pytest.raises(pjd.ConfigError, match=f"version {newer}; this purejaxdrl"):
        pjd.load_policy(folder)


def test_a_policy_json_without_its_format_is_refused(tmp_path, capsys):
    # Any JSON with the required fields is not yet a policy.
    folder = _export(tmp_path / "p")
    _edit(folder, format=None)
    with pytest.raises(pjd.ConfigError, match="is not a purejaxdrl-policy file"):
        pjd.load_policy(folder)
    assert cli.main(["eval", str(folder), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a purejaxdrl-policy file" in err, err


def _sac_cnn_policy():
    """A SAC config with a cnn torso, its specs, fresh parameters and critic's."""
    from purejaxdrl.env.base import Box
    from purejaxdrl.networks.heads import make_sac_networks

    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"algo": "sac", "env": {"id": "Pendulum-v1"}, "devices": 1,
         "network": {"torso": "cnn", "hidden_sizes": [4]}},
    )  # fmt: skip
    specs = (Box((5, 5, 2)), Box((2,)))
    nets = make_sac_networks(config.network, *specs)
    params = nets.policy.init(jax.random.key(0), jnp.zeros((1, 5, 5, 2)))
    return config, specs, params, params["critic"]["params"]


def test_a_sac_policy_from_before_critic_torsos_names_the_version(tmp_path):
    # SAC's critics read the observation through the torso since 0.1.0: a
    # policy exported earlier with a cnn torso lacks their conv parameters.
    config, specs, params, critic = _sac_cnn_policy()
    assert {"q0_obs", "q1_obs"} <= set(critic)
    write_policy(tmp_path / "now", PolicySource(config, params, None, 1, specs))
    pjd.load_policy(tmp_path / "now")  # today's export loads
    old = {k: v for k, v in critic.items() if not k.endswith("_obs")}
    params = {**params, "critic": {"params": old}}
    write_policy(tmp_path / "old", PolicySource(config, params, None, 1, specs))
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_policy(tmp_path / "old")
    assert "an earlier purejaxdrl exported it, whose SAC critics read the raw" in str(
        e.value
    )
    assert "q0_obs" in str(e.value) and "\n" not in str(e.value)


def test_missing_critic_torsos_with_other_differences_are_not_called_old(tmp_path):
    # Only an export from before SAC's critics had torsos lacks just those;
    # one that also differs elsewhere is a folder to export again.
    config, specs, params, critic = _sac_cnn_policy()
    old = {k: v for k, v in critic.items() if not k.endswith("_obs")}
    old["extra"] = {"kernel": np.zeros((2, 2), np.float32)}
    params = {**params, "critic": {"params": old}}
    write_policy(tmp_path / "p", PolicySource(config, params, None, 1, specs))
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_policy(tmp_path / "p")
    assert "params.msgpack does not fit the network" in str(e.value)
    assert "earlier purejaxdrl" not in str(e.value)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("core_size", "64", "network.core_size='64' is not an integer"),
        (
            "hidden_sizes",
            ["16"],
            "network.hidden_sizes=['16'] is not a list of integers",
        ),
        # JSON's true is no width: the file is named, not params.msgpack.
        (
            "hidden_sizes",
            [True],
            "network.hidden_sizes=[True] is not a list of integers",
        ),
        ("shared_torso", "false", "network.shared_torso='false' is not true or false"),
        ("policy_obs_key", 3, "network.policy_obs_key=3 is not a string or null"),
        # A value of the right type the network refuses: the file is named,
        # not a flag, which eval does not take.
        ("core", "grux", "network.core='grux' is not one of ('none', 'lstm',"),
        ("core_size", 0, "network.core_size=0 must be >= 1; set it back, or"),
    ],
)
def test_an_edited_network_field_names_policy_json(
    tmp_path, capsys, field, value, says
):
    folder = _export(tmp_path / "p")
    spec = json.loads((folder / "policy.json").read_text())
    _edit(folder, network={**spec["network"], field: value})
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_policy(folder)
    message = str(e.value)
    assert message.startswith(f"{str(folder / 'policy.json')!r}: {says}"), message
    assert message.endswith(f"--out {folder} --overwrite`."), message
    assert "--network." not in message and "\n" not in message
    assert cli.main(["eval", str(folder), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


def test_each_function_of_a_loaded_policy_says_what_it_does(tmp_path):
    # help(policy.act) in a notebook: the closures were bare signatures.
    policy = pjd.load_policy(_export(tmp_path / "p"))
    for name in ("act", "mode", "step", "step_mode"):
        doc = getattr(policy, name).__doc__
        assert doc and len(doc.split()) >= 5, (name, doc)
    assert "sampled" in policy.act.__doc__ and "most likely" in policy.mode.__doc__
