"""A Gymnasium environment's `env.options`, checked before `gymnasium.make_vec`."""

import inspect
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import check_option_types, keyword_defaults, keyword_names
from purejaxdrl.env.option_names import check_options
from purejaxdrl.env.option_spelling import both


def typed_options(
    gym: Any, env_id: str, spec: Any, options: dict[str, Any]
) -> dict[str, Any]:
    """`options` checked against the defaults of `env_id` (`spec`) and its time limit.

    Gymnasium passes them on unchecked: `sutton_barto_reward=maybe` trained
    with a truthy string, `max_episode_steps=2.5` failed in a traceback.
    Environments write float parameters with integer defaults
    (MountainCar's `goal_velocity=0`), so an integer default is checked only
    where the parameter is annotated `int`; booleans and floats always.

    Raises:
      ConfigError: an option the environment does not take (`check_names`),
        one whose value is not of its default's kind (as
        `check_option_types`), or a time limit below 1.

    """
    defaults, annotations = dict(spec.kwargs), {}
    try:
        creator = spec.entry_point
        if isinstance(creator, str):
            creator = gym.envs.registration.load_env_creator(creator)
        defaults = keyword_defaults(creator) | defaults
        check_names(gym, env_id, creator, spec, options)
        parameters = inspect.signature(creator).parameters.values()
        annotations = {p.name: p.annotation for p in parameters}
    except ConfigError:
        raise
    except Exception:  # `make_vec` below says why it cannot load
        pass
    defaults = {
        name: value
        for name, value in defaults.items()
        if not isinstance(value, int | np.integer)
        or isinstance(value, bool)
        or annotations.get(name) in (int, "int")
    }
    if spec.max_episode_steps is not None:
        defaults["max_episode_steps"] = spec.max_episode_steps
    # Python's ints to the end: no int32 range (device envs and EnvPool's have).
    options = check_option_types(f"gymnasium:{env_id}", options, defaults, int32=False)
    steps = options.get("max_episode_steps")
    if isinstance(steps, int | float) and steps < 1:
        shown = defaults.get("max_episode_steps", 1000)
        raise ConfigError(
            f"env.options max_episode_steps={steps!r} must be >= 1 (the time "
            f"limit, in steps); pass e.g. {both('max_episode_steps', shown)}."
        )
    return options


def check_names(
    gym: Any, env_id: str, creator: Any, spec: Any, options: dict[str, Any]
) -> None:
    """Refuses an option neither `creator` nor `gymnasium.make` takes, by name.

    Gymnasium's own TypeError, nested in its creator's message, named the
    typo but not the keywords the class takes; this lists them and the
    closest, as a JAX environment's options are checked. A creator that
    takes **kwargs accepts any name: `make_vec` is left to judge.

    Raises:
      ConfigError: naming the unknown option and those the environment takes.

    """
    named, any_name = keyword_names(creator)
    if any_name:
        return
    made, _ = keyword_names(gym.make)  # max_episode_steps, disable_env_checker
    # `render_mode` is refused for training (`check_host_knobs`) and passed by
    # the renderer itself; `vectorization_mode` is purejaxdrl's own (taken
    # before these are checked), offered with its values.
    valid = (named | made | set(spec.kwargs)) - {"id", "render_mode"}
    if "batch_size" in options and "batch_size" not in valid:
        raise ConfigError(
            f"env.options 'batch_size' is not an option of gymnasium:{env_id}: "
            "it makes an EnvPool pool asynchronous, and a Gymnasium pool steps "
            "all its environments at once; for one process per environment "
            f"pass {both('vectorization_mode', 'async')}, and drop batch_size."
        )
    listed = ", ".join(sorted(valid | {"vectorization_mode (sync|async)"}))
    check_options(
        f"gymnasium:{env_id}", options, valid | {"vectorization_mode"}, listed
    )
