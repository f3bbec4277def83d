"""An exported policy's observation and action spaces, read off its policy.json.

A shape (or a dict observation's shapes by entry) becomes Boxes; an action
space a Box or a Discrete, whose `legal` (a policy trained with illegal actions
masked) is code: the environment is made again to read it.
"""

from collections.abc import Callable
from typing import Any

import jax

from purejaxdrl import env as envs
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.host import is_host_env, make_host_env, synchronous
from purejaxdrl.env.imports import import_modules


def policy_spaces(spec: dict[str, Any]) -> tuple[Box | dict, Discrete | Box]:
    """The observation spec (a Box, or Boxes by entry) and action spec of `spec`.

    `spec` is policy.json's content; a masked policy's action spec reads the
    legal actions as its environment does (`_environment_legal`).
    """
    shape, action = spec["observation_shape"], spec["action"]
    # A shape, or a dict observation's shapes by entry.
    obs_spec = jax.tree.map(
        lambda s: Box(tuple(s)), shape, is_leaf=lambda x: isinstance(x, list)
    )
    if "box" in action:
        return obs_spec, Box(tuple(action["box"]))
    legal = _environment_legal(spec) if action.get("masked") else None
    return obs_spec, Discrete(int(action["discrete"]), legal)


def _environment_legal(spec: dict[str, Any]) -> Callable[[jax.Array], jax.Array]:
    """The `legal` of the environment a policy was trained on, made again.

    From policy.json's id, options and imports: the one thing a masked
    policy needs from its environment.
    """
    import_modules(spec.get("env_imports", []), "policy.json's env_imports")
    env_id, options = spec["env_id"], spec.get("env_options", {})
    if is_host_env(env_id):
        host = make_host_env(env_id, 1, 0, **synchronous(options))
        host.close()
        return host.spec.action.legal
    env = envs.make(env_id, **options)
    return env.action_spec(env.default_params).legal
