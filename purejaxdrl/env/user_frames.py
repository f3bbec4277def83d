"""Where in a user's own code an error raised while purejaxdrl traced it.

An error inside a user's environment, raised while JAX traces it, ends in a
one-line refusal on the command line; these helpers find the line of the
user's code to name in it (purejaxdrl.frames tells whose a file is),
and tell a call with the wrong number of arguments from an error inside.
"""

import linecache
import os
import types

from purejaxdrl.frames import owner

# The signatures purejaxdrl calls a user's methods with, by method name:
# an `Env`'s (env/base.py) and a gymnax Environment's (gymnax_env.py).
SIGNATURES = {
    "reset": "reset(key, params)",
    "step": "step(key, state, action, params)",
    "reset_env": "reset_env(key, params)",
    "step_env": "step_env(key, state, action, params)",
}


def user_frame(error: BaseException) -> str | None:
    """`file:line: source` of the innermost frame of the user's own code.

    Args:
      error: an exception, with its traceback.

    Returns:
      The frame's file (relative to the working folder where it is inside
      it), line number and stripped source line; None where no frame of
      `error.__traceback__` is the user's.

    """
    found = None
    tb: types.TracebackType | None = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if owner(code.co_filename) == "user":
            found = (code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if found is None:
        return None
    filename, line = found
    relative = os.path.relpath(filename)
    shown = filename if relative.startswith("..") else relative
    source = linecache.getline(filename, line).strip()
    return f"{shown}:{line}: {source}" if source else f"{shown}:{line}"


def arity_error(error: BaseException | None, where: str) -> bool:
    """Whether `error` is the method `where` called with too many or few arguments.

    Python names the method in such a TypeError ("Corridor.step() takes 4
    positional arguments but 5 were given"), and the method never ran: a
    TypeError raised inside it (a helper's `step` called wrongly) has the
    method's frame in its traceback.
    """
    if not isinstance(error, TypeError) or where not in SIGNATURES:
        return False
    text = str(error)
    named = text.startswith(f"{where}()") or f".{where}()" in text.split(" ")[0]
    tb, ran = error.__traceback__, False
    while tb is not None:
        ran = ran or tb.tb_frame.f_code.co_name == where
        tb = tb.tb_next
    return named and not ran and "positional argument" in text


def error_text(error: BaseException, limit: int = 300) -> str:
    """`error`'s message on one line, cut at a word, its "See URL" kept whole.

    JAX's messages end with a link to their page of errors: cut mid-word, it
    no longer opens, so the link is set apart and the text before it cut.
    """
    text = " ".join(str(error).split())
    text, see, url = text.partition(" See https://")
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " ..."
    return f"{text} (see https://{url.split()[0]})" if see else text


def concrete_fix(error: BaseException, where: str) -> str:
    """The fix for Python control flow on a traced value, or "" for another error.

    `if state.pos > 3:`, `int(action)`, `float(x)`: the commonest mistake in
    a first JAX environment; JAX names the error but not the rewrite.
    """
    import jax

    kinds = (
        jax.errors.TracerBoolConversionError,
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerIntegerConversionError,
    )
    if not isinstance(error, kinds):
        return ""
    return (
        "a Python if, int() or float() on a traced value cannot run under jit; "
        f"in the environment's {where}, use jnp.where(cond, a, b) or jax.lax.cond "
        "/ jax.lax.select for a branch, and x.astype(jnp.int32) for a dtype"
    )
