"""How to train one of a sweep's runs alone: in Python, and on the command line.

Run i of a sweep is `plan.run_config(i)` trained by `train`, to float rounding
(docs/guide/sweeps.md, "The same runs"). `best_run_record` is what
`sweep.yaml` says of the best run (`best_run:`), `best_run_text` what
`summary.md` says; `train_command` is the `purejaxdrl train` line of a config
whose environment a shipped preset trains, and `run_command` a sweep run's,
on the data devices it trained on.
"""

import dataclasses
import pathlib
import shlex
import warnings
from typing import Any

import jax

from purejaxdrl.agents.registry import names, registered_by_user
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import flag
from purejaxdrl.config_types import flat_fields
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.parallel import fake_devices_setting
from purejaxdrl.setup_warnings import SetupWarning
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.run_files import plain
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.presets.files import preset_names
from purejaxdrl.training.presets.load import load_preset, presets_with


def train_command(config: TrainConfig, data: int | None = None) -> str | None:
    """The `purejaxdrl train` command line that trains `config`, or None.

    It starts from the shipped preset with `config`'s environment (the whole
    `env` section, but for `imports`: a flag) and a section for its algorithm
    (any, for an algorithm of the user's that an `env.imports` module
    registers: `_starts`) that needs the fewest flags: `--seed`, then one flag
    per other field whose value differs (other algorithms' sections, which
    the run never reads, are left out). None where no shipped preset has that
    environment and algorithm (a base from the user's own preset file, or
    made in Python), an algorithm is registered in Python only, or a value
    has no flag form: then only Python (`pjd.train(config)`) trains it.

    With `data`, the devices the run's environments were split over (a sweep
    member's `data` axis), the command trains on that many (`--devices N`,
    after the fake CPU devices' setting the resume line names too): a replay
    learner keeps one shard per device, so on another count it draws other
    batches and is another run.
    """
    setting = ""
    if data is not None:
        if _named(data):
            config = dataclasses.replace(config, devices=data)
        setting = fake_devices_setting(data)
    best: tuple[str, list[str]] | None = None
    for name in _starts(config):
        try:
            with warnings.catch_warnings():  # a user algorithm's "no section"
                warnings.simplefilter("ignore", SetupWarning)
                preset = load_preset(name, config.algo).config
        except ConfigError:  # e.g. its environment's package is missing here
            continue
        # The modules to import are a flag (--env.imports), not another task.
        same = dataclasses.replace(preset.env, imports=config.env.imports)
        flags = _flags(preset, config) if same == config.env else None
        if flags is not None and (best is None or len(flags) < len(best[1])):
            best = name, flags
    if best is None:
        return None
    name, flags = best
    words = ["--env", name, "--algo", config.algo, "--seed", str(config.seed)]
    return setting + shlex.join(["purejaxdrl", "train", *words, *flags])


def _starts(config: TrainConfig) -> list[str]:
    """The shipped presets a command line for `config` may start from.

    Those with a section for its algorithm; for an algorithm of the user's
    that none has, every one (`train` gives it its own defaults there), as
    long as a command can import what registers it (`--env.imports`).
    """
    with_section = presets_with(config.algo)
    user = config.algo in {r.name for r in registered_by_user()}
    if with_section or not user or not config.env.imports:
        return with_section
    return preset_names()


def run_command(result: SweepResult, run: int) -> str | None:
    """`train_command` of the sweep's run `run`, on the data devices it had.

    Its group's layout (`result.layouts`, one per static group, in order,
    recorded in sweep.yaml and read back by `load_sweep`) says how many, so a
    loaded sweep gives the command the sweep printed; a result without them
    (a sweep.yaml written before they were recorded) gives the config's
    command alone.
    """
    return train_command(result.plan.run_config(run), _data(result, run))


def _data(result: SweepResult, run: int) -> int | None:
    """The data devices run `run` trained on (its group's layout), or None."""
    groups = result.plan.static_groups()
    group = next(g for g, runs in enumerate(groups) if run in runs)
    return result.layouts[group].data if group < len(result.layouts) else None


def _named(data: int) -> bool:
    """Whether a run alone names its `data` devices (one: where it sees more)."""
    return data > 1 or jax.local_device_count() > 1


def _python_line(result: SweepResult, run: int, where: str) -> str:
    """The Python that trains run `run` of the sweep in `where` alone.

    On the data devices it trained on (`run_command`'s `--devices N`), where
    a plain `train` would use another count.
    """
    config = f"pjd.load_sweep({where!r}).plan.run_config({run})"
    data = _data(result, run)
    devices = result.plan.run_config(run).devices
    if data is not None and _named(data) and devices != data:
        config = f"pjd.apply_overrides({config}, {{'devices': {data}}})"
    return f"pjd.train({config})"


def _flags(preset: TrainConfig, config: TrainConfig) -> list[str] | None:
    """The flags that make `preset`'s config `config` (its seed aside), or None."""
    others = set(names()) - {config.algo}
    mine = {path: value for path, _, value in flat_fields(config)}
    out: list[str] = []
    for path, _, value in flat_fields(preset):
        if path == "seed" or path.split(".")[0] in others:
            continue
        if _python(value) == _python(mine[path]):
            continue
        words = _words(_python(mine[path]))
        if words is None:
            return None
        if len(words) == 1 and words[0].startswith("-"):
            out.append(f"{flag(path)}={words[0]}")  # else read as a flag
        else:
            out.extend([flag(path), *words])
    return out


def _python(value: Any) -> Any:
    """A config value as Python's own (an array leaf's item, a tuple's list)."""
    if hasattr(value, "tolist"):  # numpy or JAX
        return value.tolist()
    return plain(value)


def _words(value: Any) -> list[str] | None:
    """A value as `train`'s flag reads it, or None where no flag takes it."""
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if value is None:
        return ["none"]
    if isinstance(value, int | str):
        return [str(value)]
    if isinstance(value, float):
        return [repr(value)]
    if isinstance(value, list) and all(isinstance(v, int | str) for v in value):
        return [str(v) for v in value]  # [] is the bare flag: empty
    return None  # a mapping (env.options), or a list of lists


def best_run_record(result: SweepResult, path: pathlib.Path) -> dict[str, Any] | None:
    """What `sweep.yaml` (in `path`) says of the best setting's best run.

    Its index, setting, seed, the setting's values, its final return, its
    policy's folder, and how to train it alone: `python` (always) and
    `command` (`train_command`, None where no command line gives it). None
    where no run of the best setting ended with a finite return.
    """
    run = result.best_run
    if run is None:
        return None
    setting, seed = result.plan.run(run)
    where = str(path)
    return {
        "run": run,
        "setting": setting,
        "seed": seed,
        "values": {k: plain(v) for k, v in result.plan.settings[setting].items()},
        "final_return": float(result.final_return[run]),
        "policy": "policy",
        "python": _python_line(result, run, where),
        "command": run_command(result, run),
    }


# How a run trained alone compares with its sweep member: vmapped and
# unbatched kernels round differently, and the batching layout (device count,
# `--device-memory`) picks which rounding a member gets; once a rounding flips
# a sampled action the two runs part (docs/guide/sweeps.md, "The same runs").
ALONE = "the same run in distribution, not bit for bit"


def best_run_text(record: dict[str, Any] | None) -> str:
    """`summary.md`'s lines on the best run (`best_run_record`'s); "" for None."""
    if record is None:
        return ""
    text = (
        f"The best setting's best run: run {record['run']} (setting "
        f"{record['setting']}, seed {record['seed']}, final return "
        f"{return_text(record['final_return'])}); its policy is in policy/.\n"
    )
    python = f"`{record['python']}`"
    if record["command"] is None:
        return text + (
            f"Train it alone ({ALONE}) in Python: {python} (no `purejaxdrl "
            "train` line gives it: no shipped preset has its environment, its "
            "algorithm is registered in Python, not by an --env.imports module, "
            "or a value of it has no flag).\n"
        )
    command = f"`{record['command']}`"
    return text + f"Train it alone ({ALONE}): {command}, or in Python: {python}.\n"
