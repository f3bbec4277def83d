"""Replay throughput: our buffers beside flashbax's equivalents, same machine.

For each buffer, a capacity of 1M transitions (CartPole-sized: two 8-float
observations, action, reward, discount), adds of `--add-batch` transitions (one
step of that many environments) and samples of 256: items added per second,
batches sampled per second and, for prioritised buffers, priority updates of a
sampled batch per second. Each figure times one jitted `lax.scan` of `--ops`
operations on a warm (compiled, half-full) buffer, donated; median of
`--repeats`. The sequence buffer stores 32-step trajectories (capacity 1M steps)
against flashbax's trajectory buffer sampling 32-step sequences with period 32.

    python scripts/bench_replay.py            # needs flashbax: pip install flashbax
"""

import argparse
import statistics
import time

import flashbax as fbx
import jax
import jax.numpy as jnp

from purejaxdrl.replay import (
    make_prioritised_buffer,
    make_sequence_buffer,
    make_uniform_buffer,
)

CAPACITY, BATCH, SEQ = 1_000_000, 256, 32


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--add-batch", type=int, default=256)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    return parser.parse_args()


def transition(n: int, shape: tuple = ()) -> dict:
    lead = (*shape, n) if shape else (n,)
    return {
        "obs": jnp.ones((*lead, 8), jnp.float32),
        "action": jnp.zeros(lead, jnp.int32),
        "reward": jnp.ones(lead, jnp.float32),
        "discount": jnp.ones(lead, jnp.float32),
        "next_obs": jnp.ones((*lead, 8), jnp.float32),
    }


def timed(fn, state, repeats: int) -> tuple[float, object]:
    """Median seconds of `fn(state) -> state`, compiled and warmed first."""
    fn = jax.jit(fn, donate_argnums=0)
    state = jax.block_until_ready(fn(state))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        state = jax.block_until_ready(fn(state))
        times.append(time.perf_counter() - start)
    return statistics.median(times), state


def scan_adds(add, items, ops):
    def run(state):
        def one(state, i):
            batch = jax.tree.map(lambda x: x + i.astype(x.dtype), items)
            return add(state, batch), None

        return jax.lax.scan(one, state, jnp.arange(ops))[0]

    return run


def scan_samples(sample, ops, update=None):
    """`ops` samples (and priority updates); the carry keeps them live."""

    def run(carry):
        def one(carry, key):
            state, acc = carry
            drawn = sample(state, key)
            acc = acc + jax.tree.leaves(drawn)[0].sum().astype(jnp.float32)
            if update is not None:
                state = update(state, drawn)
            return (state, acc), None

        keys = jax.random.split(jax.random.key(0), ops)
        return jax.lax.scan(one, carry, keys)[0]

    return run


def fill(add, state, items, times):
    step = jax.jit(add, donate_argnums=0)
    for _ in range(times):
        state = step(state, items)
    return state


def report(name, ours, theirs, unit):
    print(
        f"{name:<34} {ours:>14,.0f} {theirs:>14,.0f} {unit:<14} {ours / theirs:6.2f}x"
    )


def main() -> None:
    args = parse()
    n, ops, reps = args.add_batch, args.ops, args.repeats
    half = CAPACITY // 2 // n
    items = transition(n)
    example = jax.tree.map(lambda x: x[0], items)
    print(f"{jax.devices()[0].device_kind}: capacity {CAPACITY:,}, add {n}, "
          f"sample {BATCH}, {ops} ops per timing, median of {reps}")  # fmt: skip
    print(f"{'':<34} {'purejaxdrl':>14} {'flashbax':>14} {'':<14} {'ratio':>6}")

    # Uniform transitions: our ring vs flashbax's flat buffer.
    ours = make_uniform_buffer(CAPACITY, BATCH, min_size=BATCH)
    theirs = fbx.make_flat_buffer(CAPACITY, BATCH, BATCH, add_batch_size=n)
    a = fill(ours.add, ours.init(example), items, half)
    b = fill(theirs.add, theirs.init(example), items, half)
    ta, a = timed(scan_adds(ours.add, items, ops), a, reps)
    tb, b = timed(scan_adds(theirs.add, items, ops), b, reps)
    report("uniform: add", ops * n / ta, ops * n / tb, "items/s")
    ta, _ = timed(scan_samples(ours.sample, ops), (a, 0.0), reps)
    tb, _ = timed(scan_samples(theirs.sample, ops), (b, 0.0), reps)
    report("uniform: sample", ops / ta, ops / tb, "batches/s")
    del a, b

    # Prioritised: our exact sum-tree vs flashbax's prioritised flat buffer.
    ours = make_prioritised_buffer(CAPACITY, BATCH, min_size=BATCH, alpha=0.6)
    platform = jax.devices()[0].platform
    theirs = fbx.make_prioritised_flat_buffer(
        CAPACITY, BATCH, BATCH, add_batch_size=n, priority_exponent=0.6,
        device="gpu" if platform == "cuda" else platform,
    )  # fmt: skip
    a = fill(ours.add, ours.init(example), items, half)
    b = fill(theirs.add, theirs.init(example), items, half)
    ta, a = timed(scan_adds(ours.add, items, ops), a, reps)
    tb, b = timed(scan_adds(theirs.add, items, ops), b, reps)
    report("prioritised: add", ops * n / ta, ops * n / tb, "items/s")
    ta, (a, _) = timed(scan_samples(ours.sample, ops), (a, 0.0), reps)
    tb, (b, _) = timed(scan_samples(theirs.sample, ops), (b, 0.0), reps)
    report("prioritised: sample", ops / ta, ops / tb, "batches/s")

    def ours_update(state, drawn):
        return ours.set_priorities(state, drawn.index, drawn.probability + 0.5)

    def theirs_update(state, drawn):
        return theirs.set_priorities(state, drawn.indices, drawn.probabilities + 0.5)

    ta, (a, _) = timed(scan_samples(ours.sample, ops, ours_update), (a, 0.0), reps)
    tb, (b, _) = timed(scan_samples(theirs.sample, ops, theirs_update), (b, 0.0), reps)
    report("prioritised: sample + set priorities", ops / ta, ops / tb, "batches/s")
    del a, b

    # Sequences of 32 steps from n environments.
    traj = transition(n, (SEQ,))
    step = jax.tree.map(lambda x: x[0, 0], traj)
    ours = make_sequence_buffer(CAPACITY // SEQ, SEQ, BATCH, min_size=BATCH)
    theirs = fbx.make_trajectory_buffer(
        add_batch_size=n, sample_batch_size=BATCH, sample_sequence_length=SEQ,
        period=SEQ, min_length_time_axis=SEQ, max_size=CAPACITY,
    )  # fmt: skip
    batch_major = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), traj)
    a = fill(ours.add, ours.init(step), traj, half // SEQ)
    b = fill(theirs.add, theirs.init(step), batch_major, half // SEQ)
    ta, a = timed(scan_adds(ours.add, traj, ops), a, reps)
    tb, b = timed(scan_adds(theirs.add, batch_major, ops), b, reps)
    report("sequence: add", ops * n * SEQ / ta, ops * n * SEQ / tb, "steps/s")
    ta, _ = timed(scan_samples(ours.sample, ops), (a, 0.0), reps)
    tb, _ = timed(scan_samples(theirs.sample, ops), (b, 0.0), reps)
    report("sequence: sample", ops / ta, ops / tb, "batches/s")


if __name__ == "__main__":
    main()
