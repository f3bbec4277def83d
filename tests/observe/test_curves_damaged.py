"""`purejaxdrl plot`, `load_sweep` and `load_pbt` of a damaged sweep or PBT directory.

A cut `sweep.yaml` / `pbt.yaml`, or a run's or member's records removed, is
one line naming the file and what to do (exit 2 from the command), as
`load_sweep`, `load_pbt` and `--resume` say it; never a traceback.
"""

import pathlib
import shutil

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.sweeps.pbt.lineage import load_pbt
from purejaxdrl.sweeps.pbt.population import pbt
from purejaxdrl.sweeps.program import sweep
from purejaxdrl.sweeps.report import load_sweep

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> dict[str, pathlib.Path]:
    """A finished 2-run sweep and 2-member PBT run: CartPole PPO, 2 updates.

    The preset's 4 environments, as tests/sweeps/test_pbt_files.py's runs: the
    same chunk program, compiled once a session (the compile is most of this).
    """
    root = tmp_path_factory.mktemp("finished")
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_logs": 2, "devices": 1, "run_dir": str(root)},
    )
    base = pjd.apply_overrides(config, {"total_steps": 2 * config.steps_per_update})
    kwargs = {"write_files": True, "console": False}
    space = {"learning_rate": ("loguniform", 1e-4, 1e-2)}
    return {
        "sweep": sweep(base, seeds=2, **kwargs).run_dir,
        "pbt": pbt(base, explore=space, population=2, ready=1, **kwargs).run_dir,
    }


def _copy(finished, kind: str, tmp_path) -> pathlib.Path:
    return pathlib.Path(shutil.copytree(finished[kind], tmp_path / kind))


def _plot_error(path: pathlib.Path, tmp_path, capsys) -> str:
    status = cli.main(["plot", str(path), "--out", str(tmp_path / "c.png")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1, lines
    return lines[0].removeprefix("purejaxdrl: error: ")


@pytest.mark.parametrize(("kind", "what"), [("sweep", "sweep"), ("pbt", "PBT run")])
def test_a_cut_record_is_one_line_from_plot_as_from_load(
    finished, kind, what, tmp_path, capsys
):
    path = _copy(finished, kind, tmp_path)
    file = path / f"{kind}.yaml"
    for damaged in (file.read_text()[:300] + "\n[unclosed", "status: finished\n"):
        file.write_text(damaged)
        with pytest.raises(pjd.ConfigError) as e:
            (load_sweep if kind == "sweep" else load_pbt)(path)
        # The loader's words (which key it missed first may differ).
        for error in (_plot_error(path, tmp_path, capsys), str(e.value)):
            assert error.startswith(f"{file} is damaged or incomplete (")
            assert error.endswith(f"restore it from a copy, or start a new {what}.")


@pytest.mark.parametrize(
    ("kind", "what", "records"),
    [("sweep", "sweep", "runs/run-0001.jsonl"),
     ("pbt", "PBT run", "members/member-0001.jsonl")],
)  # fmt: skip
def test_a_removed_run_or_member_file_is_named_in_one_line(
    finished, kind, what, records, tmp_path, capsys
):
    path = _copy(finished, kind, tmp_path)
    (path / records).unlink()
    expected = (
        f"{path / records} is missing (the {what} wrote it, so something removed "
        f"it since): restore it from a copy, or start a new {what}."
    )
    assert _plot_error(path, tmp_path, capsys) == expected
    with pytest.raises(pjd.ConfigError) as e:
        (load_sweep if kind == "sweep" else load_pbt)(path)
    assert str(e.value) == expected


def test_plot_judges_a_pbt_run_unfinished_by_its_status(finished, tmp_path, capsys):
    # lineage.json is written before pbt.yaml says finished: a run killed in
    # between has one and is still unfinished.
    path = _copy(finished, "pbt", tmp_path)
    meta = yaml.safe_load((path / "pbt.yaml").read_text())
    (path / "pbt.yaml").write_text(yaml.safe_dump({**meta, "status": "running"}))
    assert (path / "lineage.json").is_file()
    assert "is a pbt that has not finished" in _plot_error(path, tmp_path, capsys)
