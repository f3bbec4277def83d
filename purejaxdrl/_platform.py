"""Process-wide XLA settings that must be in place before JAX starts a backend."""

import os

# JAX 0.10.x on CPU can deadlock (0% CPU, forever) in `block_until_ready` of vmapped
# training programs; disabling the concurrency-optimised scheduler avoids it at no
# measurable cost (see DESIGN.md, "Traps"). XLA reads XLA_FLAGS once, when the first
# backend starts, so this must run before any computation. Merge, don't overwrite.
_CPU_SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler"


def configure_xla_flags() -> None:
    """Add the CPU scheduler workaround to XLA_FLAGS unless the user set it."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _CPU_SCHEDULER_FLAG not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {_CPU_SCHEDULER_FLAG}=false".strip()


DEFAULT_CACHE_DIR = "~/.cache/purejaxdrl/xla"


def enable_compilation_cache(path: str = DEFAULT_CACHE_DIR) -> None:
    """Keeps compiled XLA programs on disk, so reruns skip XLA compilation.

    A rerun still traces and lowers its programs in Python, but skips XLA.

    Process-wide (a JAX setting); the `purejaxdrl` command turns it on by default.
    """
    import jax

    jax.config.update("jax_compilation_cache_dir", os.path.expanduser(path))
    # Cache every program that took measurable time; tiny ones are not worth a file.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


# XLA:CPU hands its kernels to LLVM at -O3. Training programs keep that level,
# named explicitly so that a lower one in XLA_FLAGS (the test suite sets -O0 for
# its other programs) does not slow training: -O2 compiled CartPole PPO's chunk
# 15% faster at the same speed, but trained brax inverted_pendulum at 21k steps/s
# instead of 34k (scripts/bench_brax.py); -O0 trains 3.5x slower. Programs that
# run once compile at -O0 (CartPole PPO's agent init: 0.7 s instead of 1.2 s).
_REPEATED = {"xla_backend_optimization_level": 3}
_ONCE = {"xla_backend_optimization_level": 0}


def compiler_options(platform: str, *, runs_once: bool = False) -> dict | None:
    """`jax.jit` compiler options for a program on `platform` ("cpu", "gpu", ...).

    They take precedence over XLA_FLAGS.

    Args:
      platform: the devices' platform; only "cpu" gets options.
      runs_once: the program runs once (initialisation), so compile time is
        all that matters.

    Returns:
      XLA options for CPU programs; None (XLA's defaults) elsewhere.

    """
    if platform != "cpu":
        return None
    return dict(_ONCE if runs_once else _REPEATED)
