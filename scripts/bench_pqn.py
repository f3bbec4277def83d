"""PQN on CartPole-v1: purejaxdrl vs rejax's PQN, side by side in one run.

Both train at the settings they can both express: purejaxql's CartPole run
(32 envs x 64 steps, 4 epochs x 16 minibatches, lr 1e-4, max grad norm 10,
γ 0.99, λ 0.95, ε 1 -> 0.2 over the first 20% of steps, 500k steps) with
rejax's fixed network (64-64, a LayerNorm before each relu) and rejax's
optimiser choices (Adam, constant learning rate, rewards unscaled). Printed per
contender, median [min-max] over seeds run interleaved: steps/s (compile
excluded) and the final greedy return (rejax's own evaluation, ε 0.005 over 128
episodes, and ours, greedy over 128 episodes). Two differences remain: rejax
shuffles single transitions into minibatches where ours takes whole time steps
of all environments, and rejax ends the return at any `done` where ours
bootstraps through time limits.

rejax is not part of this repository and 0.1.3 does not run on gymnax 1.0's
six-value step as released. Install it into a scratch folder beside, not into,
this environment, and pass that folder:

    pip download rejax==0.1.3 --no-deps -d /tmp/peers
    pip install --no-deps --target /tmp/peers/rejax /tmp/peers/rejax-0.1.3-*.whl
    python scripts/bench_pqn.py --rejax /tmp/peers/rejax --repeats 5

The machine's own ceiling closes the table: the same unrolls (environment
step and ε-greedy act) with no learning, and our training's share of it.

Its environment gets a five-value step (done = terminated or truncated) from a
small shim here, which is how it runs on gymnax >= 1.0.

Part 2, time limits (`--truncation`): the `cartpole` preset's PQN (purejaxql's
CartPole settings, 500k steps; CartPole-v1 cuts episodes at 500 steps, which
its policies reach) as built, whose Q(λ) targets bootstrap through a time limit
from max_a Q of the true final observation, and with truncations treated as
terminations (the return ends at any time limit, as purejaxql, Stoix and rejax
end it), one vmapped sweep of `--repeats` seeds each: the training returns
(mean return of the last chunk's episodes, ε-greedy actors), whatever they
show.

    python scripts/bench_pqn.py --truncation --repeats 10
"""

import sys
import time
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from harness import (
    Report,
    ablation,
    add_ceiling,
    interleave,
    parser,
    run_main,
    spread,
    train_seeded,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts

SETTINGS = {
    "devices": 1,  # rejax trains on one device
    "num_envs": 32,
    "unroll_length": 64,
    "total_steps": 500_000,
    "num_logs": 4,
    "eval": {"episodes": 128, "every": 0},
    "network": {"hidden_sizes": [64, 64], "activation": "relu"},
    "pqn": {
        "num_epochs": 4,
        "num_minibatches": 16,
        "learning_rate": 1e-4,
        "anneal_lr": False,
        "max_grad_norm": 10.0,
        "reward_scale": 1.0,
        "gamma": 0.99,
        "q_lambda": 0.95,
        "epsilon_start": 1.0,
        "epsilon_end": 0.2,
        "epsilon_fraction": 0.2,
    },
}
TINY = {
    "total_steps": 32 * 64 * 2,
    "num_logs": 1,
    "eval": {"episodes": 4},
    "devices": 1,
}


def config_for(tiny: bool) -> pjd.TrainConfig:
    """The cartpole preset's PQN section at the benchmark's settings."""
    config = pjd.apply_overrides(pjd.load_preset("cartpole", "pqn").config, SETTINGS)
    return pjd.apply_overrides(config, TINY) if tiny else config


class FiveValueStep:
    """gymnax >= 1.0's six-value step, as the five values rejax unpacks."""

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        if name == "_env":  # copy.deepcopy asks before __init__ has run
            raise AttributeError(name)
        return getattr(self._env, name)

    def step(self, key, state, action, params=None):
        obs, state, reward, terminated, truncated, info = self._env.step(
            key, state, action, params
        )
        return obs, state, reward, jnp.logical_or(terminated, truncated), info


def load_rejax(path: str) -> types.ModuleType:
    """rejax from a scratch folder at `path` (its own code, unchanged)."""
    sys.path.insert(0, path)
    import rejax

    return rejax


def rejax_pqn(rejax: types.ModuleType, config: pjd.TrainConfig, seed: int) -> dict:
    """Trains rejax's PQN at `config`'s settings; evaluates after timing."""
    import gymnax

    env, env_params = gymnax.make(config.env.id)
    p = config.pqn
    algo = rejax.PQN.create(
        env=FiveValueStep(env),
        env_params=env_params,
        num_envs=config.num_envs,
        num_steps=config.unroll_length,
        num_epochs=p.num_epochs,
        num_minibatches=p.num_minibatches,
        total_timesteps=config.total_steps,
        learning_rate=p.learning_rate,
        max_grad_norm=p.max_grad_norm,
        gamma=p.gamma,
        td_lambda=p.q_lambda,
        eps_start=p.epsilon_start,
        eps_end=p.epsilon_end,
        exploration_fraction=p.epsilon_fraction,
        # One "evaluation" at the very end, and an empty one: its time is not
        # training time. The policy is evaluated below, outside the timing.
        eval_freq=config.total_steps,
        skip_initial_evaluation=True,
    )
    evaluate = algo.eval_callback
    algo = algo.replace(eval_callback=lambda algo, ts, rng: jnp.zeros(()))
    key = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    program = jax.jit(algo.train).lower(key).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    ts, _ = jax.block_until_ready(program(key))
    seconds = time.perf_counter() - start
    updates = -(-config.total_steps // (config.num_envs * config.unroll_length))
    _, returns = evaluate(algo, ts, jax.random.PRNGKey(seed + 1))
    return {
        "compile_s": compile_s,
        "steps_per_s": updates * config.num_envs * config.unroll_length / seconds,
        "eval_return": float(returns.mean()),
    }


def truncations_as_terminations() -> Callable[[], None]:
    """Makes PQN's Q(λ) targets end the return at time limits too.

    Returns the function that undoes it. A scratch patch for the ablation, not
    an option of the package: bootstrapping through time limits is its point.
    """
    from purejaxdrl.agents import pqn

    original = pqn.q_lambda_targets

    def targets(traj: Any, config: Any) -> jax.Array:
        ended = traj._replace(
            discount=jnp.where(traj.truncated, 0.0, traj.discount),
            truncated=jnp.zeros_like(traj.truncated),
        )
        return original(ended, config)

    pqn.q_lambda_targets = targets
    return lambda: setattr(pqn, "q_lambda_targets", original)


def truncation_runs(tiny: bool, seeds: int) -> dict[str, list[dict]]:
    """The preset's PQN with and without truncation-correct targets."""
    config = pjd.load_preset("cartpole", "pqn").config
    if tiny:  # a sweep plays no evaluation episodes
        config = pjd.apply_overrides(config, {**TINY, "eval": {"episodes": 0}})

    as_built, ended = ablation(config, seeds, truncations_as_terminations)
    return {
        "ours, time limits bootstrap": as_built,
        "ours, time limits end the return": ended,
    }


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--rejax", help="a folder holding rejax 0.1.3 (see above)")
    p.add_argument("--truncation", action="store_true", help="run part 2 only")
    args = p.parse_args(argv)
    config = config_for(args.tiny)
    if args.truncation:
        report = Report("PQN on CartPole-v1: time limits as built and as terminations")
        for name, figures in truncation_runs(args.tiny, args.repeats).items():
            report.add("cartpole pqn, 500-step time limit", name, figures)
            r = spread([f["train_return"] for f in figures])
            mean = sum(f["train_return"] for f in figures) / len(figures)
            print(
                f"{name:<34} training return mean {mean:6.1f}, "
                f"median {r['median']:6.1f} [{r['min']:.1f}-{r['max']:.1f}]"
            )
        return report.finish(args)
    report = Report("PQN on CartPole-v1: purejaxdrl vs rejax")
    contenders = {"purejaxdrl pqn": lambda seed: train_seeded(config, seed)}
    if args.rejax:
        rejax = load_rejax(args.rejax)
        contenders["rejax PQN"] = lambda seed: rejax_pqn(rejax, config, seed)
    else:
        report.skip("rejax PQN", "no --rejax folder given")
    runs = interleave(contenders, args.repeats)
    for name, figures in runs.items():
        report.add("cartpole pqn", name, figures)
        sps, ret = ([r[k] for r in figures] for k in ("steps_per_s", "eval_return"))
        s, r = spread(sps), spread(ret)
        print(
            f"{name:<16} steps/s {s['median']:>9,.0f} [{s['min']:,.0f}-{s['max']:,.0f}]"
            f"   greedy return {r['median']:6.1f} [{r['min']:.1f}-{r['max']:.1f}]"
        )
    ours = spread([r["steps_per_s"] for r in runs["purejaxdrl pqn"]])["median"]
    if len(runs) == 2:
        b = spread([r["steps_per_s"] for r in runs["rejax PQN"]])["median"]
        report.add("ratio", "purejaxdrl / rejax steps/s", [{"x": ours / b}])
        print(f"purejaxdrl / rejax steps/s: {ours / b:.2f}x")
    add_ceiling(report, "this machine", "purejaxdrl pqn", config, ours, args.repeats)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
