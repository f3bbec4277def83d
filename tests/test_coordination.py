"""Steps the processes take together, seen from one process.

Across processes with unequal device counts: tests/training/test_multiprocess.py
(its unequal-hosts test) and tests/runners/test_host_multiprocess.py.
"""

import jax
import numpy as np
from absl import flags
from orbax.checkpoint._src.multihost import multihost

from purejaxdrl import coordination


def test_one_process_needs_no_coordination_service():
    assert coordination.broadcast_text("run_dir", "/runs/a") == "/runs/a"
    coordination.barrier("saved")  # returns at once
    rows = coordination.gather_rows(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(rows, np.float32([[1.0, 2.0]]))


def test_orbax_reads_its_distributed_barrier_flag_as_set(monkeypatch):
    # absl raises on a flag read before parsing, and orbax then falls back to
    # its device barriers: the flag must read True without parsing argv.
    flag = flags.FLAGS[multihost.EXPERIMENTAL_ORBAX_USE_DISTRIBUTED_BARRIER.name]
    saved = flag.value, flag.present, flag.using_default_value
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    try:
        coordination.orbax_barriers_without_devices()
        assert multihost.EXPERIMENTAL_ORBAX_USE_DISTRIBUTED_BARRIER.value is True
    finally:
        flag.value, flag.present, flag.using_default_value = saved
