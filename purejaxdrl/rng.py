"""Random keys: Threefry-2x32 written as fused arithmetic, as a key implementation.

JAX's default threefry lowers to a *rolled* loop on CPU (to save compile time), so
every random call in a rollout step runs five loop iterations of small kernels and
carry copies; in small-batch RL most of the rollout's time goes there. The same
hash written as plain uint32 arithmetic fuses into one kernel per call. It is a
per-key choice (`jax.random.key(seed, impl=...)`), not a change to JAX.

Counters are domain-separated by the first input word: 0 for `split`, 1 for
`fold_in`, 2 for `random_bits`. Threefry-2x32-20 is from Salmon et al. (2011),
"Parallel random numbers: as easy as 1, 2, 3" (Random123). `check_seed` refuses
a seed that would repeat another seed's keys.
"""

import math
from collections.abc import Hashable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import random as jex_random

from purejaxdrl.config_docs import field_example
from purejaxdrl.config_types import ConfigError

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)
_SPLIT, _FOLD_IN, _BITS = np.uint32(0), np.uint32(1), np.uint32(2)


def _rotl(x: jax.Array, r: int) -> jax.Array:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(
    k0: jax.Array, k1: jax.Array, x0: jax.Array, x1: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Threefry-2x32 with 20 rounds: a keyed bijection of 64-bit blocks.

    Args:
      k0: first key word, uint32 (broadcastable against the block).
      k1: second key word, uint32.
      x0: first block (counter) word, uint32.
      x1: second block word, uint32 of the shape of `x0`.

    Returns:
      The two output words, uint32, of the block's shape.

    """
    ks = (k0, k1, k0 ^ k1 ^ _KEY_PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _hash(key: jax.Array, domain: np.uint32, counters: jax.Array) -> jax.Array:
    y0, y1 = threefry2x32(key[0], key[1], jnp.full_like(counters, domain), counters)
    return jnp.stack([y0, y1], axis=-1)


def _counters(shape: tuple[int, ...]) -> jax.Array:
    size = math.prod(shape)
    return jax.lax.iota(jnp.uint32, size).reshape(shape)


def _seed(seed: jax.Array) -> jax.Array:
    seed = jnp.asarray(seed)
    high = (
        (seed >> 32).astype(jnp.uint32)
        if seed.dtype.itemsize == 8
        else jnp.zeros((), jnp.uint32)
    )
    return jnp.stack([high, seed.astype(jnp.uint32)])


def _split(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    return _hash(key, _SPLIT, _counters(shape))


def _fold_in(key: jax.Array, data: jax.Array) -> jax.Array:
    return _hash(key, _FOLD_IN, jnp.asarray(data).astype(jnp.uint32))


def _random_bits(key: jax.Array, bit_width: int, shape: tuple[int, ...]) -> jax.Array:
    words = _hash(key, _BITS, _counters(shape))
    if bit_width == 64:
        return (words[..., 0].astype(jnp.uint64) << 32) | words[..., 1]
    dtype = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[bit_width]
    return words[..., 0].astype(dtype)


FUSED_THREEFRY: Hashable = jex_random.define_prng_impl(
    key_shape=(2,),
    seed=_seed,
    split=_split,
    random_bits=_random_bits,
    fold_in=_fold_in,
    name="purejaxdrl_fused_threefry",
    tag="fthreefry",
)

RNG_IMPLS = ("fused_threefry", "threefry2x32", "rbg")


def permutation(key: jax.Array, n: int) -> jax.Array:
    """A uniformly random permutation of `arange(n)`, int32 [n].

    The ranking of i.i.d. random keys, read off with `lax.top_k` rather than a
    sort: XLA:CPU's generic comparator sort takes 160 us for 512 elements and
    260 ms for 262144, top_k on float32 keys 7 us and 2 ms. The keys are 30
    random bits placed in the normal float32 range, where floats order like their
    bit patterns (denormals are avoided: flushed to zero they would tie). Ties,
    resolved by index, have probability about n^2 / 2^31 per call, as with
    `jax.random.permutation`'s 32-bit sort keys.
    """
    bits = (jax.random.bits(key, (n,), jnp.uint32) >> 2) + np.uint32(0x00800000)
    return jax.lax.top_k(jax.lax.bitcast_convert_type(bits, jnp.float32), n)[1]


def make_key(seed: int, impl: str = "fused_threefry") -> jax.Array:
    """A typed key for `seed` with the named implementation.

    Args:
      seed: the seed.
      impl: `fused_threefry` (ours, fastest on CPU), or JAX's `threefry2x32` or
        `rbg`.

    Raises:
      ValueError: for an unknown implementation.

    """
    if impl == "fused_threefry":
        return jax.random.key(seed, impl=FUSED_THREEFRY)
    if impl in ("threefry2x32", "rbg"):
        return jax.random.key(seed, impl=impl)
    raise ValueError(f"rng_impl={impl!r} is not one of {RNG_IMPLS}; pick one of them.")


SEED_LIMIT = 2**32  # seeds lie in [0, SEED_LIMIT): `check_seed`


def check_seed(seed: Any) -> None:
    """That `seed` is a key's seed: in [0, 2**32), where no two give one key.

    JAX keeps a seed's low 32 bits, so 2**32 is seed 0's run again (and -1 is
    2**32 - 1's); far larger ones overflow when the key is made.
    """
    if isinstance(seed, jax.core.Tracer) or getattr(seed, "ndim", 0) > 0:
        return
    if not 0 <= seed < SEED_LIMIT:
        raise ConfigError(
            f"seed={seed} must be in [0, 2**32) (JAX keeps a seed's low 32 "
            "bits, so others repeat another seed's run); pass e.g. "
            f"{field_example('seed', 1)}."
        )
