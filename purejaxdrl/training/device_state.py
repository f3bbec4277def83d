"""The run state on its devices: placed as a program takes it; finite or not."""

from typing import Any

import jax
import jax.numpy as jnp


@jax.jit
def params_finite(state: Any) -> jax.Array:
    """Whether every learner parameter is finite, bool []."""
    leaves = jax.tree.leaves(state.agent.params)
    return jnp.all(jnp.stack([jnp.isfinite(x).all() for x in leaves]))


def placed(state: Any, program: Any) -> Any:
    """`state` on the shardings a compiled chunk takes (as it is, if none known).

    A restored or freshly made state can hold a leaf laid out otherwise than
    the chunk was compiled for (a zero-size array comes out of a program
    replicated); a compiled program refuses it. Leaves already in place are
    not copied.
    """
    shardings = getattr(program, "input_shardings", None)
    if shardings is None:
        return state
    args, _ = shardings
    if len(args) != 1 or jax.tree.structure(args[0]) != jax.tree.structure(state):
        return state
    return jax.device_put(state, args[0])
