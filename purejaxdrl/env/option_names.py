"""Environment option names checked against those an env takes, before building.

A misspelt `--env.option` would otherwise reach the environment's constructor
(a TypeError deep in a trace) or, where an adapter passes options on as a
config, be silently ignored; here it is one line naming it, the closest valid
name and the options to choose from.
"""

import difflib
from collections.abc import Iterable

from purejaxdrl.config import ConfigError
from purejaxdrl.env.option_spelling import placeholder

PRESET = ", or the preset's env.options"
# Options only the Playground adapter takes; environments.md names them.
PLAYGROUND_ONLY = ("randomize", "randomizer")
RANDOMISES = (
    "domain randomisation (randomize, randomizer) is MuJoCo Playground's only: "
    "use a playground/<Name> task, e.g. --env.id playground/CartpoleBalance "
    "(env.id='playground/CartpoleBalance' in Python), or drop it; "
)


def check_options(
    env_id: str,
    options: Iterable[str],
    valid: Iterable[str],
    listed: str | None = None,
    unusable: Iterable[str] = (),
) -> None:
    """Refuses environment options that `env_id` does not take, before building it.

    Args:
      env_id: the environment, for the message.
      options: the option names given.
      valid: every name `env_id` takes (the "did you mean" is drawn from them).
      listed: the options the message offers, where not all of `valid`: an
        adapter leaves out those it takes only to refuse (and says so briefly).
      unusable: names in `valid` that `listed` calls not usable: never offered
        as "did you mean"; where one is the closest name, the message says it
        is not usable here instead (a suggestion the same line refuses would
        send the user round in a circle).

    Raises:
      ConfigError: naming the unknown options and listing the valid ones.

    """
    valid = sorted(valid)
    unknown = sorted(set(options) - set(valid))
    if not unknown:
        return
    # With several unknown names, the hint says which one it is for.
    hint = _hint(unknown[0], valid, set(unusable), named=len(unknown) > 1)
    if set(unknown) & set(PLAYGROUND_ONLY):  # from environments.md, on CartPole
        hint = RANDOMISES + hint
    names = ", ".join(repr(k) for k in unknown)
    what = "is not an option" if len(unknown) == 1 else "are not options"
    if listed is None:
        listed = ", ".join(valid) or "(none)"
    raise ConfigError(
        f"env.options {names} {what} of {env_id}: {hint}its options are "
        f"{listed}; fix the name in {placeholder(PRESET)}, or drop it."
    )


def _hint(name: str, valid: list[str], unusable: set[str], *, named: bool) -> str:
    """The "did you mean X? " for the closest usable name; "" where none is close.

    Where the closest of all the names is an unusable one, that is what the
    user meant most likely: the hint says it is not usable here, rather than
    offering a usable name further off. `named`: the hint says it is `name`'s.
    """
    closest = difflib.get_close_matches(name, valid, n=1)
    if closest and closest[0] in unusable:
        to = f" to {name!r}" if named else ""
        return f"{closest[0]!r} (the closest name{to}) is not usable here; "
    usable = [k for k in valid if k not in unusable]
    close = difflib.get_close_matches(name, usable, n=1)
    about = f" for {name!r}" if named else ""
    return f"did you mean {close[0]!r}{about}? " if close else ""
