"""Where a policy is exported: its files, and refusing to write over one."""

import pathlib

from purejaxdrl.config import ConfigError

SPEC_FILE, PARAMS_FILE = "policy.json", "params.msgpack"


def check_policy_folder(out: pathlib.Path, overwrite: bool) -> None:
    """Refuses to write a policy over an earlier one in `out`, unless `overwrite`.

    An earlier export is a saved result: replacing it takes a word.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {str(out)!r} is a file; pass a folder for the policy (it is "
            "made where missing)."
        )
    if (out / "config.yaml").is_file():
        raise ConfigError(
            f"--out {str(out)!r} is a run directory, whose params.msgpack is the "
            "run's own; export to a folder of its own, e.g. --out "
            f"{str(out / 'policy')!r}."
        )
    taken = [name for name in (SPEC_FILE, PARAMS_FILE) if (out / name).exists()]
    if taken and not overwrite:
        raise ConfigError(
            f"--out {str(out)!r} already holds an exported policy "
            f"({', '.join(taken)}); choose another folder, or pass --overwrite "
            "(overwrite=True) to replace it"
        )
