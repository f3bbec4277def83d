"""What a sweep or a population is given, checked, and how it speaks.

The base config and its target score, the device memory, the directory a
resume reads; `messenger`, which keeps a run's messages and passes them on.
"""

import dataclasses
import functools
import math
import numbers
import pathlib
import sys
import warnings
from collections.abc import Callable, Collection, Iterable
from typing import Any

import yaml

from purejaxdrl.agents.registry import DEFAULT_ALGO
from purejaxdrl.config import ConfigError, require_config
from purejaxdrl.config_types import flat_fields
from purejaxdrl.env.host import is_host_env
from purejaxdrl.observe.progress import in_notebook
from purejaxdrl.observe.records import reading, restore_or_restart
from purejaxdrl.setup_warnings import SetupWarning, user_stacklevel
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.presets.load import Preset, load_preset

_RECORDS = {"sweep.yaml": "sweep", "pbt.yaml": "pbt", "config.yaml": "train"}


def _resumed_by(path: pathlib.Path, kind: str) -> str:
    """How `kind`'s directory `path` resumes, on the command line and in Python."""
    python = f"pjd.resume_{kind}({str(path)!r})"
    if kind == "train":
        python = f"pjd.train(config, resume={str(path)!r})"
    return f"`purejaxdrl {kind} --resume {path}` ({python} in Python)"


def _what_is_there(path: pathlib.Path, command: str) -> str:
    """Why `path` is no `command` directory: nothing there, or the runs inside it.

    A folder a `--run-dir` made holds its runs one level down: the one to
    pass is named, with how it resumes (a `command` directory first).
    """
    if not path.is_dir():
        return "no such directory" if not path.exists() else "a file, not a directory"
    inside = sorted(
        (d, kind)
        for d in path.iterdir()
        for record, kind in _RECORDS.items()
        if (d / record).is_file()
    )
    if not inside:
        return f"no {command}.yaml there"
    first, kind = min(inside, key=lambda found: found[1] != command)
    more = f" and {len(inside) - 1} more" if len(inside) > 1 else ""
    return (
        f"no {command}.yaml there: it is a folder of runs (--run-dir makes each "
        f"inside it) holding {str(first)!r}{more}, a {kind} run that resumes with "
        f"{_resumed_by(first, kind)}"
    )


def running_meta(
    path: pathlib.Path, command: str, what: str, prints: str, record: str
) -> dict[str, Any]:
    """`COMMAND.yaml` of `path`; ConfigError unless COMMAND wrote it and is running.

    The messages say what COMMAND `prints` of its directory, and what a
    finished run (a `what`) left to read (its `record`).
    """
    if not (path / f"{command}.yaml").exists():
        other = {"sweep": "pbt", "pbt": "sweep"}[command]
        if (path / f"{other}.yaml").exists():
            raise ConfigError(
                f"--resume {path}: it is a {other} directory; continue it with "
                f"`purejaxdrl {other} --resume {path}` "
                f"(pjd.resume_{other}({str(path)!r}) in Python)."
            )
        if (path / "config.yaml").exists():
            raise ConfigError(
                f"--resume {path}: it is a single run's directory, not a "
                f"{command}'s; continue it with `purejaxdrl train --resume {path}` "
                f"(pjd.train(config, resume={str(path)!r}) in Python, config "
                "from pjd.resume_config)."
            )
        raise ConfigError(
            f"--resume {path}: {_what_is_there(path, command)}; pass a directory "
            f"that pjd.{command}(..., write_files=True) or `purejaxdrl {command}` "
            f"wrote (it prints `{command}: {prints}`)."
        )
    file = path / f"{command}.yaml"
    with reading(file, restore_or_restart(what)):
        meta = yaml.safe_load(file.read_text())
        status = meta.get("status")
    if status != "running":
        raise ConfigError(
            f"--resume {path}: this {what} finished (see its {record}); start "
            "a new one to train more."
        )
    return meta


def shown(
    notify: Callable[[str], None] | None, console: bool
) -> Callable[[str], None] | None:
    """`notify`; without one, `print` them when `console` is on (else silence).

    To stderr, as `train`'s progress and the CLI's lines: a script's stdout
    (`python sweep.py > results.txt`) stays its own. In a Jupyter cell to
    stdout, as `train` draws there: a notebook shades stderr as errors.
    """
    if notify is None and console:
        stream = sys.stdout if in_notebook() else sys.stderr
        return functools.partial(print, file=stream, flush=True)
    return notify


def messenger(
    notify: Callable[[str], None] | None,
) -> tuple[list[str], Callable[[str], None]]:
    """(the sweep's messages, `say`: keeps a line and passes it to `notify`)."""
    messages: list[str] = []

    def say(line: str) -> None:
        messages.append(line)
        if notify is not None:
            notify(line)

    return messages, say


def check_device_memory(device_memory: Any) -> None:
    """`device_memory` is None or a positive number of bytes.

    Raises:
      ConfigError: naming the value and the Python form (the command line's
        `--device-memory` reads sizes such as 2GB).

    """
    if device_memory is None:
        return
    integral = isinstance(device_memory, numbers.Integral)
    if isinstance(device_memory, bool) or not integral:
        raise ConfigError(
            f"device_memory={device_memory!r} is not a number of bytes; pass e.g. "
            "device_memory=2 * 2**30 (the command line's --device-memory reads 2GB)."
        )
    if device_memory < 1:
        raise ConfigError(
            f"device_memory={device_memory} must be a positive number of bytes; "
            "e.g. device_memory=2 * 2**30 (the command line's --device-memory 2GB)."
        )


def check_target(target_return: Any) -> None:
    """`target_return` is None or a finite number.

    Raises:
      ConfigError: naming the value; NaN would judge every run short of it,
        and -inf every run past it.

    """
    if target_return is None:
        return
    number = isinstance(target_return, numbers.Real) and not isinstance(
        target_return, bool
    )
    if not (number and math.isfinite(target_return)):
        raise ConfigError(
            f"target_return={target_return!r} must be a finite return; e.g. "
            "target_return=475 (the command line's --target 475)."
        )


def base_and_target(
    base: TrainConfig | str,
    algo: str | None,
    target_return: float | None,
    preset: Preset | None = None,
) -> tuple[TrainConfig, float | None]:
    """The base config (a preset's, given its name) and the target score.

    `preset` is the preset `base` names, where the caller loaded it already.

    A preset's target of its greedy evaluation (`of: evaluation`) is not
    compared with a sweep's or a population's training returns, which are
    the exploring policy's (PQN's ε-greedy actors score below the greedy
    policy): without `target_return` it warns once and judges none.

    Raises:
      ConfigError: for a host environment (a sweep's or a population's runs
        are one program on device), an `algo` the config does not have, or a
        `target_return` that is not a finite number.

    """
    check_target(target_return)
    if isinstance(base, str):
        preset = preset or load_preset(base, algo or DEFAULT_ALGO)
        check_device_env(preset.config.env.id)  # before any note on its target
        why = unjudged(preset, preset.config.env.id)
        if target_return is None and why:
            warnings.warn(
                f"{why}: not judged; pass --target (target_return=) to compare "
                "training returns with one.",
                SetupWarning,
                stacklevel=user_stacklevel(),
            )
        elif target_return is None:
            target_return = preset.target_return
        base, algo = preset.config, None
    require_config(base, "a sweep (or PBT run)")
    if algo is not None and algo != base.algo:
        raise ConfigError(
            f"algo={algo!r} differs from the config's algo={base.algo!r}; set "
            "the config's algo instead."
        )
    check_device_env(base.env.id)
    warn_not_honoured(base)
    return base, target_return


def check_device_env(env_id: str) -> None:
    """Refuses a host environment: a sweep's or a population's runs are on device.

    Raises:
      ConfigError: `env_id` is a host environment's, naming `purejaxdrl train`.

    """
    if is_host_env(env_id):
        raise ConfigError(
            f"env.id={env_id!r} is a host environment; sweeps and PBT vmap "
            "their runs in one program on device, so they take device "
            "environments (gymnax, brax, Playground, Craftax); train host runs "
            "one at a time with `purejaxdrl train`."
        )


# Config fields (or sections) a sweep or PBT run trains without, and why. The
# command line refuses them as flags; a base config that sets one (from
# Python, or a preset file's) is warned of, so it is not silently ignored, and
# trained without it: warned, never refused after (evaluation episodes too).
NOT_HONOURED = {
    "eval": "sweeps do not play evaluation episodes (the table reports each "
    "run's training return); drop it",
    "host": "sweeps and PBT train device environments only; drop it",
    "checkpoint.keep": "sweeps and PBT keep their newest 2 checkpoints (all "
    "a resume needs); drop it",
    "checkpoint.keep_best": "sweeps and PBT keep no best checkpoint (their "
    "checkpoints only resume them; each run keeps its final policy); drop it",
    "checkpoint.wait": "sweeps and PBT always write every save (a due save "
    "is never replaced), so it would change nothing; drop it",
}


def warn_not_honoured(base: TrainConfig) -> None:
    """Warns of each field of `NOT_HONOURED` that `base` sets to a non-default.

    The sweep or population trains without it; the warning says so, and why.
    """
    defaults = {
        f.name: f.default_factory()  # type: ignore[misc]
        for f in dataclasses.fields(TrainConfig)
        if f.name in ("eval", "host", "checkpoint")
    }
    for name, default in defaults.items():
        given = dict((p, v) for p, _, v in flat_fields(getattr(base, name)))
        for path, _, value in flat_fields(default):
            why = NOT_HONOURED.get(f"{name}.{path}") or NOT_HONOURED.get(name)
            if why is not None and given[path] != value:
                warnings.warn(
                    f"{name}.{path}={given[path]!r}: {why}.",
                    SetupWarning,
                    stacklevel=user_stacklevel(),
                )


def off_budget(
    preset: Preset, configs: Iterable[TrainConfig], swept: Collection[str] = ()
) -> str | None:
    """Why `preset`'s training target is no bar for these runs; None if it is.

    As `train` gives a run no verdict unless it is measured as its preset is:
    the target is the last chunk's mean return within the preset's budget, so
    runs of another budget (`total_steps`, unless it rounds to the same
    updates), or logged in other chunks (`num_logs`: one chunk is a mean over
    the whole run), are measured otherwise. `swept` names fields a grid varies
    over `configs` (the command line's, before its plan is made).
    """
    expected, target = preset.config, preset.target_return
    for config in configs:
        budget = config.total_steps != expected.total_steps
        if budget and config.num_updates != expected.num_updates:
            return (
                f"the preset's target ({target:g}) is its return within its "
                f"{expected.total_steps:,} steps, and these runs train "
                f"{config.total_steps:,}"
            )
        if config.num_logs != expected.num_logs:
            return (
                f"the preset's target ({target:g}) is its last chunk's mean "
                f"return at num_logs={expected.num_logs}, and these runs' "
                f"num_logs={config.num_logs} makes it another mean"
            )
    for field in ("total_steps", "num_logs"):
        if field in swept:
            return (
                f"the preset's target ({target:g}) is its return at its own "
                f"{field}, and these runs sweep {field}"
            )
    return None


def unjudged(preset: Preset, env_id: str) -> str | None:
    """Why `preset`'s target says nothing of these runs' returns; None if it does.

    Sweeps and PBT report training returns: a target of the greedy
    evaluation's (`of: evaluation`; PQN's ε-greedy actors score below their
    greedy policy) is no bar for them, nor another environment's target
    (`env_id` is what they train on).
    """
    target, own = preset.target_return, preset.config.env.id
    if target is None:
        return None
    if preset.target_of == "evaluation":
        return (
            f"{preset.name}'s {preset.config.algo} target ({target:g}) is its "
            "greedy evaluation's return, and these runs report training returns"
        )
    if env_id != own:
        return f"the preset's target ({target:g}) is {own}'s, not {env_id}'s"
    return None
