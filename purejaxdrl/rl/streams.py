"""The arrays a return estimator reads: converted, and their layout checked.

The estimators act on one time-major stream [T] (`gae`, `lambda_returns`,
`vtrace`, `n_step_targets`) or on a batch of them [T, B] (the `episode_aware_`
ones). chex's rank checks walked a list as a tree of scalars (a list of 6
rewards was "rank 0") and raised AssertionErrors that did not say how to
batch. Here lists become arrays first and a wrong layout is one ValueError
naming the shapes and the fix. A bool `discount_t` is refused too: it is the
done flags passed where discounts belong, which the promotion to float turned
into inverted episode ends (done -> 1, not done -> 0) without a word. Shapes
and dtypes are static: nothing is added to a compiled program.
"""

from typing import Any

import jax
import jax.numpy as jnp

_LAYOUTS = {1: "one stream [T]", 2: "a time-major batch [T, B]"}
# The rank each layout is mistaken for: a one-stream function given a batch, or
# a batch function given one stream. Only that mistake has the batch fix.
_OTHER = {1: 2, 2: 1}


def as_streams(
    function: str,
    arrays: dict[str, Any],
    *,
    rank: int,
    batch_fix: str,
    gamma_apart: bool = False,
) -> tuple[jax.Array, ...]:
    """`arrays`' values as JAX arrays, once each has `rank` axes and all one shape.

    Args:
      function: the estimator's name, for the message.
      arrays: its stream arguments by name, arrays or (nested) lists.
      rank: 1 for one stream [T], 2 for a batch [T, B].
      batch_fix: what to do instead, said where every array has the other
        layout's rank: for `rank=1`, one axis too many (a batch given to one
        stream's function: its `jax.vmap` recipe); for `rank=2`, one too few
        (one stream given to a batch's function). Any other rank (scalars
        given to `gae`, [T, B, K] to `episode_aware_gae`) is told the layout
        itself, as that fix would not hold.
      gamma_apart: whether `function` takes γ as an argument of its own, its
        `discount_t` being the environment's (0 on termination) rather than
        γ times it: what the fix for a bool `discount_t` says to pass.

    Returns:
      The arrays, in the order given (JAX arrays and tracers unchanged).

    Raises:
      ValueError: (one line) for a bool `discount_t`, or naming every array's
        shape and the fix.

    """
    arrays = {name: jnp.asarray(x) for name, x in arrays.items()}
    if "discount_t" in arrays:
        refuse_done_flags(function, arrays["discount_t"], gamma_apart=gamma_apart)
    shapes = {name: x.shape for name, x in arrays.items()}
    ranks = {len(shape) for shape in shapes.values()}
    if ranks == {rank} and len(set(shapes.values())) == 1:
        return tuple(arrays.values())
    got = ", ".join(f"{name} {list(shape)}" for name, shape in shapes.items())
    if ranks == {rank}:
        fix = "give every one the same length"
    elif ranks == {_OTHER[rank]}:
        fix = batch_fix
    else:
        fix = f"pass each as {_LAYOUTS[rank]}"
    raise ValueError(
        f"{function} takes {_LAYOUTS[rank]} in each of {', '.join(shapes)}, all "
        f"of one shape; got {got}; {fix}."
    )


def refuse_done_flags(
    function: str, discount_t: jax.Array, *, gamma_apart: bool = False
) -> None:
    """Refuse a bool `discount_t`: done flags where discounts belong.

    No bool array is a discount, and `done` is the likely one: promoted to
    float it bootstraps across every episode end and nowhere else.

    Args:
      function: the estimator's name, for the message.
      discount_t: its discounts, converted to an array.
      gamma_apart: whether `function` takes γ apart (then `discount_t` is the
        environment's discount, 1 - done; else γ times it).

    Raises:
      ValueError: (one line) naming discount_t and the fix.

    """
    if discount_t.dtype != jnp.bool_:
        return
    if gamma_apart:
        want, fix = "the env discount (0 on termination; gamma apart)", "1.0 - done"
    else:
        want, fix = (
            "gamma times the env discount (0 on termination)",
            ("gamma * (1 - done)"),
        )
    raise ValueError(
        f"{function} takes discount_t as floats, {want}; got a bool discount_t "
        f"{list(discount_t.shape)} (done flags?); pass {fix}."
    )


def lambda_stream(
    function: str, lambda_t: Any, r_t: jax.Array, *, name: str = "lambda_t"
) -> Any:
    """`lambda_t`, once it is a scalar or one λ per step of `r_t` [T].

    Else a λ of another shape failed inside `jnp.broadcast_to` ("Cannot
    broadcast to shape with fewer dimensions") naming neither argument.

    Args:
      function: the estimator's name, for the message.
      lambda_t: its λ argument: a scalar, an array or a (nested) list.
      r_t: its rewards, already checked as one stream [T].
      name: the λ argument's name in `function` (`vtrace`'s is `lambda_`).

    Returns:
      `lambda_t`, a list converted to an array (as the streams are; the
      dtype promotion could not read a list), anything else unchanged.

    Raises:
      ValueError: (one line) naming both shapes and the fix.

    """
    if isinstance(lambda_t, list | tuple):
        lambda_t = jnp.asarray(lambda_t)
    shape = jnp.shape(lambda_t)
    if shape in ((), r_t.shape):
        return lambda_t
    raise ValueError(
        f"{function} takes {name} as a scalar or one stream [T] like r_t; got "
        f"{name} {list(shape)}, r_t {list(r_t.shape)}; pass a scalar λ or "
        f"one per step, of shape {list(r_t.shape)}."
    )
