"""Environment options checked against their defaults' types, before building.

`--env.option memory_length=abc`, a time limit of 2**31, or a list where an
array parameter is expected would otherwise fail deep in the first trace (or
while jitting a program) with a traceback; here each is one line naming the
option, its value, its default and the fix.
"""

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.option_spelling import both
from purejaxdrl.yaml_text import read_text

# Integers reach the compiled programs (and EnvPool's C++) as int32.
INT32 = (-(2**31), 2**31)


def check_option_types(
    env_id: str,
    options: Mapping[str, Any],
    defaults: Mapping[str, Any],
    *,
    user: bool = False,
    int32: bool = True,
) -> dict[str, Any]:
    """Refuses an option that is not a number where its default is one.

    `--env.option memory_length=abc` would otherwise fail deep in the first
    trace. Text for a number or boolean (`"10"`, `"true"`, from Python) is
    first read as `--env.option` reads its values (YAML), so both spellings
    mean one value. Booleans must be booleans (or 0 and 1), integers integers
    in int32's range, floats any number. Where the default is a numeric array (gymnax's
    Acrobot-v1 `available_torque`), the value must be numbers of its shape.

    With `user` (a factory the user registered), a fraction for an integer
    default names the other fix too: the default itself may be what is wrong
    (`noise=0` for a knob that takes 0.1), which a library's typed field is not.
    Array defaults of a user's factory are not checked (it may take other
    shapes), but a list for one (the YAML form a config stores an array in)
    is made an array of the default's dtype, and a list for a tuple default
    a tuple, so the factory gets back the kind it declared.
    `int32=False` (Gymnasium's options, Python's to the end) lifts the range.

    Returns:
      `options`, text read as YAML where the default is a number or boolean,
      0 and 1 for a boolean made False and True, with a whole float where
      the default is an integer made one (1000.0: 1000), which a library's
      typed config (Playground's) refuses, an integer where the default is a
      float made a float (50: 50.0), and a value for an array default made a
      NumPy array of its dtype (for a user's factory: a list made an array of
      its default's kind and dtype, and a list for a tuple default a tuple).

    Raises:
      ConfigError: naming the option, its value, its kind and its default.

    """
    out = dict(options)
    for name, value in options.items():
        if name not in defaults:
            continue
        default = defaults[name]
        value = out[name] = _read_text(value, default)
        if user and (_is_array(default) or isinstance(default, tuple)):
            out[name] = _as_default_kind(env_id, name, value, default)
            continue
        if not user and _is_array(default):
            out[name] = _array_option(env_id, name, value, default)
            continue
        kind = np.asarray(default).dtype.kind if np.ndim(default) == 0 else None
        if isinstance(default, np.generic):  # shown as the user would write it
            default = default.item()
        is_bool = isinstance(value, bool)
        number = isinstance(value, int | float | np.number) and not is_bool
        if kind == "b" and number and value in (0, 1):  # as config fields read 1
            value = out[name] = bool(value)
            is_bool, number = True, False
        fraction = number and not float(value).is_integer()
        fits = {
            "b": isinstance(value, bool | np.bool_),
            "i": number and not fraction,
            "u": number and not fraction and value >= 0,
            "f": number,
        }.get(kind, True)
        if not fits and user and fraction and kind in ("i", "u"):
            raise ConfigError(
                f"env.options {name}={value!r} is not a whole number, but "
                f"{env_id}'s factory declares {name}={default!r}, an integer; "
                f"declare the default as {float(default)!r} if it takes "
                f"fractions, or pass a whole number."
            )
        if not fits:
            what = {"b": "true or false", "i": "an integer", "u": "an integer >= 0"}
            raise ConfigError(
                f"env.options {name}={value!r} is not {what.get(kind, 'a number')}"
                f" ({env_id}'s default: {default!r}); pass one, e.g. "
                f"{both(name, default)}."
            )
        if int32 and kind in ("i", "u"):
            _check_int32(name, value, default)
        if kind in ("i", "u") and isinstance(value, float | np.floating):
            out[name] = int(value)  # whole, as checked
        elif kind == "f" and not isinstance(value, float | np.floating):
            # 50 for a float field: an int32 leaf where float32 is expected
            # fails (or changes the parameters' types) deep in a trace.
            out[name] = float(value)
    return out


def _read_text(value: Any, default: Any) -> Any:
    """`value`, read as `--env.option` reads it where it is text for numbers.

    `{"episode_length": "10"}` from Python was refused as "'10' is not an
    integer" while `--env.option episode_length=10` (the same text, read as
    YAML) trained. Only where the default is a number, a boolean or a numeric
    array: text for a text option stays text. Text that is no YAML stays, for
    the refusal to name.
    """
    if not isinstance(value, str):
        return value
    scalar = np.ndim(default) == 0 and np.asarray(default).dtype.kind in "biuf"
    return read_text(value) if scalar or _is_array(default) else value


def _check_int32(name: str, value: float, default: Any) -> None:
    """Refuses an integer option outside int32's range.

    Converting it for the compiled program raised an OverflowError traceback
    (at make, or while jitting the first chunk). An integer of 2**31 or more
    is no real time limit anyway.
    """
    if INT32[0] <= value < INT32[1]:
        return
    raise ConfigError(
        f"env.options {name}={value!r} must be in [-2**31, 2**31): the "
        "environment keeps its integers as int32 (in the compiled program, or "
        f"EnvPool's C++); pass a smaller one, e.g. {both(name, default)}."
    )


def _is_array(default: Any) -> bool:
    """A numeric array of one or more dimensions (not a list or tuple)."""
    is_array = isinstance(default, np.ndarray | jax.Array) and np.ndim(default) > 0
    return is_array and np.dtype(default.dtype).kind in "biuf"


def _as_default_kind(env_id: str, name: str, value: Any, default: Any) -> Any:
    """A list for a user's tuple or numeric array default, as that kind.

    A config keeps arrays and tuples as YAML writes them (lists), so its
    config.yaml reloads equal; the factory's code multiplies by an array or
    hashes a tuple, which a list broke in the first trace. Other values pass
    as given: a user's factory may take them.
    """
    if not isinstance(value, list):
        return value
    if isinstance(default, tuple):
        return tuple(value)
    try:
        numbers = np.asarray(value)
    except ValueError:  # ragged nested lists: the factory's to judge
        return value
    dtype = np.dtype(default.dtype)
    if numbers.dtype.kind not in "biuf":
        return value
    whole = numbers.dtype.kind != "f" or bool(np.all(numbers == np.round(numbers)))
    if (dtype.kind == "b" and numbers.dtype.kind != "b") or (
        dtype.kind in "iu" and not whole
    ):
        listed = np.asarray(default).tolist()
        raise ConfigError(
            f"env.options {name}={value!r} does not fit {env_id}'s default, an "
            f"array of {dtype} ({listed}); pass values of that kind, or declare "
            "the default with the dtype it takes."
        )
    array = numbers.astype(dtype)
    return jnp.asarray(array) if isinstance(default, jax.Array) else array


def _array_option(env_id: str, name: str, value: Any, default: Any) -> np.ndarray:
    """`value` (a YAML list, an array) as an array of `default`'s dtype and shape.

    A Python list stayed a list, which gymnax's params took as a pytree of
    scalars (the first trace raised), and a string reached `jnp` as one.
    """
    dtype, shape = np.dtype(default.dtype), np.shape(default)
    try:
        numbers = np.asarray(value, dtype=object)
    except ValueError:  # ragged nested lists
        numbers = np.asarray(None, dtype=object)

    def fits_kind(x: Any) -> bool:  # booleans for a bool array, else numbers
        is_bool = isinstance(x, bool | np.bool_)
        if dtype.kind == "b":
            return is_bool
        return isinstance(x, int | float | np.number) and not is_bool

    fits = numbers.shape == shape and all(fits_kind(x) for x in numbers.ravel())
    if fits and dtype.kind in "iu":
        exact = numbers.astype(np.float64)
        fits = bool(np.all(exact == np.round(exact)))
        fits = fits and bool(np.all((exact >= INT32[0]) & (exact < INT32[1])))
        fits = fits and (dtype.kind == "i" or bool(np.all(exact >= 0)))
    if fits:
        return np.asarray(numbers.tolist(), dtype=dtype)
    listed = np.asarray(default).tolist()
    what = {"b": "booleans", "i": "integers", "u": "integers >= 0"}
    size = f"{shape[0]}" if len(shape) == 1 else f"shape {shape} of"
    raise ConfigError(
        f"env.options {name}={value!r} must be a list of {size} "
        f"{what.get(dtype.kind, 'numbers')} ({env_id}'s default: {listed}); pass "
        f"e.g. {both(name, listed, str(listed).replace(' ', '').lower())}."
    )
