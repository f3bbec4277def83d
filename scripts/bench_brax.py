"""PPO on a brax environment: purejaxdrl vs brax's own trainer, side by side in one run.

Trains the same PPO configuration with `purejaxdrl.training.train` and with brax's
`brax.training.agents.ppo.train` on the same machine, in one process, and reports
for each the compile time, steps/s excluding compile, and the final return; then
the ratio of steps/s (ours / brax). `--tiny` runs both on brax's trivial `fast`
env at toy sizes. With --profile it also splits one update's
time between the rollout (env + policy, no learning) and the learner.

    python scripts/bench_brax.py --env inverted_pendulum --repeats 3

The configuration is our preset `envs/<env>.yaml` (inverted_pendulum: positional
backend, episode_length 1000, 128 envs x 64 steps, 4 epochs x 8 minibatches,
lr 1e-3, gamma 0.97, observation normalisation, 64x64 tanh MLPs), with
--num-envs, --unroll-length and --total-steps applied to both runners.

Hyper-parameter mapping (ours -> brax `ppo.train` argument):
  num_envs -> num_envs; unroll_length -> unroll_length; ppo.num_epochs ->
  num_updates_per_batch; ppo.num_minibatches -> num_minibatches, with batch_size =
  num_envs / num_minibatches, so one update consumes exactly one unroll of every
  env and both minibatches hold num_envs x unroll_length / num_minibatches
  transitions; learning_rate -> learning_rate (constant: our annealing is turned
  off, brax has no annealing); entropy_cost -> entropy_cost; gamma ->
  discounting; gae_lambda -> gae_lambda; clip_eps -> clipping_epsilon; clip_value
  -> clipping_epsilon_value (clip_eps or None); value_cost -> vf_loss_coefficient
  (both losses are value_cost * 0.5 * mean squared error); max_grad_norm ->
  max_grad_norm (brax's default is no clipping); reward_scale -> reward_scaling;
  normalize_advantages -> normalize_advantage (both per minibatch);
  env.normalize_observations -> normalize_observations; network.hidden_sizes ->
  policy_hidden_layer_sizes and value_hidden_layer_sizes (two separate towers on
  both sides), network.activation -> activation; env options backend and
  episode_length -> the same brax environment and episode_length; total_steps
  -> num_timesteps (rounded down to a whole number of updates per chunk, so both
  take exactly the same number of env steps); action_repeat 1; Adam's ε: ours
  (ppo.eps) is set to brax's 1e-8 (optax's default; brax's train takes no
  optimiser).

Differences that remain (design, not configuration):
  - Initialisation: ours is orthogonal (sqrt 2 hidden, 0.01 policy head, 1.0
    value head); brax's is lecun_uniform everywhere.
  - Action distribution: both a tanh-squashed Gaussian with state-dependent
    scale and a one-sample entropy estimate; ours bounds log-std in [-5, 2] with
    a tanh, brax uses softplus(x) + 0.001 as the scale.
  - Advantages: ours computes GAE once per update with the acting parameters and
    bootstraps truncated episodes from V(final observation); brax recomputes
    values and GAE inside every minibatch loss with the current parameters, and
    masks the truncated step out instead of bootstrapping
    (bootstrap_on_timeout needs an env that sets info['time_out'], which brax's
    own EpisodeWrapper does not).
  - Minibatches: brax's are batch_size whole env trajectories; ours are time
    blocks of a shared permutation of time steps, split further over env groups
    when there are more minibatches than blocks (agents.ppo.minibatch_split).
  - Observation statistics: ours updates them after each unroll and stores the
    observations normalised as the actor saw them; brax stores raw observations
    and renormalises them with statistics updated by the new batch before SGD.
    Ours clips normalised observations to [-10, 10]; brax does not clip.
  - Auto-reset: ours draws a fresh initial state at every reset; brax's
    AutoResetWrapper returns each env to the first initial state it drew.
  - Random keys: ours uses a fused Threefry implementation; brax JAX's default.

How it is measured:
  - Both run --chunks compiled chunks (ours: num_logs; brax: training epochs,
    num_evals = chunks + 1) and the script stamps wall and CPU time (the
    process's, all threads) as each chunk ends, through a logger for ours and
    progress_fn for brax. steps/s is over chunks 2..n for both: brax's first
    epoch includes its compilation (pmap compiles on first call), so it is left
    out on both sides alike. Steps per CPU-second is reported beside it, being
    less disturbed by other processes on a shared machine.
  - Compile time: ours is `TrainResult.compile_seconds` (ahead-of-time
    compilation of init and the chunk programs); brax's is estimated as its
    first epoch's time ('training/walltime', timed by brax around the pmapped
    epoch) less one epoch at the steady rate. Our `TrainResult.steps_per_second`
    (all chunks after compilation) is reported too (own_steps_per_s), and
    ours' note says CLOCK DISAGREES where the two differ by over 10% (a
    chunk's record read by the host only after the next chunk would make
    the clock count two chunks' steps over one chunk's time).
  - run_evals=False: brax evaluates nothing during training, so nothing but
    training is timed and no evaluation is compiled inside its run.
  - Return: after training, both final policies are evaluated the same way,
    with brax's evaluation protocol (that of `acting.Evaluator`, its
    'eval/episode_reward'): --eval-envs envs with brax's training wrappers,
    reset from one fixed key (the same initial states for both), stepped for
    episode_length steps with the stochastic policy; the mean return of each
    env's first episode. Ours also reports its training return: the mean return
    of the episodes completed in its last chunk (`TrainResult.mean_return`);
    brax's would need log_training_metrics, a host callback inside the timed
    loop.

brax 0.14 calls `jax.device_put_replicated`, which JAX >= 0.8 removed; a local
shim (installed only if the attribute is missing, brax itself is not modified)
lays the replicas out as brax's pmap lays out its outputs. No other removed JAX
API is reached by brax's PPO trainer.
"""

import argparse
import contextlib
import functools
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from brax import envs as brax_envs
from brax.training import acting
from brax.training.agents.ppo import networks as brax_networks
from brax.training.agents.ppo import train as brax_ppo
from device_time import TimedAfter
from flax import linen
from harness import (
    TINY_NOTE,
    Report,
    Row,
    compile_ahead,
    interleave,
    parser,
    positive_int,
    run_main,
    time_call,
)
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend

# brax warns, at every env it builds, that its pipelines are not maintained.
warnings.filterwarnings("ignore", category=UserWarning, module="brax")

ACTIVATIONS = {
    "tanh": linen.tanh,
    "relu": linen.relu,
    "gelu": linen.gelu,
    "silu": linen.silu,
}
# The transition fields brax's PPO collects in every unroll.
BRAX_EXTRA_FIELDS = ("truncation", "episode_metrics", "episode_done")
Result = dict[str, float]


def _device_put_replicated(x: Any, devices: Sequence[jax.Device]) -> Any:
    """Stand-in for `jax.device_put_replicated`, removed in JAX 0.8.

    Stacks `len(devices)` copies of every leaf on a new leading axis sharded over
    `devices`. The mesh axis is named like brax's pmap axis, because that is how
    JAX's pmap lays out its outputs: the first pmapped epoch then sees the same
    input sharding as every later one and compiles once, not twice.

    Args:
      x: a pytree of arrays.
      devices: the devices to replicate onto.

    Returns:
      The pytree with leaves `[len(devices), *leaf.shape]`.

    """
    axis = getattr(brax_ppo, "_PMAP_AXIS_NAME", "i")
    sharding = NamedSharding(Mesh(np.asarray(devices), (axis,)), P(axis))

    def put(leaf: Any) -> jax.Array:
        leaf = jnp.asarray(leaf)
        stacked = jnp.broadcast_to(leaf, (len(devices), *leaf.shape))
        return jax.device_put(stacked, sharding)

    return jax.tree.map(put, x)


def install_jax_shims() -> None:
    """Gives JAX back the APIs brax's trainers need, where JAX no longer has them."""
    if not hasattr(jax, "device_put_replicated"):
        jax.device_put_replicated = _device_put_replicated


def make_config(args: argparse.Namespace, chunks: int) -> pjd.TrainConfig:
    """Our preset for `args.env`, resized; lr constant and Adam's ε 1e-8, as brax's.

    The step budget is rounded down to a whole number of updates per chunk, so
    both runners take exactly the same number of env steps.
    """
    config = pjd.load_preset(args.env).config
    overrides: dict[str, Any] = {
        "ppo": {"anneal_lr": False, "eps": 1e-8},
        "num_logs": chunks,
    }
    if args.num_envs is not None:
        overrides["num_envs"] = args.num_envs
    if args.unroll_length is not None:
        overrides["unroll_length"] = args.unroll_length
    config = pjd.apply_overrides(config, overrides)
    step = config.steps_per_update * chunks
    total = max(step, args.total_steps // step * step)
    config = pjd.apply_overrides(config, {"total_steps": total})
    if config.num_envs % config.ppo.num_minibatches:
        raise SystemExit(
            f"num_envs={config.num_envs} must be divisible by ppo.num_minibatches="
            f"{config.ppo.num_minibatches}: brax's minibatches are whole env "
            "trajectories (batch_size = num_envs / num_minibatches)."
        )
    return config


def brax_env_name(config: pjd.TrainConfig) -> str:
    """The brax environment name of a `brax/<name>` env id."""
    prefix, _, name = config.env.id.partition("/")
    if prefix != "brax" or not name:
        raise SystemExit(f"{config.env.id!r} is not a brax environment (brax/<name>).")
    return name


def make_brax_env(config: pjd.TrainConfig) -> Any:
    """The unwrapped brax environment, on the preset's backend."""
    backend = config.env.options.get("backend", "positional")
    return brax_envs.get_environment(brax_env_name(config), backend=backend)


def episode_length(config: pjd.TrainConfig) -> int:
    """The time limit both runners use."""
    return int(config.env.options.get("episode_length", 1000))


def brax_network_factory(config: pjd.TrainConfig) -> Callable:
    """brax's PPO networks sized and activated like ours."""
    return functools.partial(
        brax_networks.make_ppo_networks,
        policy_hidden_layer_sizes=tuple(config.network.hidden_sizes),
        value_hidden_layer_sizes=tuple(config.network.hidden_sizes),
        activation=ACTIVATIONS[config.network.activation],
    )


class ChunkClock:
    """Wall and CPU time stamped at the end of every chunk (a purejaxdrl Logger).

    CPU time is the process's (all threads): on a shared machine it is less
    disturbed by other processes than wall time, so it is reported beside it.
    """

    def __init__(self) -> None:
        self.stamps: list[tuple[float, float]] = []

    def tick(self) -> None:
        self.stamps.append((time.perf_counter(), time.process_time()))

    def write(self, record: dict[str, Any]) -> None:
        del record
        self.tick()

    def close(self) -> None:
        pass

    def rates(self, total_steps: int) -> Result:
        """Steps per wall second and per CPU second over chunks 2..n (equal)."""
        (wall_0, cpu_0), (wall_n, cpu_n) = self.stamps[0], self.stamps[-1]
        steps = total_steps * (len(self.stamps) - 1) / len(self.stamps)
        return {
            "steps_per_s": steps / (wall_n - wall_0),
            "cpu_steps_per_s": steps / (cpu_n - cpu_0),
        }


def run_ours(config: pjd.TrainConfig) -> tuple[Result, Any]:
    """Trains with `purejaxdrl.training.train`.

    Returns:
      The figures, and the final (parameters, observation statistics or None).

    """
    clock = ChunkClock()
    result = pjd.train(config, loggers=[clock])
    state = jax.device_get(result.state)
    stats = (
        state.env_params.obs_stats
        if isinstance(state.env_params, pjd.env.NormalizedParams)
        else None
    )
    figures = {
        **clock.rates(config.total_steps),
        "compile_s": result.compile_seconds,
        "own_steps_per_s": result.steps_per_second,  # all chunks after compiling
        "train_return": result.mean_return,
    }
    return figures, (state.agent.params, stats)


# How far the chunk clock's steps/s may stray from TrainResult's before a row
# says so: the clock stamps each chunk's record when the host reads it, and a
# record read a chunk late would count two chunks' steps over one's time.
CLOCK_TOLERANCE = 0.10


def clock_note(medians: Result, tiny: bool = False) -> str:
    """A warning where ours' chunk clock and `own_steps_per_s` disagree.

    At `--tiny` sizes the first chunk's first-call costs dominate
    `own_steps_per_s`, so the two always disagree: the note says the figures
    are a code-path check instead of raising the alarm.
    """
    own = medians.get("own_steps_per_s")
    if not own:
        return ""
    if tiny:
        return TINY_NOTE
    off = medians["steps_per_s"] / own - 1.0
    if abs(off) <= CLOCK_TOLERANCE:
        return ""
    return f"CLOCK DISAGREES: chunk clock {off:+.0%} vs own_steps_per_s"


def run_brax(config: pjd.TrainConfig, chunks: int) -> tuple[Result, Callable, Any]:
    """Trains with brax's `ppo.train` on the same configuration.

    Returns:
      The figures, brax's `make_policy`, and its final policy parameters.

    """
    clock = ChunkClock()
    first_epoch: list[float] = []
    timed = TimedAfter(1, chunks)  # a trace's timed region: the clock's window

    def progress(step: int, metrics: dict[str, Any]) -> None:
        del step
        clock.tick()
        timed.tick()
        if not first_epoch:
            first_epoch.append(float(metrics["training/walltime"]))

    with contextlib.closing(timed):
        make_policy, params = _brax_train(config, chunks, progress)
    if len(clock.stamps) != chunks:
        raise RuntimeError(f"brax ran {len(clock.stamps)} epochs, not {chunks}.")
    steps_per_epoch = config.total_steps // chunks
    rates = clock.rates(config.total_steps)
    figures = {
        **rates,
        # Its first epoch, timed by brax, less an epoch at the steady rate.
        "compile_s": first_epoch[0] - steps_per_epoch / rates["steps_per_s"],
    }
    return figures, make_policy, params


def _brax_train(
    config: pjd.TrainConfig, chunks: int, progress: Callable
) -> tuple[Callable, Any]:
    """brax's `ppo.train` on `config`: (its make_policy, its parameters)."""
    ppo = config.ppo
    make_policy, params, _ = brax_ppo.train(
        make_brax_env(config),
        num_timesteps=config.total_steps,
        num_envs=config.num_envs,
        episode_length=episode_length(config),
        action_repeat=1,
        learning_rate=float(ppo.learning_rate),
        entropy_cost=float(ppo.entropy_cost),
        discounting=float(ppo.gamma),
        unroll_length=config.unroll_length,
        batch_size=config.num_envs // ppo.num_minibatches,
        num_minibatches=ppo.num_minibatches,
        num_updates_per_batch=ppo.num_epochs,
        normalize_observations=config.env.normalize_observations,
        reward_scaling=float(ppo.reward_scale),
        clipping_epsilon=float(ppo.clip_eps),
        clipping_epsilon_value=float(ppo.clip_eps) if ppo.clip_value else None,
        gae_lambda=float(ppo.gae_lambda),
        max_grad_norm=float(ppo.max_grad_norm),
        normalize_advantage=ppo.normalize_advantages,
        vf_loss_coefficient=float(ppo.value_cost),
        network_factory=brax_network_factory(config),
        seed=config.seed,
        num_evals=chunks + 1,  # one training epoch per eval after the first
        run_evals=False,
        progress_fn=progress,
    )
    return make_policy, params


def our_policy_fn(agent: pjd.agents.Agent) -> Callable:
    """Our policy as a brax `make_policy`: (params, obs stats) -> policy.

    The policy standardises observations with our statistics, as our wrapper
    does, and samples our (stochastic) action for every env in the batch.
    """

    def make_policy(policy_params: Any) -> Callable:
        params, stats = policy_params

        def policy(obs: jax.Array, key: jax.Array) -> tuple[jax.Array, dict]:
            if stats is not None:
                obs = pjd.env.normalize(stats, obs)
            keys = jax.random.split(key, obs.shape[0])
            env_ids = jnp.arange(obs.shape[0], dtype=jnp.int32)
            _, _, extras = agent.acting.step(params, (), obs, None, keys, env_ids)
            return extras["env_action"], {}

        return policy

    return make_policy


def make_evaluate(config: pjd.TrainConfig, num_envs: int) -> Callable:
    """One protocol for both policies: brax's `acting.Evaluator`'s, compiled once.

    `num_envs` brax envs (wrapped as for training: time limit, auto-reset) are
    reset from one fixed key and stepped for episode_length steps; each env's
    first episode counts. brax's Evaluator does the same, but compiles its
    unroll twice per policy (its first donated state differs in type from the
    later ones); this compiles once per policy kind.

    Returns:
      `evaluate(make_policy, params) -> mean episode return`, where
      `make_policy(params)` returns a brax policy `(obs, key) -> (action, extras)`.

    """
    length = episode_length(config)
    env = brax_envs.training.wrap(
        make_brax_env(config), episode_length=length, action_repeat=1
    )
    key_reset, key_act = jax.random.split(jax.random.PRNGKey(12345))

    @functools.partial(jax.jit, static_argnums=0)
    def run(make_policy: Callable, params: Any) -> jax.Array:
        policy = make_policy(params)
        state = env.reset(jax.random.split(key_reset, num_envs))

        def step(carry: tuple, key: jax.Array) -> tuple[tuple, None]:
            state, ret, active = carry
            action, _ = policy(state.obs, key)
            state = env.step(state, action)
            ret = ret + active * state.reward
            return (state, ret, active * (1.0 - state.done)), None

        zeros = jnp.zeros((num_envs,), jnp.float32)
        (_, ret, _), _ = jax.lax.scan(
            step, (state, zeros, zeros + 1.0), jax.random.split(key_act, length)
        )
        return ret.mean()

    def evaluate(make_policy: Callable, params: Any) -> float:
        return float(run(make_policy, params))

    return evaluate


# ------------------------------------------------------------------- profiling


def checksum(tree: Any) -> jax.Array:
    """Sum of every float leaf of `tree`, so XLA cannot drop any of their work.

    (A reward alone is not enough: inverted_pendulum's is a constant 1.)
    """
    leaves = [
        jnp.sum(x, dtype=jnp.float32)
        for x in jax.tree.leaves(tree)
        if jnp.issubdtype(x.dtype, jnp.floating)
    ]
    return sum(leaves, jnp.zeros((), jnp.float32))


def compile_program(fn: Callable, *args: Any) -> Callable[[], Any]:
    """Compiles `fn(*args)` ahead of time and runs it once (first-run costs).

    Returns:
      A thunk that runs the compiled program on `args` and waits for it.

    """
    _, program = compile_ahead(fn, *args)
    time_call(program, *args)
    return lambda: time_call(program, *args)


def best_times(programs: dict[str, Callable[[], Any]], rounds: int) -> dict:
    """Least wall and CPU seconds of each program over `rounds` interleaved runs.

    Interleaving and the minimum keep other processes' load out of the figures
    as far as possible.
    """

    def timed(run: Callable[[], Any]) -> Callable[[int], dict[str, float]]:
        def once(repeat: int) -> dict[str, float]:
            cpu = time.process_time()
            wall, _ = run()
            return {"wall_s": wall, "cpu_s": time.process_time() - cpu}

        return once

    runs = interleave({name: timed(run) for name, run in programs.items()}, rounds)
    return {
        name: {k: min(r[k] for r in rs) for k in ("wall_s", "cpu_s")}
        for name, rs in runs.items()
    }


def our_programs(config: pjd.TrainConfig) -> dict[str, Callable[[], Any]]:
    """Our rollout alone and our learner alone, one update each.

    The rollout is `unroll` as the runner calls it: env stack, per-env keys,
    policy sampling and the batched value pass over observations and final
    observations. The learner is PPO's `update` on that trajectory.
    """
    exp = pjd.training.make_experiment(config)
    state = jax.device_get(
        exp.runner.init(pjd.rng.make_key(config.seed, config.rng_impl))
    )
    params = state.agent.params

    def rollout(state: pjd.runners.RunnerState) -> tuple:
        actor, traj = pjd.runners.unroll(
            exp.env,
            state.env_params,
            exp.agent,
            params,
            state.actor,
            state.key,
            config.unroll_length,
            config.scan_unroll,
        )
        return actor, traj._replace(info={})

    # An agent that all-reduces over no axis, to run outside the runner's mesh.
    spec = exp.env.observation_spec(exp.env_params)
    network = pjd.networks.make_actor_critic(
        config.network, spec, exp.env.action_spec(exp.env_params)
    )
    agent = pjd.agents.make_ppo(
        config.ppo,
        network,
        np.zeros(spec.shape, np.float32),
        pjd.agents.RunShape(num_updates=config.num_updates),
    )
    traj = jax.jit(rollout)(state)[1]

    def learner(agent_state: pjd.agents.AgentState, traj: Any, key: jax.Array) -> Any:
        return agent.update(agent_state, traj, key)

    return {
        "ours: rollout": compile_program(lambda state: checksum(rollout(state)), state),
        "ours: learner": compile_program(learner, state.agent, traj, state.key),
    }


def brax_rollout(
    config: pjd.TrainConfig, make_policy: Callable, params: Any
) -> Callable[[], Any]:
    """brax's rollout alone, one update, as its training step runs it."""
    env = brax_envs.training.wrap(
        make_brax_env(config), episode_length=episode_length(config), action_repeat=1
    )
    key_reset, key_run = jax.random.split(jax.random.PRNGKey(config.seed))
    env_state = jax.jit(env.reset)(jax.random.split(key_reset, config.num_envs))
    policy = make_policy(params)

    def run(env_state: Any, key: jax.Array) -> jax.Array:
        return checksum(
            acting.generate_unroll(
                env,
                env_state,
                policy,
                key,
                config.unroll_length,
                extra_fields=BRAX_EXTRA_FIELDS,
            )
        )

    return compile_program(run, env_state, key_run)


def env_steps(
    config: pjd.TrainConfig,
    reset: Callable[[jax.Array], Any],
    step: Callable[[Any, jax.Array, jax.Array], Any],
) -> Callable[[], Any]:
    """unroll_length batched env steps with uniform random actions, no policy.

    Args:
      config: gives num_envs, unroll_length and the env.
      reset: keys [B] -> batched env state.
      step: (state, actions [B, A], keys [B]) -> (state, outputs to checksum).

    """
    action_size = make_brax_env(config).action_size
    n = config.num_envs
    state = jax.jit(reset)(jax.random.split(jax.random.PRNGKey(0), n))

    def run(state: Any) -> jax.Array:
        def body(state: Any, key: jax.Array) -> tuple:
            key_act, key_env = jax.random.split(key)
            action = jax.random.uniform(key_act, (n, action_size), minval=-1.0)
            state, out = step(state, action, jax.random.split(key_env, n))
            return state, checksum(out)

        keys = jax.random.split(jax.random.PRNGKey(1), config.unroll_length)
        return jax.lax.scan(body, state, keys)[1].sum()

    return compile_program(run, state)


def env_programs(config: pjd.TrainConfig) -> dict[str, Callable[[], Any]]:
    """The raw brax env and each runner's env stack, one update's steps each.

    brax: VmapWrapper + EpisodeWrapper + AutoResetWrapper (auto-reset selects a
    cached first state). Ours: BraxEnv (time limit; auto-reset computes a fresh
    reset every step and selects it) + EpisodeStatistics + NormalizeObservation.
    """
    raw = make_brax_env(config)
    wrapped = brax_envs.training.wrap(
        raw, episode_length=episode_length(config), action_repeat=1
    )
    exp = pjd.training.make_experiment(config)
    env, params = exp.env, exp.env_params

    def raw_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        del keys
        state = jax.vmap(raw.step)(state, action)
        return state, state.obs

    def brax_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        del keys
        state = wrapped.step(state, action)
        return state, state.obs

    def our_step(state: Any, action: jax.Array, keys: jax.Array) -> tuple:
        return jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, state, action, params)

    def our_reset(keys: jax.Array) -> Any:
        return jax.vmap(env.reset, in_axes=(0, None))(keys, params)[0]

    return {
        "raw brax env step": env_steps(config, jax.vmap(raw.reset), raw_step),
        "brax env wrappers": env_steps(config, wrapped.reset, brax_step),
        "our env stack": env_steps(config, our_reset, our_step),
    }


def profile(
    report: Report,
    config: pjd.TrainConfig,
    ours: Result,
    brax: Result,
    brax_policy: tuple,
    rounds: int = 7,
) -> None:
    """Reports where an update's time goes: env, rollout and learner, for both.

    Each part runs alone in a program of its own, for one update's worth, and
    the parts are timed interleaved, keeping the least of `rounds` runs. brax's
    learner cannot be run alone (it lives inside `ppo.train`), so its share is
    its training time per update (median, from the runs above) less its
    rollout; ours is shown both ways.
    """
    spu = config.steps_per_update
    programs = {
        **our_programs(config),
        "brax: rollout": brax_rollout(config, *brax_policy),
        **env_programs(config),
    }
    best = best_times(programs, rounds)

    def training(r: Result) -> Result:
        return {"wall_s": spu / r["steps_per_s"], "cpu_s": spu / r["cpu_steps_per_s"]}

    def minus(a: Result, b: Result) -> Result:
        return {k: a[k] - b[k] for k in a}

    rows = [
        ("purejaxdrl: training", training(ours)),
        ("  rollout (env + policy + values)", best["ours: rollout"]),
        ("  learner, alone", best["ours: learner"]),
        ("  learner, training - rollout", minus(training(ours), best["ours: rollout"])),
        ("brax ppo.train: training", training(brax)),
        ("  rollout (env + policy)", best["brax: rollout"]),
        ("  learner, training - rollout", minus(training(brax), best["brax: rollout"])),
        ("raw brax env step (no wrappers)", best["raw brax env step"]),
        ("brax env wrappers (incl. env)", best["brax env wrappers"]),
        ("our env stack (incl. env)", best["our env stack"]),
    ]
    row = f"profile: ms per update ({spu:,} env steps), parts alone, least of {rounds}"
    for name, r in rows:
        ms = {"wall_ms": 1e3 * r["wall_s"], "cpu_ms": 1e3 * r["cpu_s"]}
        report.add(row, name.strip(), [ms])


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.set_defaults(repeats=1)
    p.add_argument("--env", default="inverted_pendulum", help="a brax preset")
    p.add_argument("--total-steps", type=positive_int, default=500_000)
    p.add_argument("--num-envs", type=positive_int, help="default: the preset's")
    p.add_argument("--unroll-length", type=positive_int, help="default: the preset's")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument(
        "--chunks",
        type=positive_int,
        default=4,
        help="host round trips: our num_logs and brax's training epochs (>= 2; "
        "brax's first one compiles and is left out of its steps/s)",
    )
    p.add_argument("--eval-envs", type=positive_int, default=128)
    p.add_argument(
        "--profile", action="store_true", help="split an update: rollout vs learner"
    )
    args = p.parse_args(argv)
    if args.tiny:  # 64 envs: brax splits them over every device, then 8 minibatches
        args.num_envs, args.unroll_length, args.chunks = 64, 4, 3
        args.total_steps, args.eval_envs = 64 * 4 * 3, 4
    if args.chunks < 2:
        p.error("--chunks must be >= 2")

    install_jax_shims()
    config = make_config(args, args.chunks)
    if args.tiny:  # brax's trivial test env: both trainers, compiled in seconds
        fast = {"id": "brax/fast", "options": config.env.options}  # ant's options
        config = pjd.apply_overrides(config, {"env": fast})
    ppo = config.ppo
    report = Report(
        f"PPO on brax {brax_env_name(config)} ({config.env.options.get('backend')} "
        f"backend, episode_length {episode_length(config)}): {config.num_envs} envs "
        f"x {config.unroll_length} steps, {ppo.num_epochs} epochs x "
        f"{ppo.num_minibatches} minibatches, lr {ppo.learning_rate:g} constant, "
        f"gamma {ppo.gamma:g}, {config.total_steps:,} steps in {args.chunks} chunks"
    )
    evaluate = make_evaluate(config, args.eval_envs)
    # The same policy functions for every seed, so each evaluation compiles
    # once (brax's make_policy closures differ only by identity).
    policies: dict[str, Any] = {}

    def ours(repeat: int) -> Result:
        figures, params = run_ours(seeded(repeat))
        if "ours" not in policies:
            agent = pjd.training.make_experiment(config).agent
            policies["ours"] = our_policy_fn(agent)
        return {**figures, "eval_return": evaluate(policies["ours"], params)}

    def theirs(repeat: int) -> Result:
        figures, make_policy, params = run_brax(seeded(repeat), args.chunks)
        policies.setdefault("brax", make_policy)
        policies["brax params"] = params
        return {**figures, "eval_return": evaluate(policies["brax"], params)}

    def seeded(repeat: int) -> pjd.TrainConfig:
        return pjd.apply_overrides(config, {"seed": args.seed + repeat})

    runs = interleave({"ours": ours, "brax": theirs}, args.repeats)
    row = f"{args.eval_envs} evaluation episodes each"
    mine = Row(row, "", runs["ours"]).medians()
    a = report.add(row, "purejaxdrl", runs["ours"], clock_note(mine, args.tiny))
    b = report.add(row, "brax ppo.train", runs["brax"], "compile estimated")
    ratio = {
        k: a.medians()[k] / b.medians()[k] for k in ("steps_per_s", "cpu_steps_per_s")
    }
    report.add(row, "ratio ours / brax", [ratio], TINY_NOTE if args.tiny else "")
    if args.profile:
        brax_policy = (policies["brax"], policies["brax params"])
        profile(report, config, a.medians(), b.medians(), brax_policy)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
