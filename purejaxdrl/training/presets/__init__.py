"""Presets: the tuned configs of `envs/*.yaml`, each with the score it must reach.

One concept a module: `files` (where the shipped files are, reading one, its
top level), `sections` (an algorithm section's target, and the section a
user's algorithm takes), `no_section` (the refusal of an algorithm a preset
has no section for, in each form it is shown), `choice` (which preset a
command starts from, and what an id passed as a preset means) and `load`
(`Preset`, `load_preset`: a file's sections read into a `TrainConfig`).

The names below load when first used (PEP 562's `__getattr__`), as the top
level's do: `training.config` asks `choice` how to name a section's fix, and
`load` builds a `TrainConfig`, so importing `load` here at once would be an
import circle. `_NAMES` says where each name lives.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from purejaxdrl.training.presets.files import (
        preset_algorithms as preset_algorithms,
    )
    from purejaxdrl.training.presets.files import preset_names as preset_names
    from purejaxdrl.training.presets.files import presets_dir as presets_dir
    from purejaxdrl.training.presets.files import presets_with as presets_with
    from purejaxdrl.training.presets.load import Preset as Preset
    from purejaxdrl.training.presets.load import load_preset as load_preset
    from purejaxdrl.training.presets.load import read_preset as read_preset
    from purejaxdrl.training.presets.no_section import (
        NoSectionError as NoSectionError,
    )

_NAMES = {
    "files": ("preset_algorithms", "preset_names", "presets_dir", "presets_with"),
    "load": ("Preset", "load_preset", "read_preset"),
    "no_section": ("NoSectionError",),
}
_LAZY = {name: module for module, names in _NAMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """`presets.NAME` of the names above: imports its module on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # once: later uses find it without this function
    return value


def __dir__() -> list[str]:
    """The module's names, the ones not loaded yet included."""
    return sorted({*globals(), *_LAZY})
