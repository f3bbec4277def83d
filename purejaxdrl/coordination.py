"""Talking across a run's processes whatever devices each host has.

JAX's `multihost_utils` helpers (`broadcast_one_to_all`, `process_allgather`,
`sync_global_devices`, and orbax's barriers built on them) reshape
`jax.devices()` to (processes, local devices) and so raise when hosts have
unequal device counts, which a run allows (each trains on the fewest). These
use `jax.distributed`'s coordination service instead (a key-value store and
barriers, no device at all), or a mesh of one device per process.

Each is collective: every process calls it, in the same order.
"""

import collections
import functools
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

# Longer than any step the processes wait on each other for (a checkpoint's
# save, compiling); a process that dies is caught sooner by the CLI's
# watchdog (heartbeats), which ends the others with one line.
_TIMEOUT_S = 3600

# How often each name was used: a key can be set only once (and a name per
# call keeps barriers apart too), so each call takes the next (the processes
# call in the same order, so they agree).
_uses: collections.Counter[str] = collections.Counter()


def client() -> Any:
    """`jax.distributed`'s coordination client; None outside a multi-process run.

    Asking starts no backend (`jax.process_count()` would).
    """
    from jax._src import distributed  # not public: as orbax reads it

    return getattr(distributed.global_state, "client", None)


def _key(name: str) -> str:
    _uses[name] += 1
    return f"purejaxdrl/{name}/{_uses[name]}"


def broadcast_text(name: str, text: str | None) -> str:
    """Process 0's `text`, returned in every process (`text` of the others unused).

    Args:
      name: what is agreed on (a key in the coordination service's store).
      text: process 0's value; the others may pass None.

    """
    if jax.process_count() == 1:
        assert text is not None
        return text
    key = _key(name)
    if jax.process_index() == 0:
        assert text is not None
        client().key_value_set(key, text)
        return text
    return client().blocking_key_value_get(key, _TIMEOUT_S * 1000)


def gather_text(name: str, text: str, timeout: float = 600) -> list[str]:
    """Every process's `text`, by process index; [text] outside a multi-process run.

    Each process publishes `text` under `name` in the store and reads the
    others': every process gets the same list. None returns before all have
    read its text: a process that exits on a mismatch would otherwise leave
    a peer waiting for a key it never set.
    """
    store = client()
    if store is None:
        return [text]
    key, me, ms = _key(name), jax.process_index(), int(timeout * 1000)
    store.key_value_set(f"{key}/{me}", text)
    texts = [
        text if p == me else store.blocking_key_value_get(f"{key}/{p}", ms)
        for p in range(jax.process_count())
    ]
    store.wait_at_barrier(f"{key}/read", ms)
    return texts


def barrier(name: str) -> None:
    """Returns once every process has reached the barrier `name`."""
    if jax.process_count() > 1:
        client().wait_at_barrier(_key(name), _TIMEOUT_S * 1000)


def gather_rows(row: np.ndarray) -> np.ndarray:
    """Every process's `row`, float32 [processes, n], the same in every process.

    One collective over one device per process (a store round trip per
    process would be slower at every update of a host-env run).

    Args:
      row: this process's values, [n], n the same in every process.

    """
    row = np.asarray(row, np.float32)[None]
    if jax.process_count() == 1:
        return row
    mesh = _process_mesh()
    rows = jax.make_array_from_process_local_data(
        NamedSharding(mesh, P("process")), row
    )
    return np.asarray(_replicated(mesh)(rows))


def _process_mesh() -> Mesh:
    """A mesh of each process's first device (the global list's order)."""
    firsts: dict[int, jax.Device] = {}
    for device in jax.devices():  # the same order in every process
        firsts.setdefault(device.process_index, device)
    return Mesh(np.array(list(firsts.values())), ("process",))


@functools.cache
def _replicated(mesh: Mesh) -> Any:
    """The identity, its output on every device of `mesh` (an all-gather)."""
    return jax.jit(lambda x: x, out_shardings=NamedSharding(mesh, P()))


def orbax_barriers_without_devices() -> None:
    """Makes orbax's barriers use the coordination service (idempotent).

    orbax's default barrier is `sync_global_devices`; its absl flag
    `experimental_orbax_use_distributed_barrier` switches every barrier it
    holds (creating the folder, each save, each deletion) to the
    coordination service's. absl reads a flag only once parsed or marked
    present: this marks this one flag alone, so nothing else of the
    program's absl flags changes.
    """
    if jax.process_count() == 1:  # orbax holds no barrier then
        return
    from absl import flags
    from orbax.checkpoint._src.multihost import multihost  # defines the flag

    flag = flags.FLAGS[multihost.EXPERIMENTAL_ORBAX_USE_DISTRIBUTED_BARRIER.name]
    flag.value = True
    flag.present = max(flag.present, 1)
    flag.using_default_value = False
