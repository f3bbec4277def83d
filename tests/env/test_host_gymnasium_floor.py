"""Every extra that installs Gymnasium installs one the `gymnasium:` adapter runs on.

The adapter makes its vector environments with `gymnasium.vector.AutoresetMode`
(env/host/gymnasium.py), which Gymnasium added in 1.1 (its v1.1.0 release
notes: autoreset modes for SyncVectorEnv and AsyncVectorEnv). `[render]` asked
for >=1.0, so a Gymnasium that fit it failed there with an AttributeError.
"""

import pathlib
import tomllib

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST_WITH_AUTORESET_MODE = Version("1.1")


def _gymnasium_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {}
    for extra, requirements in project["optional-dependencies"].items():
        for line in requirements:
            requirement = Requirement(line)
            if requirement.name == "gymnasium":
                found[extra] = requirement
    return found


def test_every_extra_naming_gymnasium_excludes_those_without_autoreset_mode():
    found = _gymnasium_requirements()
    assert {"render", "gymnasium"} <= set(found)  # both name it today
    for extra, requirement in found.items():
        assert not requirement.specifier.contains("1.0.0"), (extra, str(requirement))
        assert requirement.specifier.contains(str(FIRST_WITH_AUTORESET_MODE)), extra
