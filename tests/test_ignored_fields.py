"""A field a config ignores changes nothing that asks whether runs differ.

`--network.shared-torso` with a recurrent core is ignored (the policy and the
value share the torso and the core either way; docs/guide/recurrent.md), yet
the preset target refused to judge such a run ("not judged
(network.shared_torso changed)") and the plots drew it as another setting
than its seeds (ds18 #2). Both now read `field_roles.ignored_fields`.
"""

import dataclasses
import types

import jax
import jax.numpy as jnp
import numpy as np
import yaml

import purejaxdrl as pjd
from purejaxdrl.cli.target import changed_settings, target_line
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.field_roles import ignored_fields
from purejaxdrl.networks import make_actor_critic


def test_shared_torso_is_ignored_with_a_core_and_only_there():
    assert ignored_fields("gru") == ("network.shared_torso",)
    assert ignored_fields("none") == ()


def test_a_recurrent_network_is_the_same_whatever_shared_torso_says():
    # What makes the field ignored: the same parameters, the same outputs.
    masked = pjd.load_preset("cartpole_masked", "ppo").config.network
    obs = jax.random.normal(jax.random.key(1), (5, 2, 4))
    reset = jnp.zeros((5, 2), bool)
    params, outputs = [], []
    for shared in (False, True):
        config = dataclasses.replace(masked, shared_torso=shared)
        net = make_actor_critic(config, Box((4,)), Discrete(2))
        params.append(net.init(jax.random.key(0), jnp.zeros(4)))
        outputs.append(net.unroll(params[-1], net.initial_state(2), obs, reset))
    assert jax.tree.structure(params[0]) == jax.tree.structure(params[1])
    for pair in (params, outputs):
        jax.tree.map(np.testing.assert_array_equal, *pair)


def test_the_preset_target_judges_a_recurrent_run_with_shared_torso():
    masked = pjd.load_preset("cartpole_masked", "ppo")
    flagged = pjd.apply_overrides(masked.config, {"network.shared_torso": True})
    assert changed_settings(flagged, masked) == []
    run = types.SimpleNamespace(mean_return=480.0, eval_return=float("nan"))
    assert target_line(flagged, masked, run).endswith(": reached")
    # Without a core the field builds one torso instead of two: a change.
    ppo = pjd.load_preset("cartpole", "ppo")
    shared = pjd.apply_overrides(ppo.config, {"network.shared_torso": True})
    assert changed_settings(shared, ppo) == ["network.shared_torso"]


def test_plots_draw_recurrent_runs_apart_only_in_shared_torso_as_seeds(tmp_path):
    from purejaxdrl.observe.curves import load_curves

    def run(name, seed, preset, shared):
        d = tmp_path / name
        d.mkdir()
        config = pjd.config.to_dict(pjd.load_preset(preset).config)
        config["seed"] = seed
        config["network"]["shared_torso"] = shared
        (d / "config.yaml").write_text(yaml.safe_dump(config))
        record = {"env_steps": 1000, "time": 0.5, "episode/mean_return": 1.0}
        (d / "metrics.jsonl").write_text(f"{record}\n".replace("'", '"'))
        return d

    recurrent = [
        run("a", 0, "cartpole_masked", False),
        run("b", 1, "cartpole_masked", True),
    ]
    (curve,) = load_curves(recurrent)
    assert len(curve.histories) == 2
    # Feed-forward runs with and without a shared torso are two settings.
    plain = [run("c", 0, "cartpole", False), run("d", 1, "cartpole", True)]
    assert len(load_curves(plain)) == 2
