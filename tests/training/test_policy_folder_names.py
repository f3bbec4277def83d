"""A policy folder refused is named as its caller spells it: `out=` or `--out`."""

import pathlib
import sys
from types import SimpleNamespace

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.policy_folder import check_policy_folder
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
        obs_spec=None, action_spec=None, runner=SimpleNamespace(steps_per_update=1)
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
    assert str(refused.value).endswith(f"e.g. out={str(run / 'policy')!r}.")
    done = tmp_path / "done"
    done.mkdir()
    (done / "policy.json").write_text("{}")
    with pytest.raises(pjd.ConfigError) as refused:
        result.policy(done)
    assert str(refused.value).startswith(f"out={str(done)!r} already holds")
    assert "pass overwrite=True to replace it" in str(refused.value)
    assert "--" not in str(refused.value)
    assert exported == []  # nothing was written


@pytest.mark.parametrize("name", ["afile", "run"])
def test_the_command_line_keeps_its_flag(tmp_path, name):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("{}")
    with pytest.raises(pjd.ConfigError, match=f"^--out '.*{name}' is a"):
        check_policy_folder(pathlib.Path(tmp_path / name), overwrite=False)
