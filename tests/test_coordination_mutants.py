"""The coordination helpers and the run agreement, across simulated processes.

Gaps that mutation testing found: the multi-process paths ran only in the
loopback tests. Here each process is a thread, with its own process index and
its own count of names used, over a stand-in for `jax.distributed`'s key-value
store that, like the real one, sets a key once.
"""

import collections
import threading
import types

import jax
import numpy as np
import pytest
from absl import flags
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from orbax.checkpoint._src.multihost import multihost

import purejaxdrl as pjd
from purejaxdrl import coordination
from purejaxdrl.cli import run_agreement
from purejaxdrl.cli.args import UsageError
from purejaxdrl.training.config import TrainConfig

# A get or barrier the stand-in gives up on (the real: its timeout); only a
# failing test waits it out, so long enough for a thread starved by a loaded
# machine.
_WAIT_S = 30.0


class _Store:
    """A dict-backed stand-in for the coordination service's client."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.values: dict[str, str] = {}
        self.arrivals: collections.Counter[str] = collections.Counter()
        self.timeouts_ms: list[int] = []
        self.changed = threading.Condition()

    def key_value_set(self, key: str, value: str) -> None:
        with self.changed:
            if key in self.values:
                raise RuntimeError(f"ALREADY_EXISTS: {key}")
            self.values[key] = value
            self.changed.notify_all()

    def blocking_key_value_get(self, key: str, timeout_ms: int) -> str:
        self.timeouts_ms.append(timeout_ms)
        with self.changed:
            if not self.changed.wait_for(lambda: key in self.values, _WAIT_S):
                raise TimeoutError(f"DEADLINE_EXCEEDED: {key}")
            return self.values[key]

    def wait_at_barrier(self, name: str, timeout_ms: int) -> None:
        self.timeouts_ms.append(timeout_ms)
        with self.changed:
            # Once passed, a barrier may be used again (as JAX 0.10's).
            everyone = (self.arrivals[name] // self.processes + 1) * self.processes
            self.arrivals[name] += 1
            self.changed.notify_all()
            full = lambda: self.arrivals[name] >= everyone  # noqa: E731
            if not self.changed.wait_for(full, _WAIT_S):
                raise TimeoutError(f"DEADLINE_EXCEEDED: barrier {name}")


class _PerProcess(threading.local):
    index = 0
    uses: collections.Counter

    def __init__(self) -> None:
        self.uses = collections.Counter()


class _Uses:
    """`coordination._uses`, one counter per simulated process."""

    def __init__(self, local: _PerProcess) -> None:
        self.local = local

    def __getitem__(self, name: str) -> int:
        return self.local.uses[name]

    def __setitem__(self, name: str, value: int) -> None:
        self.local.uses[name] = value


def _as_processes(monkeypatch, count: int, work) -> tuple[list, _Store]:
    """`work(index)` run by `count` simulated processes; their results."""
    store, local = _Store(count), _PerProcess()
    monkeypatch.setattr(coordination, "client", lambda: store)
    monkeypatch.setattr(coordination, "_uses", _Uses(local))
    monkeypatch.setattr(jax, "process_count", lambda: count)
    monkeypatch.setattr(jax, "process_index", lambda: local.index)
    results, errors = [None] * count, []

    def run(index: int) -> None:
        local.index = index
        try:
            results[index] = work(index)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results, store


def test_every_process_gets_process_0s_text_each_time(monkeypatch):
    def work(index: int) -> list[str]:
        mine = [f"/runs/{name}" if index == 0 else None for name in "ab"]
        return [coordination.broadcast_text("run_dir", text) for text in mine]

    results, store = _as_processes(monkeypatch, 3, work)
    assert results == [["/runs/a", "/runs/b"]] * 3
    # Milliseconds: longer than a checkpoint's save (10 minutes at least).
    assert min(store.timeouts_ms) >= 600_000


def test_every_process_gets_every_text_in_process_order_each_time(monkeypatch):
    def work(index: int) -> list[list[str]]:
        first = coordination.gather_text("config", "abc"[index], timeout=5)
        return [first, coordination.gather_text("config", "xyz"[index], timeout=5)]

    results, store = _as_processes(monkeypatch, 3, work)
    assert results == [[["a", "b", "c"], ["x", "y", "z"]]] * 3
    assert set(store.timeouts_ms) == {5000}
    # Each call waits at one barrier, all three processes at the same one.
    assert sorted(store.arrivals.values()) == [3, 3]


def test_barriers_of_one_name_are_passed_one_after_another(monkeypatch):
    def work(index: int) -> None:
        coordination.barrier("saved")
        coordination.barrier("saved")

    _, store = _as_processes(monkeypatch, 2, work)
    assert sum(store.arrivals.values()) == 4
    assert min(store.timeouts_ms) >= 600_000


def test_a_single_process_gathers_its_own_text_and_float32_rows(monkeypatch):
    monkeypatch.setattr(coordination, "client", lambda: None)
    assert coordination.gather_text("config", "mine") == ["mine"]
    rows = coordination.gather_rows(np.array([1, 2]))
    assert rows.dtype == np.float32 and rows.shape == (1, 2)


def test_the_process_mesh_takes_each_processs_first_device(monkeypatch):
    devices = [
        types.SimpleNamespace(id=i, process_index=p)
        for i, p in enumerate([0, 0, 1, 1, 1, 2])
    ]
    monkeypatch.setattr(jax, "devices", lambda: devices)
    monkeypatch.setattr(coordination, "Mesh", lambda d, names: (d.tolist(), names))
    firsts, names = coordination._process_mesh()
    assert [d.id for d in firsts] == [0, 2, 5] and names == ("process",)


def test_the_gathered_rows_are_whole_on_every_device():
    mesh = Mesh(np.array(jax.devices()[:4]), ("process",))
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)
    sharded = jax.device_put(rows, NamedSharding(mesh, P("process")))
    out = coordination._replicated(mesh)(sharded)
    for shard in out.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), rows)


def test_a_single_process_leaves_orbaxs_barrier_flag_alone():
    flag = flags.FLAGS[multihost.EXPERIMENTAL_ORBAX_USE_DISTRIBUTED_BARRIER.name]
    saved = flag.value, flag.present, flag.using_default_value
    coordination.orbax_barriers_without_devices()
    assert (flag.value, flag.present, flag.using_default_value) == saved


def _agree_as_process_1(monkeypatch, zero: tuple, mine: tuple, left=None) -> None:
    """`agree_on_run(*mine)` as process 1, process 0 having resolved `zero`.

    `left` gets True each time the processes are told to leave together.
    """
    texts, left = [], [] if left is None else left

    def gather_text(name: str, text: str) -> list[str]:
        texts.append(text)
        return texts if len(texts) == 2 else [text]

    monkeypatch.setattr(run_agreement, "gather_text", gather_text)
    monkeypatch.setattr(run_agreement, "leave_together", lambda: left.append(True))
    run_agreement.agree_on_run(*zero)  # records process 0's text
    run_agreement.agree_on_run(*mine)


def _args(resume=None, no_files=False):
    return types.SimpleNamespace(no_files=no_files, override=False, resume=resume)


def test_processes_writing_to_other_run_dirs_agree(monkeypatch):
    zero = (_args(), TrainConfig(run_dir="/shared/runs"))
    mine = (_args(), TrainConfig(run_dir="/mnt/runs"))
    left = []
    _agree_as_process_1(monkeypatch, zero, mine, left)
    assert left == []


def test_a_disagreement_makes_every_process_leave_together(monkeypatch):
    zero, mine = (_args(), TrainConfig()), (_args(no_files=True), TrainConfig())
    left = []
    with pytest.raises(UsageError, match="differs .*: --no-files True vs False;"):
        _agree_as_process_1(monkeypatch, zero, mine, left)
    assert left == [True]  # before the error: none exits before the others


@pytest.mark.parametrize("fresh", [0, 1])
def test_a_fresh_process_and_a_resumed_one_are_named_as_they_are(
    monkeypatch, tmp_path, fresh
):
    runs = [(_args(), TrainConfig()), (_args(str(tmp_path)), TrainConfig())]
    zero, mine = runs if fresh == 0 else runs[::-1]
    what = ["starts a new run", f"resumes {tmp_path}"]
    said = f"process 1 {what[1 - fresh]} but process 0 {what[fresh]}; "
    with pytest.raises(UsageError) as e:
        _agree_as_process_1(monkeypatch, zero, mine)
    assert str(e.value).startswith(said), str(e.value)


def test_a_setting_only_one_process_has_is_a_disagreement():
    # A user's algorithm registered in process 1 alone adds its section there.
    common = {"seed": 0}
    runs = [
        {"config": common, "resume": None},
        {"config": {**common, "mine.lr": 0.1}, "resume": None},
    ]
    assert run_agreement._disagreement(runs) == (
        "process 1's config differs from process 0's: mine.lr 0.1 vs (none); "
        "run every process with the same flags."
    )
    assert run_agreement._disagreement(runs[::-1]).startswith(
        "process 1's config differs from process 0's: mine.lr (none) vs 0.1;"
    )


def test_a_different_algo_is_named_not_a_section_the_other_never_trains(
    monkeypatch,
):
    # Each process loads its own algorithm's preset, so the other algorithm's
    # section differs too (0.01 is A2C's default, never given to process 0):
    # the line names what was typed, `algo`, not the first field by name.
    ppo = pjd.apply_overrides(TrainConfig(algo="ppo"), {"a2c.entropy_cost": 0.01})
    a2c = pjd.apply_overrides(TrainConfig(algo="a2c"), {"a2c.entropy_cost": 0.001})
    with pytest.raises(UsageError) as e:
        _agree_as_process_1(monkeypatch, (_args(), ppo), (_args(), a2c))
    assert str(e.value).startswith(
        "process 1's config differs from process 0's: algo a2c vs ppo;"
    ), str(e.value)
