"""Test settings: 8 fake CPU devices; purejaxdrl imported first for its XLA flags.

Tests that train on one device say `devices=1`; multi-device tests build meshes
over 1, 2, 4 or 8 of the fake devices.
"""

import jax

import purejaxdrl  # noqa: F401  (sets XLA_FLAGS before JAX starts its backend)

jax.config.update("jax_num_cpu_devices", 8)
