"""Test settings: purejaxdrl is imported first so its XLA CPU flags apply."""

import purejaxdrl  # noqa: F401  (sets XLA_FLAGS before JAX starts its backend)
