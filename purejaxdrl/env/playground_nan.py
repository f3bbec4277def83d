"""A MuJoCo Playground step whose physics blew up: zeroed, ended and counted."""

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.types import PyTree

PHYSICS_NAN = "physics_nan"
"""`info[METRICS]` entry: 1 on a step whose reward or observation was not finite."""


def finite_step(
    obs: PyTree, reward: jax.Array, metrics: Mapping[str, Any]
) -> tuple[PyTree, jax.Array, dict[str, Any], jax.Array]:
    """A step's observation, reward and metrics with non-finite values zeroed.

    MJX's physics can blow up (a stiff model, a large timestep): its state,
    and so the reward and observation computed from it, turn NaN or inf.
    Passed on, one such environment among thousands would poison the
    learner's loss; zeroed, it is an episode's end the run counts.

    Returns:
      The observation (non-finite entries 0), reward (0 if not finite),
      metrics (non-finite scalars 0), and whether the reward or observation
      was not finite (bool []).

    """
    reward = jnp.asarray(reward, jnp.float32)
    bad = ~jnp.isfinite(reward)
    for leaf in jax.tree.leaves(obs):
        bad = bad | ~jnp.isfinite(leaf).all()
    obs = jax.tree.map(lambda x: jnp.where(jnp.isfinite(x), x, 0.0), obs)
    metrics = {
        k: jnp.where(jnp.isfinite(v), v, 0.0) if _is_float(v) else v
        for k, v in metrics.items()
    }
    return obs, jnp.where(bad, 0.0, reward), metrics, bad


def _is_float(value: Any) -> bool:
    return hasattr(value, "dtype") and jnp.issubdtype(value.dtype, jnp.floating)
