"""Device-resident replay buffers: pure init / add / sample functions.

Each buffer's state is a pytree whose every leaf splits over devices along its
first axis, so the runner keeps one shard per device on the `data` axis (see
`ring.RingState`). `base` has the Buffer record every buffer returns and what
`sample` yields. `ring` is the FIFO ring of transitions sampled uniformly
(`make_uniform_buffer`), `prioritised` adds proportional prioritisation over
an exact sum-tree (`sum_tree`: 16-ary, float32), `sequence` stores whole
time-major trajectories. `env_shards` keeps a shard per environment, so what
is drawn does not depend on the number of devices. `item_shapes` checks, at
trace time, that `add` is given `init`'s example with a batch axis.
"""

from purejaxdrl.replay.base import Buffer, Sample, device_key
from purejaxdrl.replay.prioritised import (
    PrioritisedState,
    importance_weights,
    make_prioritised_buffer,
)
from purejaxdrl.replay.ring import RingState, make_uniform_buffer
from purejaxdrl.replay.sequence import make_sequence_buffer

__all__ = [
    "Buffer",
    "PrioritisedState",
    "RingState",
    "Sample",
    "device_key",
    "importance_weights",
    "make_prioritised_buffer",
    "make_sequence_buffer",
    "make_uniform_buffer",
]
