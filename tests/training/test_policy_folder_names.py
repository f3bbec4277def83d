"""A policy folder refused is named as its caller spells it: `out=` or `--out`."""

import pathlib
import sys
from types import SimpleNamespace

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.policy.folder import check_policy_folder
from purejaxdrl.training.result import TrainResult
from tests.helpers import bare_result

train = sys.modules["purejaxdrl.training.train"]  # the module (`train` is its function)


def _result(exported: list, monkeypatch) -> TrainResult:
    """A TrainResult whose export (`train`'s) only records where it would write."""
    monkeypatch.setattr(
        train, "write_policy", lambda out, *_, **__: exported.append(out)
    )
    run = SimpleNamespace(config=None)
    exp = SimpleNamespace(
        obs_spec=None,
        action_spec=None,
        action_bounds=None,
        runner=SimpleNamespace(steps_per_update=1),
    )
    state = SimpleNamespace(agent=SimpleNamespace(params=None))
    return bare_result(export=train._exporter(run, exp, state, 0))


def test_train_result_policy_names_its_parameter_not_the_flag(tmp_path, monkeypatch):
    exported: list = []
    result = _result(exported, monkeypatch)
    file = tmp_path / "afile"
    file.write_text("x")
    with pytest.raises(pjd.ConfigError, match=r"^out='.*afile' is a file; pass a"):
        result.policy(file)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("{}")
    with pytest.raises(pjd.ConfigError) as refused:
        result.policy(run)
    said = f"out={str(run)!r} is a run directory"
    assert str(refused.value).startswith(said)
    # Beside the run, not inside it (refused below).
    beside = repr(str(tmp_path / "run_policy"))
    assert str(refused.value).endswith(f"e.g. --out {beside} (out={beside} in Python).")
    done = tmp_path / "done"
    done.mkdir()
    (done / "policy.json").write_text("{}")
    with pytest.raises(pjd.ConfigError) as refused:
        result.policy(done)
    assert str(refused.value).startswith(f"out={str(done)!r} already holds")
    assert "pass --overwrite (overwrite=True in Python) to replace it" in str(
        refused.value
    )
    assert "--" not in str(refused.value).partition(" already")[0]  # its subject
    assert exported == []  # nothing was written


@pytest.mark.parametrize("name", ["afile", "run"])
def test_the_command_line_keeps_its_flag(tmp_path, name):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("{}")
    with pytest.raises(pjd.ConfigError, match=f"^--out '.*{name}' is a"):
        check_policy_folder(pathlib.Path(tmp_path / name), overwrite=False)


# reviews/ck17.md #2: `--out RUN/checkpoints/55` made a stray "checkpoint" that
# retention kept while it deleted real ones.
@pytest.mark.parametrize(
    "inside", ["checkpoints/55", "checkpoints/40", "checkpoints/40/x", "policy"]
)
def test_a_folder_inside_a_run_is_refused_before_a_write(tmp_path, inside):
    run = tmp_path / "pm2"
    (run / "checkpoints" / "40").mkdir(parents=True)
    (run / "config.yaml").write_text("{}")
    out = run / inside
    beside = str(tmp_path / "pm2_policy")
    with pytest.raises(pjd.ConfigError) as refused:
        check_policy_folder(out, overwrite=True)
    assert str(refused.value) == (
        f"--out {str(out)!r} is inside run {str(run)!r}; export to a folder of "
        f"its own, e.g. --out {beside!r} (out={beside!r} in Python)."
    )
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["40"]


def test_loading_a_checkpoint_names_the_run_and_its_step(tmp_path):
    run = tmp_path / "pm2"
    (run / "checkpoints" / "40").mkdir(parents=True)
    (run / "config.yaml").write_text("{}")
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.load_policy(run / "checkpoints" / "40")
    said = str(refused.value)
    assert f"is a checkpoint of run {str(run)!r}, not an exported policy" in said
    assert f"`purejaxdrl export {run} --checkpoint 40 --out OUT`" in said
    assert f"pjd.export_policy({str(run)!r}, OUT, step=40) in Python" in said
    assert "--out " + str(run) not in said


@pytest.mark.parametrize("inside", ["plots/x", "checkpoints/tmp"])
def test_loading_a_folder_of_a_run_that_is_no_save_names_no_step(tmp_path, inside):
    # No `--checkpoint ` without a number, no `step=)`: the run exports as is.
    run = tmp_path / "pm2"
    (run / inside).mkdir(parents=True)
    (run / "config.yaml").write_text("{}")
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.load_policy(run / inside)
    assert str(refused.value) == (
        f"{str(run / inside)!r} is a folder inside run {str(run)!r}, not an "
        f"exported policy; export it first: `purejaxdrl export {run} --out OUT` "
        f"(pjd.export_policy({str(run)!r}, OUT) in Python), then load OUT."
    )


# `--out ..` from inside a run's folder names the run: its suggested folder
# is the run's name with `_policy` beside it, not `.._policy`.
def test_a_run_given_as_dot_dot_suggests_a_folder_beside_it(tmp_path, monkeypatch):
    run = tmp_path / "pm2"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("{}")
    monkeypatch.chdir(run / "checkpoints")
    with pytest.raises(pjd.ConfigError) as refused:
        check_policy_folder(pathlib.Path(".."), overwrite=True)
    assert str(refused.value).endswith(
        f"export to a folder of its own, e.g. --out {str(tmp_path / 'pm2_policy')!r} "
        f"(out={str(tmp_path / 'pm2_policy')!r} in Python)."
    ), str(refused.value)
