"""A run's rules of checkpoints and evaluation, host placement, splits, observations.

Parts of `training.config.validate`, kept apart so that module stays one concept:
the config's fields; these check sections of it, and how its environments
split over devices for its algorithm (also checked once devices are chosen,
by `device_choice`); what reaches the agent (`check_observations`: host envs,
replay, normalising; `check_dict_observations`: a dict of them).
"""

from typing import Any

from purejaxdrl.agents.base import Algorithm, RunShape
from purejaxdrl.agents.registry import algorithms, registered_by_user
from purejaxdrl.config import ConfigError, check
from purejaxdrl.config_docs import both_ways, field_example
from purejaxdrl.env.host import is_host_env
from purejaxdrl.env.option_spelling import both
from purejaxdrl.env.wrappers import LEAVE_EMPTY
from purejaxdrl.parallel import env_multiple_message, split_share
from purejaxdrl.runners.placement import HostConfig
from purejaxdrl.setup_warnings import warn_once

# The evaluation loop counts an episode's steps in int32 (observe.evaluation).
EVAL_STEPS_LIMIT = 2**31


def _evaluating(every: int) -> str:
    """The fix that turns evaluation on, for both front ends."""
    return both_ways(
        "--eval.episodes 16 --eval.every", "eval.episodes=16, eval.every", every
    )


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
            f"eval.{name}={value} must be >= 0 (0 {meaning}); e.g. {_evaluating(5)}.",
        )
    stop_at = config.eval.stop_at
    check(
        stop_at is None or stop_at == stop_at,  # NaN stops nothing
        f"eval.stop_at={stop_at} is no return to stop at; pass a number, e.g. "
        f"{field_example('eval.stop_at', 475)}, or leave it unset.",
    )
    when = "only at the end" if config.eval.episodes else "never"
    check(
        config.eval.stop_at is None or (config.eval.episodes and config.eval.every),
        f"eval.stop_at={config.eval.stop_at} stops at an evaluation during "
        f"training, but eval.episodes={config.eval.episodes} and eval.every="
        f"{config.eval.every} evaluate {when}; pass e.g. "
        f"{_evaluating(1)}.",
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
        value, fix = getattr(host, name), field_example(f"host.{name}", 0)
        check(value >= 0, f"host.{name}={value} must be >= 0; pass {fix}, the default.")
    for name in ("actor_threads", "queue_size"):
        value, fix = getattr(host, name), field_example(f"host.{name}", 1)
        check(value >= 1, f"host.{name}={value} must be >= 1; pass e.g. {fix}.")


def check_env_multiple(
    config: Any,
    record: Algorithm,
    shape: RunShape,
    flag: str = "--devices",
    python: str = "devices",
) -> None:
    """That each device's environments are a multiple of `record.env_multiple`.

    `config` is a `TrainConfig` of `record`'s algorithm, `shape` its run on
    `shape.num_devices` devices (1 before devices are chosen: then the rule
    is on `num_envs` itself, which every device count needs; all processes'
    devices together). An algorithm whose own `validate` says why it needs
    the multiple (PPO's minibatches) has refused the config first, with the
    same rule and line (`parallel.split_share`, `parallel.env_multiple_message`);
    this holds it for every other record.
    `flag` sets the devices per process, `python` is its config field (the
    host-env runner's learner: `--host.learner-devices`,
    `host.learner_devices`).

    Raises:
      ConfigError: naming the value, the multiple and a `num_envs` that fits.

    """
    multiple = record.env_multiple(config.algo_config, shape)
    envs, devices = config.num_envs, shape.num_devices
    # With no multiple, an uneven split alone is `parallel.per_device`'s.
    if multiple <= 1 or split_share(envs, devices, multiple) is not None:
        return
    needs = f"{config.algo} (its record's env_multiple)"
    raise ConfigError(
        env_multiple_message(
            needs,
            envs,
            devices,
            multiple,
            flag=flag,
            python=python,
            requested=shape.requested_devices,
        )
    )


def check_observations(
    config: Any, record: Algorithm, budget: bool, normalised_before: bool
) -> None:
    """The rules of what reaches the agent: host envs, replay, normalising."""
    keeps = record.keeps_replay(config.algo_config)
    check(
        not (config.env.hide_observations and is_host_env(config.env.id)),
        f"env.hide_observations={list(config.env.hide_observations)} applies to "
        f"device environments, not to env.id={config.env.id!r}; {LEAVE_EMPTY}.",
    )
    check(
        not (config.env.normalize_observations and is_host_env(config.env.id)),
        "env.normalize_observations=true applies to device environments, not "
        f"to env.id={config.env.id!r}, whose observations reach the agent as "
        "the environment makes them; pass "
        f"{field_example('env.normalize_observations', 'false', False)}, and "
        "normalise inside the environment where it needs it.",
    )
    # Training to come (`budget`), begun after the rule: a run resumed that
    # normalised before keeps its normaliser's state (a saved run evaluates).
    if budget and config.env.normalize_observations and keeps:
        what = f"env.normalize_observations=true with algo={config.algo!r}"
        check(
            normalised_before,
            f"{what}, which keeps a replay buffer: stored observations would "
            "stay at the scale of their time while the statistics move; pass "
            f"{field_example('env.normalize_observations', 'false', False)}.",
        )
        warn_once(
            f"{what}: this resumed run normalises as it started, and its stored "
            "observations keep the scale of their time's statistics (new runs "
            "refuse this).",
            ("resumed replay normalization", config.algo),
        )


def check_dict_observations(config: Any, record: Algorithm, obs_spec: Any) -> None:
    """That `record`'s agents take the dict observations `obs_spec` says, if a dict.

    A built-in that takes arrays is refused with the algorithms that take
    dicts. A user's record may just not say it does: one built on
    `actor_critic_networks` reads `network.policy_obs_key` and
    `value_obs_key` as PPO does, so the refusal names its record's field.

    Raises:
      ConfigError: dict observations for an algorithm that takes arrays.

    """
    if not isinstance(obs_spec, dict) or record.dict_observations:
        return
    entries = ", ".join(sorted(obs_spec))
    said = (
        f"algo={config.algo!r} takes array observations, but {config.env.id} "
        f"observes a dict ({entries}); "
    )
    policy = "state" if "state" in obs_spec else sorted(obs_spec)[0]
    value = "privileged_state" if "privileged_state" in obs_spec else policy
    keys = f"--network.policy-obs-key {policy} --network.value-obs-key {value}"
    network = f"network={{'policy_obs_key': {policy!r}, 'value_obs_key': {value!r}}}"
    one_entry = (
        f"give it one entry (MuJoCo Playground: {both('observation_key', policy)})"
    )
    if record.name in {r.name for r in registered_by_user()}:
        raise ConfigError(
            f"{said}if its networks read network.policy_obs_key / "
            "value_obs_key (as actor_critic_networks does), set "
            "dict_observations=True on its record (dataclasses.replace(record, "
            f"dict_observations=True)) and pass {keys} ({network} in Python); "
            f"or {one_entry}."
        )
    able = [r.name for r in algorithms() if r.dict_observations]
    python = " or ".join(repr(name) for name in able)
    raise ConfigError(
        f"{said}use --algo {' or '.join(able)} with {keys} (algo={python}, "
        f"{network} in Python), or {one_entry}."
    )
