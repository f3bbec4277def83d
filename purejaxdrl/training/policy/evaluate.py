"""Playing an exported policy (`purejaxdrl eval POLICY_DIR`) on its environment.

An exported policy (`purejaxdrl export`, or a sweep's or PBT's best in its
`policy/` folder) holds what it acts with: its network and parameters, its
observation statistics and which entries it never saw. It plays the
environment it was trained on, made again from the id, options and imports
in its policy.json, with a run's players (`observe/players.py`): the mode of
its distribution, the first episode of each of E fresh environments, and
`--render` drawing the first of them.
"""

import json
import pathlib
from typing import Any

import jax.numpy as jnp

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError, apply_overrides
from purejaxdrl.env.host import is_host_env, synchronous
from purejaxdrl.env.imports import import_modules
from purejaxdrl.env.option_spelling import PLAY, spelled_as
from purejaxdrl.observe.play import (  # EPISODES: `evaluate_policy`'s default
    EPISODES,
    AgentParams,
    EvalResult,
    ModePolicy,
    Player,
    PlayState,
)
from purejaxdrl.observe.play_args import check_play_args
from purejaxdrl.observe.players import DevicePlayer, HostPlayer
from purejaxdrl.runners.placement import make_host_pool
from purejaxdrl.training.config import TrainConfig, config_class
from purejaxdrl.training.policy.acting import policy_acting
from purejaxdrl.training.policy.exported import (
    SPEC_FILE,
    Policy,
    load_policy,
    restored_policy,
)
from purejaxdrl.training.policy.inputs import as_acted_on, before_hiding
from purejaxdrl.training.restored import restore_run


def is_policy_folder(path: str | pathlib.Path) -> bool:
    """Whether `path` holds an exported policy rather than a run."""
    path = pathlib.Path(path)
    return (path / SPEC_FILE).is_file() and not (path / "config.yaml").exists()


@spelled_as(PLAY)  # its options are evaluate_policy's env_options
def policy_player(
    policy: Policy | str | pathlib.Path,
    env_options: dict[str, Any] | None = None,
    sample_seed: int | None = None,
) -> tuple[TrainConfig, Player, PlayState, int]:
    """An exported policy, ready to play as a run's checkpoint is.

    Args:
      policy: a `load_policy` result, or the folder to load it from.
      env_options: environment options that replace (or add to) those of
        policy.json's env_options, e.g. a longer `episode_length`.
      sample_seed: None to play the mode; else play samples of the policy
        (`acting.policy_acting`), their keys from this seed.

    Returns:
      (config, player, state, updates): the config of its environment and
      algorithm (the rest default), a Player of that environment, the
      `PlayState` it plays (no parameters: the policy holds its own; the
      environment's default parameters) and the updates the policy was
      trained for.

    Raises:
      ConfigError: `policy` names no policy folder, or its environment cannot
        be made.

    """
    if not isinstance(policy, Policy):
        # The modules that register its environment, torso and algorithm (a
        # user's), as a resume does: before `load_policy` builds the network.
        import_modules(_env_imports(policy), "policy.json's env_imports")
        policy = load_policy(policy)
    else:  # loaded already; its environment may be a user's, registered there
        import_modules(policy.spec.get("env_imports", []), "the policy's env_imports")
    if env_options:
        options = {**policy.spec.get("env_options", {}), **env_options}
        policy = policy._replace(spec={**policy.spec, "env_options": options})
    spec = policy.spec
    try:
        config = apply_overrides(
            config_class()(),
            {
                "algo": spec["algo"],
                "env": {
                    "id": spec["env_id"],
                    "options": spec.get("env_options", {}),
                    "imports": spec.get("env_imports", []),
                },
            },
            read_texts=False,  # as the run saved them
        )
        acting = policy_acting(policy, sample_seed)
        player, state, observation = _player(config, acting)
    except envs.UnknownEnvironmentError as e:
        # eval takes no --env.imports: the folder's policy.json names them.
        raise ConfigError(
            str(e).removesuffix(e.imports_advice) + " It is policy.json's env_id; "
            "if a module of your own registers it, name that module in "
            f"policy.json's env_imports (now {spec.get('env_imports', [])}) and "
            "play it where the module imports."
        ) from None
    _check_fits(spec, observation)
    return config, player, state, spec["updates"]


def _player(config: TrainConfig, acting: ModePolicy) -> tuple[Player, PlayState, Any]:
    """(player, its state, the observation space) of `config`'s environment."""
    options = dict(config.env.options)
    if is_host_env(config.env.id):
        pool = make_host_pool(config.env.id, 1, config.seed, **synchronous(options))
        try:
            space = pool.spec
        finally:
            pool.close()
        player = HostPlayer(config, acting, space)
        return player, PlayState(AgentParams(())), space.observation
    env = envs.make(config.env.id, **options)
    state = PlayState(AgentParams(()), env.default_params)
    observation = env.observation_spec(env.default_params)
    return DevicePlayer(env, acting, config.eval), state, observation


def _check_fits(spec: dict[str, Any], observation: Any) -> None:
    """Refuses an environment whose observations the policy cannot take.

    Its policy.json's env_id edited, or the environment changed since the
    export: said before playing, naming both shapes, rather than as a shape
    error of the environment's "policy".
    """
    if not isinstance(observation, envs.Box):  # dict observations: checked in play
        return
    try:
        as_acted_on(jnp.zeros(observation.shape), spec)
    except ValueError:
        raise ConfigError(_misfit(spec, list(observation.shape))) from None


def _misfit(spec: dict[str, Any], shape: list[int]) -> str:
    """Why observations of `shape` do not fit the policy of `spec`, and the fix."""
    hidden = spec.get("env_hide_observations") or []
    if not (hidden and shape):
        return (
            f"policy.json's env_id {spec['env_id']!r} gives observations of "
            f"shape {shape}, but this policy takes "
            f"{spec['observation_shape']}{before_hiding(spec)}: it was trained "
            "on another environment (policy.json edited, or the environment "
            "changed since the export); set env_id back to the one it was "
            "exported from."
        )
    # Either field may be the edited one: a hidden list that no longer fits
    # the parameters reads the same as another environment.
    left = [*shape[:-1], shape[-1] - len(hidden)]
    return (
        f"policy.json's env_id {spec['env_id']!r} gives observations of "
        f"shape {shape}, which its env_hide_observations {hidden} leave as "
        f"{left}, but this policy takes {spec['observation_shape']}: "
        "policy.json was edited (env_id or env_hide_observations), or the "
        "environment changed since the export; set both back to the values "
        "it was exported with."
    )


def run_policy(
    run_dir: str | pathlib.Path, checkpoint: int | str = "latest"
) -> tuple[TrainConfig, Policy]:
    """A run's checkpoint as a `Policy`, the one exporting it gives (without a folder).

    What `eval RUN --env.option ...` and `--sample` play: a run's own player
    has its environment and mode built in; its export plays anywhere.

    Returns:
      (the run's config, the policy).

    """
    config, exp, restored = restore_run(run_dir, "evaluate", checkpoint)
    return config, restored_policy(config, exp, restored, pathlib.Path(run_dir))


def evaluate_policy(
    policy: Policy | str | pathlib.Path,
    *,
    episodes: int = EPISODES,
    max_steps: int | None = None,
    seed: int = 0,
    env_options: dict[str, Any] | None = None,
    sample: bool = False,
) -> EvalResult:
    """Plays an exported policy as `purejaxdrl eval POLICY_DIR` does, with its defaults.

    The mode of its distribution (or samples of it, with `sample`), the first
    episode of each of `episodes` fresh environments, all at once (memory
    grows with `episodes`), on the environment it was trained on, made again
    from its policy.json (with `env_options` changed). A run's
    own state plays the same way through its experiment's player (`observe.Player`):
    `make_experiment(config).player.evaluate(result.state, ...)`.

    Args:
      policy: a folder `export_policy` (or `TrainResult.export`) wrote, or the
        `policy/` of a sweep's best run or a PBT's best member; or the
        `Policy` `load_policy` read from one (it carries policy.json's
        environment id, options and imports).
      episodes: how many episodes, one environment each (eval's --episodes),
        default 5.
      max_steps: steps after which an episode is cut (its return partial,
        `ended` False), below 2**31; None for `eval.max_steps`' default,
        100,000.
      seed: the environments' seed, in [0, 2**32); with `sample`, the
        samples' too.
      env_options: options that replace or add to the environment's
        (policy.json's env_options; eval's `--env.option KEY=VALUE`), e.g.
        {"episode_length": 2000} for longer brax episodes.
      sample: play samples of the policy (`policy.step`: ε-greedy for a
        Q-learner, as it ended training) instead of its mode (eval's
        `--sample`); each environment has its own key stream, the same for
        the same `seed`.

    Returns:
      `observe.EvalResult`: each episode's return, length, the environment's
      own metrics and whether it ended, host arrays [episodes].

    Examples:
      More in docs/guide/evaluation.md.

      >>> import purejaxdrl as pjd
      >>> scored = pjd.evaluate_policy("policy/", episodes=8, max_steps=500)
      >>> print(scored.returns.mean(), scored.ended.all())
      >>> longer = pjd.evaluate_policy(
      ...     "policy/", env_options={"max_steps_in_episode": 1000}, sample=True, seed=3
      ... )

    Raises:
      ConfigError: `policy` is no policy, its environment cannot be made, or
        a value `check_play_args` refuses.

    """
    check_play_args(episodes, max_steps, seed, flags=False)
    _check_play_kinds(env_options, sample)
    sample_seed = seed if sample else None
    config, player, state, _ = policy_player(policy, env_options, sample_seed)
    steps = None if max_steps is None else int(max_steps)  # None: the player's
    return player.evaluate(state, episodes=int(episodes), max_steps=steps, seed=seed)


def _check_play_kinds(env_options: Any, sample: Any) -> None:
    """Refuses `evaluate_policy`'s env_options other than a dict, sample not a bool."""
    if env_options is not None and not (
        isinstance(env_options, dict) and all(isinstance(k, str) for k in env_options)
    ):
        raise ConfigError(
            f"env_options={env_options!r} must be a dict of option names to "
            "values (or None); e.g. --env.option episode_length=2000 "
            "(env_options={'episode_length': 2000} in Python)."
        )
    if not isinstance(sample, bool):
        raise ConfigError(
            f"sample={sample!r} must be True or False; e.g. --sample "
            "(sample=True in Python)."
        )


def _env_imports(path: str | pathlib.Path) -> list[str]:
    """policy.json's env_imports; none where unreadable (`load_policy` says why)."""
    try:
        spec = json.loads((pathlib.Path(path) / SPEC_FILE).read_text())
        imports = spec["env_imports"]
    except (OSError, ValueError, TypeError, KeyError):
        return []
    return [str(name) for name in imports] if isinstance(imports, list) else []
