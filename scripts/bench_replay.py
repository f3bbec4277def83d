"""Replay throughput: our buffers beside flashbax's equivalents, same machine.

For each buffer, a capacity of 1M transitions (CartPole-sized: two 8-float
observations, action, reward, discount), adds of `--add-batch` transitions (one
step of that many environments) and samples of 256: items added per second,
batches sampled per second and, for prioritised buffers, priority updates of a
sampled batch per second. Each figure times one jitted `lax.scan` of `--ops`
operations on a warm (compiled, half-full) buffer, donated; median of
`--repeats`, ours' and flashbax's alternating (A B, B A, ...). Every leaf of a
sample is kept live (summed into the carry): with only one, XLA would drop the
other leaves' gathers. The sequence buffer stores 32-step trajectories
(capacity 1M steps) against flashbax's trajectory buffer sampling 32-step
sequences with period 32.

The two uniform and prioritised layouts differ by design: our buffers store a
whole transition (with `next_obs`, 19 floats) and a sample gathers one item;
flashbax's flat buffers store what one step gives (no `next_obs`, 11 floats,
its own convention) and a sample gathers a pair of consecutive items (its
`first` and `second`, 22 floats, `second.obs` being the next observation).
Figures before 2026-12-03 gave flashbax whole transitions too, so each of its
samples gathered two 19-float items (38 floats) and each add wrote 19.

    python scripts/bench_replay.py  # flashbax's side needs: pip install flashbax
"""

import importlib.util

import jax
import jax.numpy as jnp
from harness import Report, parser, positive_int, run_main, time_call

import purejaxdrl as pjd

BATCH, SEQ = 256, 32  # sample batch, sequence length


def transition(n: int, shape: tuple = ()) -> dict:
    lead = (*shape, n) if shape else (n,)
    return {
        "obs": jnp.ones((*lead, 8), jnp.float32),
        "action": jnp.zeros(lead, jnp.int32),
        "reward": jnp.ones(lead, jnp.float32),
        "discount": jnp.ones(lead, jnp.float32),
        "next_obs": jnp.ones((*lead, 8), jnp.float32),
    }


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
            # Every leaf kept live: with one, XLA drops the other leaves'
            # gathers, and a "sample" is an index draw and one gather.
            acc = acc + sum(x.sum().astype(jnp.float32) for x in jax.tree.leaves(drawn))
            if update is not None:
                state = update(state, drawn)
            return (state, acc), None

        keys = jax.random.split(jax.random.key(0), ops)
        return jax.lax.scan(one, carry, keys)[0]

    return run


def first_item(items: dict) -> dict:
    """One item of an add's `items` ([n] or, for sequences, [time, n] or [n, time]
    leading axes: `obs` has one axis more than `action`), to init a buffer."""
    lead = items["action"].ndim
    return jax.tree.map(lambda x: x[(0,) * lead], items)


def fill(add, state, items, times):
    step = jax.jit(add, donate_argnums=0)
    for _ in range(times):
        state = step(state, items)
    return state


class Pair:
    """Ours and flashbax's buffer of one kind, timed op by op into the report."""

    def __init__(self, report, kind, ours, theirs, items, items_theirs, fills, reps):
        self.report, self.kind, self.reps = report, kind, reps
        self.buffers = {"purejaxdrl": ours, "flashbax": theirs}
        self.items = {"purejaxdrl": items, "flashbax": items_theirs}
        self.states = {
            name: fill(
                b.add, b.init(first_item(self.items[name])), self.items[name], fills
            )
            for name, b in self.buffers.items()
            if b is not None
        }

    def time(self, op: str, unit: str, count: float, make, carry: bool = False):
        """Times `make(name, buffer, items)` on each side; `count` units per call.

        Both sides compile and warm up first, then their repeats alternate
        (A B, B A, ...), so a drift in the machine's load hits both alike.
        """
        names = list(self.states)
        runs = {
            name: jax.jit(make(name, self.buffers[name], self.items[name]),
                          donate_argnums=0)
            for name in names
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in names}

        def call(name: str) -> float:
            state = self.states[name]
            seconds, out = time_call(runs[name], (state, 0.0) if carry else state)
            self.states[name] = out[0] if carry else out
            return seconds

        for name in names:
            call(name)  # compiles: a warm-up, not timed
        for repeat in range(self.reps):
            for name in names if repeat % 2 == 0 else names[::-1]:
                times[name].append(call(name))
        rows = {}
        for name in names:
            figures = [{unit: count / t} for t in times[name]]
            rows[name] = self.report.add(f"{self.kind}: {op}", name, figures)
        if len(rows) == 2:
            a, b = (r.medians()[unit] for r in rows.values())
            self.report.add(f"{self.kind}: {op}", "ratio", [{"ours / flashbax": a / b}])


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.set_defaults(repeats=5)
    p.add_argument("--add-batch", type=positive_int, default=256)
    p.add_argument("--ops", type=positive_int, default=200)
    p.add_argument("--capacity", type=positive_int, default=1_000_000)
    args = p.parse_args(argv)
    capacity, batch = args.capacity, BATCH
    if args.tiny:
        capacity, batch, args.add_batch, args.ops = 4096, 32, 8, 4
    n, ops, reps = args.add_batch, args.ops, args.repeats
    half = capacity // 2 // n
    report = Report(
        f"Replay: capacity {capacity:,}, add {n}, sample {batch}, {ops} ops per timing"
    )
    fbx = None
    if importlib.util.find_spec("flashbax") is None:
        report.skip("flashbax", "not installed (pip install flashbax)")
    else:
        import flashbax as fbx
    items = transition(n)
    # flashbax's flat buffers take steps, not transitions: next_obs is the
    # next item's obs (what its sample returns as `second`).
    steps = {k: v for k, v in items.items() if k != "next_obs"}
    replay = pjd.replay

    def adds(name, buffer, items):
        return scan_adds(buffer.add, items, ops)

    def samples(name, buffer, items):
        return scan_samples(buffer.sample, ops)

    # Uniform transitions: our ring vs flashbax's flat buffer.
    pair = Pair(
        report,
        "uniform",
        replay.make_uniform_buffer(capacity, batch),
        fbx and fbx.make_flat_buffer(capacity, batch, batch, add_batch_size=n),
        items, steps, half, reps,
    )  # fmt: skip
    pair.time("add", "items/s", ops * n, adds)
    pair.time("sample", "batches/s", ops, samples, carry=True)

    # Prioritised: our exact sum-tree vs flashbax's prioritised flat buffer.
    platform = jax.devices()[0].platform
    pair = Pair(
        report,
        "prioritised",
        replay.make_prioritised_buffer(capacity, batch, alpha=0.6),
        fbx and fbx.make_prioritised_flat_buffer(
            capacity, batch, batch, add_batch_size=n, priority_exponent=0.6,
            device="gpu" if platform == "cuda" else platform,
        ),
        items, steps, half, reps,
    )  # fmt: skip
    pair.time("add", "items/s", ops * n, adds)
    pair.time("sample", "batches/s", ops, samples, carry=True)

    def updates(name, buffer, items):
        def update(state, drawn):
            if name == "purejaxdrl":
                index, probability = drawn.index, drawn.probability
            else:
                index, probability = drawn.indices, drawn.probabilities
            return buffer.set_priorities(state, index, probability + 0.5)

        return scan_samples(buffer.sample, ops, update)

    pair.time("sample + set priorities", "batches/s", ops, updates, carry=True)

    # Sequences of SEQ steps from n environments.
    traj = transition(n, (SEQ,))
    pair = Pair(
        report,
        "sequence",
        replay.make_sequence_buffer(capacity // SEQ, SEQ, batch),
        fbx and fbx.make_trajectory_buffer(
            add_batch_size=n, sample_batch_size=batch, sample_sequence_length=SEQ,
            period=SEQ, min_length_time_axis=SEQ, max_size=capacity,
        ),
        traj, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), traj), half // SEQ, reps,
    )  # fmt: skip
    pair.time("add", "steps/s", ops * n * SEQ, adds)
    pair.time("sample", "batches/s", ops, samples, carry=True)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
