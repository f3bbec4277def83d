"""Where a policy is exported: its files, and refusing to write over one."""

import pathlib

from purejaxdrl.config import ConfigError

SPEC_FILE, PARAMS_FILE = "policy.json", "params.msgpack"


def check_policy_folder(
    out: pathlib.Path, overwrite: bool, name: str = "--out"
) -> None:
    """Refuses to write a policy over an earlier one in `out`, unless `overwrite`.

    An earlier export is a saved result: replacing it takes a word. `name`
    is what the caller calls `out`, for the messages: the command line's
    `--out` (the default), or a Python parameter's name, e.g. "out".
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
    if (out / "config.yaml").is_file():
        raise ConfigError(
            f"{said(out)} is a run directory, whose params.msgpack is the run's "
            f"own; export to a folder of its own, e.g. {said(out / 'policy')}."
        )
    taken = [file for file in (SPEC_FILE, PARAMS_FILE) if (out / file).exists()]
    if taken and not overwrite:
        how = "--overwrite (overwrite=True)" if flag else "overwrite=True"
        raise ConfigError(
            f"{said(out)} already holds an exported policy ({', '.join(taken)}); "
            f"choose another folder, or pass {how} to replace it"
        )
