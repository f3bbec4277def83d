"""Where Playground's locomotion and manipulation tasks find MuJoCo Menagerie.

Playground loads their robot models from a MuJoCo Menagerie checkout, which
it git-clones into its own package folder on first use; that fails offline
with a long traceback. These look for a local copy instead, and never clone.
"""

import os
import re

from purejaxdrl.config import ConfigError
from purejaxdrl.env.option_spelling import both

MENAGERIE_VARIABLE = "MUJOCO_MENAGERIE_PATH"


def needs_menagerie(name: str) -> bool:
    """Whether Playground's `name` loads robot models from MuJoCo Menagerie."""
    from mujoco_playground._src import locomotion, manipulation

    return name in locomotion.ALL_ENVS or name in manipulation.ALL_ENVS


def menagerie_folder(path: str | None = None) -> str:
    """The one folder MuJoCo Menagerie is looked for in.

    `path` where one is given, else `$MUJOCO_MENAGERIE_PATH` where it is set,
    else Playground's own folder. Only the first of these: a path the user
    named that holds no Menagerie is an error, not a cue to read models from
    another copy (an older checkout in the variable, say) without a word.
    """
    from mujoco_playground._src import mjx_env

    named = path or os.environ.get(MENAGERIE_VARIABLE)
    return named or str(mjx_env.MENAGERIE_PATH)


# Robot folders of every Menagerie checkout Playground uses: a folder without
# any of them is something else (a mistyped path), not a Menagerie.
ROBOTS = ("unitree_go1", "unitree_g1", "leap_hand", "franka_emika_panda")


def is_menagerie(folder: str) -> bool:
    """Whether `folder` holds MuJoCo Menagerie (one of its robots' folders)."""
    return any(os.path.isdir(os.path.join(folder, robot)) for robot in ROBOTS)


def find_menagerie(path: str | None = None) -> str | None:
    """`menagerie_folder(path)` if it holds Menagerie; or None."""
    folder = menagerie_folder(path)
    return folder if is_menagerie(folder) else None


def use_menagerie(env_id: str, path: str | None) -> None:
    """Points Playground at a local MuJoCo Menagerie, or says how to get one.

    Playground git-clones Menagerie into its own package folder on first use,
    which fails offline with a long traceback; this looks where
    `find_menagerie` does and never clones.

    Raises:
      ConfigError: no copy there; one line naming the folder.

    """
    from etils import epath
    from mujoco_playground._src import mjx_env

    found = find_menagerie(path)
    if found is not None:
        # Playground's asset loaders read this module global when they run,
        # so a local copy is used without its clone.
        mjx_env.MENAGERIE_PATH = epath.Path(found)
        return
    folder = menagerie_folder(path)
    if os.path.isdir(folder):
        folder += f" (no robot folder such as {ROBOTS[0]}/ there)"
    raise ConfigError(
        f"env.id={env_id!r} needs MuJoCo Menagerie's robot models, not found in "
        f"{folder}; {_how_to_get_it()}"
    )


def missing_model_file(env_id: str, error: Exception) -> str | None:
    """The one line for a Menagerie copy that lacks a file `env_id` loads.

    None when `error` is not MuJoCo failing to open a file. A copy that holds
    some robots but not the task's (a partial or older checkout) passes
    `is_menagerie`, and MuJoCo then fails deep in Playground's model loading.
    """
    from mujoco_playground._src import mjx_env

    opened = re.search(r"Error opening file '([^']*)'", str(error))
    if opened is None:
        return None
    file = opened[1].split("mujoco_menagerie/")[-1]
    return (
        f"env.id={env_id!r}: MuJoCo Menagerie at {mjx_env.MENAGERIE_PATH} has no "
        f"{file} (a partial or older copy?); {_how_to_get_it()}"
    )


def _how_to_get_it() -> str:
    """How to get the Menagerie checkout Playground was written against."""
    from mujoco_playground._src import mjx_env

    return (
        "get a full copy with `git clone https://github.com/google-deepmind/"
        f"mujoco_menagerie DIR && git -C DIR checkout {mjx_env.MENAGERIE_COMMIT_SHA}` "
        f"and pass {both('menagerie_path', 'DIR', 'DIR')} (or set "
        f"{MENAGERIE_VARIABLE}=DIR)."
    )
