"""Which folder the command's compilation cache uses."""

import argparse
import os

import jax
import pytest

from purejaxdrl.cli import args as cli_args


@pytest.mark.parametrize(
    ("argv", "env", "used"),
    [
        ([], None, [os.path.expanduser("~/.cache/purejaxdrl/xla")]),
        # JAX's own variable: it was overridden by the default folder, and a
        # test suite's processes wrote to the home directory.
        ([], "/tmp/jax-cache", ["/tmp/jax-cache"]),
        (["--compile-cache", "/tmp/mine"], "/tmp/jax-cache", ["/tmp/mine"]),
        (["--no-compile-cache"], "/tmp/jax-cache", []),
    ],
)
def test_the_flag_then_jaxs_variable_then_the_default(argv, env, used, monkeypatch):
    if env is None:
        monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", env)
    calls = []
    monkeypatch.setattr(jax.config, "update", lambda name, value: calls.append(value))
    parser = argparse.ArgumentParser()
    cli_args.add_compile_cache_flags(parser)
    cli_args.use_compile_cache(parser.parse_args(argv))
    assert calls[:1] == used  # then its minimum compile time
