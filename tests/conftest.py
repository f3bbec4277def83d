"""Test settings: 8 fake CPU devices; purejaxdrl imported first for its XLA flags.

Tests that train on one device say `devices=1`; multi-device tests build meshes
over 1, 2, 4 or 8 of the fake devices.
"""

import jax
import pytest

import purejaxdrl

jax.config.update("jax_num_cpu_devices", 8)


@pytest.fixture(scope="session", autouse=True)
def compilation_cache(tmp_path_factory):
    """One XLA compilation cache for the whole session, empty at its start.

    Many tests build the same program afresh (the same preset with another seed,
    or a second experiment to compare with the first); compiling it once saves
    minutes of CI time. Empty at the start, so no result depends on an earlier run.
    """
    purejaxdrl.enable_compilation_cache(str(tmp_path_factory.mktemp("xla-cache")))
