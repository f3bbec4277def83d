"""The "Adding an algorithm" guide's module, registered and trained as a user would.

The module lives outside the package (docs/examples/reinforce.py) and
registers itself when imported, as a user's would: from Python, and from the
command line through `--env.imports`.
"""

import dataclasses
import functools
import importlib
import pathlib
import pickle
import re
import shutil
import subprocess
import sys
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents import ppo, registry
from purejaxdrl.config import check_ranges
from purejaxdrl.config_docs import field_docs
from purejaxdrl.training.config import config_class
from purejaxdrl.training.resume import config_from_dict, load_run_config
from tests.helpers import flat

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "reinforce.py"
GUIDE = ROOT / "docs" / "guide" / "adding-an-algorithm.md"
SMALL = {
    "num_envs": 8,
    "unroll_length": 16,
    "total_steps": 8 * 16 * 4,
    "devices": 1,
    "num_logs": 2,
}


@pytest.fixture
def reinforce(tmp_path, monkeypatch):
    """The example imported as a user's module `reinforce`, registered by it.

    The registry and the module are this test's: both are put back after it.
    """
    shutil.copy(EXAMPLE, tmp_path / "reinforce.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reinforce", raising=False)
    with registry.registered():  # what importing it registers is gone after
        yield importlib.import_module("reinforce")
    sys.modules.pop("reinforce", None)


@pytest.fixture
def own_registry():
    """What the test registers is gone after it (`registry.registered`)."""
    with registry.registered():
        yield


def test_the_guide_shows_the_module_the_tests_train():
    assert f"```python\n{EXAMPLE.read_text()}```" in GUIDE.read_text()


@pytest.mark.timeout(300)
def test_the_example_registers_and_learns_cartpole(reinforce):
    assert registry.algorithm("reinforce") is reinforce.ALGORITHM
    for name in ("baseline_cost", "learning_rate", "gamma", "max_grad_norm"):
        assert field_docs(reinforce.ReinforceConfig)[name]
    # No shipped preset tunes it: the preset's environment, its defaults.
    preset = pjd.load_preset("cartpole", algo="reinforce")
    assert preset.target_return is None
    assert preset.config.algo_config == reinforce.ReinforceConfig()
    config = pjd.apply_overrides(
        preset.config,
        {
            "num_envs": 16,
            "unroll_length": 32,
            "total_steps": 16 * 32 * 200,
            "devices": 1,
            "network": {"hidden_sizes": [64, 64], "activation": "tanh"},
        },
    )
    result = pjd.train(config, console=False)
    assert result.updates == 200
    # A random policy's CartPole episodes last about 22 steps.
    assert result.mean_return >= 150, result.mean_return


def test_a_users_run_resumes_exports_and_sweeps_as_a_built_in_one(reinforce, tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="reinforce").config,
        {**SMALL, "run_dir": str(tmp_path), "reinforce": {"learning_rate": 3e-3}},
    )
    result = pjd.train(config, write_files=True, console=False)
    saved = yaml.safe_load((result.run_dir / "config.yaml").read_text())
    assert saved["reinforce"]["learning_rate"] == 3e-3
    assert load_run_config(result.run_dir) == config

    longer, _ = pjd.resume_config(
        result.run_dir, {"total_steps": 8 * 16 * 6}, allow_changes=True
    )
    resumed = pjd.train(
        longer, resume=result.run_dir, console=False, allow_changes=True
    )
    assert resumed.updates == 6

    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    assert policy.act(jnp.zeros(4), jax.random.key(0)).shape == ()

    grid = {"reinforce.learning_rate": [1e-3, 3e-3]}
    sweep = pjd.sweep(config, grid=grid, write_files=True, console=False)
    loaded = pjd.load_sweep(sweep.run_dir)
    assert loaded.plan.base.reinforce == config.reinforce
    assert [c.reinforce.learning_rate for c in loaded.plan.configs] == [1e-3, 3e-3]


def test_the_help_of_a_users_algorithm_says_its_defaults_are_its_own(reinforce, capsys):
    assert not pjd.load_preset("cartpole", algo="reinforce").tuned
    assert pjd.load_preset("cartpole").tuned
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--env", "cartpole", "--algo", "reinforce", "--help"])
    help_ = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0
    assert "--reinforce.learning-rate" in help_
    assert (
        "the 'cartpole' preset has no reinforce section, so the defaults shown are "
        "reinforce's own, on its environment." in help_
    )
    assert "preset's." not in help_


@pytest.mark.timeout(300)
def test_the_command_line_trains_a_users_algorithm_named_by_env_imports(
    tmp_path, monkeypatch, own_registry
):
    shutil.copy(EXAMPLE, tmp_path / "reinforce.py")
    # `train` runs in this process (a launch costs ~3 s), importing the module
    # only through --env.imports; what it imports and registers is undone
    # after. `eval` runs in a fresh process: there the module is imported
    # again from the run's config, as a user's next command does.
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_modules adds cwd
    monkeypatch.delitem(sys.modules, "reinforce", raising=False)
    monkeypatch.chdir(tmp_path)
    # SMALL's run at learning rate 3e-3, as test_a_users_run_resumes_...
    # trains it: the same programs, compiled once a session.
    flags = ["--num-envs", "8", "--unroll-length", "16", "--total-steps", "512",
             "--num-logs", "2"]  # fmt: skip
    try:
        status = cli.main(
            ["train", "--env", "cartpole", "--algo", "reinforce", "--env.imports",
             "reinforce", "--reinforce.learning-rate", "0.003", "--devices", "1",
             "--quiet", "--run-dir", "runs", *flags]
        )  # fmt: skip
    finally:
        sys.modules.pop("reinforce", None)
    assert status == 0
    (run,) = (tmp_path / "runs").iterdir()
    evaluated = subprocess.run(  # `python -m purejaxdrl` is the command too
        [sys.executable, "-m", "purejaxdrl", "eval", str(run), "--episodes", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout.startswith("reinforce on CartPole-v1, update 4")


def test_registering_refuses_what_cannot_be_a_section(own_registry):
    ppo = registry.algorithm("ppo")
    with pytest.raises(pjd.ConfigError, match="'ppo' is a built-in algorithm's"):
        registry.register(ppo)
    with pytest.raises(pjd.ConfigError, match="must be a lowercase identifier"):
        registry.register(dataclasses.replace(ppo, name="My-PPO"))
    with pytest.raises(pjd.ConfigError, match="takes an agents.base.Algorithm"):
        registry.register(ppo.make_agent)
    wrong = dataclasses.replace(ppo, name="mine", default_config=lambda: 1.0)
    with pytest.raises(pjd.ConfigError, match="makes a float, not its config_type"):
        registry.register(wrong)
    with pytest.raises(pjd.ConfigError, match="'seed' must be .* no run field's"):
        registry.register(dataclasses.replace(ppo, name="seed"))


def _config_class(fields, *, pytree=True):
    """A config class of PPO's fields and `fields` (name -> (type, field))."""
    kind = dataclasses.make_dataclass(
        "MyConfig",
        [(name, hint, field) for name, (hint, field) in fields.items()],
        bases=(pjd.agents.PPOConfig,),
        frozen=True,
        kw_only=True,
    )
    return jax.tree_util.register_dataclass(kind) if pytree else kind


def test_registering_refuses_a_config_that_would_fail_a_sweep_or_a_resume(
    own_registry,
):
    # Each of these trained once, then failed in a sweep or a resume.
    ppo = registry.algorithm("ppo")

    def refused(message, **changes):
        with pytest.raises(pjd.ConfigError, match=f"^{re.escape(message)}"):
            registry.register(dataclasses.replace(ppo, name="mine", **changes))

    class NotADataclass:
        pass

    refused(
        "Algorithm 'mine': config_type <class 'tests.agents.test_example_algorithm."
        "test_registering_refuses_a_config_that_would_fail_a_sweep_or_a_resume."
        "<locals>.NotADataclass'> is not a dataclass; declare it as",
        config_type=NotADataclass,
        default_config=NotADataclass,
    )
    required = _config_class({"kl": (float, dataclasses.field())})
    refused(
        "Algorithm 'mine': default_config() must make its config without "
        "arguments, but raised TypeError: ",
        config_type=required,
    )
    leaf = _config_class({}, pytree=False)
    refused(
        "Algorithm 'mine': MyConfig is not registered as a pytree, whose dynamic "
        "fields sweeps trace;",
        config_type=leaf,
    )
    dynamic_bool = _config_class({"use_kl": (bool, dataclasses.field(default=True))})
    refused(
        "Algorithm 'mine': field mine.use_kl: bool is dynamic, an array leaf that "
        "sweeps trace as float32, so it must be float | jax.Array; or mark it "
        "static: use_kl: bool = jax.tree.static(default=...).",
        config_type=dynamic_bool,
    )
    a_list = _config_class({"sizes": (list[int], jax.tree.static(default=()))})
    refused(
        "Algorithm 'mine': field mine.sizes: list[int] is no type a config reads "
        "from YAML or flags; use bool, int,",
        config_type=a_list,
    )
    assert "mine" not in registry.names()


def test_registering_names_a_dynamic_fields_default_that_is_no_float(own_registry):
    # The type is right: the message names the default, and spells jax.Array.
    ppo = registry.algorithm("ppo")
    dyn = float | jax.Array
    cases = [
        (
            {"kl": (dyn | None, dataclasses.field(default=None))},
            "field mine.kl: its default None is not a number, but a dynamic field "
            "is a float leaf that sweeps stack; give it a float default (a number "
            "read as unset, as SAC's alpha_learning_rate reads 0.0), or mark it "
            "static: kl: float | jax.Array | None = jax.tree.static(default=...).",
        ),
        (
            {"kl": (dyn, dataclasses.field(default=np.float32(0.1)))},
            "field mine.kl: its default np.float32(0.1) is a numpy.float32, which "
            "a config does not hold; give it a Python float (e.g. kl: float | "
            "jax.Array = 0.1).",
        ),
        (
            {"kl": (typing.Union[int, str], jax.tree.static(default=3))},  # noqa: UP007
            "field mine.kl: int | str is no type a config reads from YAML or "
            "flags; use bool, int, float | jax.Array, str, tuple[X, ...], dict, "
            "typing.Literal[...], or one of them | None (typing.Optional); a "
            "Union of two of them (int | str) is none.",
        ),
    ]
    for fields, message in cases:
        full = "Algorithm 'mine': " + message
        with pytest.raises(pjd.ConfigError, match=f"^{re.escape(full)}$"):
            registry.register(
                dataclasses.replace(ppo, name="mine", config_type=_config_class(fields))
            )
    # An int default, a float field, and Optional[float] with a number are fine.
    for hint, default in ((dyn, 1), (typing.Optional[float], 0.5)):  # noqa: UP045
        registry.register(
            dataclasses.replace(
                ppo,
                name="mine",
                config_type=_config_class(
                    {"kl": (hint, dataclasses.field(default=default))}
                ),
            )
        )
        registry._ALGORITHMS.pop("mine")


def test_literal_and_optional_fields_train_override_and_resume(reinforce, tmp_path):
    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class ModeConfig(reinforce.ReinforceConfig):
        mode: typing.Literal["a", "b"] = jax.tree.static(default="a")
        target_kl: typing.Optional[float] = jax.tree.static(default=None)  # noqa: UP045
        limit: typing.Union[int, None] = jax.tree.static(default=None)  # noqa: UP007

    record = dataclasses.replace(
        reinforce.ALGORITHM, name="modes", config_type=ModeConfig
    )
    registry.register(record)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="modes").config,
        {**SMALL, "run_dir": str(tmp_path), "modes.mode": "b", "modes.limit": "3"},
    )
    assert (config.modes.mode, config.modes.target_kl, config.modes.limit) == (
        "b",
        None,
        3,
    )
    result = pjd.train(config, write_files=True, console=False)
    assert result.updates == 4
    resumed, changes = pjd.resume_config(
        result.run_dir,
        {"modes": {"mode": "a", "target_kl": "0.02"}},
        allow_changes=True,
    )
    assert (resumed.modes.mode, resumed.modes.target_kl) == ("a", 0.02)
    assert sorted(changes) == [
        "modes.mode: 'b' -> 'a'",
        "modes.target_kl: None -> 0.02",
    ]
    with pytest.raises(
        pjd.ConfigError,
        match=r"^modes.mode='c' is not one of 'a', 'b'; pass one, e.g. "
        r"--modes.mode a \(modes.mode='a' in Python\).$",
    ):
        pjd.apply_overrides(config, {"modes.mode": "c"})


def test_a_users_section_on_a_plain_train_config_says_how_to_make_one(reinforce):
    with pytest.raises(
        pjd.ConfigError,
        match=r"^Unknown config field 'reinforce': 'reinforce' has no section in "
        r"this config: .*pjd.training.config_class\(\)\(...\).$",
    ):
        pjd.apply_overrides(
            pjd.TrainConfig(), {"algo": "reinforce", "reinforce": {"gamma": 0.9}}
        )


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class _KLConfig(pjd.agents.PPOConfig):
    """PPO with one more hyper-parameter.

    Attributes:
      kl_cost: weight of a penalty on the approximate KL(old || new).

    """

    kl_cost: float | jax.Array = 0.1


def _kl_loss(params, batch, key, *, config, **context):
    """PPO's objective plus kl_cost x its approximate KL (the k3 estimator)."""
    total, metrics = ppo.loss(params, batch, key, config=config, **context)
    penalty = config.kl_cost * metrics["approx_kl"]
    total = total + penalty  # logged as loss/total too: the objective trained
    return total, {**metrics, "loss/total": total, "loss/kl_penalty": penalty}


def _validate_kl(config, shape=None):
    """PPO's rules under its name, and the new field's."""
    ppo.validate(config, shape, name="ppo_kl")
    check_ranges("ppo_kl", config, non_negative=("kl_cost",))


def _register_ppo_kl() -> None:
    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo"),
            name="ppo_kl",
            summary="PPO with a KL(old || new) penalty in its loss",
            config_type=_KLConfig,
            make_agent=functools.partial(ppo.make_ppo, loss_fn=_kl_loss),
            validate=_validate_kl,
            preset_section="ppo",
        )
    )


def test_a_ppo_variant_with_its_own_loss_is_ppo_without_its_term(own_registry):
    _register_ppo_kl()
    small = {**SMALL, "total_steps": 8 * 16 * 3, "num_logs": 3}
    # Both from the preset's ppo section (the variant's preset_section).
    plain = pjd.apply_overrides(pjd.load_preset("cartpole").config, small)
    variant = pjd.load_preset("cartpole", algo="ppo_kl").config
    without = pjd.apply_overrides(variant, {**small, "ppo_kl": {"kl_cost": 0.0}})
    a = pjd.train(plain, console=False)
    b = pjd.train(without, console=False)
    assert "loss/kl_penalty" in b.history[-1]
    np.testing.assert_allclose(
        flat(b.state.agent.params), flat(a.state.agent.params), rtol=1e-5, atol=1e-6
    )
    heavy = pjd.train(
        dataclasses.replace(without, ppo_kl=_KLConfig(kl_cost=10.0)), console=False
    )
    assert heavy.history[-1]["loss/kl_penalty"] > 0
    assert not np.allclose(flat(heavy.state.agent.params), flat(a.state.agent.params))
    with pytest.raises(pjd.ConfigError, match=r"ppo_kl.clip_eps=-1.0 must be > 0"):
        pjd.validate(pjd.apply_overrides(without, {"ppo_kl.clip_eps": -1}))
    with pytest.raises(pjd.ConfigError, match=r"ppo_kl.kl_cost=-1.0 must be >= 0"):
        pjd.validate(pjd.apply_overrides(without, {"ppo_kl.kl_cost": -1}))


def test_a_derived_record_keeps_its_own_config_and_registering_again_replaces(
    own_registry,
):
    ppo = registry.algorithm("ppo")
    # dataclasses.replace copies the filled-in default: it follows the new type.
    derived = dataclasses.replace(ppo, name="ppo_kl", config_type=_KLConfig)
    assert derived.default_config() == _KLConfig()
    registry.register(derived)
    assert config_class()().ppo_kl == _KLConfig()
    registry.register(dataclasses.replace(derived, summary="again"))
    assert registry.algorithm("ppo_kl").summary == "again"
    assert [r.name for r in registry.registered_by_user()] == ["ppo_kl"]


def test_a_config_without_the_users_section_says_how_to_make_one(own_registry):
    before = pjd.TrainConfig(algo="ppo_kl")  # made before it is registered
    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo"), name="ppo_kl", config_type=_KLConfig
        )
    )
    with pytest.raises(pjd.ConfigError, match="has no section in this config"):
        _ = before.algo_config
    del registry._ALGORITHMS["ppo_kl"]  # as a process that never registered it
    saved = pjd.config.to_dict(config_class()(algo="ppo"))
    saved.update(algo="ppo_kl", ppo_kl={"kl_cost": 0.2})
    with pytest.raises(pjd.ConfigError, match="'ppo_kl' is not registered in this"):
        config_from_dict(saved, "config.yaml")


def test_configs_pickle_and_runs_saved_beside_a_users_algorithm_load_without_it(
    reinforce,
):
    config = pjd.load_preset("cartpole").config  # PPO, of the made class
    assert hasattr(config, "reinforce")
    assert pickle.loads(pickle.dumps(config)) == config
    # Saved while reinforce was registered: its section is in the file. A
    # process without it reads the PPO run (the section is not the run's).
    saved = pjd.config.to_dict(config)
    registry._ALGORITHMS.pop("reinforce")
    assert "reinforce" in saved and config_from_dict(saved, "config.yaml") == (
        pjd.load_preset("cartpole").config
    )


def test_a_bad_registration_registers_nothing_and_a_reloaded_one_says_so(
    reinforce,
):
    before = dict(registry._ALGORITHMS)
    record = reinforce.ALGORITHM
    with pytest.raises(pjd.ConfigError, match="that is no run field's"):
        registry.register(dataclasses.replace(record, name="eval"))

    class Defaults:
        __hash__ = None

        def __call__(self):
            return reinforce.ReinforceConfig()

    unhashable = dataclasses.replace(record, name="mine", default_config=Defaults())
    with pytest.raises(pjd.ConfigError, match="must be a function or a class"):
        registry.register(unhashable)
    assert before == registry._ALGORITHMS
    config = pjd.load_preset("cartpole", algo="reinforce").config
    importlib.reload(reinforce)  # a notebook's module edited and run again
    with pytest.raises(pjd.ConfigError, match="made before 'reinforce' was regis"):
        pjd.training.make_experiment(config)


def test_dotted_and_nested_overrides_merge_at_every_depth():
    from purejaxdrl.config import nested_overrides

    # A user's section may nest configs: a dotted key merges into them.
    assert nested_overrides({"a": {"b": {"c": 1}}, "a.b": {"d": 2}}) == {
        "a": {"b": {"c": 1, "d": 2}}
    }
    overrides = {"ppo": {"gamma": 0.9}, "ppo.clip_eps": 0.1, "env.id": "Acrobot-v1"}
    config = pjd.apply_overrides(pjd.TrainConfig(), overrides)
    assert (config.ppo.gamma, config.ppo.clip_eps, config.env.id) == (
        0.9,
        0.1,
        "Acrobot-v1",
    )


def _scanned_targets(start):
    """`gae_targets` at λ = 1 as a user writes it: a reverse scan from `start(traj)`.

    No bootstrap at the unroll's end (the carry starts at `start`, zeros):
    enough to train, and what the test is about is the carry's type.
    """

    def targets(traj, config):
        def back(g, step):
            reward, discount = step
            g = reward + config.gamma * discount * g
            return g, g

        _, returns = jax.lax.scan(
            back, start(traj), (traj.reward, traj.discount), reverse=True
        )
        return returns - traj.value, returns

    return targets


@pytest.mark.timeout(300)
def test_a_users_update_whose_scan_starts_from_zeros_trains(reinforce, monkeypatch):
    # jnp.zeros(B) is replicated and the scan's output per-device: correct JAX,
    # and a TypeError under shard_map's check of varying types, which was on
    # even on one device, where the agent is told it runs outside shard_map.
    zeros = _scanned_targets(lambda traj: jnp.zeros(traj.reward.shape[1]))
    monkeypatch.setattr(reinforce, "gae_targets", zeros)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="reinforce").config, SMALL
    )
    assert pjd.train(config, console=False).updates == 4
    # On two devices the check is on: the guide's rule, a carry derived from
    # the trajectory (so per-device too), trains.
    derived = _scanned_targets(lambda traj: jnp.zeros_like(traj.reward[0]))
    monkeypatch.setattr(reinforce, "gae_targets", derived)
    two = dataclasses.replace(config, devices=2)
    assert pjd.train(two, console=False).updates == 4
