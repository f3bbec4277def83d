"""What ran a figure: the machine, its load, and the repository's revision.

`describe_machine()` is printed above every table and stored with every
result; `machine_line()` is it as that one line; `source_commit()` the
checkout's short commit (`+` where tracked files differ).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Mapping
from typing import Any

import jax


def describe_machine() -> dict[str, Any]:
    """What ties a figure to a machine and a revision.

    JAX's and jaxlib's versions, backend and devices; the CPU's model, the
    cores this process may use (its affinity: a container's share, not the
    host's count) and the load before the suite (`Report.write` adds the load
    after); `XLA_FLAGS`; and the repository's commit (with `+` where the
    work tree differs from it).
    """
    device = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "jaxlib": getattr(getattr(jax, "lib", None), "__version__", "?"),
        "backend": jax.default_backend(),
        "device": device.device_kind,
        "devices": jax.device_count(),
        "cpu": _cpu_model(),
        "cpu_cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "commit": source_commit(),
        "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": " ".join(sys.argv),
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def source_commit() -> str:
    """This checkout's short commit, `+` if tracked files differ, `?` outside git."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return commit + ("+" if dirty else "")


def machine_line(machine: Mapping[str, Any] | None = None) -> str:
    """`describe_machine()` as one line for the top of a table."""
    m = machine or describe_machine()
    after = m.get("load_average_after")
    load = f"{m['load_average']}" + (f" -> {after}" if after is not None else "")
    line = (
        f"jax {m['jax']} on {m['devices']} x {m['device']} ({m['backend']}); "
        f"{m['cpu_cores']} CPU cores"
        + (f" ({m['cpu']})" if m.get("cpu") else "")
        + f", load average {load}"
    )
    if m.get("commit"):
        line += f"; purejaxdrl {m['commit']}"
    if m.get("xla_flags"):
        line += f"; XLA_FLAGS={m['xla_flags']}"
    if m.get("started"):  # when, with which command, for how long
        line += f"; started {m['started']}: `{m.get('argv', '')}`"
    if m.get("total_s") is not None:
        line += f", {m['total_s']:.0f} s in all"
    return line
