"""Which checkpoint eval and export read, and what they say when none fits.

Details the end-to-end tests of test_restored_runs.py leave open (found by
mutation testing): small fakes and states, no training.
"""

import contextlib
import math
import types

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.training import restored as restored_module
from purejaxdrl.training.checkpoint import Checkpointer, Restored, misfit_problem
from purejaxdrl.training.integrity import MANIFEST
from purejaxdrl.training.restored import (
    _chosen_step,
    _restore_chosen,
    _restore_newest,
    _why_missing,
    checkpoint_choice,
)
from purejaxdrl.training.run_files import RunLock

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("value", "choice"),
    [
        ("latest", "latest"),
        (" Best ", "best"),
        (0, 0),
        ("7", 7),
        (12, 12),
        (np.int64(5), 5),
    ],
)
def test_checkpoint_choice_reads_names_and_update_counts(value, choice):
    assert checkpoint_choice(value) == choice


@pytest.mark.parametrize("value", [-1, "-3", True, False, 1.5, 3.0, "newest", None])
def test_checkpoint_choice_refuses_anything_else(value):
    with pytest.raises(ConfigError, match="is not 'latest', 'best' or an update"):
        checkpoint_choice(value)


def test_why_an_update_has_no_checkpoint():
    # 8 chunks of 1 update, a save due every 2nd (at 2, 4, 6, 8), keep=2: 2
    # kept as the best, 6 replaced by the save at 8 while it waited.
    config = _config(keep=2, every=2, updates=8)
    steps = [2, 4, 8]
    assert _why_missing(9, steps, config) == "it is past the newest"
    assert _why_missing(3, steps, config) == "saves were due at updates 2, 4, 6, 8"
    assert _why_missing(4, [2, 6, 8], config) == "checkpoint.keep keeps the newest 2"
    assert _why_missing(6, [2, 8], config).startswith("none was saved there")


def _config(keep_best: bool = True, keep: int = 3, every: int = 1, updates: int = 4):
    """The fields of a run's config that choosing its checkpoint reads."""
    return types.SimpleNamespace(
        num_updates=updates,
        num_logs=updates,
        checkpoint=types.SimpleNamespace(keep_best=keep_best, keep=keep, every=every),
    )


def _with_returns(returns: dict[int, float]):
    """A stand-in checkpointer whose newest metadata holds these returns."""
    history = [{"updates": u, "episode/mean_return": r} for u, r in returns.items()]
    return types.SimpleNamespace(newest_meta=lambda: {"history": history})


@pytest.mark.parametrize(
    ("returns", "best"),
    [
        ({2: 1.0, 4: 3.0, 6: 2.0}, 4),
        ({2: 5.0, 4: 1.0, 6: 5.0}, 6),  # a tie: the newer
        ({2: math.nan, 4: 1.0, 6: 0.5}, 4),  # no episode ended: unranked
        ({2: math.inf, 4: 1.0, 6: 0.5}, 4),
    ],
)
def test_best_is_the_highest_finite_return_and_the_newest_of_a_tie(returns, best):
    steps = sorted(returns)
    assert _chosen_step("run", _with_returns(returns), steps, _config(), "best") == best


def test_an_update_count_picks_that_checkpoint_even_the_oldest():
    checkpointer = _with_returns({2: 1.0, 4: 3.0})
    assert _chosen_step("run", checkpointer, [2, 4], _config(), 2) == 2
    assert _chosen_step("run", checkpointer, [2, 4], _config(), 4) == 4
    with pytest.raises(ConfigError, match=r"none at update 3 \(saves were due at"):
        _chosen_step("run", checkpointer, [2, 4], _config(every=2), 3)


def _fake_reader(monkeypatch, restored: Restored) -> None:
    class Reader:
        def restore_latest(self):
            return restored

    monkeypatch.setattr(
        restored_module, "_reader", lambda *a: contextlib.nullcontext(Reader())
    )


MISFIT_LINE = "checkpoint at update 4 skipped: " + misfit_problem("w: a saved, b here")
DAMAGED_LINE = "checkpoint at update 2 skipped: file x is missing"


@pytest.mark.parametrize(
    ("skipped", "fix"),
    [
        ([MISFIT_LINE], "put back the config.yaml they were saved with"),
        ([MISFIT_LINE, DAMAGED_LINE], "restore them from a backup"),
        ([DAMAGED_LINE], "restore them from a backup"),
    ],
)
def test_no_checkpoint_to_read_names_the_fix_for_what_was_skipped(
    skipped, fix, tmp_path, monkeypatch
):
    # Only a folder of misfits is the config's or version's to fix; one damaged
    # checkpoint among them is a backup's. A trainer holding the run changes
    # nothing once checkpoints were found: they were skipped, not awaited.
    misfits = skipped.count(MISFIT_LINE)
    _fake_reader(monkeypatch, Restored(None, None, None, skipped, misfits))
    args = (tmp_path, None, None, None, "export", _config())
    with RunLock(tmp_path), pytest.raises(ConfigError) as e:
        _restore_newest(*args)
    assert fix in str(e.value) and "still training" not in str(e.value)
    assert "; ".join(skipped) in str(e.value)


@pytest.mark.parametrize(
    ("every", "first"),
    [
        (2, "after 2 chunk(s) of updates (checkpoint.every)"),
        (0, "when it ends (checkpoint.every 0)"),
    ],
)
def test_a_run_still_training_says_when_its_first_checkpoint_comes(
    every, first, tmp_path, monkeypatch
):
    _fake_reader(monkeypatch, Restored(None, None, None, []))
    args = (tmp_path, None, None, None, "evaluate", _config(every=every))
    with RunLock(tmp_path), pytest.raises(ConfigError) as e:
        _restore_newest(*args)
    assert f"saves its first checkpoint {first}; wait for it" in str(e.value)


def test_a_chosen_checkpoint_without_its_manifest_is_read_and_a_damaged_one_named(
    tmp_path,
):
    # Saved at 1 and 2; 1 lost its manifest (the run stopped before writing
    # it: whole, as orbax commits whole), 2 lost a file.
    mesh = jax.make_mesh((1,), ("data",), devices=jax.devices()[:1])
    sharding = NamedSharding(mesh, P())
    abstract = {"w": jax.ShapeDtypeStruct((3,), np.float32)}
    shardings = {"w": sharding}
    ck = Checkpointer(tmp_path / "checkpoints", abstract, shardings, mesh)
    for step in (1, 2):
        ck.save(step, ck.pack({"w": np.full(3, step, np.float32)}), {"u": step})
    ck.close()
    (tmp_path / "checkpoints" / "1" / MANIFEST).unlink()
    (tmp_path / "checkpoints" / "2" / "_CHECKPOINT_METADATA").unlink()
    args = (tmp_path, abstract, shardings, mesh, "export", _config(keep_best=False))
    got = _restore_chosen(*args, 1)
    assert got.step == 1 and got.meta == {"u": 1}
    np.testing.assert_array_equal(got.state["w"], np.full(3, 1, np.float32))
    with pytest.raises(ConfigError) as e:
        _restore_chosen(*args, 2)
    assert str(e.value) == (
        f"{str(tmp_path)!r}'s checkpoint at update 2 cannot be read to export: "
        "file _CHECKPOINT_METADATA is missing; pass another of its checkpoints "
        "(updates 1) or 'latest'."
    )


def test_up_to_six_due_saves_are_listed_whole_more_cut_to_first_three_and_last():
    # A save every 2nd update: due at 2, 4, ..., 12 (six) or ..., 14 (seven).
    six = _why_missing(3, [10, 12], _config(keep=2, every=2, updates=12))
    assert six == "saves were due at updates 2, 4, 6, 8, 10, 12"
    seven = _why_missing(3, [12, 14], _config(keep=2, every=2, updates=14))
    assert seven == "saves were due at updates 2, 4, 6, ..., 14"
