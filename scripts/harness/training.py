"""Training figures at a script's sizes, and the machine's ceiling beside them.

`TINY` (the toy sizes of `--tiny`) and `TINY_NOTE` (what a figure at those
sizes is); `train_figures`, `timed_train` and `train_seeded` (a run's steps/s,
compile seconds and return); `ceiling` and `add_ceiling` (env step and policy
act alone, no learning); `ablation` (seeds with and without a scratch patch).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax

from .timing import Figures, compile_ahead, time_call

if TYPE_CHECKING:
    from .report import Report


# `--tiny`'s training sizes: CartPole-sized, compiled in seconds on a CPU.
TINY = {
    "num_envs": 4,
    "unroll_length": 8,
    "total_steps": 4 * 8 * 4,
    "num_logs": 2,
    "devices": 1,
}


def train_figures(result: Any) -> Figures:
    """A `TrainResult`'s (or `SweepResult` run's) steps/s, compile s and return."""
    return {
        "steps_per_s": result.steps_per_second,
        "compile_s": result.compile_seconds,
        "return": result.mean_return,
    }


def timed_train(config: Any, **kwargs: Any) -> tuple[Any, Figures]:
    """`pjd.train(config, **kwargs)` and its figures, timed to its return.

    `steps_per_s` is env steps over train's wall-clock time less its compile
    seconds, up to the return: the setup before compiling, training, the
    evaluation and checkpoint after the last chunk, the wait for that
    checkpoint's write, the run's summary files. Train's compile seconds also
    hold W&B's start, the checkpointer's setup and the first state, so those
    are not counted.
    `loop_steps_per_s` is TrainResult's own (up to the last chunk's record).
    """
    import purejaxdrl as pjd

    start = time.perf_counter()
    result = pjd.train(config, **kwargs)
    seconds = time.perf_counter() - start - result.compile_seconds
    return result, {
        "steps_per_s": result.env_steps / seconds,
        "loop_steps_per_s": result.steps_per_second,
        "compile_s": result.compile_seconds,
        "return": result.mean_return,
    }


def train_seeded(config: Any, seed: int) -> Figures:
    """Trains `config` (a TrainConfig) with `seed`: its `train_figures`, and the
    return of its final evaluation as `eval_return` (NaN without one).

    Steps/s is TrainResult's: the last chunk's record, taken when its training
    ended and before the final evaluation is dispatched (training alone, as
    brax's `training/sps`).
    """
    import purejaxdrl as pjd

    result = pjd.train(pjd.apply_overrides(config, {"seed": seed}))
    figures = {**train_figures(result), "eval_return": result.eval_return}
    return figures


def ceiling(config: Any, repeats: int = 1) -> list[Figures]:
    """The machine's ceiling for `config`: env step + policy act, no learning.

    The same unrolls as training (`config.num_updates` of them, one compiled
    scan) without the learner: the steps/s no training of this config can
    beat on this machine. Runs on device environments. Compiled ahead, run
    once untimed (a warm-up), then timed `repeats` times: one figures dict
    each. Every leaf of every trajectory (observations, actions, the policy's
    outputs, info) is summed into the output, so XLA cannot drop what the
    reward alone does not need.
    """
    import purejaxdrl as pjd

    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(pjd.rng.make_key(config.seed, config.rng_impl))

    def run(state: Any) -> jax.Array:
        def body(actor: Any, key: jax.Array) -> tuple[Any, jax.Array]:
            actor, traj = pjd.runners.unroll(
                exp.env,
                state.env_params,
                exp.agent,
                exp.agent.acting_params(state.agent),
                actor,
                key,
                config.unroll_length,
                config.scan_unroll,
            )
            leaves = jax.tree.leaves(traj)
            return actor, sum(x.sum().astype("float32") for x in leaves)

        keys = jax.random.split(state.key, config.num_updates)
        return jax.lax.scan(body, state.actor, keys)[1].sum()

    compile_s, program = compile_ahead(run, state)
    jax.block_until_ready(program(state))  # warm-up: first-call costs
    steps = config.num_updates * config.steps_per_update
    runs = []
    for _ in range(repeats):
        seconds, _ = time_call(program, state)
        runs.append({"steps_per_s": steps / seconds, "compile_s": compile_s})
    return runs


def ablation(
    config: Any, seeds: int, patch: Callable[[], Callable[[], None]]
) -> tuple[list[Figures], list[Figures]]:
    """`config` as built and with `patch()` applied: a sweep of `seeds` each.

    `patch` changes the package in place and returns the function that undoes
    it (undone even when the sweep fails). Returns each seed's final training
    return, `train_return`, without and with the patch.
    """
    import purejaxdrl as pjd

    def returns() -> list[Figures]:
        result = pjd.sweep(config, seeds=seeds, console=False)
        return [{"train_return": float(r)} for r in result.final_return]

    built = returns()
    undo = patch()
    try:
        patched = returns()
    finally:
        undo()
    return built, patched


def add_ceiling(
    report: Report, row: str, name: str, config: Any, sps: float, repeats: int = 1
) -> None:
    """Adds `config`'s act+env ceiling (`repeats` timed runs after a warm-up)
    and `name`'s training steps/s against the ceiling's median."""
    ceil = report.add(row, f"ceiling for {name} (act+env)", ceiling(config, repeats))
    ratio = sps / ceil.medians()["steps_per_s"]
    report.add(row, f"{name} training / ceiling", [{"ratio": ratio}])


# What a `--tiny` ratio or clock check says in its note: toy sizes measure
# first-call costs, not throughput.
TINY_NOTE = "tiny: a code-path check, not a measurement"
