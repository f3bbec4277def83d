"""Fake CPU devices from the shell, and the `--devices` error that names them.

A command-line user cannot call `jax.config.update("jax_num_cpu_devices", N)`
as the notebooks do: `--devices 2` on a one-device CPU names the two
environment variables that fake devices, and both must work once purejaxdrl
has added its own XLA flags (it merges, never overwrites).
"""

import os
import re
import subprocess
import sys

import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.parallel import devices_to_use


def test_too_many_devices_on_one_cpu_process_names_how_to_fake_them():
    message = (
        "devices=2 must be between 1 and the 1 local cpu devices of this "
        "process; pass --devices 1 (devices=1 or make_mesh(1) in Python); "
        "or fake 2 CPU devices to test with "
        "JAX_NUM_CPU_DEVICES=2 (or XLA_FLAGS="
        "--xla_force_host_platform_device_count=2)."
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        devices_to_use(2, [1], "cpu")


@pytest.mark.parametrize("requested, platform", [(2, "gpu"), (0, "cpu")])
def test_no_fake_devices_where_they_would_not_help(requested, platform):
    # A GPU's devices are real; 0 devices is no count to fake.
    with pytest.raises(ConfigError) as error:
        devices_to_use(requested, [1], platform)
    assert "(devices=1 or make_mesh(1) in Python)." in str(error.value)
    assert "JAX_NUM_CPU_DEVICES" not in str(error.value)


@pytest.mark.parametrize(
    "variable, value",
    [
        ("JAX_NUM_CPU_DEVICES", "3"),
        ("XLA_FLAGS", "--xla_force_host_platform_device_count=3"),
    ],
)
def test_each_named_variable_fakes_devices_with_purejaxdrl_imported(variable, value):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS")
    }
    env.update({variable: value, "JAX_PLATFORMS": "cpu"})
    code = "import purejaxdrl, jax; print(jax.local_device_count())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip() == "3"
