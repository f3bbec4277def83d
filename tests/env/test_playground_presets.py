"""The MuJoCo Playground presets: Playground's published settings, and runs.

Each preset section is checked against the config Playground publishes for
its task (`mujoco_playground/config/*_params.py`, read here, not copied), so a
changed number in either shows. The presets on Menagerie's robots load and,
where the models are absent, say so in one line (exit status 2 from the
CLI). One preset's SAC section trains two updates at toy sizes (MJX compiles
for minutes on a CPU, so the other sections are only built:
tests/training/test_devices.py builds every preset's experiment).
"""

import pytest

pytest.importorskip("mujoco_playground")

import purejaxdrl as pjd  # noqa: E402
from purejaxdrl import cli  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.training.run_env import make_env  # noqa: E402

# preset: (Playground's task, its params module)
PRESETS = {
    "cartpole_balance": ("CartpoleBalance", "dm_control_suite_params"),
    "pendulum_swingup": ("PendulumSwingup", "dm_control_suite_params"),
    "cheetah_run": ("CheetahRun", "dm_control_suite_params"),
    "walker_walk": ("WalkerWalk", "dm_control_suite_params"),
    "hopper_hop": ("HopperHop", "dm_control_suite_params"),
    "humanoid_walk": ("HumanoidWalk", "dm_control_suite_params"),
    "go1_joystick_flat_terrain": ("Go1JoystickFlatTerrain", "locomotion_params"),
    "leap_cube_reorient": ("LeapCubeReorient", "manipulation_params"),
}
MENAGERIE = ("go1_joystick_flat_terrain", "leap_cube_reorient")
# brax's defaults where Playground sets none: PPO's policy network (its value
# tower, 5 x 256, has no place: ours takes one hidden_sizes), PPO's clip and
# Adam ε (optax's default: brax passes none), SAC's networks, Polyak rate and
# target entropy (-|A| / 2), and the temperature's Adam rate, which brax's SAC
# fixes whatever learning_rate is (brax/training/agents/sac/train.py).
BRAX_PPO_POLICY, BRAX_PPO_CLIP, BRAX_PPO_EPS = (32, 32, 32, 32), 0.3, 1e-8
BRAX_SAC_HIDDEN, BRAX_SAC_TAU, BRAX_SAC_ENTROPY_SCALE = (256, 256), 0.005, 0.5
BRAX_SAC_ALPHA_LR = 3e-4
# cartpole_balance's PPO batch is scaled down for a CPU (its comment says how).
SCALED = ("cartpole_balance",)


def _published(preset: str, algo: str):
    import importlib

    name, module = PRESETS[preset]
    params = importlib.import_module(f"mujoco_playground.config.{module}")
    return getattr(params, f"brax_{algo}_config")(name)


def _sections():
    for preset in PRESETS:
        for algo in pjd.training.presets.preset_algorithms(preset):
            yield preset, algo


def test_every_playground_task_with_a_brax_config_has_its_sections():
    assert set(_sections()) == {
        *((preset, "ppo") for preset in PRESETS),
        *((preset, "sac") for preset in PRESETS if preset not in MENAGERIE),
    }


def test_brax_still_fixes_what_the_presets_copy_from_it():
    # The optimiser settings brax hard-codes rather than takes from
    # Playground's configs, read from its source so that a change shows.
    import inspect
    import re

    import optax
    from brax.training.agents.ppo import train as ppo_train
    from brax.training.agents.sac import train as sac_train

    sac_source = inspect.getsource(sac_train.train)
    rate = re.search(
        r"alpha_optimizer = optax\.adam\(learning_rate=([\d.e-]+)\)", sac_source
    )
    assert rate is not None and float(rate.group(1)) == BRAX_SAC_ALPHA_LR
    ppo_source = inspect.getsource(ppo_train.train)
    assert "base_optimizer = optax.adam(learning_rate=learning_rate)" in ppo_source
    assert inspect.signature(optax.adam).parameters["eps"].default == BRAX_PPO_EPS


@pytest.mark.parametrize(("preset", "algo"), [s for s in _sections() if s[1] == "ppo"])
def test_ppo_sections_keep_playgrounds_published_settings(preset, algo):
    rl, config = _published(preset, algo), pjd.load_preset(preset, algo).config
    ppo, net = config.algo_config, config.network
    assert config.env.id == f"playground/{PRESETS[preset][0]}"
    assert "episode_length" not in config.env.options  # the task's own
    assert rl.episode_length == 1000 and rl.action_repeat == 1
    assert config.env.normalize_observations == rl.normalize_observations
    assert (ppo.gamma, ppo.learning_rate) == (rl.discounting, rl.learning_rate)
    assert (ppo.entropy_cost, ppo.reward_scale) == (rl.entropy_cost, rl.reward_scaling)
    assert ppo.num_epochs == rl.num_updates_per_batch
    assert ppo.clip_eps == rl.get("clipping_epsilon", BRAX_PPO_CLIP)
    clip = rl.get("max_grad_norm")  # None: brax clips no gradients
    assert ppo.max_grad_norm == clip if clip is not None else ppo.max_grad_norm >= 1e6
    assert not ppo.anneal_lr and not ppo.clip_value
    # Adam's ε: brax's, but at cartpole_balance's scaled-down batch, where
    # brax's let a seed miss the target (the preset's comment says so).
    assert ppo.eps == (1e-5 if preset in SCALED else BRAX_PPO_EPS)
    # brax's value loss, 0.5 x 0.5 (G - V)²: ours is value_cost x 0.5 (G - V)².
    assert ppo.value_cost == 0.5
    network = rl.get("network_factory", {})
    hidden = network.get("policy_hidden_layer_sizes", BRAX_PPO_POLICY)
    assert net.hidden_sizes == tuple(hidden) and net.activation == "silu"
    assert net.policy_obs_key == network.get("policy_obs_key")
    value_key = network.get("value_obs_key")
    assert net.value_obs_key == (None if value_key == net.policy_obs_key else value_key)
    if preset in SCALED:
        return
    # brax collects batch_size x num_minibatches unrolls of unroll_length per
    # update over num_envs environments; here each environment's as one.
    per_update = rl.batch_size * rl.num_minibatches * rl.unroll_length
    assert config.num_envs == rl.num_envs
    assert config.num_envs * config.unroll_length == per_update
    assert ppo.num_minibatches == rl.num_minibatches
    assert 0 <= rl.num_timesteps - config.total_steps < per_update


@pytest.mark.parametrize(("preset", "algo"), [s for s in _sections() if s[1] == "sac"])
def test_sac_sections_keep_playgrounds_published_settings(preset, algo):
    rl, config = _published(preset, algo), pjd.load_preset(preset, algo).config
    sac, net = config.algo_config, config.network
    assert rl.action_repeat == 1 and config.unroll_length == 1
    assert config.num_envs == rl.num_envs
    assert 0 <= rl.num_timesteps - config.total_steps < config.num_envs
    assert (sac.gamma, sac.learning_rate) == (rl.discounting, rl.learning_rate)
    assert sac.reward_scale == rl.reward_scaling
    assert sac.alpha_learning_rate == BRAX_SAC_ALPHA_LR
    assert (sac.batch_size, sac.updates_per_step) == (
        rl.batch_size,
        rl.grad_updates_per_step,
    )
    assert (sac.buffer_size, sac.min_replay) == (
        rl.max_replay_size,
        rl.min_replay_size,
    )
    assert (sac.tau, sac.init_alpha) == (BRAX_SAC_TAU, 1.0)
    assert sac.target_entropy_scale == BRAX_SAC_ENTROPY_SCALE
    assert net.hidden_sizes == BRAX_SAC_HIDDEN and net.activation == "relu"
    layer_norm = rl.network_factory.q_network_layer_norm
    assert net.norm == ("layer_norm" if layer_norm else "none")
    # Raw observations: the preset says why it differs from Playground here.
    assert rl.normalize_observations and not config.env.normalize_observations


@pytest.mark.parametrize("preset", MENAGERIE)
def test_a_menagerie_preset_loads_and_says_in_one_line_what_it_lacks(
    preset, no_menagerie
):
    config = pjd.validate(pjd.load_preset(preset).config)
    assert config.network.value_obs_key == "privileged_state"
    with pytest.raises(ConfigError) as error:
        make_env(config)
    message = str(error.value)
    assert "\n" not in message and "needs MuJoCo Menagerie's robot models" in message
    assert "menagerie_path=DIR" in message


def test_training_a_menagerie_preset_without_it_exits_2(no_menagerie, capsys):
    status = cli.main(
        ["train", "--env", "go1_joystick_flat_terrain", "--no-files",
         "--no-compile-cache", "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("purejaxdrl: error: ")
    assert "Go1JoystickFlatTerrain' needs MuJoCo Menagerie" in err


# Two updates at toy sizes: ~1-2 min on 2 CPU cores, nearly all MJX compiling.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_sac_preset_trains_two_updates_at_toy_sizes():
    preset = pjd.load_preset("cartpole_balance", "sac")
    config = pjd.apply_overrides(
        preset.config,
        {
            "num_envs": 4,
            "total_steps": 8,
            "num_logs": 1,
            "devices": 1,
            "env": {"options": {"episode_length": 20}},
            "sac": {"buffer_size": 64, "batch_size": 8, "min_replay": 4},
        },
    )
    result = pjd.train(config, write_files=False, console=False)
    last = result.history[-1]
    assert last["updates"] == 2 and last["env_steps"] == 8
    assert all(v == v for k, v in last.items() if k.startswith("loss/")), last
