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

    CartPole PPO on CPU compiles in about 8.5 s cold and 2.3 s from the cache.

    Process-wide (a JAX setting); the `purejaxdrl` command turns it on by default.
    """
    import jax

    jax.config.update("jax_compilation_cache_dir", os.path.expanduser(path))
    # Cache every program that took measurable time; tiny ones are not worth a file.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
