"""Recurrent cores, LSTM, GRU and minGRU, split into an input projection and a step.

The equations, gate order and initialisers are flax's (`nn.OptimizedLSTMCell`:
Hochreiter & Schmidhuber, 1997, without peepholes or forget bias;
`nn.GRUCell`: Cho et al., 2014, with the reset gate applied to the recurrent
term, biased, as cuDNN and flax do). What differs is the arrangement: every
gate's input weights are one kernel, applied to a whole sequence at once before
the scan (`project`), and the scan's step (`step`) does one matmul with the
recurrent kernel. flax's GRUCell does six small matmuls per step: a CPU spends
more time launching them than computing them, and the recurrent learner runs
the step T times per minibatch, forward and backward. The step's equations
live once, in `core_scan.core_step`, beside their hand-written backward pass.
minGRU (`mingru.py`) has no recurrent kernel: its gates read the input alone,
so its whole step is elementwise and, off CPU, a sequence unrolls as a
parallel scan.
"""

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from purejaxdrl.networks.base import orthogonal
from purejaxdrl.networks.core_scan import core_step
from purejaxdrl.networks.mingru import mingru_step
from purejaxdrl.types import PyTree

# Gates per core: LSTM input, forget, cell, output; GRU reset, update, new;
# minGRU update and candidate.
_GATES = {"lstm": 4, "gru": 3, "mingru": 2}


def zero_state(core: str, size: int, batch: int) -> PyTree:
    """The zero state of `core`, float32 [batch, size]: (c, h) for lstm, else h."""
    zeros = jnp.zeros((batch, size), jnp.float32)
    return (zeros, zeros) if core == "lstm" else zeros


class Core(nn.Module):
    """An LSTM, GRU or minGRU core of `size` units.

    Attributes:
      kind: `lstm`, `gru` or `mingru`.
      size: H, the hidden size.

    """

    kind: str
    size: int

    def setup(self) -> None:
        width = _GATES[self.kind] * self.size
        self.input_kernel = nn.Dense(
            width, kernel_init=nn.initializers.lecun_normal(), name="input"
        )
        if self.kind == "mingru":
            return  # no recurrent weights
        # One orthogonal block per gate, as flax's cells initialise each gate's
        # recurrent weights separately.
        self.recurrent_kernel = self.param(
            "recurrent",
            _per_gate(orthogonal(), _GATES[self.kind]),
            (self.size, width),
        )
        if self.kind == "gru":
            # The new gate's recurrent bias, inside the reset gate's product.
            self.recurrent_bias = self.param(
                "recurrent_bias", nn.initializers.zeros, (self.size,)
            )

    def project(self, x: jax.Array) -> jax.Array:
        """The input terms of every gate, [..., G * H], for any batch of inputs."""
        return self.input_kernel(x)

    def step(
        self, state: PyTree, projected: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, jax.Array]:
        """One step of B sequences: (state [B], `project(x)` [B, G*H], reset [B]).

        The state is zeroed where `reset` before it is used. Returns the new
        state and the output h [B, H].
        """
        if self.kind == "mingru":
            return mingru_step(state, projected, reset)
        bias_n = self.recurrent_bias if self.kind == "gru" else jnp.zeros(())
        return core_step(
            self.kind, self.recurrent_kernel, bias_n, state, projected, reset
        )


Initializer = nn.initializers.Initializer


def _per_gate(init: Initializer, gates: int) -> Initializer:
    def per_gate(key: jax.Array, shape: tuple[int, int], dtype: Any = jnp.float32):
        rows, width = shape
        keys = jax.random.split(key, gates)
        blocks = [init(k, (rows, width // gates), dtype) for k in keys]
        return jnp.concatenate(blocks, axis=-1)

    return per_gate
