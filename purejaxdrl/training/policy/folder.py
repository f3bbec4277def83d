"""Where a policy is: its files, refusing to write over one, which folder holds one."""

import os
import pathlib
import tempfile

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.training.run_folder import enclosing_run

SPEC_FILE, PARAMS_FILE = "policy.json", "params.msgpack"


def check_policy_folder(
    out: pathlib.Path, overwrite: bool, name: str = "--out"
) -> None:
    """Refuses to write a policy over an earlier one in `out`, unless `overwrite`.

    An earlier export is a saved result: replacing it takes a word. A folder
    that cannot be made or written (under a file, in a read-only place) is
    refused too, from its path alone: before a checkpoint is read. `name`
    is what the caller calls `out`, for the messages' subject: the command
    line's `--out` (the default), or a Python parameter's name, e.g. "out";
    their fixes name both.
    """
    flag = name.startswith("--")

    def said(folder: pathlib.Path) -> str:
        """`folder` as the caller would pass it: `--out 'x'` or `out='x'`."""
        return f"{name} {str(folder)!r}" if flag else f"{name}={str(folder)!r}"

    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"{said(out)} is a file; pass a folder for the policy (it is made "
            "where missing)."
        )
    if (unwritable := _unwritable(out)) is not None:
        raise ConfigError(f"{said(out)}: {unwritable}; export elsewhere ({ANOTHER}).")
    if (out / "config.yaml").is_file():
        raise ConfigError(
            f"{said(out)} is a run directory, whose params.msgpack is the run's "
            f"own; export to a folder of its own, e.g. {out_example(_beside(out))}."
        )
    if (run := enclosing_run(out)) is not None:  # its checkpoints/: a stray save
        raise ConfigError(
            f"{said(out)} is inside run {str(run)!r}; export to a folder of its "
            f"own, e.g. {out_example(_beside(run))}."
        )
    taken = [file for file in (SPEC_FILE, PARAMS_FILE) if (out / file).exists()]
    if taken and not overwrite:
        raise ConfigError(
            f"{said(out)} already holds an exported policy ({', '.join(taken)}); "
            "choose another folder, or pass --overwrite (overwrite=True in "
            "Python) to replace it"
        )


# Where to export instead, in both spellings.
ANOTHER = "another --out DIR, out=DIR in Python"


def out_example(folder: pathlib.Path) -> str:
    """`folder` as the fix of a refused --out: `--out 'x' (out='x' in Python)`."""
    return both_ways("--out", "out", repr(str(folder)))


def _unwritable(out: pathlib.Path) -> str | None:
    """Why `out` cannot be made or written, from the path alone; None if it can.

    Its nearest existing folder (itself where it exists) must be a folder
    this process may write into: a file is made there and removed, to know.
    """
    folder = out
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        return f"{str(folder)!r} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"folder {str(folder)!r} is not writable"
    try:  # what access() passes for root: /proc, a read-only mount
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as e:
        return f"folder {str(folder)!r} refuses files ({e.strerror or e})"
    return None


def _beside(run: pathlib.Path) -> pathlib.Path:
    """A policy folder for `run` beside it (`runs/x` -> `runs/x_policy`)."""
    run = run if run.name not in ("", "..") else run.resolve()
    return run.parent / f"{run.name}_policy"


def _inside_run(path: pathlib.Path) -> str | None:
    """How to load a policy from the run that `path` lies inside (None: none)."""
    if (run := enclosing_run(path)) is None:
        return None
    inside = path.relative_to(run)
    save = inside.parts[1] if inside.parts[0] == "checkpoints" else ""
    if len(inside.parts) > 1 and save.isdigit():
        what, flag, step = (
            f"a checkpoint of run {str(run)!r}",
            f" --checkpoint {save}",
            f", step={save}",
        )
    else:
        what, flag, step = f"a folder inside run {str(run)!r}", "", ""
    return (
        f"{str(path)!r} is {what}, not an exported policy; export it first: "
        f"`purejaxdrl export {run}{flag} --out OUT` (pjd.export_policy("
        f"{str(run)!r}, OUT{step}) in Python), then load OUT."
    )


def what_it_is(path: pathlib.Path) -> str | None:
    """What a folder that is not a run holds, and how to use it (the fix).

    None where it is neither an exported policy nor a sweep or PBT directory.
    """
    if (path / SPEC_FILE).is_file():
        return (
            f"it is an exported policy: play it with `purejaxdrl eval {path}`, "
            f"or load it with pjd.load_policy({str(path)!r}) and act with "
            "policy.act / policy.mode."
        )
    for meta, what, best in (
        ("sweep.yaml", "sweep", "run"),
        ("pbt.yaml", "PBT", "member"),
    ):
        if (path / meta).is_file():
            return (
                f"it is a {what} directory: its best {best}'s policy is in "
                f"{str(path / 'policy')!r} when it finished (`purejaxdrl eval "
                f"{path / 'policy'}` plays it; pjd.load_policy), "
                + (
                    "and any run's is pjd.sweeps.export_run(pjd.load_sweep(DIR), "
                    "RUN, OUT)."
                    if what == "sweep"
                    else "and `purejaxdrl pbt --resume DIR` finishes a stopped one."
                )
            )
    return None


def check_loadable(path: pathlib.Path) -> None:
    """Refuses a run, sweep or PBT directory given for a policy, naming the fix.

    Their folders hold no policy.json of their own: a run's is exported first;
    a sweep's or PBT run's best is in its `policy/` (the advice to export
    into the folder given, for any other, would write into the sweep's root).
    """
    if (path / SPEC_FILE).exists():
        return
    if (path / "config.yaml").is_file():
        raise ConfigError(
            f"{str(path)!r} is a run directory, not an exported policy; export it "
            f"first: pjd.export_policy({str(path)!r}, OUT) or `purejaxdrl export "
            f"{path} --out OUT`, then load OUT."
        )
    if (inside := _inside_run(path)) is not None:
        raise ConfigError(inside)
    where = what_it_is(path)
    if where is not None:
        raise ConfigError(f"{str(path)!r} is not an exported policy; {where}")
