"""A torso of the user's own: registered by name, trained, exported and loaded."""

import json
import os
import pathlib
import subprocess
import sys

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.networks import torsos

# The guide's "Your own torso", as a module of the user's next to the command.
_MODULE = """
import flax.linen as nn
import purejaxdrl as pjd


class Residual(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        return x + nn.Dense(x.shape[-1])(nn.relu(nn.Dense(self.width)(x)))


pjd.networks.register_torso("fresh_residual", lambda config: Residual(width=8))
"""


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
    # Registered in the script, not an env.imports module: a process without
    # it is told to register it, not to "pick" a built-in torso.
    torsos._USER_TORSOS.clear()
    with pytest.raises(ConfigError) as error:
        pjd.load_policy(tmp_path / "policy")
    assert str(error.value) == (
        f"{str(tmp_path / 'policy')!r} was trained with the torso 'residual', "
        "which is not registered in this process; register it before loading "
        "(pjd.networks.register_torso('residual', ...)), or train with the "
        "module that registers it in --env.imports, which loading imports."
    )


def test_torso_names_are_checked(residual):
    assert pjd.networks.torso_names()[-1] == "residual"
    # A ConfigError, as the other registries refuse names (and a ValueError).
    for name in ("mlp", "my-torso", 3):
        with pytest.raises(pjd.ConfigError, match="no built-in torso's") as refused:
            pjd.networks.register_torso(name, lambda config: _Residual(width=8))
        assert isinstance(refused.value, ValueError)
        assert str(refused.value).startswith(f"torso name {name!r} must be an")
    assert "my-torso" not in pjd.networks.torso_names()
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"network": {"torso": "residul"}, "devices": 1}
    )
    with pytest.raises(ValueError, match=r"or register your own"):
        pjd.training.make_experiment(config)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        # The module class itself: flax would take the config as its width.
        (_Residual, r"but _Residual is the module class; pass lambda config: "),
        (_Residual(width=8), r"but it is a _Residual module; pass lambda config: "),
        (lambda: _Residual(width=8), r"but it takes \(\); pass lambda config: "),
        ("residual", r"but it is a str; pass a function"),
    ],
)
def test_a_make_that_is_not_make_config_is_refused_in_one_line(make, said, residual):
    with pytest.raises(ConfigError, match=said) as e:
        pjd.networks.register_torso("residual2", make)
    message = str(e.value)
    assert message.startswith("register_torso('residual2', ")
    assert "make is called as make(config), the run's NetworkConfig" in message
    assert "\n" not in message
    assert "residual2" not in pjd.networks.torso_names()  # nothing registered


def test_a_make_with_more_arguments_than_the_config_is_taken_when_they_default(
    residual,
):
    pjd.networks.register_torso("residual2", lambda config, width=8: _Residual(width))
    assert pjd.networks.torso_names()[-1] == "residual2"


class _Widened(nn.Module):
    """A torso whose width is the run's: the config is its first field."""

    config: pjd.NetworkConfig

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.relu(nn.Dense(self.config.hidden_sizes[0] // 2)(x))


def test_a_module_class_whose_first_field_is_the_config_is_its_own_make(residual):
    # make(config) is then _Widened(config): it trained, and was once refused.
    pjd.networks.register_torso("widened", _Widened)
    config = pjd.NetworkConfig(torso="widened", hidden_sizes=(16,))
    net = pjd.networks.make_actor_critic(config, pjd.env.Box((4,)), pjd.env.Discrete(2))
    params = net.init(jax.random.key(0), np.zeros((1, 4), np.float32))
    widths = {x.shape for x in jax.tree.leaves(params)}
    assert (4, 8) in widths  # the torso's Dense, half of hidden_sizes[0]


def _fresh_process(args: list[str], cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """`python ARGS` in a new interpreter, where nothing is registered yet."""
    root = pathlib.Path(pjd.__file__).parent.parent
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "JAX_PLATFORMS": "cpu"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
    )


@pytest.mark.timeout(900)
def test_a_policy_with_a_registered_torso_loads_in_a_fresh_process(
    residual, tmp_path, monkeypatch
):
    # The user's module lives in the folder the commands run from; its name
    # is the run's env.imports, which policy.json records.
    home = tmp_path / "home"
    home.mkdir()
    (home / "pjd_fresh_torso.py").write_text(_MODULE)
    monkeypatch.chdir(home)
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_modules adds cwd
    monkeypatch.delitem(sys.modules, "pjd_fresh_torso", raising=False)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 8, "unroll_length": 16, "total_steps": 8 * 16 * 2,
         "devices": 1, "num_logs": 1, "run_dir": str(tmp_path / "runs"),
         "env": {"imports": ["pjd_fresh_torso"]},
         "network": {"torso": "fresh_residual", "hidden_sizes": [16]}},
    )  # fmt: skip
    try:
        result = pjd.train(config, write_files=True, console=False)
        out = pjd.export_policy(result.run_dir, tmp_path / "policy")
        obs = np.asarray(jax.random.normal(jax.random.key(0), (5, 4)))
        expected = np.asarray(pjd.load_policy(out).mode(obs)).tolist()
        # A process without the torso registered: load_policy imports the
        # policy's env_imports before it builds the network. Then, nothing
        # registered again (module and torso forgotten, as a new process
        # starts), `purejaxdrl eval` of the policy imports them itself: one
        # launch for both (a launch costs ~3 s).
        script = (
            "import json, sys, numpy as np, purejaxdrl as pjd; "
            "from purejaxdrl import cli; from purejaxdrl.networks import torsos; "
            f"policy = pjd.load_policy({str(out)!r}); "
            f"print(json.dumps(np.asarray(policy.mode(np.array({obs.tolist()!r}, "
            "np.float32))).tolist()), flush=True); "
            "sys.modules.pop('pjd_fresh_torso'); torsos._USER_TORSOS.clear(); "
            f"sys.exit(cli.main(['eval', {str(out)!r}, '--episodes', '1']))"
        )
        done = _fresh_process(["-c", script], home)
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.strip().splitlines()
        assert json.loads(next(x for x in lines if x.startswith("["))) == expected
        assert "over 1 episode(s)" in lines[-1], done.stdout[-3000:]
        # The same torso name registered at another width in this process:
        # the message says so, rather than "re-export the run".
        pjd.networks.register_torso("fresh_residual", lambda c: _Residual(width=4))
        with pytest.raises(ConfigError, match=r"registered in this process.*"
                           r"env_imports \['pjd_fresh_torso'\]"):  # fmt: skip
            pjd.load_policy(out)
        # A fresh process (no torso registered) in a folder without the
        # module: one line naming it and the fix.
        sys.modules.pop("pjd_fresh_torso")
        torsos._USER_TORSOS.clear()
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != str(home)]
        monkeypatch.chdir(tmp_path)
        with pytest.raises(ConfigError, match="no module named 'pjd_fresh_torso'"):
            pjd.load_policy(out)
    finally:
        sys.modules.pop("pjd_fresh_torso", None)
