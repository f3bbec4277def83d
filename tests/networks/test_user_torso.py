"""A torso of the user's own: registered by name, trained, exported and loaded."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.networks import torsos


class _Residual(nn.Module):
    """One residual dense block: x + W2 relu(W1 x), at the observation's width."""

    width: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.relu(nn.Dense(self.width, name="inner")(x))
        return x + nn.Dense(x.shape[-1], name="outer")(h)


@pytest.fixture
def residual(monkeypatch):
    monkeypatch.setattr(torsos, "_USER_TORSOS", {})
    pjd.networks.register_torso("residual", lambda config: _Residual(width=8))


def test_a_registered_torso_trains_exports_and_loads(residual, tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 8, "unroll_length": 16, "total_steps": 8 * 16 * 2,
         "devices": 1, "num_logs": 1, "run_dir": str(tmp_path),
         "network": {"torso": "residual", "hidden_sizes": [16]}},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    params = result.state.agent.params
    (inner,) = [
        leaf
        for path, leaf in jax.tree_util.tree_leaves_with_path(params)
        if "inner" in jax.tree_util.keystr(path) and leaf.ndim == 2
    ][:1]
    assert inner.shape == (4, 8)  # CartPole's 4 observations into the block
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    obs = jax.random.normal(jax.random.key(0), (5, 4))
    # The loaded policy is the run's network: the same greedy actions.
    network = pjd.training.make_experiment(config).network
    logits = network.apply(params, obs)[0]
    np.testing.assert_array_equal(policy.mode(obs), np.argmax(logits, axis=-1))
    assert policy.act(jnp.zeros(4), jax.random.key(1)).shape == ()


def test_torso_names_are_checked(residual):
    assert pjd.networks.torso_names()[-1] == "residual"
    with pytest.raises(ValueError, match="no built-in torso's"):
        pjd.networks.register_torso("mlp", lambda config: _Residual(width=8))
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"network": {"torso": "residul"}, "devices": 1}
    )
    with pytest.raises(ValueError, match=r"or register your own"):
        pjd.training.make_experiment(config)
