"""The user's own environments: modules imported by `env.imports` (or named by a
Gymnasium id, `gymnasium:module:Id`), from the folder the command runs in.

The end-to-end tests run the command as a user does, in the folder that holds
the module: `train` in this process (the folder is not on its path: only
--env.imports brings the module in, and the `isolated` fixture undoes it), then
`eval`, `export` and `--resume` of the run in fresh processes with `python -P`
(no current folder on the path, as the `purejaxdrl` console script starts),
each importing the module by itself from what the run saved.
"""

import os
import pathlib
import re
import subprocess
import sys
from typing import Any

import jax
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.env.imports import import_modules
from tests.helpers import env_registrations_undone

# A 1-D corridor: position 0..4, actions left / right, reward 1 on reaching 4
# (which ends the episode), a 20-step time limit. Names are unique to this file:
# modules and registrations stay in the processes that import them.
GYM_CORRIDOR = '''
"""A 1-D corridor for Gymnasium, registered when imported."""

import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    def __init__(self, length: int = 4):
        self.length = length
        self.observation_space = gym.spaces.Box(0.0, float(length), (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.position = max(0, self.position + (1 if int(action) == 1 else -1))
        done = self.position == self.length
        return np.array([self.position], np.float32), float(done), done, False, {}


gym.register("{name}", entry_point=Corridor, max_episode_steps=20)
'''

JAX_CORRIDOR = '''
"""The same corridor as a purejaxdrl Env, registered when imported."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl import env as envs
from purejaxdrl.types import TimeStep


class Params(NamedTuple):
    length: jax.Array
    time_limit: jax.Array


class JaxCorridor(envs.Env):
    @property
    def default_params(self):
        return Params(jnp.int32(4), jnp.int32(20))

    def observation_spec(self, params):
        return envs.Box((1,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        return (jnp.int32(0), jnp.int32(0)), envs.restart(jnp.zeros(1, jnp.float32))

    def step(self, key, state, action, params):
        position, t = state
        position, t = jnp.maximum(position + 2 * action - 1, 0), t + 1
        terminated = position >= params.length
        truncated = (t >= params.time_limit) & ~terminated
        done = terminated | truncated
        final = position.astype(jnp.float32)[None]
        position, t = jnp.where(done, 0, position), jnp.where(done, 0, t)
        return (position, t), TimeStep(
            observation=position.astype(jnp.float32)[None],
            reward=terminated.astype(jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=final,
            info={},
        )


envs.register("{name}", JaxCorridor)
'''

# The smallest runs: 2-4 updates of 4 envs x 8 steps, one log.
TINY = ["--num-envs", "4", "--unroll-length", "8", "--num-logs", "1",
        "--devices", "1", "--quiet"]  # fmt: skip


def run_cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """`purejaxdrl ARGS` in a fresh process in `cwd`, which is not on its path."""
    # This checkout's package, whatever the tests were started with.
    root = str(pathlib.Path(pjd.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-P", "-m", "purejaxdrl.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        timeout=240,
    )


def check(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def train_here(*args: str, capsys: Any) -> str:
    """`purejaxdrl ARGS` in this process (in the folder the test chdir'd to).

    Returns its standard output. A launch costs ~3 s; the fresh processes that
    follow import the module again. The caller's `isolated` fixture forgets
    the module and its registrations after the test.
    """
    capsys.readouterr()
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err[-3000:]
    return out


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """Undoes what importing a user's module leaves: path, modules, registrations."""
    # The built-in names first (brax, gymnax, craftax): their registration is
    # cached once per process, so it must not happen inside the snapshot.
    pjd.env.registered()
    # Without the current folder (a launcher may put '' on the path): adding
    # it for `--env.imports` is the library's job, which the tests check.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    modules = set(sys.modules)
    gym = sys.modules.get("gymnasium")
    gym_ids = set(gym.registry) if gym else set()
    with env_registrations_undone():  # the names and the modules that made them
        yield
    for name in set(sys.modules) - modules:
        # The test's own modules by their folder: `jax_corridor` is no jax
        # module, and left here it would stand for the docs' one of that name.
        file = str(getattr(sys.modules[name], "__file__", None) or "")
        if file.startswith(str(tmp_path)) or not name.startswith(
            ("gymnasium", "jax", "purejaxdrl")
        ):
            del sys.modules[name]
    if gym is not None:
        for name in set(gym.registry) - gym_ids:
            del gym.registry[name]


@pytest.mark.timeout(300)
def test_a_gymnasium_env_of_the_users_module_trains_evaluates_exports_resumes(
    tmp_path, monkeypatch, capsys, isolated
):
    pytest.importorskip("gymnasium")
    (tmp_path / "my_corridor.py").write_text(
        GYM_CORRIDOR.replace("{name}", "UserCorridor-v0")
    )
    train = ["train", "--env", "cartpole", "--algo", "impala", *TINY]
    env = ["--env.imports", "my_corridor", "--env.id", "gymnasium:UserCorridor-v0"]
    monkeypatch.chdir(tmp_path)
    out = train_here(*train, *env, "--total-steps", "128", capsys=capsys)
    assert out.startswith("done: impala on gymnasium:UserCorridor-v0")
    (run,) = (tmp_path / "runs").iterdir()
    saved = yaml.safe_load((run / "config.yaml").read_text())["env"]
    assert saved["imports"] == ["my_corridor"]

    out = check(run_cli("eval", str(run), "--episodes", "2", cwd=tmp_path))
    assert out.startswith("impala on gymnasium:UserCorridor-v0, update 4: mean return")
    check(run_cli("export", str(run), "--out", "policy", cwd=tmp_path))
    # The exported policy plays on the user's environment, imported again
    # from its policy.json, as the run's checkpoint does.
    assert check(run_cli("eval", "policy", "--episodes", "2", cwd=tmp_path)) == out
    policy = pjd.load_policy(tmp_path / "policy")
    assert policy.spec["env_imports"] == ["my_corridor"]
    assert policy.spec["observation_shape"] == [1]
    assert policy.mode(np.zeros((3, 1), np.float32)).shape == (3,)
    resumed = run_cli("train", "--resume", str(run), "--quiet", cwd=tmp_path)
    assert "was already complete (4 of 4 updates)" in check(resumed)


@pytest.mark.timeout(300)
def test_a_jax_env_of_the_users_module_trains_and_evaluates(
    tmp_path, monkeypatch, capsys, isolated
):
    (tmp_path / "jax_corridor.py").write_text(
        JAX_CORRIDOR.replace("{name}", "UserJaxCorridor-v0")
    )
    train = ["train", "--env", "cartpole", "--algo", "ppo", *TINY,
             "--ppo.num-epochs", "1", "--ppo.num-minibatches", "1"]  # fmt: skip
    env = ["--env.imports", "jax_corridor", "--env.id", "UserJaxCorridor-v0"]
    monkeypatch.chdir(tmp_path)
    out = train_here(*train, *env, "--total-steps", "64", capsys=capsys)
    assert out.startswith("done: ppo on UserJaxCorridor-v0")
    (run,) = (tmp_path / "runs").iterdir()
    out = check(run_cli("eval", str(run), "--episodes", "2", cwd=tmp_path))
    # Right four times reaches the goal; the policy's mode after 2 updates
    # need not, but every episode ends by the 20-step limit.
    assert out.startswith("ppo on UserJaxCorridor-v0, update 2: mean return")


def test_the_gymnasium_module_form_imports_the_module_from_the_current_folder(
    tmp_path, monkeypatch, isolated
):
    pytest.importorskip("gymnasium")
    from purejaxdrl.env.host import make_host_env

    package = tmp_path / "corridor_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "envs.py").write_text(GYM_CORRIDOR.replace("{name}", "PkgCorridor-v0"))
    monkeypatch.chdir(tmp_path)
    env = make_host_env("gymnasium:corridor_pkg.envs:PkgCorridor-v0", 2, 0)
    try:
        assert env.spec.observation.shape == (1,)
        assert env.spec.action.num_values == 2
        np.testing.assert_array_equal(env.reset().observation, [[0.0], [0.0]])
        step = env.step(np.array([1, 0]))
        np.testing.assert_array_equal(step.observation, [[1.0], [0.0]])
    finally:
        env.close()
    with pytest.raises(
        pjd.ConfigError, match="did you mean gymnasium:corridor_pkg.envs:PkgCorridor-v0"
    ):
        make_host_env("gymnasium:corridor_pkg.envs:PkgCoridor-v0", 1, 0)


def test_an_unknown_id_says_how_to_import_the_users_module():
    pytest.importorskip("gymnasium")
    from purejaxdrl.env.host import make_host_env

    with pytest.raises(
        pjd.ConfigError,
        match=re.escape(
            "import that first: --env.imports MODULE (env.imports=['MODULE'] in "
            "Python), or --env.id gymnasium:MODULE:Corridorr-v0"
        ),
    ):
        make_host_env("gymnasium:Corridorr-v0", 1, 0)
    with pytest.raises(
        pjd.env.UnknownEnvironmentError,
        match=re.escape("--env.imports MODULE (env.imports=['MODULE'] in Python)."),
    ):
        pjd.env.make("Corridorr-v0")


def test_a_module_registering_a_jax_env_is_imported_once(
    tmp_path, monkeypatch, isolated
):
    (tmp_path / "counted_corridor.py").write_text(
        JAX_CORRIDOR.replace("{name}", "CountedCorridor-v0") + "\nimport builtins\n"
        "builtins.corridor_imports = getattr(builtins, 'corridor_imports', 0) + 1\n"
    )
    monkeypatch.chdir(tmp_path)
    import builtins

    monkeypatch.setattr(builtins, "corridor_imports", 0, raising=False)
    import_modules(["counted_corridor"])
    import_modules(["counted_corridor"])
    assert builtins.corridor_imports == 1
    assert "CountedCorridor-v0" in pjd.env.registered()
    env = pjd.env.make("CountedCorridor-v0")
    assert env.observation_spec(env.default_params) == pjd.env.Box((1,))


@pytest.mark.parametrize(
    ("source", "name", "message"),
    [
        ("", "my_envs.py", "'my_envs.py' is not a module name; pass a dotted "
         "Python module name, e.g. --env.imports my_envs (env.imports=['my_envs'] in "
         "Python) for my_envs.py in"),
        ("", "envs/corr.py", "--env.imports envs.corr (env.imports=['envs.corr'] "
         "in Python) for envs/corr.py"),
        ("", "lost_envs", "no module named 'lost_envs' (looked in the current"),
        ("import no_such_dependency_xyz\n", "needs_dep",
         "importing 'needs_dep' failed: it imports 'no_such_dependency_xyz', "
         "which is not installed (at "),
        ("x = 1\nraise RuntimeError('no\\ncorridor')\n", "broken_envs",
         "importing 'broken_envs' raised RuntimeError: no corridor (at "),
        ("def f(:\n", "typo_envs", "importing 'typo_envs' raised SyntaxError: "),
    ],
)  # fmt: skip
def test_a_module_that_does_not_import_is_one_line_naming_it_and_the_fix(
    tmp_path, monkeypatch, isolated, source, name, message
):
    if source:
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pjd.ConfigError) as error:
        import_modules([name])
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith("env.imports: ")
    assert message in text
    if source:
        assert f"{tmp_path / name}.py:" in text  # where it failed


def test_a_presets_env_options_stay_with_its_environment(capsys):
    # inverted_pendulum's SAC section sets brax's backend and episode_length:
    # a user's environment in its place must not be made with them.
    from purejaxdrl.cli.args import preset_run
    from purejaxdrl.cli.train import parser

    base = pjd.load_preset("inverted_pendulum", "sac").config
    assert base.env.options == {"backend": "positional", "episode_length": 1000}
    other = pjd.apply_overrides(base, {"env": {"id": "MyEnv-v0"}})
    assert other.env.options == {}
    same = pjd.apply_overrides(base, {"env": {"id": base.env.id}})
    assert same.env.options == base.env.options
    given = {"env": {"id": "MyEnv-v0", "options": {"size": 3}}}
    assert pjd.apply_overrides(base, given).env.options == {"size": 3}

    argv = ["--algo", "sac", "--env.id", "MyEnv-v0", "--env.option", "size=3"]
    _, _, config = preset_run(argv, "inverted_pendulum", "sac", parser)
    assert config.env.options == {"size": 3}
    assert capsys.readouterr().err == (
        "purejaxdrl: the preset's env.options (backend=positional, "
        "episode_length=1000) are brax/inverted_pendulum's, so not passed to "
        "MyEnv-v0\n"
    )
    argv = ["--algo", "sac", "--env.option", "episode_length=50"]
    _, _, config = preset_run(argv, "inverted_pendulum", "sac", parser)
    assert config.env.options == {"backend": "positional", "episode_length": 50}


def test_options_or_a_factory_that_do_not_fit_are_one_line(isolated):
    class Grid(pjd.env.Env):
        def __init__(self, size: int = 5):
            self.size = size

    with pytest.raises(pjd.ConfigError, match=r"register\('MyGrid-v0', Grid\)"):
        pjd.env.register("MyGrid-v0", Grid())
    pjd.env.register("MyGrid-v0", Grid)
    assert pjd.env.make("MyGrid-v0", size=3).size == 3
    # The adapters' names and the host path's are not a user's to replace.
    for name, owner in [
        ("brax/ant", "belong to the brax adapter"),
        ("gymnasium:MyGrid-v0", "belong to Gymnasium's host path"),
        ("Craftax-Symbolic-v1", "belong to the Craftax adapter"),
    ]:
        with pytest.raises(pjd.ConfigError, match=re.escape(owner)):
            pjd.env.register(name, Grid)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.env.make("MyGrid-v0", sizee=7)
    assert str(e.value) == (
        "env.options {'sizee': 7} do not fit 'MyGrid-v0' (got an unexpected "
        "keyword argument 'sizee'): it takes size; pass only those "
        "(--env.option KEY=VALUE, env.options in Python)."
    )


def test_a_value_error_from_the_users_code_keeps_its_traceback(isolated, capsys):
    # The command line shows purejaxdrl's own ValueErrors (checks naming the
    # value and the fix) as one line; one from the user's code is a bug whose
    # traceback must say where.
    def factory():
        raise ValueError("array split does not result in an equal division")

    from purejaxdrl.cli import main

    pjd.env.register("Boom-v0", factory)
    argv = ["train", "--env", "cartpole", "--env.id", "Boom-v0", "--no-files"]
    with pytest.raises(ValueError, match="equal division") as e:
        main(argv)
    assert e.traceback[-1].name == "factory"
    assert "error" not in capsys.readouterr().err
    bad = ["train", "--env", "cartpole", "--network.torso", "cnn", "--no-files"]
    assert main(bad) == 2  # purejaxdrl's own check (a ValueError): one line
    assert "network.torso='cnn' needs image observations" in capsys.readouterr().err


def test_a_users_options_are_type_checked_against_its_defaults(isolated):
    # As the adapters' options are: `length=abc` failed inside the first trace
    # with a traceback, and `length=2.5` trained with a length of 2.
    class Line(pjd.env.Env):
        def __init__(self, length: int = 4, scale: float = 1.0, label: str = "a"):
            self.length, self.scale, self.label = length, scale, label

    pjd.env.register("MyLine-v0", Line)
    with pytest.raises(pjd.ConfigError) as e:
        pjd.env.make("MyLine-v0", length="abc")
    assert str(e.value) == (
        "env.options length='abc' is not an integer (MyLine-v0's default: 4); "
        "pass one, e.g. --env.option length=4 (env.options={'length': 4} in Python)."
    )
    with pytest.raises(pjd.ConfigError) as e:
        pjd.env.make("MyLine-v0", length=2.5)
    # A fraction may be right and the integer default wrong (`noise=0` for a
    # knob that takes 0.1): the message names that fix too.
    assert str(e.value) == (
        "env.options length=2.5 is not a whole number, but MyLine-v0's factory "
        "declares length=4, an integer; declare the default as 4.0 if it takes "
        "fractions, or pass a whole number."
    )
    made = pjd.env.make("MyLine-v0", length=6.0, scale=2, label="b")
    assert (made.length, made.scale, made.label) == (6, 2.0, "b")
    assert type(made.length) is int and type(made.scale) is float
    # A whole number below an unsigned default's 0 is no fraction.
    three = np.uint8(3)
    pjd.env.register("MyCount-v0", lambda count=three: Line(length=int(count)))
    with pytest.raises(pjd.ConfigError) as e:
        pjd.env.make("MyCount-v0", count=-3)
    assert str(e.value) == (
        "env.options count=-3 is not an integer >= 0 (MyCount-v0's default: 3); "
        "pass one, e.g. --env.option count=3 (env.options={'count': 3} in Python)."
    )


def test_a_users_array_and_tuple_options_reach_its_factory_as_their_defaults_kind(
    isolated,
):
    # A config stores env.options as YAML writes them (lists), so config.yaml
    # reloads equal; the factory must still get an array for its array default
    # (the trace of `obs * self.scale` raised a TypeError with a list) and a
    # tuple for its tuple default.
    import dataclasses

    import jax.numpy as jnp

    from purejaxdrl.config import apply_overrides, to_dict
    from purejaxdrl.training.run_env import make_env

    made, ones, zeros = [], jnp.ones(4), np.zeros(2, np.int32)

    class Scaled(pjd.env.Env):
        def __init__(self, scale=ones, shape=(2, 2)):
            self.scale, self.shape = scale, shape
            made.append(self)
            self.inner = pjd.env.make("CartPole-v1")

        @property
        def default_params(self):
            return self.inner.default_params

        def observation_spec(self, params):
            return self.inner.observation_spec(params)

        def action_spec(self, params):
            return self.inner.action_spec(params)

        def reset(self, key, params):
            state, step = self.inner.reset(key, params)
            return state, step._replace(observation=step.observation * self.scale)

        def step(self, key, state, action, params):
            state, step = self.inner.step(key, state, action, params)
            hash(self.shape)  # a static argument: a list is unhashable
            return state, step._replace(
                observation=step.observation * self.scale,
                final_observation=step.final_observation * self.scale,
            )

    pjd.env.register("Scaled-v0", Scaled)
    base = pjd.load_preset("cartpole").config
    base = apply_overrides(base, {"env.id": "Scaled-v0"})
    given = [
        {"scale": jnp.array([1.0, 2.0, 1.0, 1.0]), "shape": (3, 1)},
        {"scale": [1.0, 2.0, 1.0, 1.0], "shape": [3, 1]},
    ]
    for options in given:
        config = apply_overrides(base, {"env.options": options})
        assert config.env.options == {"scale": [1.0, 2.0, 1.0, 1.0], "shape": [3, 1]}
        make_env(config)  # traces reset and step: the contract check
        scale, shape = made[-1].scale, made[-1].shape
        assert isinstance(scale, jax.Array) and scale.dtype == jnp.float32
        assert scale.tolist() == [1.0, 2.0, 1.0, 1.0] and shape == (3, 1)
        reloaded = apply_overrides(
            base, yaml.safe_load(yaml.safe_dump(to_dict(config)))
        )
        assert reloaded == config
    # The list check_types asks for in a config made with dataclasses.replace.
    replaced = dataclasses.replace(
        base, env=dataclasses.replace(base.env, options=given[1])
    )
    make_env(replaced)
    # An integer array default takes no fractions (they would be cut silently).
    pjd.env.register("Counts-v0", lambda counts=zeros: Scaled())
    with pytest.raises(pjd.ConfigError, match=r"counts=\[1.5, 2\] does not fit"):
        pjd.env.make("Counts-v0", counts=[1.5, 2])
    assert pjd.env.make("Counts-v0", counts=[1.0, 2]) is not None
