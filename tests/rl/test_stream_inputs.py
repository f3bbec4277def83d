"""The estimators take lists, and a batch given unbatched names the vmap that fits.

chex walked a list as a tree of scalars ("input 0 has rank 0" for 6 rewards)
and raised AssertionErrors that did not say how to batch. The recipe each
message names is run here, and must give each column's own result.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl
from purejaxdrl.rl.nstep import n_step_targets
from tests.rl.test_returns import numpy_gae

T, B = 6, 3


def _streams(rng, n):
    return [rng.normal(size=(T, B)).astype(np.float32) for _ in range(n)]


def test_lists_are_one_stream_and_match_the_numpy_definition():
    rng = np.random.default_rng(0)
    r, v_tm1, v_t = (x[:, 0] for x in _streams(rng, 3))
    disc = np.array([0.9, 0.9, 0.0, 0.9, 0.9, 0.9], np.float32)
    want = numpy_gae(r, disc, np.full(T, 0.95, np.float32), v_tm1, v_t)
    lists = [x.tolist() for x in (r, disc)]
    got = rl.gae(*lists, 0.95, v_tm1.tolist(), v_t.tolist())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    args = [x.tolist() for x in (v_tm1, v_t, r, disc, np.zeros(T))]
    out = rl.vtrace(*args, truncated_t=[False] * T, lambda_=0.95)
    # On-policy (log ρ = 0), V-trace's targets are GAE's (same λ) plus v_tm1.
    np.testing.assert_allclose(out.target_tm1, want + v_tm1, rtol=1e-5, atol=1e-5)
    adv, _ = rl.episode_aware_gae(
        r[:, None].tolist(), disc[:, None].tolist(), [[False]] * T,
        v_tm1[:, None].tolist(), v_t[:, None].tolist(), 1.0, 0.95,
    )  # fmt: skip
    np.testing.assert_allclose(adv[:, 0], want, rtol=1e-5, atol=1e-6)


def _recipe(message: str) -> str:
    """The `jax.vmap(...)` call a message names."""
    return re.search(r"jax\.vmap\(\w+, in_axes=(\(.*?\)|1), out_axes=1\)", message)[0]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("gae", lambda s: (s[0], s[1], 0.95, s[2], s[3])),
        ("lambda_returns", lambda s: (s[0], s[1], 0.5, s[2])),
        ("vtrace", lambda s: (s[0], s[1], s[2], s[3], 0.1 * s[0])),
    ],
)
def test_a_batch_given_to_a_one_stream_function_names_a_vmap_that_works(name, args):
    function = getattr(rl, name)
    streams = args([np.abs(x) for x in _streams(np.random.default_rng(1), 4)])
    with pytest.raises(ValueError) as error:
        function(*streams)
    message = str(error.value)
    assert "\n" not in message and f"r_t [{T}, {B}]" in message
    assert message.startswith(f"{name} takes one stream [T] in each of ")
    batched = eval(_recipe(message), {"jax": jax, name: function})(*streams)
    for b in range(B):
        column = [x[:, b] if np.ndim(x) == 2 else x for x in streams]
        for got, one in zip(
            jax.tree.leaves(batched), jax.tree.leaves(function(*column)), strict=True
        ):
            np.testing.assert_allclose(got[:, b], one, rtol=1e-6)


@pytest.mark.parametrize(
    ("name", "args", "fix"),
    [
        ("episode_aware_gae", lambda s: (*s[:5], 0.99, 0.95), "call gae"),
        ("episode_aware_q_lambda", lambda s: (*s[:4], 0.99, 0.5), "lambda_returns"),
    ],
)
def test_one_stream_given_to_a_batch_function_names_the_one_stream_one(name, args, fix):
    streams = [jnp.ones(T)] * 5
    with pytest.raises(ValueError) as error:
        getattr(rl, name)(*args(streams))
    message = str(error.value)
    assert message.startswith(f"{name} takes a time-major batch [T, B] in each of ")
    assert f"got r_t [{T}]" in message and fix in message and "\n" not in message


@pytest.mark.parametrize(
    ("name", "one_stream"),
    [
        ("episode_aware_gae", lambda r, d, v, w: rl.gae(r, 0.99 * d, 0.95, v, w)),
        (
            "episode_aware_q_lambda",
            lambda r, d, q, _: rl.lambda_returns(r, 0.99 * d, 0.5, q),
        ),
    ],
)
def test_the_pass_through_fix_of_a_batch_function_is_one_stream_s_result(
    name, one_stream
):
    # The message's `x[...]` is run on each stream: it must make the B axis
    # ([T, 1]), not [1, T] (a batch of T one-step streams, taken silently).
    rng = np.random.default_rng(2)
    r, v, w = (rng.normal(size=T).astype(np.float32) for _ in range(3))
    d = rng.uniform(size=T).astype(np.float32)
    streams = (r, d, np.zeros(T, bool), v, w)[: 5 if name.endswith("gae") else 4]
    scalars = (0.99, 0.95) if name.endswith("gae") else (0.99, 0.5)
    with pytest.raises(ValueError) as error:
        getattr(rl, name)(*streams, *scalars)
    recipe = re.search(r"pass each as (x\[[^\]]*\])\)", str(error.value))[1]
    batched = [eval(recipe, {"x": x}) for x in streams]
    got = getattr(rl, name)(*batched, *scalars)
    got = got[0] if isinstance(got, tuple) else got  # gae's advantages
    assert got.shape == (T, 1)
    want = one_stream(r, d, v, w)  # max_q_t is v for episode_aware_q_lambda
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-5, atol=1e-6)


def test_a_scalar_where_a_stream_goes_is_named():
    with pytest.raises(ValueError) as error:
        rl.gae(jnp.ones(3), 0.9, 1.0, jnp.ones(3), jnp.ones(3))
    assert str(error.value).endswith(
        "got r_t [3], discount_t [], v_tm1 [3], v_t [3]; pass each as one stream [T]."
    )


@pytest.mark.parametrize(
    ("name", "args", "got", "layout"),
    [
        # One axis too few for a one-stream function: scalars, not a batch.
        ("gae", lambda x: (x, x, 0.95, x, x), "r_t [], discount_t [], v_tm1 [], "
         "v_t []", "one stream [T]"),
        ("n_step_targets", lambda x: (x, x, x, 3, 0.99), "r_t [], discount_t [], "
         "truncated_t []", "one stream [T]"),
        # One axis too many for a batch function: [T, B, K], not one stream.
        ("episode_aware_gae", lambda x: (x, x, x > 1, x, x, 0.99, 0.95), "r_t "
         "[6, 3, 2], discount_t [6, 3, 2], truncated_t [6, 3, 2], v_tm1 [6, 3, "
         "2], v_t [6, 3, 2]", "a time-major batch [T, B]"),
        ("episode_aware_q_lambda", lambda x: (x, x, x > 1, x, 0.99, 0.5), "r_t "
         "[6, 3, 2], discount_t [6, 3, 2], truncated_t [6, 3, 2], max_q_t [6, 3, "
         "2]", "a time-major batch [T, B]"),
    ],
)  # fmt: skip
def test_an_axis_off_the_other_way_is_told_the_layout_not_the_batch_fix(
    name, args, got, layout
):
    # Before: scalars given to gae were told to vmap a batch, and [T, B, K]
    # given to episode_aware_gae to call gae: fixes for the opposite mistake.
    x = jnp.ones((T, B, 2)) if name.startswith("episode_aware") else jnp.float32(1)
    with pytest.raises(ValueError) as error:
        {**vars(rl), "n_step_targets": n_step_targets}[name](*args(x))
    assert str(error.value).endswith(f"got {got}; pass each as {layout}.")


@pytest.mark.parametrize(
    ("name", "arg", "call"),
    [
        ("gae", "lambda_t", lambda x, lam: rl.gae(x, x, lam, x, x)),
        ("lambda_returns", "lambda_t", lambda x, lam: rl.lambda_returns(x, x, lam, x)),
        ("vtrace", "lambda_", lambda x, lam: rl.vtrace(x, x, x, x, x, lambda_=lam)),
    ],
)
@pytest.mark.parametrize("shape", [(T, B), (T - 1,), (1,)])
def test_a_lambda_neither_scalar_nor_one_per_step_is_named(name, arg, call, shape):
    # Before: "Cannot broadcast to shape with fewer dimensions" from inside
    # jnp.broadcast_to (or, for [T - 1], an incompatible-shapes error); vtrace
    # broadcast a [T, B] λ into [T, B] targets silently.
    x = jnp.ones(T)
    with pytest.raises(ValueError) as error:
        call(x, jnp.full(shape, 0.9))
    assert str(error.value) == (
        f"{name} takes {arg} as a scalar or one stream [T] like r_t; got "
        f"{arg} {list(shape)}, r_t [{T}]; pass a scalar λ or one per step, "
        f"of shape [{T}]."
    )


@pytest.mark.parametrize(
    "lam", [0.9, jnp.float32(0.9), [0.9] * T, (0.9,) * T, jnp.full(T, 0.9)]
)
def test_a_scalar_or_one_lambda_per_step_is_taken_alike(lam):
    x = jnp.linspace(0.1, 1.0, T)
    want = rl.gae(x, x, 0.9, x, x)
    np.testing.assert_allclose(rl.gae(x, x, lam, x, x), want, rtol=1e-6)
    want = rl.lambda_returns(x, x, 0.9, x)
    np.testing.assert_allclose(rl.lambda_returns(x, x, lam, x), want, rtol=1e-6)
    want = rl.vtrace(x, x, x, x, -x, lambda_=0.9).target_tm1
    got = rl.vtrace(x, x, x, x, -x, lambda_=lam).target_tm1
    np.testing.assert_allclose(got, want, rtol=1e-6)


_ONE = "gamma times the env discount (0 on termination)"
_APART = "the env discount (0 on termination; gamma apart)"


@pytest.mark.parametrize(
    ("name", "call", "want", "fix"),
    [
        ("gae", lambda x, d: rl.gae(x, d, 0.95, x, x), _ONE, "gamma * (1 - done)"),
        ("lambda_returns", lambda x, d: rl.lambda_returns(x, d, 0.9, x), _ONE,
         "gamma * (1 - done)"),
        ("vtrace", lambda x, d: rl.vtrace(x, x, x, d, x), _ONE, "gamma * (1 - done)"),
        ("n_step_targets", lambda x, d: n_step_targets(x, d, d, 3, 0.99), _APART,
         "1.0 - done"),
        ("episode_aware_gae", lambda x, d: rl.episode_aware_gae(
            x[:, None], d[:, None], d[:, None], x[:, None], x[:, None], 0.99, 0.95
        ), _APART, "1.0 - done"),
        ("episode_aware_q_lambda", lambda x, d: rl.episode_aware_q_lambda(
            x[:, None], d[:, None], d[:, None], x[:, None], 0.99, 0.9
        ), _APART, "1.0 - done"),
    ],
)  # fmt: skip
def test_done_flags_given_as_discounts_are_refused(name, call, want, fix):
    # Before: promoted to float, done=True became discount 1 and done=False 0,
    # so every estimator bootstrapped across episode ends only, silently.
    done = jnp.array([False] * (T - 1) + [True])
    x = jnp.linspace(0.1, 1.0, T)
    with pytest.raises(ValueError) as error:
        call(x, done)
    shape = (
        [T] if name in ("gae", "lambda_returns", "vtrace", "n_step_targets") else [T, 1]
    )
    assert str(error.value) == (
        f"{name} takes discount_t as floats, {want}; got a bool discount_t "
        f"{shape} (done flags?); pass {fix}."
    )
    # The fix it names is taken: gamma * (1 - done) for the one-stream
    # functions, where the others take gamma apart.
    call(x, 0.99 * (1 - done) if fix.startswith("gamma") else 1.0 - done)
