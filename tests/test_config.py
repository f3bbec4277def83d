import dataclasses
import re

import jax.numpy as jnp
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithms, unread_section
from purejaxdrl.config import ConfigError, check_ranges
from purejaxdrl.training import config as config_rules
from purejaxdrl.training.presets.load import presets_dir


@pytest.mark.parametrize("name", pjd.preset_names())
def test_every_preset_loads_and_validates(name):
    preset = pjd.load_preset(name)
    # A section awaiting its first sweep has no target yet (tests/test_scores.py
    # holds it to a row that awaits a GPU or cannot run).
    if preset.target_return is not None:
        assert preset.target_steps > 0
        assert preset.config.total_steps <= preset.target_steps  # within budget
    pjd.validate(preset.config)


def test_every_preset_target_states_its_return_kind_and_budget():
    names = {r.name for r in algorithms()}
    for preset in pjd.preset_names():
        data = yaml.safe_load((presets_dir() / f"{preset}.yaml").read_text())
        for algo in names & set(data):
            target = data[algo].get("target")
            if target is None:  # awaiting its first sweep: tests/test_scores.py
                continue
            where = f"{preset}.yaml, {algo}"
            assert set(target) - {"measured"} == {"mean_return", "env_steps", "of"}
            assert target["of"] in ("training", "evaluation"), where
            assert target["env_steps"] >= data[algo].get("total_steps", 0), where
            loaded = pjd.load_preset(preset, algo)
            assert loaded.target_of == target["of"]
            assert loaded.target_steps == target["env_steps"]


def test_a_target_of_an_unknown_kind_is_refused(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "env: {id: CartPole-v1}\n"
        "ppo: {target: {mean_return: 1, env_steps: 10, of: best}}\n"
    )
    with pytest.raises(ConfigError, match="ppo.target.of='best' is not one of"):
        pjd.load_preset(str(path))


def test_required_presets_are_shipped():
    names = set(pjd.preset_names())
    assert {
        "cartpole",
        "acrobot",
        "breakout_minatar",
        "space_invaders_minatar",
        "inverted_pendulum",
        "halfcheetah",
        "ant",
    } <= names


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"ppo": {"learning_rate": -1.0}}, "learning_rate=-1.0 must be > 0"),
        (
            {"num_envs": 0},
            "num_envs=0 must be >= 1; pass e.g. --num-envs 4 (num_envs=4 in Python).",
        ),
        (
            {"unroll_length": 0},
            "unroll_length=0 must be >= 1; pass e.g. --unroll-length 128 "
            "(unroll_length=128 in Python).",
        ),
        (
            {"num_logs": 0},
            "num_logs=0 must be >= 1; pass e.g. --num-logs 20 (num_logs=20 in Python).",
        ),
        ({"num_envs": 3, "unroll_length": 5}, "needs num_envs divisible by 4"),
        ({"devices": -1}, "devices=-1 must be >= 0"),
        ({"seed": 2**32}, "seed=4294967296 must be in [0, 2**32)"),
        ({"seed": -1}, "seed=-1 must be in [0, 2**32)"),
        ({"ppo": {"gamma": 1.5}}, "gamma=1.5 must be in [0, 1]"),
        ({"total_steps": 10}, "e.g. --total-steps 512 (total_steps=512 in Python)"),
        (
            {"eval": {"stop_at": 475}},
            "--eval.every 1 (eval.episodes=16, eval.every=1 in Python).",
        ),
        ({"total_steps": 10**19}, "updates (total_steps / (num_envs x unroll_le"),
        ({"num_envs": 2**25, "total_steps": 10**12}, "num_envs x unroll_length = 4,"),
        ({"network": {"hidden_sizes": []}}, "hidden_sizes"),
        # The evaluation loop counts steps in int32: 2**31 overflowed in jit.
        (
            {"eval": {"max_steps": 2**31}},
            "eval.max_steps=2147483648 must be >= 1 and < 2**31 (the evaluation loop",
        ),
        ({"eval": {"max_steps": 0}}, "eval.max_steps=0 must be >= 1"),
    ],
)
def test_validation_names_value_rule_and_fix(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        pjd.validate(pjd.apply_overrides(pjd.TrainConfig(), overrides))


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            {"nope": 1},
            "Unknown config field 'nope': `purejaxdrl train --help` lists every "
            "field (help(pjd.TrainConfig) in Python).",
        ),
        # An abbreviation from other libraries, as the command line reads it.
        (
            {"ppo": {"lr": 1e-3}},
            "Unknown config field 'ppo.lr': did you mean ppo.learning_rate "
            "(--ppo.learning-rate)? `purejaxdrl train --help` lists every field "
            "(dataclasses.fields(config.ppo) in Python).",
        ),
        ({"sac.alpha": 0.1}, "did you mean sac.init_alpha (--sac.init-alpha)?"),
        # ... and at the top, the first thing typed (mut15 #5): its section's.
        ({"lr": 1e-3}, "'lr': did you mean ppo.learning_rate (--ppo.learning-rate)?"),
        ({"algo": "sac", "alpha": 0.1}, "did you mean sac.init_alpha (--sac.init-"),
        ({"ppo": {"learnin_rate": 1}}, "did you mean ppo.learning_rate (--ppo."),
        # A section's field named at the top: the run's own section's, first.
        ({"learning_rate": 1}, "did you mean ppo.learning_rate (--ppo."),
        ({"algo": "sac", "batch_size": 1}, "did you mean sac.batch_size (--sac."),
        ({"min_replay": 1}, "field of the dqn, apex, r2d2, sac sections, not ppo's"),
        ({"episodes": 1}, "did you mean eval.episodes (--eval.episodes)?"),
        # The command line's own flag: --env.options is none (it was named).
        (
            {"env": {"option": {"foo": 1}}},
            "Unknown config field 'env.option': did you mean env.options "
            "(--env.option KEY=VALUE)?",
        ),
        (
            {"dqn": {"num_minibatches": 4}},
            "'dqn.num_minibatches': num_minibatches is a field of ppo, pqn, not dqn's",
        ),
        ({"dqn.gae-lambda": 0.9}, "gae_lambda is a field of ppo, a2c, not dqn's"),
        ({"num_envs": "many"}, "num_envs='many' is not an integer"),
        ({"num_envs": 2.5}, "is not an integer"),
        ({"num_envs": "nan"}, "num_envs='nan' is not an integer; pass e.g. --num"),
        ({"dqn": {"batch_size": float("inf")}}, "dqn.batch_size=inf is not an int"),
        ({"total_steps": "-inf"}, "total_steps='-inf' is not an integer; pass"),
        ({"ppo": {"learning_rate": "fast"}}, "is not a number"),
        ({"ppo": {"anneal_lr": "maybe"}}, "is not a boolean"),
        (
            {"eval": {"stop_at": "abc"}},
            "or --eval.stop-at none (eval.stop_at=None in Python) to leave it unset.",
        ),
        ({"ppo": 3}, "must be a mapping"),
        # The flag is --env.option (one KEY=VALUE each); --env.options is none.
        (
            {"env": {"options": "max_steps_in_episode=200"}},
            "env.options='max_steps_in_episode=200' is not a mapping; pass e.g. "
            "--env.option KEY=VALUE, or in a file or from Python options: {key: "
            "value}.",
        ),
    ],
)
def test_overrides_are_type_checked(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        pjd.apply_overrides(pjd.TrainConfig(), overrides)


def test_overrides_coerce_strings_from_the_command_line():
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "num-envs": "8",
            "total_steps": "1e6",
            "ppo": {"anneal-lr": "false"},
            "network": {"hidden_sizes": ["32", "32"]},
        },
    )
    assert config.num_envs == 8 and config.total_steps == 1_000_000
    assert config.ppo.anneal_lr is False and config.network.hidden_sizes == (32, 32)
    # `--network.hidden-sizes 64,64` gives ["64,64"]: commas split as spaces.
    for sizes in (["64,64"], "64,64", ["64, 64"], "64 64"):
        config = pjd.apply_overrides(config, {"network": {"hidden_sizes": sizes}})
        assert config.network.hidden_sizes == (64, 64), sizes


def test_bad_preset_files(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("env: {id: CartPole-v1\nppo: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        pjd.load_preset(str(bad_yaml))
    no_env = tmp_path / "noenv.yaml"
    no_env.write_text("ppo: {num_envs: 4}\n")
    with pytest.raises(ConfigError, match="no 'env' mapping"):
        pjd.load_preset(str(no_env))
    no_algo = tmp_path / "noalgo.yaml"
    no_algo.write_text("env: {id: CartPole-v1}\n")
    with pytest.raises(ConfigError, match="no 'ppo' section"):
        pjd.load_preset(str(no_algo))
    bad_field = tmp_path / "badfield.yaml"
    bad_field.write_text("env: {id: CartPole-v1}\nppo: {num_envz: 4}\n")
    with pytest.raises(ConfigError, match="num_envz"):
        pjd.load_preset(str(bad_field))
    with pytest.raises(ConfigError, match="does not exist"):
        pjd.load_preset(str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError, match="Unknown environment preset 'cartpol'"):
        pjd.load_preset("cartpol")


@pytest.mark.parametrize("algo", ["impala", "a2c"])
@pytest.mark.parametrize("name", ["cartpole", "breakout_minatar", "inverted_pendulum"])
def test_impala_and_a2c_presets_load_and_validate(name, algo):
    preset = pjd.load_preset(name, algo)
    assert preset.config.algo == algo
    assert preset.target_return is not None
    assert preset.config.total_steps <= preset.target_steps
    pjd.validate(preset.config)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"impala": {"learning_rate": -1.0}}, "impala.learning_rate=-1.0 must be > 0"),
        ({"impala": {"policy_lag": -1}}, "impala.policy_lag=-1 must be >= 0"),
        ({"impala": {"optimizer": "lamb"}}, "impala.optimizer='lamb' is not one of"),
        ({"impala": {"clip_rho": 0.0}}, "impala.clip_rho=0.0 must be > 0"),
        ({"impala": {"vtrace_lambda": 1.5}}, "impala.vtrace_lambda=1.5 must be in"),
        ({"a2c": {"gae_lambda": -0.1}}, "a2c.gae_lambda=-0.1 must be in [0, 1]"),
        ({"a2c": {"entropy_cost": -1.0}}, "a2c.entropy_cost=-1.0 must be >= 0"),
        ({"a2c": {"entropy_cost": "inf"}}, "a2c.entropy_cost=inf must be >= 0 and f"),
        ({"impala": {"clip_rho": "inf"}}, "impala.clip_rho=inf must be > 0 and fin"),
        ({"ppo": {"learning_rate": "inf"}}, "ppo.learning_rate=inf must be > 0 and f"),
        ({"dqn": {"priority_eps": "inf"}}, "dqn.priority_eps=inf must be > 0 and fi"),
        ({"ppo": {"reward_clip": "inf"}}, "ppo.reward_clip=inf must be >= 0 and fi"),
        ({"sac": {"target_entropy_scale": "nan"}}, "sac.target_entropy_scale=nan"),
        ({"dqn": {"batch_size": 10**30}}, "dqn.batch_size=1" + "0" * 30 + " must be"),
        ({"dqn": {"buffer_size": 2**31}}, "dqn.buffer_size=2147483648 must be >= 1 an"),
        ({"dqn": {"batch_size": 200000}}, "dqn.batch_size=200000 exceeds dqn.buffer_s"),
        ({"apex": {"batch_size": 200000}}, "apex.batch_size=200000 exceeds apex.buffe"),
        ({"r2d2": {"batch_size": 8192}}, "r2d2.batch_size=8192 exceeds r2d2.buffer_si"),
        ({"sac": {"batch_size": 10**7}}, "sac.batch_size=10000000 exceeds sac.buffer_"),
        ({"dqn": {"n_step": 129}}, "dqn.n_step=129 is longer than unroll_length="),
        ({"apex": {"n_step": 200}}, "apex.n_step=200 is longer than unroll_length"),
        ({"r2d2": {"n_step": 200}}, "r2d2.n_step=200 is longer than unroll_length"),
        ({"impala": {"policy_lag": 10**7}}, "impala.policy_lag=10000000 is not less t"),
        (
            {"impala": {"replay_ratio": 0.9999999, "replay_size": 32}},
            "impala.replay_ratio=0.9999999 makes each learner batch",
        ),
        ({"sac": {"target_entropy_scale": "-inf"}}, "target_entropy_scale=-inf must"),
    ],
)
def test_impala_and_a2c_validation_names_value_rule_and_fix(overrides, message):
    (algo,) = overrides  # the run's algorithm is the section's
    config = pjd.apply_overrides(pjd.TrainConfig(), {"algo": algo, **overrides})
    with pytest.raises(ConfigError, match=re.escape(message)):
        config_rules.validate(config)  # its own rules: sac on CartPole's id


def test_count_and_non_negative_ranges_name_the_fix_both_ways():
    # As the "> 0 and finite" ones do: the section's default as the example.
    default = pjd.TrainConfig()
    epochs, entropy = default.ppo.num_epochs, default.a2c.entropy_cost
    cases = [
        (
            {"algo": "ppo", "ppo": {"num_epochs": 0}},
            "ppo.num_epochs=0 must be >= 1 and < 2**31; pass a positive integer, "
            f"e.g. --ppo.num-epochs {epochs} (ppo.num_epochs={epochs} in Python).",
        ),
        (
            {"algo": "a2c", "a2c": {"entropy_cost": -1.0}},
            "a2c.entropy_cost=-1.0 must be >= 0 and finite; pass e.g. "
            f"--a2c.entropy-cost {entropy} (a2c.entropy_cost={entropy} in Python).",
        ),
    ]
    for overrides, message in cases:
        config = pjd.apply_overrides(default, overrides)
        with pytest.raises(ConfigError) as raised:
            config_rules.validate(config)
        assert str(raised.value) == message

    @dataclasses.dataclass(frozen=True)
    class Section:  # defaults outside the rule: an example inside it instead
        count: int = 0
        cost: float = float("inf")

    with pytest.raises(ConfigError, match=re.escape("e.g. --my.count 1 (my.count=1")):
        check_ranges("my", Section(), at_least_one=("count",))
    with pytest.raises(ConfigError, match=re.escape("e.g. --my.cost 0.0 (my.cost=0.0")):
        check_ranges("my", Section(cost=-1.0), non_negative=("cost",))


@pytest.mark.filterwarnings("ignore:algo .* keeps this config:UserWarning")
def test_a_run_validates_only_its_own_algorithm_section():
    # Another algorithm's section is not used by the run, so not held against
    # it (apply_overrides refuses to set one: made here as an older run's).
    default = pjd.TrainConfig()
    a2c = dataclasses.replace(default.a2c, gae_lambda=-0.1)
    config = dataclasses.replace(default, a2c=a2c)
    assert pjd.validate(config) is config
    with pytest.raises(ConfigError, match="a2c.gae_lambda=-0.1"):
        pjd.validate(pjd.apply_overrides(config, {"algo": "a2c"}))


@pytest.mark.filterwarnings("ignore:algo .* keeps this config:UserWarning")
def test_every_registered_algorithm_has_a_section_with_its_defaults():
    config = pjd.TrainConfig()
    for record in algorithms():
        section = getattr(config, record.name)
        assert isinstance(section, record.config_type)
        assert section == record.default_config()
        assert pjd.validate(pjd.apply_overrides(config, {"algo": record.name}))


@pytest.mark.filterwarnings("ignore:algo .* keeps this config:UserWarning")
def test_ppo_minibatch_rule_binds_ppo_only():
    # One gradient step on the whole batch: any num_envs x unroll_length.
    for algo in ("impala", "a2c"):
        overrides = {"algo": algo, "num_envs": 3, "unroll_length": 5}
        pjd.validate(pjd.apply_overrides(pjd.TrainConfig(), overrides))


def test_presets_without_an_algorithm_section_say_so():
    with pytest.raises(ConfigError, match="has no 'impala' section"):
        pjd.load_preset("acrobot", "impala")


def test_a_section_may_set_its_own_environment_options():
    # pong.yaml: PPO plays with EnvPool's defaults (CleanRL's protocol), IMPALA
    # with the adapter's Machado protocol (Cleanba's).
    ppo = pjd.load_preset("pong", "ppo").config.env
    impala = pjd.load_preset("pong", "impala").config.env
    assert ppo.id == impala.id == "envpool:Pong-v5"
    assert ppo.options == {
        "repeat_action_probability": 0,
        "full_action_space": False,
        "noop_max": 30,
        "use_fire_reset": True,
    }
    assert impala.options == {}


def test_every_atari_ppo_section_plays_cleanrls_protocol():
    # Their targets are CleanRL's figures under EnvPool's defaults; pong's
    # section once lacked the no-op starts and fire reset the others had.
    protocol = {
        "repeat_action_probability": 0,
        "full_action_space": False,
        "noop_max": 30,
        "use_fire_reset": True,
    }
    atari = [
        name
        for name in pjd.preset_names()
        if pjd.load_preset(name).config.env.id.endswith("-v5")
    ]
    assert {"pong", "breakout", "qbert"} <= set(atari)
    for name in atari:
        options = pjd.load_preset(name, "ppo").config.env.options
        assert protocol.items() <= options.items(), (name, options)


def test_a_preset_or_its_name_in_place_of_a_config_names_the_fix():
    preset = pjd.load_preset("cartpole")
    fix = "pass its .config, e.g. pjd.load_preset('cartpole').config."
    with pytest.raises(ConfigError, match=re.escape(f"not a Preset; {fix}")):
        pjd.apply_overrides(preset, {"seed": 1})
    with pytest.raises(
        ConfigError, match=re.escape(f"training takes a config, not a Preset; {fix}")
    ):
        pjd.train(preset)
    with pytest.raises(ConfigError) as named:
        pjd.train("cartpole")
    assert str(named.value) == (
        "training takes a config, not a name ('cartpole'); for a preset's, pass "
        "pjd.load_preset('cartpole').config (pjd.sweep and pjd.pbt take the name: "
        "they judge runs by its target)."
    )
    with pytest.raises(ConfigError, match="is not a mapping; pass a \\(nested\\) dict"):
        pjd.apply_overrides(preset.config, [("seed", 1)])


def test_dotted_keys_name_nested_fields_as_sweep_paths_do():
    overrides = {"ppo.learning_rate": 1e-3, "ppo": {"num_epochs": 2}}
    config = pjd.apply_overrides(pjd.TrainConfig(), overrides)
    assert (config.ppo.learning_rate, config.ppo.num_epochs) == (1e-3, 2)
    assert overrides["ppo"] == {"num_epochs": 2}  # the caller's dict unchanged
    with pytest.raises(pjd.ConfigError, match=r"did you mean ppo.learning_rate"):
        pjd.apply_overrides(pjd.TrainConfig(), {"ppo.learnin_rate": 1e-3})


def test_a_config_changed_without_apply_overrides_is_type_checked():
    config = pjd.load_preset("cartpole").config
    with pytest.raises(pjd.ConfigError, match="num_envs='4' is a str, not the int"):
        pjd.validate(dataclasses.replace(config, num_envs="4"))
    network = dataclasses.replace(config.network, hidden_sizes=[64, 64])
    with pytest.raises(pjd.ConfigError, match=r"is a list, not the tuple it takes"):
        pjd.validate(dataclasses.replace(config, network=network))
    network = dataclasses.replace(config.network, hidden_sizes=(64, "64"))
    with pytest.raises(
        pjd.ConfigError,
        match=r"hidden_sizes=\(64, '64'\) holds '64', which is a str, not the int "
        r"it takes; pass \(64, 64\)",
    ):
        pjd.validate(dataclasses.replace(config, network=network))
    # A numpy or JAX scalar (a notebook's `for lr in np.logspace(...)`): YAML
    # cannot write it, so the run would fail at its config.yaml.
    ppo = dataclasses.replace(config.ppo, learning_rate=np.float64(1e-4))
    with pytest.raises(
        pjd.ConfigError,
        match=r"learning_rate=np.float64\(0.0001\) is a numpy.float64, not the float "
        r"it takes; pass 0.0001",
    ):
        pjd.validate(dataclasses.replace(config, ppo=ppo))
    with pytest.raises(pjd.ConfigError, match=r"seed=.* is a jax.Array, not the int"):
        pjd.validate(dataclasses.replace(config, seed=jnp.int32(1)))
    # A section of another class, or a dict, where a section is taken.
    for section in ({"learning_rate": 1e-3}, pjd.agents.DQNConfig()):
        with pytest.raises(
            pjd.ConfigError, match=r"^ppo is an? \w+, not the PPOConfig"
        ):
            pjd.validate(dataclasses.replace(config, ppo=section))
    with pytest.raises(pjd.ConfigError, match=r"^env is a str, not the EnvConfig"):
        pjd.validate(dataclasses.replace(config, env="CartPole-v1"))
    ppo = dataclasses.replace(config.ppo, learning_rate=1)  # an int is a float
    assert pjd.validate(dataclasses.replace(config, ppo=ppo)).ppo.learning_rate == 1


def test_inf_max_grad_norm_means_no_clipping_and_is_allowed():
    for algo in ("ppo", "dqn", "impala"):
        overrides = {"algo": algo, algo: {"max_grad_norm": "inf"}}
        pjd.validate(pjd.apply_overrides(pjd.TrainConfig(), overrides))


def test_an_override_of_another_algorithms_section_is_refused_as_by_the_cli():
    # The run would train with its own section's value, and nothing would say.
    dqn = pjd.load_preset("cartpole", "dqn").config
    # algo='ppo' alone would train PPO with DQN's sizes and the untuned ppo
    # section a dqn preset config holds: the preset's tuned PPO run is named.
    message = (
        "ppo.learning_rate sets ppo's hyper-parameters, but this run trains dqn; "
        "pass algo='ppo' (this config's sizes and ppo section), start from the "
        "cartpole preset's tuned ppo run, pjd.load_preset('cartpole', "
        "algo='ppo').config, or drop it."
    )
    for overrides in ({"ppo": {"learning_rate": 1e-2}}, {"ppo.learning_rate": 1e-2}):
        with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
            pjd.apply_overrides(dqn, overrides)
    # Where no shipped preset trains the env id, algo= alone is the fix.
    plain = (
        "ppo.learning_rate sets ppo's hyper-parameters, but this run trains dqn; "
        "pass algo='ppo', or drop it."
    )
    assert plain == unread_section("ppo.learning_rate", "ppo", "dqn", "algo='ppo'")
    other = pjd.apply_overrides(dqn, {"env": {"id": "MountainCar-v0"}})
    with pytest.raises(ConfigError, match=f"^{re.escape(plain)}$"):
        pjd.apply_overrides(other, {"ppo.learning_rate": 1e-2})
    # The algorithm the overrides select is the run's.
    with pytest.raises(ConfigError, match="this run trains a2c; pass algo='ppo'"):
        pjd.apply_overrides(dqn, {"algo": "a2c", "ppo.gamma": 0.9})
    to_ppo = pjd.apply_overrides(dqn, {"algo": "ppo", "ppo.learning_rate": 1e-2})
    assert to_ppo.algo_config.learning_rate == 1e-2
    # A whole config's sections (a saved run's, a preset's) change nothing.
    assert pjd.apply_overrides(pjd.TrainConfig(), pjd.config.to_dict(dqn)) == dqn
    same = {"ppo": {"learning_rate": dqn.ppo.learning_rate}, "a2c": {}}
    assert pjd.apply_overrides(dqn, same) == dqn
    # A run saved with a NaN in another section reads back into itself: NaN
    # is no change from NaN.
    nan = dataclasses.replace(dqn, ppo=dataclasses.replace(dqn.ppo, gamma=np.nan))
    assert pjd.apply_overrides(nan, pjd.config.to_dict(nan)).algo == "dqn"
    # A whole config is no way around the refusal (every field given).
    whole = pjd.config.to_dict(dqn)
    whole["ppo"]["learning_rate"] = 1e-2
    with pytest.raises(ConfigError, match=re.escape(message)):
        pjd.apply_overrides(pjd.TrainConfig(), whole)


def test_a_batched_hyper_parameter_says_a_sweeps_values_go_in_its_grid():
    config = pjd.load_preset("cartpole").config
    ppo = dataclasses.replace(config.ppo, learning_rate=np.array([1e-3, 2e-3]))
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "ppo.learning_rate is an array of shape (2,), but a run takes one "
            "value; a sweep's values go in pjd.sweep(config, grid="
            "{'ppo.learning_rate': [...]})."
        ),
    ):
        pjd.train(dataclasses.replace(config, ppo=ppo), console=False)


def test_an_array_in_a_tuple_or_a_scalar_field_is_one_line_naming_the_fix():
    from purejaxdrl.config_types import check_types

    config = pjd.load_preset("cartpole").config
    # A tuple field: YAML cannot write an array, and its items (32.5, a 2-D
    # array's rows) would go unchecked into flax: one line, a tuple to pass.
    for sizes, items in ((np.array([32, 32]), "(32, 32)"),
                         (np.array([32.5, 16]), "(32.5, 16.0)"),
                         (np.ones((2, 2), int), "([1, 1], [1, 1])")):  # fmt: skip
        network = dataclasses.replace(config.network, hidden_sizes=sizes)
        with pytest.raises(ConfigError) as e:
            check_types(dataclasses.replace(config, network=network))
        assert str(e.value) == (
            f"network.hidden_sizes is an array of shape {sizes.shape}; pass a "
            f"tuple instead, e.g. {items}."
        )
    network = dataclasses.replace(config.network, hidden_sizes=(32, 32))
    check_types(dataclasses.replace(config, network=network))
    # A scalar field still refuses one: bool, int and float alike.
    for section, name in (("ppo", "num_epochs"), ("ppo", "gamma")):
        part = dataclasses.replace(getattr(config, section), **{name: np.array([1, 2])})
        with pytest.raises(ConfigError, match=f"{section}.{name} is an array"):
            check_types(dataclasses.replace(config, **{section: part}))


@pytest.mark.parametrize(
    "overrides, said",
    [
        (
            {"ppo": {"learning_rate": 1e-3}, "ppo.learning_rate": 2e-3},
            "ppo.learning_rate is set twice in these overrides (0.001 and 0.002)",
        ),
        (
            {"ppo.learning_rate": 2e-3, "ppo": {"learning_rate": 1e-3}},
            "ppo.learning_rate is set twice in these overrides (0.002 and 0.001)",
        ),
        (
            {"ppo.learning_rate": 1e-3, "ppo.learning-rate": 2e-3},
            "ppo.learning_rate is set twice in these overrides (0.001 and 0.002)",
        ),
        (
            {"ppo": {"learning_rate": 1e-3, "learning-rate": 1e-3}},
            "ppo.learning_rate is set twice in these overrides (0.001 and 0.001)",
        ),
        (
            {"total_steps": 1024, "total-steps": 2048},
            "total_steps is set twice in these overrides (1024 and 2048)",
        ),
        (
            {"env": {"options": {"a": 1}}, "env.options": {"a": 2}},
            "env.options.a is set twice in these overrides (1 and 2)",
        ),
        (
            {"network.hidden_sizes": [8], "network": {"hidden_sizes": [16]}},
            "network.hidden_sizes is set twice in these overrides ([8] and [16])",
        ),
    ],
)
def test_a_field_set_twice_in_two_spellings_is_refused(overrides, said):
    # Which value won was the dict's order: a merge of several sources (a
    # base and a sweep's cell) would train with one of them, unsaid.
    config = pjd.load_preset("cartpole").config
    with pytest.raises(ConfigError) as refused:
        pjd.apply_overrides(config, overrides)
    assert str(refused.value).startswith(said) and "keep one" in str(refused.value)


def test_dotted_and_nested_spellings_of_different_fields_still_merge():
    config = pjd.load_preset("cartpole").config
    overrides = {
        "ppo": {"learning_rate": 1e-3},
        "ppo.clip-eps": 0.1,
        "env": {"options": {"a": 1}},
        "env.options": {"b": 2},
    }
    changed = pjd.apply_overrides(config, overrides)
    assert (changed.ppo.learning_rate, changed.ppo.clip_eps) == (1e-3, 0.1)
    assert changed.env.options == {"a": 1, "b": 2}


def test_env_options_are_stored_as_yaml_writes_them():
    # A NumPy value crashed the run directory's YAML dump; a tuple came back a
    # list, so a resume refused the run's own config as a change.
    from purejaxdrl.training.resume import config_from_dict

    options = {"x": np.int64(3), "t": (1.0, np.float32(2.0)), "a": np.arange(2)}
    options["deep"] = {"y": jnp.asarray(0.5), "z": [np.bool_(True)]}
    config = pjd.apply_overrides(pjd.TrainConfig(), {"env": {"options": options}})
    got = config.env.options
    assert got == {
        "x": 3,
        "t": [1.0, 2.0],
        "a": [0, 1],
        "deep": {"y": 0.5, "z": [True]},
    }
    assert type(got["x"]) is int and type(got["t"][1]) is float
    assert type(got["a"][0]) is int and type(got["deep"]["y"]) is float
    assert type(got["deep"]["z"][0]) is bool
    text = yaml.safe_dump(pjd.config.to_dict(config))
    assert config_from_dict(yaml.safe_load(text), "x") == config


def test_env_options_refuse_what_yaml_cannot_write_and_replace_is_checked():
    with pytest.raises(ConfigError, match=re.escape("env.options.f=<object")):
        pjd.apply_overrides(pjd.TrainConfig(), {"env": {"options": {"f": object()}}})
    base = pjd.TrainConfig()
    for value, said in (((1.0, 2.0), "a tuple, not the list"), (np.int64(3), "numpy")):
        env = dataclasses.replace(base.env, options={"t": value})
        with pytest.raises(ConfigError, match=re.escape(said)):
            pjd.validate(dataclasses.replace(base, env=env))
