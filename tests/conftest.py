"""Test settings: 8 fake CPU devices, one shared compilation cache, fast compiles.

Tests that train on one device say `devices=1`; multi-device tests build meshes
over 1, 2, 4 or 8 of the fake devices.
"""

import atexit
import os
import shutil
import signal
import tempfile

# A launcher that ignores SIGINT (a non-interactive shell's `pytest &`) passes
# SIG_IGN on, and Python then installs no KeyboardInterrupt handler: the tests
# of what Ctrl-C does need the handler a terminal's Python starts with.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The suite is bound by XLA compilation, not by running what it compiles: most
# tests compile a few programs and run them a few times. Programs without options
# of their own compile at LLVM's -O0 with XLA:CPU's older loop emitters (a third
# faster than its MLIR fusion emitters); training and evaluation programs compile
# in `_platform.compiler_options`' fast mode (a quarter faster to compile, 1.7x
# slower to run); tests marked `trains` (learning tests) compile them optimized.
# Set before JAX starts a backend; inherited by the processes tests start.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
).strip()
os.environ.setdefault("PUREJAXDRL_COMPILE", "fast")

# One compilation cache for the whole session, shared by pytest-xdist's workers
# and the processes and notebook kernels the tests start (JAX reads
# JAX_COMPILATION_CACHE_DIR when it is imported). Many tests build the same
# program afresh (the same preset with another seed, or a second experiment to
# compare with the first); compiling it once saves minutes of CI time. The
# process that makes the directory (pytest itself, before it starts workers)
# removes it at exit: each session starts empty, so no result depends on an
# earlier run.
_OWN_CACHE = "PURE_JAXDRL_TEST_XLA_CACHE" not in os.environ
if _OWN_CACHE:
    os.environ["PURE_JAXDRL_TEST_XLA_CACHE"] = tempfile.mkdtemp(prefix="pjd-xla-")
    atexit.register(
        shutil.rmtree, os.environ["PURE_JAXDRL_TEST_XLA_CACHE"], ignore_errors=True
    )
os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ["PURE_JAXDRL_TEST_XLA_CACHE"]

import jax  # noqa: E402

import purejaxdrl  # noqa: E402, F401  (its XLA flags, before any computation)

jax.config.update("jax_num_cpu_devices", 8)
purejaxdrl.enable_compilation_cache(os.environ["JAX_COMPILATION_CACHE_DIR"])

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _optimized_compiles_for_learning_tests(request, monkeypatch):
    """Tests marked `trains` run long enough that -O3 pays for its compile time
    (the DQN, Ape-X and evaluation-to-475 tests: 68 s instead of 91 s); the
    processes and notebook kernels they start inherit the setting."""
    if request.node.get_closest_marker("trains"):
        monkeypatch.setenv("PUREJAXDRL_COMPILE", "optimized")


@pytest.fixture(autouse=True)
def _mplbackend_as_it_was(monkeypatch):
    """`cli.main` picks matplotlib's file backend for its process (MPLBACKEND,
    unless set): a test that calls it leaves the variable as it found it, not
    set for the later tests of its worker and the notebook kernels they start
    (which draw inline only where it is unset)."""
    if "MPLBACKEND" in os.environ:
        monkeypatch.setenv("MPLBACKEND", os.environ["MPLBACKEND"])
    else:  # a delenv of an unset variable has nothing to undo: set it first
        monkeypatch.setenv("MPLBACKEND", "")
        monkeypatch.delenv("MPLBACKEND")
