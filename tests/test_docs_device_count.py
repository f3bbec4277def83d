"""The pages that promise the same run on any device count name the same exceptions.

Fast, no training: reads README.md and two guides, and asks the registry which
algorithms keep a replay buffer. DQN, Ape-X and SAC keep one shard per device
and IMPALA does with `replay_ratio > 0`, so their draws, and parameters,
change with the device count (`tests/test_parallel.py` checks IMPALA's); R2D2
keeps one shard per environment and is the same on any count.
"""

import dataclasses
import pathlib
import re

import pytest

from purejaxdrl.agents import registry

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/guide/multi-device.md", "docs/guide/sweeps.md"]
# The exception list as every page words it.
EXCEPTIONS = "DQN, Ape-X, SAC and IMPALA with replay"
# Replay learners whose draws do not depend on the device count.
PER_ENVIRONMENT_SHARDS = {"r2d2"}


@pytest.mark.parametrize("page", PAGES)
def test_each_page_names_every_device_count_exception(page):
    text = " ".join((ROOT / page).read_text().split())  # lines joined
    # The list, then within its clause what it is an exception to.
    said = re.search(
        re.escape(EXCEPTIONS) + r"[^.;]{0,60}(per-device|device count)", text
    )
    assert said, f"{page} should name {EXCEPTIONS!r} where it says what differs"


def test_the_exceptions_are_the_registry_replay_learners():
    always, with_replay = set(), set()
    for record in registry.algorithms():
        config = record.default_config()
        fields = {f.name for f in dataclasses.fields(config)}
        if record.keeps_replay(config):
            always.add(record.name)
        elif "replay_ratio" in fields and record.keeps_replay(
            dataclasses.replace(config, replay_ratio=0.5)
        ):
            with_replay.add(record.name)
    named = re.findall(r"[A-Za-z-]+", EXCEPTIONS.replace(" with replay", ""))
    named = {n.lower().replace("-", "") for n in named} - {"and"}
    assert named == (always - PER_ENVIRONMENT_SHARDS) | with_replay
    assert with_replay == {"impala"}  # "with replay" qualifies IMPALA only
