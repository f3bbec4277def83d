"""What many tests share: small configs, a few trained updates, flat parameters."""

import contextlib
import dataclasses
import functools
import importlib.util
import itertools
import os
import pathlib
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

import purejaxdrl as pjd
from purejaxdrl.cli.process_config import check_port_free
from purejaxdrl.networks import Network
from purejaxdrl.parallel import make_mesh


def tiny_config(overrides: dict[str, Any], base: pjd.TrainConfig | None = None):
    """`base` (default: TrainConfig()) with `overrides` (nested dicts)."""
    return pjd.apply_overrides(base or pjd.TrainConfig(), overrides)


class Trained(NamedTuple):
    """A few updates of a run: its experiment, state and metrics (on the host)."""

    exp: Any
    state: Any
    metrics: Any
    chunk: Any


_TRAINED: dict[tuple[str, int, int, bool], Trained] = {}


def trained(
    config: pjd.TrainConfig, num_devices: int, updates: int, *, host: bool = True
) -> Trained:
    """`updates` updates of `config` on `num_devices` devices, from key 0.

    Computed once per test session for each (config, devices, updates, host):
    tests that read the same small run share it. `host=False` keeps the state
    and metrics on the devices, sharded (never pass them to a chunk, which
    would donate them).
    """
    key = (repr(config), num_devices, updates, host)
    if key not in _TRAINED:
        exp = pjd.training.make_experiment(config, make_mesh(num_devices))
        chunk = exp.runner.chunk(updates)
        state, metrics = chunk(exp.runner.init(jax.random.key(0)))
        if host:
            state, metrics = jax.device_get((state, metrics))
        _TRAINED[key] = Trained(exp, state, metrics, chunk)
    return _TRAINED[key]


def flat(tree: Any) -> np.ndarray:
    """A pytree's leaves as one float vector, on the host."""
    return np.asarray(ravel_pytree(jax.device_get(tree))[0])


def third_update_steps_at_four_fifths(
    update: Callable[[Any], tuple[Any, Callable]],
    annealed: Any,
    trajectory: Callable[[int], Any],
) -> dict:
    """Checks a replay learner's annealed rate: 3 updates of `annealed` (a config
    with `anneal_lr` whose replay fills in the first and whose rate decays over
    the 5 that learn), then the third's step against a constant-rate learner at
    0.8 of the rate from the same state. `update(config)` makes `(agent, jitted
    update)`; `trajectory(t)` is update t's data. Returns the third's metrics."""
    agent, step_annealed = update(annealed)
    state = agent.init(jax.random.key(0))
    for t in range(3):  # updates 0 (filling the replay), 1 and 2 (learning)
        before, traj = state, trajectory(t)
        state, metrics = step_annealed(before, traj, jax.random.key(t))
    rate = 0.8 * annealed.learning_rate
    _, constant = update(
        dataclasses.replace(annealed, anneal_lr=False, learning_rate=rate)
    )
    fixed, _ = constant(before, traj, jax.random.key(2))
    step = flat(state.params) - flat(before.params)
    want = flat(fixed.params) - flat(before.params)
    assert np.abs(want).max() > 1e-4
    np.testing.assert_allclose(step, want, rtol=1e-4, atol=1e-7)
    return metrics


def reproduce_script() -> ModuleType:
    """`scripts/reproduce.py` as a module: the score rows and the tables it writes."""
    scripts = pathlib.Path(__file__).resolve().parents[1] / "scripts"
    spec = importlib.util.spec_from_file_location("reproduce", scripts / "reproduce.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(scripts))  # as when run: its sibling `harness` imports
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(scripts))
    return module


def cli_command(*args: str, cache: pathlib.Path) -> list[str]:
    """`purejaxdrl ARGS` in a fresh Python, compiling into the cache at `cache`."""
    return [
        sys.executable,
        "-m",
        "purejaxdrl.cli",
        *args,
        "--compile-cache",
        str(cache),
    ]


def count_traces(monkeypatch: Any, cls: type, names: tuple[str, ...]) -> Counter:
    """Counts the Python calls of `cls`'s methods `names` (traces, under jit)."""
    calls: Counter = Counter()
    for name in names:
        original = getattr(cls, name)

        def counted(self, *args, _name=name, _original=original, **kwargs):
            calls[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, counted)
    return calls


def trace_reset_and_steps(env: Any, steps: int = 2) -> None:
    """Traces (compiles nothing) a reset of 2 environments and `steps` steps.

    Every batched step of an auto-resetting env also computes a reset.
    """
    params = env.default_params
    spec = env.action_spec(params)
    discrete = isinstance(spec, pjd.env.Discrete)
    shape, dtype = ((2,), "int32") if discrete else ((2, *spec.shape), "float32")
    keys = jax.random.split(jax.random.key(0), 2)

    def program(keys: jax.Array) -> Any:
        state, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        for _ in range(steps):
            actions = jax.numpy.zeros(shape, dtype)
            state, _ = env.step_batch(keys, state, actions, params)
        return state

    jax.make_jaxpr(program)(keys)


def env_of_this_process_devices() -> dict[str, str]:
    """`os.environ` for a process that sees this process's CPU devices (8).

    JAX's compilation cache keys a program by the devices of the process that
    compiles it: a CLI process started with this environment finds the
    programs this process compiled into the session's cache (and the reverse)
    instead of compiling its own.
    """
    return {**os.environ, "JAX_NUM_CPU_DEVICES": str(jax.local_device_count())}


@functools.cache
def linear_q_network(dims: int, actions: int) -> Network:
    """Q(s) = s W + b: small enough to follow every parameter (and no core,
    which R2D2 runs with an empty state). One object per size, so the
    programs built on it are traced once."""

    def init(key, obs):
        del obs
        return {"w": jax.random.normal(key, (dims, actions)), "b": jnp.zeros(actions)}

    def apply(params, obs):
        q = obs @ params["w"] + params["b"]
        return q, q.max(axis=-1)

    return Network(init, apply, None)


def randomised(params: Any, key: jax.Array) -> Any:
    """`params` with every leaf drawn N(0, 0.7^2): biases (initialised to 0)
    count too, so a dropped or misplaced term shows."""
    leaves, tree = jax.tree.flatten(params)
    keys = jax.random.split(key, len(leaves))
    drawn = [
        0.7 * jax.random.normal(k, x.shape) for k, x in zip(keys, leaves, strict=True)
    ]
    return jax.tree.unflatten(tree, drawn)


def bare_result(**fields: Any) -> pjd.TrainResult:
    """A TrainResult of no training: zeros and empties but for `fields`."""
    blank = dict(
        state=None,
        mean_return=0.0,
        env_steps=0,
        compile_seconds=0.0,
        train_seconds=0.0,
        steps_per_second=0.0,
        num_devices=1,
        history=[],
        run_dir=None,
    )
    return pjd.TrainResult(**{**blank, **fields})


def cartpole_run(root: pathlib.Path, total_steps: int) -> pathlib.Path:
    """The folder of a tiny cartpole run written under `root` (one device)."""
    tiny = {"num_envs": 4, "unroll_length": 8, "total_steps": total_steps}
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {**tiny, "num_logs": 1, "devices": 1, "run_dir": str(root)},
    )
    return pathlib.Path(pjd.train(config, write_files=True, console=False).run_dir)


def free_port() -> int:
    """A port for a test's coordinator that no other test of the session gets.

    A port the kernel calls free (a bind to port 0) could be taken in the
    seconds before the coordinator binds it (its process imports JAX first):
    by the other xdist worker's ask, or as an outgoing connection's ephemeral
    port. Each worker hands out ports of its own range, below Linux's
    ephemeral ones (32768 up), in turn, skipping those in use now.
    """
    return next(_PORTS)


def _ports() -> Iterator[int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    base = 20_000 + 1000 * (int(worker or 0) % 12)
    start = random.randrange(1000)  # another session on this machine: elsewhere
    for i in itertools.count():
        port = base + (start + i) % 1000
        try:
            check_port_free(f"127.0.0.1:{port}")
        except ValueError:
            continue
        yield port


_PORTS = _ports()


# argv: the module, the signal, the module's function that sends it (once,
# from a gc callback: where Python dropped a KeyboardInterrupt), the run
# folder, then the command's words.
_SIGNALLED_COMMAND = """
import gc, importlib, signal, sys
from purejaxdrl import cli

module, name, where, runs, *argv = sys.argv[1:]
module = importlib.import_module(module)
real = getattr(module, where)

def hook(phase, info):
    if phase == "start":
        gc.callbacks.remove(hook)
        signal.raise_signal(getattr(signal, name))
        for _ in range(3):  # Python runs a handler at a loop's jump
            pass

def sending(*args, **kwargs):
    setattr(module, where, real)
    gc.callbacks.append(hook)
    gc.collect()
    return real(*args, **kwargs)

setattr(module, where, sending)
sys.exit(cli.main([*argv, "--num-envs", "4", "--total-steps", "1024",
                   "--quiet", "--no-compile-cache", "--run-dir", runs]))
"""


def assert_signal_stops_the_command_untouched(
    runs: pathlib.Path, module: str, name: str, where: str, argv: list[str]
) -> None:
    """`cli.main(argv)`, sent signal `name` as `module.where` is first called,
    stops before its first update: exit 130, its two lines, no folder."""
    done = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_COMMAND, module, name, where, str(runs)]
        + argv,
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=240,
    )
    err = done.stderr.splitlines()
    assert done.returncode == 130, done.stderr
    assert err[-1] == "interrupted: stopped before the first update; nothing was saved"
    assert err[-2].startswith(f"purejaxdrl: {name} received: stopping before the")
    assert len(err) == 2, err
    assert not runs.exists()


def cli_error_line(argv: list[str], capsys: Any) -> str:
    """The one error line of `purejaxdrl ARGV`, checked: exit status 2, one
    line on stderr, starting `purejaxdrl: error:`."""
    from purejaxdrl import cli

    status = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("purejaxdrl: error:"), err
    return lines[0]


@contextlib.contextmanager
def env_registrations_undone() -> Iterator[None]:
    """A test's `pjd.env.register` calls (and deletions) undone after it.

    The registry's dicts are restored in place rather than swapped for
    copies: built-in names a test makes load (once a process, under
    `functools.cache`) land in the real registry and stay for later tests.
    gymnax's names load first, so that one a test replaces is restored.
    """
    from purejaxdrl.env import registry

    registry._register_gymnax()
    factories, users = dict(registry._FACTORIES), dict(registry._USERS)
    try:
        yield
    finally:
        for name in set(registry._USERS) | set(users):
            if name in users and name in factories:
                registry._USERS[name] = users[name]
                registry._FACTORIES[name] = factories[name]
                continue
            registry._USERS.pop(name, None)
            if name in factories:  # a built-in it replaced
                registry._FACTORIES[name] = factories[name]
            else:  # its own, or a name already half gone before the test
                registry._FACTORIES.pop(name, None)


def guide_snippet(guide: str, call: str, **names: Any) -> Any:
    """Evaluates the inline `call(...)` snippet of docs/guide/`guide`.md.

    With `pjd` and `names` bound (`result=...`), as a reader would run it.
    """
    text = (pathlib.Path(__file__).parents[1] / "docs" / "guide" / guide).read_text()
    (snippet,) = re.findall(rf"`({re.escape(call)}\([^`]*\))`", text)
    return eval(snippet, {"pjd": pjd, **names})
