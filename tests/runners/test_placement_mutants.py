"""Where a host-env run's actors, learner and pools go, checked without training.

Gaps that mutation testing found: the device list's order, `devices` 0 and a
count below the local one, other processes' learner devices, the seeds of the
pools of every process, thread and restart, and the pools' sizes and options.
Several processes are simulated: fake devices with a process index, and
`jax.make_mesh` recording the devices it is given.
"""

import types
import warnings

import jax
import numpy as np
import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.runners import placement
from purejaxdrl.runners.placement import HostConfig, host_env_seed, place
from purejaxdrl.setup_warnings import SetupWarning


def _ids(devices) -> list[int]:
    return [d.id for d in np.ravel(devices)]


def test_one_device_named_for_both_is_shared():
    one = jax.local_devices()[:1]
    config = HostConfig(actor_devices=1, learner_devices=1)
    assert placement.split_devices(one, config) == (one, one)


def test_the_learner_takes_every_device_the_actors_leave():
    devices = jax.local_devices()[:5]
    split = placement.split_devices(devices, HostConfig(actor_devices=2))
    assert split == (devices[:2], devices[2:])


def test_the_learner_takes_the_devices_after_the_actors_by_id(monkeypatch):
    shuffled = [jax.devices()[i] for i in (5, 2, 7, 0, 3, 6, 1, 4)]
    monkeypatch.setattr(jax, "devices", lambda: shuffled)
    actors, mesh = place(HostConfig())
    assert _ids(actors) == [0] and _ids(mesh.devices) == list(range(1, 8))
    for every in (0, None):  # 0 and None: all of them
        actors, mesh = place(HostConfig(), every)
        assert _ids(actors) == [0] and _ids(mesh.devices) == list(range(1, 8))
    actors, mesh = place(HostConfig(), 4)  # the first 4 only
    assert _ids(actors) == [0] and _ids(mesh.devices) == [1, 2, 3]


def _as_process(monkeypatch, index: int, counts: list[int]) -> list:
    """Fake devices of len(counts) processes; this is process `index`."""
    devices, n = [], 0
    for p, count in enumerate(counts):
        for _ in range(count):
            devices.append(types.SimpleNamespace(id=n, process_index=p))
            n += 1
    monkeypatch.setattr(jax, "devices", lambda: devices[::-1])  # any order
    monkeypatch.setattr(jax, "process_count", lambda: len(counts))
    monkeypatch.setattr(jax, "process_index", lambda: index)
    monkeypatch.setattr(jax, "make_mesh", lambda shape, names, **kw: kw["devices"])
    return devices


@pytest.mark.parametrize("index", [0, 1])
def test_each_process_acts_on_its_own_device_and_learns_on_all(monkeypatch, index):
    # Process 0 has 4 devices, process 1 has 3: each splits 3 (the fewest).
    _as_process(monkeypatch, index, [4, 3])
    with warnings.catch_warnings():  # process 0 says each trains on 3
        warnings.simplefilter("ignore", SetupWarning)
        actors, learners = place(HostConfig())
    assert _ids(actors) == [[0], [4]][index]
    assert _ids(learners) == [1, 2, 5, 6]  # process by process
    actors, learners = place(HostConfig(actor_devices=2, learner_devices=1), 3)
    assert _ids(actors) == [[0, 1], [4, 5]][index]
    assert _ids(learners) == [2, 6]


def test_pool_seeds_differ_by_process_thread_and_restart(monkeypatch):
    seeds = {}
    for process in range(3):
        monkeypatch.setattr(jax, "process_index", lambda p=process: p)
        for start in range(4):
            for thread in range(4):
                seeds[process, start, thread] = host_env_seed(7, start, thread)
    assert len(set(seeds.values())) == len(seeds)
    # EnvPool seeds a pool's environments seed + i: all must fit an int32.
    monkeypatch.setattr(jax, "process_index", lambda: 0)
    drawn = [host_env_seed(seed, 0, 0) for seed in range(512)]
    assert min(drawn) >= 0 and max(drawn) < 2**30


def _pools(
    monkeypatch, env_id: str, start: int = 0, options=None, scan_unroll=0, **host
):
    """What `make_host_envs` makes for 2 actor threads of process 0 of 2."""
    made = []

    def make_host_env(env_id, num_envs, seed, /, **options):
        made.append((num_envs, seed, options))
        return env_id

    monkeypatch.setattr(placement, "make_host_env", make_host_env)
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    config = types.SimpleNamespace(
        env=types.SimpleNamespace(id=env_id, imports=(), options=options or {}),
        host=HostConfig(**host),
        seed=3,
        num_envs=16,
        scan_unroll=scan_unroll,
    )
    assert placement.make_host_envs(config, 2, start) == [env_id] * 2
    return made


def test_each_pool_has_its_share_of_the_runs_environments(monkeypatch):
    # 16 environments over 2 processes of 2 actor threads: 4 per pool.
    made = _pools(monkeypatch, "envpool:CartPole-v1", env_threads=3)
    assert [(n, o) for n, _, o in made] == [(4, {"num_threads": 3})] * 2
    made = _pools(monkeypatch, "gymnasium:CartPole-v1")
    assert [(n, o) for n, _, o in made] == [(4, {})] * 2
    seeds = [s for start in (0, 1) for _, s, _ in _pools(monkeypatch, "e", start)]
    assert len(set(seeds)) == 4  # restarts draw new seeds for every thread


def test_a_deterministic_run_takes_whole_synchronous_pools(monkeypatch):
    whole = {"batch_size": 4}
    made = _pools(monkeypatch, "envpool:Pong-v5", options=whole, deterministic=True)
    assert [o for _, _, o in made] == [whole] * 2
    with pytest.raises(ConfigError) as refused:
        _pools(monkeypatch, "e", options={"batch_size": 3}, deterministic=True)
    # Both fixes in both spellings (hr21 #2: the flag's only, and no option's).
    assert str(refused.value) == (
        "env.options batch_size=3 makes each actor's pool of 4 environments "
        "asynchronous, so its batches depend on thread timing, and "
        "host.deterministic=true repeats runs exactly only with synchronous "
        "pools; drop the option or pass --env.option batch_size=4 "
        "(env.options={'batch_size': 4} in Python), or pass --host.deterministic "
        "false (host.deterministic=False in Python)."
    )


@pytest.mark.parametrize("env_id", ["gymnasium:CartPole-v1", "gymnasium:m:Corridor-v0"])
def test_env_threads_on_a_gymnasium_id_is_refused_naming_its_async_mode(
    monkeypatch, env_id
):
    # It sets EnvPool's threads only: silently ignored, it read as Gymnasium's.
    with pytest.raises(ConfigError) as refused:
        _pools(monkeypatch, env_id, env_threads=4)
    line = str(refused.value)
    assert "\n" not in line
    assert (
        f"host.env_threads=4 sets EnvPool's worker threads, and env.id={env_id!r}"
        in line
    )
    assert "--env.option vectorization_mode=async" in line
    assert "drop --host.env-threads (or pass 0)" in line
    assert _pools(monkeypatch, env_id, env_threads=0)  # the default makes pools


def test_scan_unroll_on_a_host_run_is_refused(monkeypatch):
    # The host-env runner steps from Python: no compiled rollout loop to unroll.
    for env_id in ("envpool:CartPole-v1", "gymnasium:CartPole-v1"):
        with pytest.raises(ConfigError, match="scan_unroll=4 unrolls") as refused:
            _pools(monkeypatch, env_id, scan_unroll=4)
        assert f"env.id={env_id!r} is stepped from Python" in str(refused.value)
        assert "drop --scan-unroll (or pass 0)" in str(refused.value)


def test_a_refused_knob_makes_no_pool(monkeypatch):
    made = []
    monkeypatch.setattr(placement, "make_host_env", lambda *a, **k: made.append(a))
    config = types.SimpleNamespace(
        env=types.SimpleNamespace(id="gymnasium:CartPole-v1", imports=(), options={}),
        host=HostConfig(env_threads=2),
        seed=0,
        num_envs=4,
        scan_unroll=0,
    )
    with pytest.raises(ConfigError):
        placement.make_host_envs(config, 1, 0)
    assert made == []
