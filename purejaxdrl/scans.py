"""Loops over time steps, compiled for the platform they run on.

A step of an RL loop (an environment step, a recurrent core's step, one step
of a return's recursion) is a few small kernels. On a CPU a loop iteration
costs little, and a rolled loop compiles fastest and vectorises best. On a
GPU each iteration costs kernel launches and loop overhead that the step's
arithmetic cannot hide, so there loops run several steps an iteration:
`ACCELERATOR_UNROLL` for steps with matmuls (the rollout, recurrent cores:
see `networks.core_scan`'s docstring for the measurements), more for the
return recursions' one multiply-add per stream (`RECURSION_UNROLL`).
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp

from purejaxdrl.types import PyTree

ACCELERATOR_UNROLL = 4  # steps per loop iteration off CPU (see above)
# GAE, λ-returns and V-trace over 128 steps: 8 iterations instead of 128. On
# an H200 (compiled without one, `scripts/hlo_kernels.py --target h200`) the
# rolled loop of CartPole PPO's GAE was 3 separate launches per step, 384 per
# update; unrolled 16, 32.
RECURSION_UNROLL = 16


def platform_scan(
    step: Callable[[PyTree, PyTree], tuple[PyTree, PyTree]],
    init: PyTree,
    xs: PyTree,
    *,
    reverse: bool = False,
    prefetch: bool = False,
    unroll: int = ACCELERATOR_UNROLL,
) -> tuple[PyTree, PyTree]:
    """`lax.scan(step, init, xs)`, unrolled `unroll` steps an iteration off CPU.

    `lax.platform_dependent` picks the branch when the program is lowered, so
    a CPU program holds only the rolled loop (and its numbers are unchanged).
    Unrolled, the same operations run in the same order; only their fusion,
    and so the last bit of rounding, may differ.
    With `prefetch`, the CPU's loop is `prefetch_scan`: for steps that emit
    little besides their state (a step that also saves its gates for a
    backward pass is faster without: its fusions are already split).
    """

    def cpu(c: PyTree, x: PyTree) -> tuple[PyTree, PyTree]:
        if prefetch:
            return prefetch_scan(step, c, x, reverse=reverse)
        return jax.lax.scan(step, c, x, reverse=reverse)

    def accelerator(c: PyTree, x: PyTree) -> tuple[PyTree, PyTree]:
        return jax.lax.scan(step, c, x, reverse=reverse, unroll=unroll)

    return jax.lax.platform_dependent(init, xs, cpu=cpu, default=accelerator)


def prefetch_scan(
    step: Callable[[PyTree, PyTree], tuple[PyTree, PyTree]],
    init: PyTree,
    xs: PyTree,
    *,
    reverse: bool = False,
) -> tuple[PyTree, PyTree]:
    """`lax.scan(step, init, xs)` whose step reads its inputs from the carry.

    Each iteration runs `step` on the slice of `xs` that the iteration before
    fetched, then fetches the next. XLA:CPU fuses a scan's slice of `xs` (a
    dynamic slice) into the step's elementwise fusions, and emits a fusion
    holding one without vectorised transcendentals: a GRU step for 4
    sequences of 64 took 3.7 µs, and 1.3 µs with its inputs in the carry.
    The results are bit-identical to `lax.scan`'s.
    """
    length = jax.tree.leaves(xs)[0].shape[0]

    def at(t: jax.Array) -> PyTree:
        t = jnp.clip(t, 0, length - 1)  # the last iteration's fetch goes unused
        return jax.tree.map(lambda a: jax.lax.dynamic_index_in_dim(a, t, 0, False), xs)

    def body(carry: tuple, t: jax.Array) -> tuple[tuple, PyTree]:
        c, x_t = carry
        c, y = step(c, x_t)
        return (c, at(t - 1 if reverse else t + 1)), y

    first = at(jnp.asarray(length - 1 if reverse else 0))
    (final, _), ys = jax.lax.scan(
        body, (init, first), jnp.arange(length), reverse=reverse
    )
    return final, ys
