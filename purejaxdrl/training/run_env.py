"""The environment a TrainConfig describes: made, checked and wrapped.

`make_env` is where a run's environment id becomes an environment: the
modules of `env.imports` imported first, a preset's name given as an id
named as that mistake, a user's environment checked against its specs, and
the wrappers the config asks for around it. The experiment, a sweep's
programs and an exported policy's environment all start here.
`validate` (`pjd.validate`) is the config's own rules that, on a fault,
first ask whether the run's algorithm can act in this environment at all.
"""

from typing import Any

from purejaxdrl import env as envs
from purejaxdrl.agents.registry import acting_refusal, algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.env.contract import check_user_env
from purejaxdrl.env.extras import missing_package
from purejaxdrl.env.host import is_host_env, make_host_env, synchronous
from purejaxdrl.env.imports import import_modules
from purejaxdrl.env.registry import registered_by_user, warn_shadowed
from purejaxdrl.env.wrappers import HideObservations, check_hidden
from purejaxdrl.rng import make_key
from purejaxdrl.training import config as config_rules
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.presets.load import preset_names, presets_dir, read_yaml
from purejaxdrl.yaml_text import load_yaml


def make_env(config: TrainConfig) -> tuple[envs.Env, Any]:
    """The environment of `config` and its default parameters.

    The environment is wrapped in episode statistics, and in observation
    hiding and normalisation when the config asks for them.

    Not pure: it first imports `config.env.imports`, the modules that
    register the user's environments.

    Raises:
      ConfigError: a module of `env.imports` does not import.
      UnknownEnvironmentError: nobody registered `config.env.id`.
      ValueError: for hidden entries that do not fit the observation, or a
        user's environment whose outputs break its specs (`env.contract`).

    """
    import_modules(config.env.imports)
    try:
        env = envs.make(config.env.id, **config.env.options)
    except envs.UnknownEnvironmentError as e:
        raise _preset_as_id(config.env.id) or _host_id(config.env.id) or e from None
    if registered_by_user(config.env.id):
        # A key of the run's implementation, as the run's scan will carry.
        check_user_env(env, config.env.id, make_key(0, config.rng_impl))
        if config.env.id in _preset_env_ids():  # gymnax's, not imported to ask
            warn_shadowed(config.env.id)
    if config.env.hide_observations:
        hidden = config.env.hide_observations
        check_hidden(hidden, env.observation_spec(env.default_params), config.env.id)
        env = HideObservations(env, hidden)
    env = envs.EpisodeStatistics(env)
    if config.env.normalize_observations:
        env = envs.NormalizeObservation(env)
    return env, env.default_params


def _preset_env_ids() -> set[str]:
    """The environment ids the shipped presets train (their files, parsed once)."""
    files = (read_yaml(presets_dir() / f"{name}.yaml") for name in preset_names())
    return {str(data["env"].get("id")) for data in files}


def _preset_as_id(env_id: str) -> envs.UnknownEnvironmentError | None:
    """For `--env.id cartpole`: that a preset was named as an id; or None."""
    if env_id not in preset_names():
        return None
    data = load_yaml((presets_dir() / f"{env_id}.yaml").read_text())
    return envs.UnknownEnvironmentError(
        f"Unknown environment {env_id!r}: {env_id} is a preset, not an "
        f"environment id; pass --env {env_id} (pjd.load_preset({env_id!r}) in "
        f"Python), or its environment's id: --env.id {data['env']['id']}."
    )


def _host_id(env_id: str) -> envs.UnknownEnvironmentError | None:
    """For `--env.id Breakout-v5` (or `ALE/Breakout-v5`): the host id a preset trains.

    Read from the shipped presets' files, on this failing path only: no host
    library is imported to learn its ids. None where no preset trains one.
    """
    task = env_id.removeprefix("ALE/").casefold()
    for preset in preset_names():
        file_id = str((read_yaml(presets_dir() / f"{preset}.yaml")["env"]).get("id"))
        host, colon, host_task = file_id.partition(":")
        if colon and host_task.casefold() == task:
            return envs.UnknownEnvironmentError(
                f"Unknown environment {env_id!r}: did you mean {file_id} (a host "
                f"environment; the {preset} preset trains it: --env {preset}, "
                f"pjd.load_preset({preset!r}) in Python)? Or keep this run's settings: "
                f"{both_ways('--env.id', 'env.id', file_id, repr(file_id))}."
            )
    return None


def validate(
    config: TrainConfig, *, budget: bool = True, normalised_before: bool = False
) -> TrainConfig:
    """Checks every rule of a run; returns `config` unchanged (`pjd.validate`).

    The config's own rules (`training.config.validate`), and where they
    refuse, first whether its environment's optional package is installed
    (`missing_package`: a budget fixed for a run that cannot start would be
    the wrong fix first), then whether the run's algorithm can act in its
    environment's actions: no flag of their advice fixes that (DQN on
    continuous actions was told to lower `min_replay`, then, after that, that
    it needs discrete actions). The device environment (a host one: a pool
    of one) is made for it only on that failing path and only for an
    algorithm that acts in one kind.
    `make_experiment` and the command line check a run so.

    Args:
      config: the run, a `TrainConfig` (`pjd.load_preset(name).config`, with
        any `apply_overrides`).
      budget: also check the rules of training to come (default True): that
        a replay learner's budget stores its `min_replay` and that it does
        not normalise observations. False for reading a saved run, whose
        budget a resume may raise.
      normalised_before: the run continues one that normalised observations
        (default False): a replay learner's, begun before that was refused,
        is warned, not refused.

    Returns:
      `config`, unchanged, once every rule holds.

    Examples:
      >>> import purejaxdrl as pjd
      >>> config = pjd.load_preset("cartpole").config
      >>> config = pjd.validate(pjd.apply_overrides(config, {"num_envs": 64}))

    Raises:
      ConfigError: the missing package's or the actions' refusal, else the
        config's own.

    """
    try:
        return config_rules.validate(
            config, budget=budget, normalised_before=normalised_before
        )
    except ConfigError:
        # Whether the run can start at all first: its environment's package.
        # (Not a config at all, or one changed by hand: its own refusal stands.)
        env_id = getattr(getattr(config, "env", None), "id", None)
        missing = missing_package(env_id) if isinstance(env_id, str) else None
        refusal = missing or _acting(config)
        if refusal is None:
            raise
        raise ConfigError(f"{refusal}.") from None


def _acting(config: TrainConfig) -> str | None:
    """`acting_refusal` for `config`'s device environment; None if it cannot tell."""
    try:
        if len(algorithm(config.algo).action_kinds) > 1:
            return None  # an algorithm of both kinds acts in any
        import_modules(config.env.imports)
        if is_host_env(config.env.id):  # one environment, in this process
            return acting_refusal(config.algo, _host_actions(config), config.env.id)
        env = envs.make(config.env.id, **config.env.options)
        return acting_refusal(
            config.algo, env.action_spec(env.default_params), config.env.id
        )
    except Exception:  # no config, algo or env to ask: the config's fault stands
        return None


def _host_actions(config: TrainConfig) -> Any:
    """The action spec of `config`'s host environment, from a pool of one.

    PQN on gymnasium:Pendulum-v1 was told to raise `total_steps`, and only
    then that it cannot act in continuous actions (hr17 #9).
    """
    options = synchronous(config.env.options)
    options.pop("vectorization_mode", None)  # no worker process for one look
    pool = make_host_env(config.env.id, 1, 0, **options)
    pool.close()
    return pool.spec.action
