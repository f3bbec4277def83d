"""Which folder eval and export were given: a run, or a file or a folder of runs.

Refusals that name the run meant: `eval runs/R/config.yaml` means `runs/R`,
and `eval runs` (train's --run-dir) holds runs rather than being one.
"""

import pathlib

from purejaxdrl.config import ConfigError

# The files that make a folder a run, an exported policy, a sweep or a PBT.
OWN_FILES = ("config.yaml", "policy.json", "sweep.yaml", "pbt.yaml")


def check_not_file(path: pathlib.Path) -> None:
    """Refuses a file, pointing at its folder only where that is a run.

    `eval runs/R/config.yaml` means `runs/R`; `eval my.yaml` names no run,
    and its folder ('.') is none either.
    """
    if not path.is_file():
        return
    meta = [n for n in ("sweep.yaml", "pbt.yaml") if (path.parent / n).is_file()]
    if meta:  # `eval SWEEP/runs.csv`: the folder is no run either; its policy
        what = "sweep" if meta[0] == "sweep.yaml" else "PBT"
        raise ConfigError(
            f"{str(path)!r} is a file of a {what} directory, not a run; its "
            f"best policy is in {str(path.parent / 'policy')!r} (`purejaxdrl "
            f"eval {path.parent / 'policy'}` plays it)."
        )
    if any((path.parent / name).is_file() for name in OWN_FILES):
        raise ConfigError(
            f"{str(path)!r} is a file, not a run directory; pass the folder "
            f"that holds it, {str(path.parent)!r}."
        )
    preset = (
        f" (a preset file trains with `purejaxdrl train --env {path}`)"
        if path.suffix in (".yaml", ".yml")
        else ""
    )
    raise ConfigError(
        f"{str(path)!r} is a file, not a run directory, and its folder is no "
        f"run either{preset}; pass a folder made by `purejaxdrl train` (under "
        "runs/ by default)."
    )


def check_not_parent(path: pathlib.Path) -> None:
    """Refuses a folder that holds runs (`train --run-dir`'s), naming them."""
    own = OWN_FILES
    if not path.is_dir() or any((path / name).exists() for name in own):
        return  # a run, or what load_run_config names (policy, sweep, PBT)
    runs = sorted(
        (d for d in path.iterdir() if (d / "config.yaml").is_file()),
        key=lambda d: d.stat().st_mtime,
    )
    if not runs:
        return  # load_run_config says what the folder is
    if len(runs) == 1:
        which = f"it holds one run, {str(runs[0])!r}: pass that"
    else:
        which = (
            f"it holds {len(runs)} runs, the newest {str(runs[-1])!r}: pass one of them"
        )
    raise ConfigError(
        f"{str(path)!r} is a folder of runs (train --run-dir makes one run "
        f"inside it), not a run; {which}."
    )


def enclosing_run(path: pathlib.Path, levels: int = 3) -> pathlib.Path | None:
    """The run directory `path` lies inside, up to `levels` folders up (or None).

    Three reach a folder inside a checkpoint (`RUN/checkpoints/976/x`).
    """
    for run in list(path.parents)[:levels]:
        if (run / "config.yaml").is_file():
            return run
    return None


def check_not_inside(path: pathlib.Path, keyword: str = "") -> None:
    """Refuses a folder inside a run (`RUN/checkpoints`, `RUN/checkpoints/976`).

    Up to two folders up: the run is named, and for a checkpoint's own folder
    the `--checkpoint` that picks that save (`keyword`: Python's argument, if
    the caller's function takes one).
    """
    if not path.is_dir() or any((path / name).exists() for name in OWN_FILES):
        return
    if (run := enclosing_run(path, 2)) is None:
        return
    inside = path.relative_to(run)
    save = inside.name if inside.parent.name == "checkpoints" else ""
    python = f" ({keyword}={save} in Python)" if keyword else ""
    which = f" with --checkpoint {save} for that save{python}" if save.isdigit() else ""
    raise ConfigError(
        f"{str(path)!r} is a folder inside run {str(run)!r} (its {inside}), not "
        f"a run; pass the run, {str(run)!r}{which}."
    )
