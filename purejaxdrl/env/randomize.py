"""Domain randomisation of an MJX model: one randomised model per environment.

A randomised model is the few `mjx.Model` fields it changes, drawn from a key.
Playground's locomotion and hand tasks come with randomisers of their own,
written for each robot (Go1's: floor friction, joint friction and armature,
link masses, the torso's centre of mass and load, the joints' rest pose);
`draw_task_model` draws one environment's fields with such a function. Any
task, DM Control's included, can take the generic `draw_model`: each body's
mass and inertia, each geom's sliding friction and each actuator's gain,
scaled by factors uniform in `RANGES`. `choose_randomizer` picks between
them. The adapter keeps an environment's fields in its state (so the run's
seed draws them and every checkpoint saves them) and swaps them into the
task's model while it traces that environment's reset and step (`using`), as
Playground's own `BraxDomainRandomizationVmapWrapper` swaps whole models.
"""

import contextlib
import functools
import io
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.option_spelling import both, closest
from purejaxdrl.types import PRNGKey

RANGES = {
    "mass": (0.8, 1.2),  # each body's mass (and inertia, so they agree)
    "friction": (0.6, 1.4),  # each geom's sliding friction
    "gain": (0.8, 1.2),  # each actuator's gain (and a position servo's bias)
}
# `randomizer` option: the task's own where Playground has one (else the
# generic), the task's own only, or the generic one.
RANDOMIZERS = ("auto", "playground", "generic")
# Playground's randomiser: (model, keys [N]) -> (model with [N] fields, in_axes).
TaskRandomizer = Callable[[Any, jax.Array], tuple[Any, Any]]


def choose_randomizer(registry: Any, name: str, choice: str) -> TaskRandomizer | None:
    """Playground's randomiser for task `name`, or None for the generic one.

    Args:
      registry: Playground's `registry` module.
      name: the task's name in it.
      choice: one of `RANDOMIZERS`.

    Raises:
      ConfigError: `choice` is not one of them, or is `playground` for a task
        Playground has no randomiser for (the DM Control tasks, some others).

    """
    if choice not in RANDOMIZERS:
        raise ConfigError(
            f"env.options randomizer={choice!r} is not one of "
            f"{', '.join(RANDOMIZERS)}; pass "
            f"{both('randomizer', closest(choice, RANDOMIZERS, 'auto'))}."
        )
    if choice == "generic":
        return None
    # Playground prints a line for a locomotion task without one.
    with contextlib.redirect_stdout(io.StringIO()):
        task = registry.get_domain_randomizer(name)
    if task is None and choice == "playground":
        raise ConfigError(
            f"env.options randomizer=playground: Playground has no randomiser "
            f"for {name}; pass {both('randomizer', 'generic')}: masses, "
            "frictions and actuator gains, any task."
        )
    return task


def draw_task_model(
    randomizer: TaskRandomizer, key: PRNGKey, model: Any
) -> dict[str, jax.Array]:
    """One environment's fields, drawn by a Playground task's own randomiser.

    Args:
      randomizer: from `choose_randomizer`.
      key: the environment's key.
      model: the task's `mjx.Model`.

    Returns:
      The fields the randomiser draws (those its `in_axes` maps over), by
      dotted name as `using` takes them, without the batch axis.

    """
    batched, in_axes = randomizer(model, key[None])
    paths = jax.tree_util.tree_flatten_with_path(in_axes, is_leaf=lambda a: a is None)
    drawn = {}
    for path, axis in paths[0]:
        if axis is not None:
            value = functools.reduce(lambda x, k: getattr(x, k.name), path, batched)
            drawn[".".join(k.name for k in path)] = jnp.moveaxis(value, axis, 0)[0]
    return drawn


def draw(
    key: PRNGKey, model: Any, randomizer: TaskRandomizer | None = None
) -> dict[str, jax.Array]:
    """One environment's fields: `randomizer`'s draw, or without one the generic.

    Where the masses change, so does `body_subtreemass`: MuJoCo computes it
    once, at compile time, and MJX divides by it for the `subtreelinvel`
    sensor, which DM Control's runners and walkers reward their speed from.
    """
    if randomizer is None:
        drawn = draw_model(key, model)
    else:
        drawn = draw_task_model(randomizer, key, model)
    if "body_mass" in drawn:
        drawn["body_subtreemass"] = subtree_masses(model, drawn["body_mass"])
    return drawn


def subtree_masses(model: Any, body_mass: jax.Array) -> jax.Array:
    """Each body's mass plus its descendants', [nbody], as MuJoCo's `mj_setConst`.

    Args:
      model: the `mjx.Model` whose tree (`body_parentid`) the masses hang on.
      body_mass: the bodies' masses, [nbody].

    """
    parent = np.asarray(model.body_parentid)
    # below[j, i]: body i is j or one of j's descendants. Parents come before
    # their children, so one backward pass over the bodies fills it.
    below = np.eye(len(parent), dtype=np.float32)
    for i in range(len(parent) - 1, 0, -1):
        below[parent[i]] += below[i]
    return jnp.asarray(below) @ body_mass


def draw_model(key: PRNGKey, model: Any) -> dict[str, jax.Array]:
    """One environment's randomised fields of the MJX `model`, by field name.

    Args:
      key: the environment's key (from the run's seed).
      model: the task's `mjx.Model`.

    Returns:
      `body_mass` [nbody], `body_inertia` [nbody, 3], `geom_friction`
      [ngeom, 3], `actuator_gainprm` and `actuator_biasprm` [nu, 10]: the
      model's own values, scaled by factors uniform in `RANGES` (`draw`
      adds the subtree masses that follow from the masses).

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
        # force = gain * ctrl + bias[0] + bias[1] * q + bias[2] * qdot: a
        # position servo (gain kp, bias -kp, -kv) keeps its set point, and a
        # velocity servo (gain kv, bias -kv on qdot) its target, when all scale.
        "actuator_gainprm": model.actuator_gainprm.at[:, 0].multiply(gain),
        "actuator_biasprm": model.actuator_biasprm.at[:, 1:3].multiply(gain[:, None]),
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
