"""Gymnasium's API, said in one line where a user's environment breaks it.

A user's environment that breaks the contract (a `reset` without its info, a
`step` of Gym's old four values, an observation of another shape than its
space's, a reward that is an array) fails inside Gymnasium's vector code, with
a message that names neither the environment nor the method ("not enough
values to unpack"). `api_errors` wraps the pool's own `reset` and `step`: an
error raised by Gymnasium's code itself (its vector env, its wrappers' checks;
numpy's frames under it aside) becomes one line naming the environment, the
method and the rule.

Nothing is stepped for the check (a second instance would take an action the
environment may refuse, cost its start-up again, or be one too many), and an
error raised in the environment's own code keeps its traceback: a bug there
must show where.
"""

import contextlib
import os
import re
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from purejaxdrl.config import ConfigError

STEP = "(obs, reward, terminated, truncated, info)"
RULES = {
    "reset": "Gymnasium's reset returns (obs, info), info a dict (`return obs, {}`)",
    "step": f"Gymnasium's step returns the 5 values {STEP}, reward one number and "
    "terminated / truncated bools (Gym's old 4-value step does not fit)",
}
# How Gymnasium calls each method, where the environment's cannot be called so
# (old Gym's `def reset(self)`): the signature is the fault, not the return.
SIGNATURES = {
    "reset": "Gymnasium calls reset(seed=..., options=...): define it as def "
    "reset(self, *, seed=None, options=None) and call super().reset(seed=seed) "
    "in it",
    "step": "Gymnasium calls step(action): define it as def step(self, action)",
}


@contextlib.contextmanager
def api_errors(label: str, method: str, space: Any) -> Iterator[None]:
    """Turns Gymnasium's error on what `method` returned into one line.

    Args:
      label: the environment, `gymnasium:<id>`.
      method: `reset` or `step`.
      space: the environment's observation space, named in the message.

    Raises:
      ConfigError: the error came from Gymnasium's own code, naming
        `label`, the method, its rule and the error.

    """
    try:
        yield
    except (ValueError, TypeError, IndexError, AssertionError, AttributeError) as error:
        if not raised_by_gymnasium(error):
            raise  # the environment's own code: its traceback says where
        raise refusal(label, method, space, error) from None
    except WorkerApiBreak as error:  # an async pool's worker, in Gymnasium's code
        raise refusal(label, method, space, error.args[0]) from None


def refusal(label: str, method: str, space: Any, error: BaseException) -> ConfigError:
    """The one line for Gymnasium's `error` on `method`: its call or its return."""
    first = (str(error).strip().splitlines() or [""])[0]
    # Python's words where a call does not fit the signature called.
    call = rf"\b{method}\(\) (got an unexpected keyword|takes|missing)"
    if isinstance(error, TypeError) and re.search(call, first):
        return ConfigError(
            f"{label}: Gymnasium could not call its {method} "
            f"({type(error).__name__}: {first}); {SIGNATURES[method]}."
        )
    return ConfigError(
        f"{label}: Gymnasium could not take what its {method} "
        f"returned ({type(error).__name__}: {first}); {RULES[method]}, and "
        f"observations fit observation_space {space}: check what {method} "
        "returns."
    )


class WorkerApiBreak(Exception):
    """An async pool's worker raised in Gymnasium's code: args[0] its error."""


def raise_worker_errors(pool: Any, successes: Any) -> None:
    """Gymnasium's `AsyncVectorEnv._raise_if_errors`, telling who raised apart.

    Installed on each async pool (`pool` its AsyncVectorEnv). A worker sends
    its error's type, value and formatted traceback; Gymnasium re-raised the
    type in this process after warning the traceback in ANSI colours, so a
    worker's result of the wrong shape (failing in Gymnasium's shared-memory
    copy) read as 39 lines naming neither the environment nor the rule. Where
    the worker's innermost frame past numpy's is Gymnasium's, this raises
    WorkerApiBreak for `api_errors`' one line, with no warnings; an error of
    the environment's own code is reported as Gymnasium reports it (its
    traceback says where).
    """
    if all(successes):
        return
    from gymnasium import logger
    from gymnasium.vector.async_vector_env import AsyncState

    count = pool.num_envs - sum(successes)
    errors = [pool.error_queue.get() for _ in range(count)]
    for index, *_ in errors:  # Gymnasium shuts the worker down: its pipe closes
        pool.parent_pipes[index].close()
        pool.parent_pipes[index] = None
    pool._state = AsyncState.DEFAULT
    _, exctype, value, trace = errors[-1]
    if _innermost_is_gymnasium(trace):
        raise WorkerApiBreak(exctype(value))
    for index, _, _, trace in errors:  # as "%s": a `%` in it broke Gymnasium's
        logger.error("Received the following error from Worker-%s", index)
        logger.error("%s", trace)
    raise exctype(value)


def _innermost_is_gymnasium(trace: str) -> bool:
    """Whether a formatted traceback's innermost frame past numpy's is Gymnasium's."""
    import gymnasium
    import numpy

    own = os.path.dirname(gymnasium.__file__) + os.sep
    skipped = os.path.dirname(numpy.__file__) + os.sep
    files = re.findall(r'^  File "(.+?)", line \d+', trace, flags=re.MULTILINE)
    for path in reversed(files):
        if not path.startswith(skipped):
            return path.startswith(own)
    return False


@contextlib.contextmanager
def quiet_reset_signature() -> Iterator[None]:
    """Gymnasium's two warnings about `reset`'s signature, kept out.

    Its passive checker warns (in ANSI colours) where `reset` takes no `seed`
    or `options`, before the first reset fails to call it; `api_errors` then
    says so in one line. Only those warnings are ignored, and only around the
    pool's first reset, made where the pool is built: `catch_warnings` swaps
    the process's filters, so it is not for the actor threads' calls.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r".*`Env\.reset` can be passed",
            category=DeprecationWarning,
        )
        yield


# `catch_warnings` swaps the process's warning state: one thread at a time.
_HELD = threading.Lock()


@contextlib.contextmanager
def warnings_unless_refused() -> Iterator[None]:
    """Warnings raised inside, shown after it; dropped where it ends in a ConfigError.

    Gymnasium's passive checker warns (2-4 lines, in raw ANSI colours) about
    a reset or step of the wrong shape before `api_errors`' one line says
    what is wrong; for an environment that works, its warnings are worth
    seeing. Scope: the pool's first reset and its first sync step only (the
    checker's own calls), one thread at a time; another thread's warning in
    that window is held with them.
    """
    shown: list[warnings.WarningMessage] = []
    try:
        with _HELD, warnings.catch_warnings(record=True) as held:
            try:
                yield
            except ConfigError:
                held.clear()  # the one line says it all
                raise
            finally:
                shown = list(held)
    finally:  # after catch_warnings has put the process's display back
        for w in shown:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file)


def raised_by_gymnasium(error: BaseException) -> bool:
    """Whether the innermost frame past numpy's is Gymnasium's own.

    Numpy's frames are skipped: Gymnasium's vector env writes each
    environment's result into its batch arrays with numpy, which is where a
    result of the wrong shape or type fails. A user's environment is never in
    Gymnasium's package, so its own errors are never taken for these.
    """
    modules = []
    tb = error.__traceback__
    while tb is not None:
        modules.append(str(tb.tb_frame.f_globals.get("__name__", "")))
        tb = tb.tb_next
    for module in reversed(modules):
        if module == "numpy" or module.startswith("numpy."):
            continue
        return module.startswith("gymnasium.")
    return False
