"""Domain randomisation of an MJX model: one randomised model per environment.

A randomised model is the few `mjx.Model` fields it changes, drawn from a key
(`draw_model`): each body's mass and inertia, each geom's sliding friction and
each actuator's gain, scaled by factors uniform in `RANGES`. Any MuJoCo
Playground task has these fields, DM Control's included. The adapter keeps an
environment's fields in its state (so the run's seed draws them and every
checkpoint saves them) and swaps them into the task's model while it traces
that environment's reset and step (`using`), as Playground's own
`BraxDomainRandomizationVmapWrapper` swaps whole models.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.types import PRNGKey

RANGES = {
    "mass": (0.8, 1.2),  # each body's mass (and inertia, so they agree)
    "friction": (0.6, 1.4),  # each geom's sliding friction
    "gain": (0.8, 1.2),  # each actuator's gain (and a position servo's bias)
}


def draw_model(key: PRNGKey, model: Any) -> dict[str, jax.Array]:
    """One environment's randomised fields of the MJX `model`, by field name.

    Args:
      key: the environment's key (from the run's seed).
      model: the task's `mjx.Model`.

    Returns:
      `body_mass` [nbody], `body_inertia` [nbody, 3], `geom_friction`
      [ngeom, 3], `actuator_gainprm` and `actuator_biasprm` [nu, 10]: the
      model's own values, scaled by factors uniform in `RANGES`.

    """
    key_mass, key_friction, key_gain = jax.random.split(key, 3)

    def factors(key: PRNGKey, n: int, name: str) -> jax.Array:
        low, high = RANGES[name]
        return jax.random.uniform(key, (n,), jnp.float32, low, high)

    mass = factors(key_mass, model.body_mass.shape[0], "mass")
    friction = factors(key_friction, model.geom_friction.shape[0], "friction")
    gain = factors(key_gain, model.actuator_gainprm.shape[0], "gain")
    return {
        "body_mass": model.body_mass * mass,
        "body_inertia": model.body_inertia * mass[:, None],
        "geom_friction": model.geom_friction.at[:, 0].multiply(friction),
        # force = gain * ctrl + bias[0] + bias[1] * q + ...: a position servo
        # (gain kp, bias -kp) keeps its set point when both scale.
        "actuator_gainprm": model.actuator_gainprm.at[:, 0].multiply(gain),
        "actuator_biasprm": model.actuator_biasprm.at[:, 1].multiply(gain),
    }


@contextlib.contextmanager
def using(env: Any, fields: dict[str, jax.Array] | tuple) -> Iterator[None]:
    """Playground task `env` with `fields` in its model while the block traces.

    Playground's tasks read their model from `env.mjx_model` when their
    `reset` and `step` run; under `vmap` each environment's fields are its
    own. `()`: the task's own model.
    """
    if not fields:
        yield
        return
    base = env._mjx_model
    env._mjx_model = base.tree_replace(fields)
    try:
        yield
    finally:
        env._mjx_model = base
