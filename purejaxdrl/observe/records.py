"""A sweep's or PBT run's records read back: a damaged or missing one named.

Sweeps and PBT write their records whole (`training.run_files.write_atomically`)
or once, when they finish; reading one that something else changed or removed
gives one ConfigError naming the file and what to do, not a traceback. It lives
below `sweeps` so that `curves` (`purejaxdrl plot`) reads a sweep or PBT
directory as `load_sweep`, `load_pbt` and `--resume` do.
"""

import contextlib
import pathlib
from collections.abc import Iterator

import yaml

from purejaxdrl.config import ConfigError


class RefusedValue(ValueError):
    """A record's own field value that the config refuses: the record is damaged."""


@contextlib.contextmanager
def reading(path: pathlib.Path, fix: str) -> Iterator[None]:
    """Turns a damaged `path`'s parse or missing-key errors into one ConfigError.

    The message names the file, what is wrong with it and `fix`.
    """
    try:
        yield
    except ConfigError:
        raise
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as e:
        why = " ".join(f"{type(e).__name__}: {e}".split())
        # A parser's text can be long; a refused value's names the value whole.
        why = (why if isinstance(e, RefusedValue) else why[:160]).rstrip(".")
        raise ConfigError(f"{path} is damaged or incomplete ({why}); {fix}.") from None


def restore_or_restart(what: str) -> str:
    """The fix for a damaged record that is only ever replaced whole."""
    return (
        "it is replaced whole, so something else changed it: restore it from a "
        f"copy, or start a new {what}"
    )


def present(path: pathlib.Path, what: str) -> pathlib.Path:
    """`path`, a file its `what` (`sweep`, `PBT run`) wrote, if it is there.

    Raises:
      ConfigError: it is missing (removed since), naming it and the fix.

    """
    if not path.is_file():
        raise ConfigError(
            f"{path} is missing (the {what} wrote it, so something removed it "
            f"since): restore it from a copy, or start a new {what}."
        )
    return path
