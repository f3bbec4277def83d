"""Process-wide XLA settings that must be in place before JAX starts a backend."""

import os

# JAX 0.10.x on CPU can deadlock (0% CPU, forever) in `block_until_ready` of vmapped
# training programs; disabling the concurrency-optimised scheduler avoids it at no
# measurable cost. XLA reads XLA_FLAGS once, when the first backend starts, so this
# must run before any computation. Merge, don't overwrite. A notebook that ran JAX
# before importing purejaxdrl started the backend without it: the library's own
# CPU programs set it again in their compiler options (`compiler_options`), which
# XLA reads per program.
_SCHEDULER = "xla_cpu_enable_concurrency_optimized_scheduler"
_CPU_SCHEDULER_FLAG = f"--{_SCHEDULER}"


_user_chose_scheduler = False  # XLA_FLAGS named it before purejaxdrl was imported


def configure_xla_flags() -> None:
    """Add the CPU scheduler workaround to XLA_FLAGS unless the user set it.

    A user's own setting is kept, in XLA_FLAGS and in `compiler_options`.
    """
    global _user_chose_scheduler
    flags = os.environ.get("XLA_FLAGS", "")
    if _CPU_SCHEDULER_FLAG in flags:
        _user_chose_scheduler = True
    else:
        os.environ["XLA_FLAGS"] = f"{flags} {_CPU_SCHEDULER_FLAG}=false".strip()


DEFAULT_CACHE_DIR = "~/.cache/purejaxdrl/xla"


def enable_compilation_cache(path: str | None = None) -> None:
    """Keeps compiled XLA programs on disk, so reruns skip XLA compilation.

    A rerun still traces and lowers its programs in Python, but skips XLA.
    Process-wide (a JAX setting); the `purejaxdrl` command turns it on by default.

    Args:
      path: the folder the programs are kept in; None (default): JAX's own
        `JAX_COMPILATION_CACHE_DIR` where set, else `~/.cache/purejaxdrl/xla`.

    Examples:
      >>> import purejaxdrl as pjd
      >>> pjd.enable_compilation_cache()  # before the first run of the process
      >>> result = pjd.train(pjd.load_preset("cartpole").config)

    """
    import jax

    path = path or os.environ.get("JAX_COMPILATION_CACHE_DIR") or DEFAULT_CACHE_DIR
    jax.config.update("jax_compilation_cache_dir", os.path.expanduser(path))
    # Cache every program that took measurable time; tiny ones are not worth a file.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


# XLA:CPU hands its kernels to LLVM at -O3. Training programs keep that level and
# XLA:CPU's fusion emitters, named explicitly so that XLA_FLAGS' settings for other
# programs (the test suite's -O0 without them) do not slow training: -O2 compiled
# CartPole PPO's chunk 15% faster at the same speed, but trained brax
# inverted_pendulum at 21k steps/s instead of 34k (scripts/bench_brax.py); -O0
# trains 3.5x slower.
_REPEATED = {
    "xla_backend_optimization_level": 3,
    "xla_cpu_use_fusion_emitters": True,
    _SCHEDULER: False,
}
# Programs that run once (initialisation) compile for compile time alone: -O0, and
# XLA:CPU's older loop emitters instead of its MLIR fusion emitters, which take a
# third longer to compile (CartPole PPO's init: 1.0 s instead of 1.5 s).
_ONCE = {
    "xla_backend_optimization_level": 0,
    "xla_cpu_use_fusion_emitters": False,
    _SCHEDULER: False,
}
# PUREJAXDRL_COMPILE=fast, for test suites and smoke runs of a few updates: -O1
# without the fusion emitters compiled CartPole PPO's chunk in 4.0-4.4 s instead
# of 5.5-5.7 s and trained at 48k steps/s instead of 79k. -O0 (2.4 s, 21k) ran
# the suite's sweep tests faster and its host runners' learning tests slower: the
# whole suite no faster (pytest 1,894 s against 1,904 s in fresh-clone CI runs).
_FAST = {
    "xla_backend_optimization_level": 1,
    "xla_cpu_use_fusion_emitters": False,
    _SCHEDULER: False,
}
COMPILE_ENV = "PUREJAXDRL_COMPILE"


def compiler_options(platform: str, *, runs_once: bool = False) -> dict | None:
    """`jax.jit` compiler options for a program on `platform` ("cpu", "gpu", ...).

    They take precedence over XLA_FLAGS, and keep the CPU scheduler workaround
    (`configure_xla_flags`) where JAX started before purejaxdrl was imported,
    unless XLA_FLAGS named the scheduler's flag then (the user's choice).
    With the environment variable
    `PUREJAXDRL_COMPILE=fast`, CPU programs that run repeatedly compile about
    a quarter faster and run about 1.7x slower: for tests and short smoke runs.

    Args:
      platform: the devices' platform; only "cpu" gets options.
      runs_once: the program runs once (initialisation), so compile time is
        all that matters.

    Returns:
      XLA options for CPU programs; None (XLA's defaults) elsewhere.

    Raises:
      ConfigError: PUREJAXDRL_COMPILE is set to something other than "fast"
        or "optimized".

    """
    if platform != "cpu":
        return None
    mode = _compile_mode()  # read for init too: a bad value stops before compiling
    options = dict(_ONCE if runs_once else _FAST if mode == "fast" else _REPEATED)
    if _user_chose_scheduler:  # theirs, from XLA_FLAGS
        del options[_SCHEDULER]
    return options


def _compile_mode() -> str:
    mode = os.environ.get(COMPILE_ENV, "optimized")
    if mode not in ("fast", "optimized"):
        from purejaxdrl.config import ConfigError

        raise ConfigError(
            f"{COMPILE_ENV}={mode!r} is not a compile mode: set it to 'fast' "
            "(quicker compiles, slower training) or 'optimized', or unset it"
        )
    return mode
