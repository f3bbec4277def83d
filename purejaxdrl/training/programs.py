"""A run's compiled programs: its chunks of updates, init and evaluation."""

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import jax

from purejaxdrl.training.experiment import Experiment
from purejaxdrl.types import PRNGKey

# Evaluation keys fold this into the run's key: a stream training never uses.
EVAL_STREAM = 0x45564C


class Programs(NamedTuple):
    """The compiled programs of one run.

    Attributes:
      chunks: chunk length -> `state -> (state, metrics)`, `length` updates.
      init: `key -> state`, or None when the state is restored.
      evaluate: `(state, updates done) -> EvalResult`, or None
        without evaluation episodes.

    """

    chunks: dict[int, Any]
    init: Any
    evaluate: Any


def compile_all(lower: dict[Any, Callable[[], Any]]) -> dict[Any, Any]:
    """Lowers programs one by one and compiles each on its own thread.

    XLA compiles outside the GIL, so a program compiles while the next one is
    traced and lowered, and all of them compile side by side on the cores.

    Args:
      lower: name -> a function returning the lowered program (`jit.lower`);
        longest to compile first.

    Returns:
      name -> the compiled program.

    """
    with ThreadPoolExecutor(len(lower) or 1) as pool:
        futures = {k: pool.submit(f().compile) for k, f in lower.items()}
        return {k: f.result() for k, f in futures.items()}


def compile_programs(
    exp: Experiment,
    abstract: Any,
    key: PRNGKey,
    lengths: list[int],
    *,
    need_init: bool,
) -> Programs:
    """Compiles the chunk programs of `lengths`, init if needed, and evaluation.

    Args:
      exp: the run's experiment (its runner lowers the chunks and init).
      abstract: the runner state's shapes and shardings.
      key: the run's key (init's argument; evaluation folds in its stream).
      lengths: the chunk lengths the schedule uses, in its order.
      need_init: compile `init` (a run that does not restore its state).

    Returns:
      The compiled Programs.

    """
    lower = exp.runner.lower(abstract, key, lengths, need_init=need_init)
    if exp.config.eval.episodes:
        evaluation = exp.player.training_evaluation
        lower["evaluate"] = functools.partial(evaluation, abstract, eval_key(key))
    programs = compile_all(lower)
    evaluate = programs.pop("evaluate", None)
    init = programs.pop("init", None)
    return Programs(chunks=programs, init=init, evaluate=evaluate)


def eval_key(key: PRNGKey) -> PRNGKey:
    """The key of a run's evaluations: a stream of its own.

    Training never draws from it, so it is the same with evaluation on or off.
    """
    return jax.random.fold_in(key, EVAL_STREAM)
