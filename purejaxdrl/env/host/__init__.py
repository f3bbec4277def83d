"""Host environments by id: `envpool:<task>` and `gymnasium:<id>`.

`base` has the interface (`HostEnv`, `HostStep`) and what adapters share;
`envpool` and `gymnasium` are the adapters; `make_host_env` picks one by id.
Gymnasium's: `gymnasium_options` (its `env.options`, checked before
`make_vec`), `gymnasium_workers` (an async pool's processes, ended with the
run) and `api_check` (its API, said in one line where a user's environment
breaks it).
"""

from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host.base import HostEnv, HostSpec, HostStep

PREFIXES = ("envpool:", "gymnasium:")
"""How host environment ids start: `envpool:<task>`, `gymnasium:<id>`."""

__all__ = [
    "PREFIXES",
    "HostEnv",
    "HostSpec",
    "HostStep",
    "is_host_env",
    "make_host_env",
    "synchronous",
]


# Arguments of the libraries' constructors that the run sets itself.
RUN_OPTIONS = {"seed": "--seed", "env_seed": "--seed", "num_envs": "--num-envs"}


def is_host_env(env_id: str) -> bool:
    """Whether `env_id` names a host environment (`envpool:...`, `gymnasium:...`)."""
    return env_id.startswith(PREFIXES)


def make_host_env(env_id: str, num_envs: int, seed: int, /, **options: Any) -> HostEnv:
    """Builds `num_envs` host environments named `env_id`, seeded from `seed`.

    Args:
      env_id: `envpool:<task>`, `gymnasium:<id>` or `gymnasium:<module>:<id>`.
      num_envs: how many environments the batch steps.
      seed: environment i is seeded with a number derived from (seed, i).
      options: passed to the library (EnvPool's `make` options; Gymnasium's
        `make` keyword arguments), plus `batch_size` and `num_threads` for
        EnvPool.

    Raises:
      ConfigError: an unknown id or prefix, the library is not installed, or
        an option the run sets itself (`seed`, `env_seed`, `num_envs`).

    """
    kind, _, name = env_id.partition(":")
    for option, flag in RUN_OPTIONS.items():
        if option in options:
            raise ConfigError(
                f"env.options {option}={options[option]!r}: a host environment's "
                f"{option} comes from the run's {flag} (each environment's seed "
                f"from the run's seed and its index); drop the option and pass "
                f"{flag} instead."
            )
    if kind == "envpool":
        from purejaxdrl.env.host.envpool import EnvPoolEnv

        return EnvPoolEnv(name, num_envs, seed, **options)
    if kind == "gymnasium":
        from purejaxdrl.env.host.gymnasium import GymnasiumEnv

        return GymnasiumEnv(name, num_envs, seed, **options)
    raise ConfigError(
        f"env.id={env_id!r} is no host environment: host ids start with one of "
        f"{list(PREFIXES)}, e.g. envpool:Pong-v5 or gymnasium:CartPole-v1"
    )


def synchronous(options: dict[str, Any]) -> dict[str, Any]:
    """A run's environment options for a pool stepped all at once, undrawn.

    Evaluation, rendering and a policy's action masks make pools of their own
    sizes that step every environment together; the run's `batch_size` (an
    asynchronous EnvPool pool's) is for its actors' pools, not for them. A
    `render_mode` (of a run saved before training refused it) is no pool's:
    a Gymnasium pool does not take it, and `--render` draws with its own.
    """
    return {k: v for k, v in options.items() if k not in ("batch_size", "render_mode")}
