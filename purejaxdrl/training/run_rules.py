"""A run's rules of when it checkpoints and evaluates, of host placement, of splits.

Parts of `training.config.validate`, kept apart so that module stays one concept:
the config's fields; these check sections of it, and how its environments
split over devices for its algorithm (also checked once devices are chosen).
"""

from typing import Any

import jax

from purejaxdrl.agents.base import Algorithm, RunShape
from purejaxdrl.config import check
from purejaxdrl.runners.placement import HostConfig

# The evaluation loop counts an episode's steps in int32 (observe.evaluation).
EVAL_STEPS_LIMIT = 2**31


def check_checkpoint_and_eval(config: Any) -> None:
    """The rules of when a run (a `TrainConfig`) checkpoints and evaluates.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    config.checkpoint.check()
    zero = {"episodes": "turns evaluation off", "every": "evaluates only at the end"}
    for name, meaning in zero.items():
        value = getattr(config.eval, name)
        check(
            value >= 0,
            f"eval.{name}={value} must be >= 0 (0 {meaning}); e.g. "
            "--eval.episodes 16 --eval.every 5.",
        )
    stop_at = config.eval.stop_at
    check(
        stop_at is None or stop_at == stop_at,  # NaN stops nothing
        f"eval.stop_at={stop_at} is no return to stop at; pass a number, e.g. "
        "--eval.stop-at 475, or leave it unset.",
    )
    when = "only at the end" if config.eval.episodes else "never"
    check(
        config.eval.stop_at is None or (config.eval.episodes and config.eval.every),
        f"eval.stop_at={config.eval.stop_at} stops at an evaluation during "
        f"training, but eval.episodes={config.eval.episodes} and eval.every="
        f"{config.eval.every} evaluate {when}; pass e.g. --eval.episodes 16 "
        "--eval.every 1.",
    )
    # A larger one (a way to say "never cut an episode") would overflow the
    # compiled loop's counter in `train`, and again in `eval` of the saved run.
    max_steps = config.eval.max_steps
    check(
        1 <= max_steps < EVAL_STEPS_LIMIT,
        f"eval.max_steps={max_steps} must be >= 1 and < 2**31 (the evaluation "
        "loop counts steps in int32); e.g. --eval.max-steps 100000.",
    )


def check_host(host: HostConfig) -> None:
    """The rules of the host-env runner's placement.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    for name in ("actor_devices", "learner_devices", "env_threads"):
        value = getattr(host, name)
        check(value >= 0, f"host.{name}={value} must be >= 0 (0: the default).")
    for name in ("actor_threads", "queue_size"):
        value = getattr(host, name)
        check(value >= 1, f"host.{name}={value} must be >= 1; e.g. 1.")


def check_env_multiple(
    config: Any, record: Algorithm, shape: RunShape, flag: str = "--devices"
) -> None:
    """That each device's environments are a multiple of `record.env_multiple`.

    `config` is a `TrainConfig` of `record`'s algorithm, `shape` its run on
    `shape.num_devices` devices (1 before devices are chosen: then the rule
    is on `num_envs` itself, which every device count needs; all processes'
    devices together). An algorithm whose own `validate` words the rule
    (PPO's minibatches) has refused the config first; this holds it for
    every other record. `flag` sets the devices per process (the host-env
    runner's learner: `--host.learner-devices`).

    Raises:
      ConfigError: naming the value, the multiple and a `num_envs` that fits.

    """
    multiple = record.env_multiple(config.algo_config, shape)
    devices = shape.num_devices
    each = config.num_envs // devices
    if multiple <= 1 or each % multiple == 0:
        return
    step = multiple * devices
    what = f"num_envs={config.num_envs} is"
    if devices > 1:
        what = f"num_envs={config.num_envs} over {devices} devices is {each} each,"
    # The flag counts per process; a fit needs every process's share.
    processes = jax.process_count()
    fewer = [
        d
        for d in range(devices // processes - 1, 0, -1)
        if not config.num_envs % (d * processes * multiple)
    ]
    check(
        False,
        f"{what} not a multiple of {multiple}, which {config.algo} needs (its "
        f"record's env_multiple, per device); pass --num-envs "
        f"{-(-config.num_envs // step) * step}"
        + (f" or {flag} {fewer[0]}" if fewer else "")
        + ".",
    )
