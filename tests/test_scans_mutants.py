"""`platform_scan` on each platform's branch, against a Python loop.

Gaps that mutation testing found: the CPU's prefetching loop run backwards
(no caller ran it so), and which loop each branch runs (rolled or unrolled,
prefetching or not), which only the programs' speed would show. A CPU program
lowers only its own branch: the other is run by making `lax.platform_dependent`
take it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import scans

T = 7  # not a multiple of the unroll


def _step(c, x):
    """Order matters: the carry decays, the output is the carry before."""
    return 0.5 * c + x["a"] * x["b"], c - x["a"]


def _loop(c, a, b, reverse):
    ys = np.zeros_like(a)
    for t in reversed(range(len(a))) if reverse else range(len(a)):
        c, ys[t] = 0.5 * c + a[t] * b[t], c - a[t]
    return c, ys


def _spy(monkeypatch, branch: str) -> list:
    """Takes `branch` of platform_dependent; lists each loop's (kind, unroll)."""
    loops = []
    scan, prefetch = jax.lax.scan, scans.prefetch_scan

    def recorded_scan(f, init, xs, **options):
        loops.append(("scan", options.get("unroll", 1)))
        return scan(f, init, xs, **options)

    def recorded_prefetch(*args, **options):
        loops.append(("prefetch", None))
        return prefetch(*args, **options)

    def pick(*args, cpu, default):
        return {"cpu": cpu, "default": default}[branch](*args)

    monkeypatch.setattr(jax.lax, "platform_dependent", pick)
    monkeypatch.setattr(jax.lax, "scan", recorded_scan)
    monkeypatch.setattr(scans, "prefetch_scan", recorded_prefetch)
    return loops


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("prefetch", [False, True])
@pytest.mark.parametrize("branch", ["cpu", "default"])
def test_each_branch_is_the_loop_in_order(branch, prefetch, reverse, monkeypatch):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, T, 3)).astype(np.float32)
    c0 = rng.normal(size=3).astype(np.float32)
    loops = _spy(monkeypatch, branch)
    xs = {"a": jnp.asarray(a), "b": jnp.asarray(b)}
    final, ys = scans.platform_scan(
        _step, jnp.asarray(c0), xs, reverse=reverse, prefetch=prefetch
    )
    want_final, want = _loop(c0.astype(np.float64), a, b, reverse)
    np.testing.assert_allclose(final, want_final, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ys, want, rtol=1e-5, atol=1e-6)
    if branch == "default":  # unrolled, whatever `prefetch`
        assert loops == [("scan", scans.ACCELERATOR_UNROLL)]
    elif prefetch:  # rolled, its inputs fetched a step ahead
        assert loops == [("prefetch", None), ("scan", 1)]
    else:
        assert loops == [("scan", 1)]


def test_the_accelerators_loop_takes_the_callers_unroll(monkeypatch):
    loops = _spy(monkeypatch, "default")
    xs = {"a": jnp.ones((T, 2)), "b": jnp.ones((T, 2))}
    scans.platform_scan(_step, jnp.zeros(2), xs, unroll=scans.RECURSION_UNROLL)
    assert loops == [("scan", scans.RECURSION_UNROLL)]
