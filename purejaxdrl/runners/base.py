"""The `Runner` interface: what a run's recipe (`training.train`) needs of a runner.

Two runners implement it. Anakin (`anakin.py`) compiles environments, rollout
and update into one program per chunk of updates; Sebulba (`sebulba.py`) feeds
a learner from actor threads on host environments. The recipe, its chunk loop,
checkpoints and resume are written once, against this interface; which runner
serves a config is decided once, where the experiment is built.
"""

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import jax
from jax.sharding import Mesh

from purejaxdrl.agents.base import Agent
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.types import Metrics, PRNGKey

ENV_METRIC = "episode/env/"
"""The prefix of a runner's per-update metric `<ENV_METRIC><name>_sum`: the sum
of an environment's metric `<name>` (`env.base.METRICS`) over the episodes
ended in the update, beside `episode/count`; records hold `env/<name>`."""


class EnvError(RuntimeError):
    """The environments (or the policy acting on them) raised; the run stopped."""


class NonFiniteError(RuntimeError):
    """A loss, metric or parameter became NaN or infinite; the run stopped.

    Also what a host environment's NaN or infinite observation or reward
    raises (`host_waits.HostNonFiniteError`); exported as
    `purejaxdrl.NonFiniteError`.
    """


class Lowered(Protocol):
    """A program ready to compile: `jax.jit(f).lower(...)`, or `Ready`."""

    def compile(self) -> Callable[..., Any]: ...


class Ready:
    """A host-side program that needs no compiling: `compile()` returns it.

    Lets host code sit beside lowered XLA programs wherever a run compiles its
    programs together (`training.programs.compile_all`).
    """

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    def compile(self) -> Callable[..., Any]:
        """The function itself."""
        return self.fn


class Runner(Protocol):
    """How experience meets the learner, for device or host environments.

    Every state a runner makes is a pytree with an `.agent` field (the
    learner's AgentState): checkpoints, NaN checks and policy export read only
    that and the state as a whole.

    Attributes:
      mesh: the learner's devices (axis `data`).
      steps_per_update: environment steps per update, all devices.
      dispatch_ahead: whether a chunk returns before its updates finish
        (a queued XLA program), so the loop dispatches the next before reading
        it; a host-driven chunk returns when its updates are done, and takes
        `stop=` (() -> bool, polled after each update) to end early, all
        processes after the same update, with the metrics of those done.
      late_compile_seconds: compile time spent inside chunks so far (a
        program whose shapes only its first input gives, compiled then):
        the loop counts it as compilation, not training. 0 for the rest.
      compiles_late: whether a program compiles inside the first chunk (the
        progress line says so, not "compiling took 0s").

    """

    mesh: Mesh
    steps_per_update: int
    dispatch_ahead: bool
    late_compile_seconds: float
    compiles_late: bool

    def init(self, key: PRNGKey) -> Any:
        """A fresh state for a run seeded with `key`."""
        ...

    def chunk(self, length: int) -> Callable[[Any], tuple[Any, Any]]:
        """`state -> (state, metrics [length])`: the next `length` updates.

        The programs `lower` returns for a chunk length are this function's.
        """
        ...

    def abstract_state(self, key: PRNGKey) -> Any:
        """The state's shapes, dtypes and shardings, computing nothing."""
        ...

    def lower(
        self, abstract: Any, key: PRNGKey, lengths: list[int], *, need_init: bool
    ) -> dict[Any, Callable[[], Lowered]]:
        """The programs to compile, each as a function returning it lowered.

        `init` (`key -> state`) when `need_init`, and for each chunk length n
        a program `state -> (state, metrics [n])` of n updates.
        """
        ...

    def session(self, state: Any, key: PRNGKey, start: int) -> Any:
        """A context manager around the chunks of a run resumed at `start`.

        It starts and stops what the runner needs (threads, host pools).
        """
        ...

    def close(self) -> None:
        """Releases what the runner holds outside its state (host pools)."""
        ...

    def resume_notes(self, saved_devices: int | None) -> list[str]:
        """What a resumed run says about its state.

        `saved_devices`: the learner devices its checkpoint was saved on.
        """
        ...


def replicated_metrics(agent: Agent, metrics: Metrics) -> Metrics:
    """An update's `metrics`, inside a runner's `shard_map` over `data`, replicated.

    A learner that all-reduces (`agent.axis_name`) returns the same metrics on
    every device already. One that does not (it learns on one device's data)
    has them averaged over `data` here, so that they are marked replicated, as
    the program's `P()` output for metrics requires.
    """
    if agent.axis_name is None:
        return jax.lax.pmean(metrics, DATA_AXIS)
    return metrics


@contextlib.contextmanager
def no_session() -> Iterator[None]:
    """A session that starts nothing (a runner whose chunks are whole programs)."""
    yield
