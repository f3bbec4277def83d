"""Compiling a run's programs side by side; the evaluation key stream."""

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.training.programs import EVAL_STREAM, compile_all, eval_key


def test_compile_all_compiles_each_lowered_program_under_its_name():
    x = jnp.arange(3.0)
    lower = {
        4: lambda: jax.jit(lambda v: v * 4).lower(x),
        "init": lambda: jax.jit(lambda v: v + 1).lower(x),
    }
    programs = compile_all(lower)
    assert list(programs) == [4, "init"]
    np.testing.assert_array_equal(programs[4](x), [0.0, 4.0, 8.0])
    np.testing.assert_array_equal(programs["init"](x), [1.0, 2.0, 3.0])
    assert compile_all({}) == {}


def test_evaluation_draws_from_a_stream_of_its_own():
    # "EVL": changing the stream would change every run's evaluation returns.
    assert int.from_bytes(b"EVL", "big") == EVAL_STREAM
    key = jax.random.key(0)
    data = jax.random.key_data
    assert np.array_equal(data(eval_key(key)), data(eval_key(jax.random.key(0))))
    assert not np.array_equal(data(eval_key(key)), data(key))
    for child in jax.random.split(key, 3):  # the keys training splits off
        assert not np.array_equal(data(eval_key(key)), data(child))
