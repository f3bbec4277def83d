"""PPO on MuJoCo Playground: purejaxdrl vs brax's own trainer.

Part 1, speed: the `cartpole_balance` preset's PPO (Playground's published DM
Control settings with the batch scaled down for a CPU: 256 envs x 30 steps per
update, 16 epochs x 8 minibatches, lr 1e-3, γ 0.995, rewards x10, entropy 0.01,
clip 0.3, brax's 4 x 32 swish network for both towers, observations
normalised) beside brax's `ppo.train` on `wrap_for_brax_training` of the same
environment at the same settings (its batch_size x num_minibatches sequences
per update = our 256 environments, one unroll each; its value network set to
ours). Printed per contender, median [min-max] over seeds, interleaved:
steps/s (compile excluded: brax's last training epoch, ours after compiling)
and the deterministic policy's return over 128 evaluation episodes; then the
machine's own ceiling (the same unrolls, environment step and policy act,
with no learning) and our training's share of it. `--preset
go1_joystick_flat_terrain` runs Go1JoystickFlatTerrain instead (it needs
MuJoCo Menagerie's models: set `MUJOCO_MENAGERIE_PATH`):
Playground's locomotion settings, the policy reading `state` and the critic
`privileged_state` on both sides, and both sides randomising each
environment's physics with Playground's own Go1 randomiser (brax's
`randomization_fn`, our `randomize=true`), as Playground's training script
does with `--domain_randomization`. The budget (`--updates`, or the preset's)
is rounded down to an even number of updates: brax's trainer runs two epochs
of ceil(updates / 2), and the returns compared need equal budgets (a run
where brax's step count differs from ours stops with an error).

Part 2, the final observation (`--final-obs`): ours as built, and ours with the
final observation of each time-limited episode replaced by the next episode's
first observation (what a learner sees through `wrap_for_brax_training`), at a
time limit short enough to matter (`--episode-length`, 100 by default), one
vmapped sweep of `--repeats` seeds each; the training returns (mean return of
the episodes of the last tenth of training), whatever they show.

    python scripts/bench_playground.py --repeats 5
    python scripts/bench_playground.py --final-obs --repeats 5
    MUJOCO_MENAGERIE_PATH=DIR python scripts/bench_playground.py \
        --preset go1_joystick_flat_terrain --num-envs 8192 --updates 10
"""

import contextlib
from collections.abc import Callable
from typing import Any

from device_time import TimedAfter
from harness import (
    Report,
    ablation,
    add_ceiling,
    interleave,
    parser,
    positive_int,
    run_main,
    spread,
    train_seeded,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts

PRESETS = ("cartpole_balance", "go1_joystick_flat_terrain")
# What each preset needs besides its own settings: Go1 randomised as
# Playground's training script does with `--domain_randomization` (brax's
# `randomization_fn=registry.get_domain_randomizer(name)`), the harder case.
OPTIONS = {
    "cartpole_balance": {},
    "go1_joystick_flat_terrain": {"randomize": True},
}
# brax's trainer here runs two training epochs (num_evals 3), each of
# ceil(updates / 2) updates: ours' budget is rounded down to an even count.
BRAX_EPOCHS = 2
TINY = {
    "cartpole_balance": {"total_steps": 256 * 30 * 2},
    "go1_joystick_flat_terrain": {"num_envs": 64, "total_steps": 64 * 20 * 2},
}


def config_for(
    tiny: bool, preset: str = "cartpole_balance", **overrides: Any
) -> pjd.TrainConfig:
    """The preset's PPO section, at toy size with `tiny`."""
    config = pjd.load_preset(preset, "ppo").config
    # Adam's ε as brax's (optax's default); the preset keeps PPO's 1e-5. The
    # physics as brax's side (`jax`), whatever the adapter's default on this
    # machine: the row compares trainers, not physics implementations.
    # An override replaces `env.options` whole: they are merged here.
    options = {
        **config.env.options,
        "impl": "jax",
        **OPTIONS[preset],
        **overrides.get("env", {}).get("options", {}),
    }
    config = pjd.apply_overrides(config, {"ppo": {"eps": 1e-8}})
    config = pjd.apply_overrides(config, overrides)
    config = pjd.apply_overrides(config, {"env": {"options": options}})
    if tiny:
        small = {**TINY[preset], "num_logs": 1, "devices": 1}
        config = pjd.apply_overrides(config, small)
    # Equal budgets on both sides: an odd update count would give brax's
    # trainer one more update than ours (its epochs round up).
    per_epoch = BRAX_EPOCHS * config.steps_per_update
    total = max(per_epoch, config.total_steps // per_epoch * per_epoch)
    return pjd.apply_overrides(config, {"total_steps": total})


def task_name(config: pjd.TrainConfig) -> str:
    """Playground's name of the config's task (`playground/<Name>`)."""
    return config.env.id.removeprefix("playground/")


def brax_ppo(config: pjd.TrainConfig, seed: int) -> dict[str, float]:
    """brax's PPO trainer on Playground's own training wrapper, same settings."""
    import functools

    from brax.training.agents.ppo import networks as ppo_networks
    from brax.training.agents.ppo import train as ppo_train
    from mujoco_playground import registry, wrapper
    from ppo_beside_brax.brax_side import install_jax_shims

    from purejaxdrl.env import menagerie

    install_jax_shims()  # brax 0.14's trainer on JAX >= 0.8 (see bench_brax.py)
    p, net, options = config.ppo, config.network, config.env.options
    name = task_name(config)
    if menagerie.needs_menagerie(name):
        menagerie.use_menagerie(name, options.get("menagerie_path"))
    env = registry.load(name, config_overrides={"impl": "jax"})
    episode_length = registry.get_default_config(name).episode_length
    minibatch = config.num_envs // p.num_minibatches
    hidden = tuple(net.hidden_sizes)
    keys = {"policy_obs_key": net.policy_obs_key, "value_obs_key": net.value_obs_key}
    factory = functools.partial(
        ppo_networks.make_ppo_networks,
        policy_hidden_layer_sizes=hidden,
        value_hidden_layer_sizes=hidden,
        **{k: v for k, v in keys.items() if v},
    )
    randomize = options.get("randomize", False)
    metrics: list[dict] = []
    steps: list[int] = []
    # A trace's timed region: the second epoch (the one whose steps/s is
    # read) and its evaluation, between the progress calls around them.
    timed = TimedAfter(2, 3)

    def progress(step: int, m: dict) -> None:
        metrics.append(dict(m))
        steps.append(step)
        timed.tick()

    with contextlib.closing(timed):
        ppo_train.train(
            environment=env,
            wrap_env_fn=wrapper.wrap_for_brax_training,
            randomization_fn=registry.get_domain_randomizer(name)
            if randomize
            else None,
            num_timesteps=config.total_steps,
            max_devices_per_host=1,
            num_envs=config.num_envs,
            episode_length=episode_length,
            unroll_length=config.unroll_length,
            batch_size=minibatch,
            num_minibatches=p.num_minibatches,
            num_updates_per_batch=p.num_epochs,
            learning_rate=p.learning_rate,
            entropy_cost=p.entropy_cost,
            discounting=p.gamma,
            gae_lambda=p.gae_lambda,
            clipping_epsilon=p.clip_eps,
            reward_scaling=p.reward_scale,
            vf_loss_coefficient=p.value_cost,  # 0.5 x coefficient x error², as ours
            max_grad_norm=p.max_grad_norm,
            normalize_observations=True,
            network_factory=factory,
            num_evals=BRAX_EPOCHS + 1,  # the second epoch's steps/s is compile-free
            num_eval_envs=128,
            deterministic_eval=True,
            seed=seed,
            progress_fn=progress,
        )
    ours = config.num_updates * config.steps_per_update
    if steps[-1] != ours:  # compared returns need equal budgets
        raise RuntimeError(f"brax trained {steps[-1]:,} steps, ours {ours:,}")
    last = metrics[-1]
    return {
        "steps_per_s": float(last["training/sps"]),
        "eval_return": float(last["eval/episode_reward"]),
    }


def dropped_final_observation() -> Callable[[], None]:
    """Makes every Playground env's final observation the next episode's first.

    Returns the function that undoes it. A scratch patch for the ablation, not
    an option of the package: the adapter's final observation is its point.
    """
    from purejaxdrl.env.playground_env import PlaygroundEnv

    original = PlaygroundEnv.step_batch

    def step_batch(self, keys, states, actions, params):
        states, ts = original(self, keys, states, actions, params)
        return states, ts._replace(final_observation=ts.observation)

    PlaygroundEnv.step_batch = step_batch
    return lambda: setattr(PlaygroundEnv, "step_batch", original)


def final_obs_runs(config: pjd.TrainConfig, seeds: int) -> dict[str, list[dict]]:
    """Ours with and without the true final observation: a sweep of seeds each."""
    with_final, without = ablation(config, seeds, dropped_final_observation)
    return {
        "ours, true final observation": with_final,
        "ours, next episode's first observation": without,
    }


def show(report: Report, row: str, runs: dict[str, list[dict]], key: str) -> None:
    for name, figures in runs.items():
        report.add(row, name, figures)
        s = spread([f[key] for f in figures])
        low, high = f"{s['min']:,.1f}", f"{s['max']:,.1f}"
        print(f"{row}: {name:<40} {key} {s['median']:,.1f} [{low}-{high}]")


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--final-obs", action="store_true", help="run part 2 only")
    p.add_argument("--episode-length", type=positive_int, default=100)
    p.add_argument("--preset", choices=PRESETS, default="cartpole_balance")
    p.add_argument("--num-envs", type=positive_int, help="default: the preset's")
    p.add_argument("--updates", type=positive_int, help="default: the preset's budget")
    args = p.parse_args(argv)
    size = {"num_envs": args.num_envs} if args.num_envs else {}
    if args.updates:
        config = config_for(args.tiny, args.preset, **size)
        size["total_steps"] = args.updates * config.num_envs * config.unroll_length
    name = task_name(config_for(args.tiny, args.preset))
    report = Report(f"PPO on Playground {name}: purejaxdrl vs brax's trainer")
    if args.final_obs:
        env = {"env": {"options": {"episode_length": args.episode_length}}}
        config = config_for(args.tiny, args.preset, **size, **env)
        runs = final_obs_runs(config, args.repeats)
        show(report, f"episode_length {args.episode_length}", runs, "train_return")
    else:
        evaluation = {"episodes": 128, "every": 0}
        config = config_for(args.tiny, args.preset, **size, eval=evaluation)
        runs = interleave(
            {
                "purejaxdrl ppo": lambda seed: train_seeded(config, seed),
                "brax ppo.train": lambda seed: brax_ppo(config, seed),
            },
            args.repeats,
        )
        show(report, "speed", runs, "steps_per_s")
        show(report, "return", runs, "eval_return")
        a, b = (spread([r["steps_per_s"] for r in f])["median"] for f in runs.values())
        report.add("ratio", "purejaxdrl / brax steps/s", [{"x": a / b}])
        print(f"purejaxdrl / brax steps/s: {a / b:.2f}x")
        add_ceiling(report, "this machine", "purejaxdrl ppo", config, a, args.repeats)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
