"""A sweep directory: marked finished last, its records whole, damage named."""

import jax
import numpy as np
import pytest
import yaml
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.sweeps import report
from purejaxdrl.sweeps.checkpoints import BatchCheckpoint, SweepStore
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.program import resume_sweep, sweep
from purejaxdrl.sweeps.report import load_sweep
from purejaxdrl.sweeps.result import SweepResult

pytestmark = pytest.mark.timeout(600)


class Stop(Exception):
    """Raised where the process would have been killed."""


def _base(root):
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    return pjd.apply_overrides(
        config,
        {
            "total_steps": config.steps_per_update * 2,
            "num_logs": 2,
            "devices": 1,
            "run_dir": str(root),
        },
    )


def _status(path) -> str | None:
    return yaml.safe_load((path / "sweep.yaml").read_text()).get("status")


def test_a_sweep_killed_while_writing_its_results_resumes_and_writes_them(
    tmp_path, monkeypatch
):
    def killed(*args, **kwargs):
        raise Stop  # after runs/, params/ and the tables, before the policy

    with monkeypatch.context() as patch:
        patch.setattr(report, "export_run", killed)
        with pytest.raises(Stop):
            sweep(_base(tmp_path), grid={"learning_rate": [1e-3]}, write_files=True)
    (path,) = tmp_path.iterdir()
    assert _status(path) == "running"
    with pytest.raises(pjd.ConfigError, match="has not finished"):
        load_sweep(path)
    # While another process trains it, a resume is refused, changing nothing.
    from purejaxdrl.training.run_files import RunLock

    with RunLock(path), pytest.raises(pjd.ConfigError, match="is being trained by"):
        resume_sweep(path)
    assert _status(path) == "running"
    messages = []
    resume_sweep(path, notify=messages.append)
    assert "sweep: batch 1 of 1 already trained" in messages
    assert _status(path) == "finished"
    assert (path / "policy").is_dir() and not (path / "checkpoints").exists()
    assert load_sweep(path).plan.num_runs == 1


def test_damaged_sweep_records_are_named_in_one_line(tmp_path):
    def stop(line):
        if line.startswith("sweep: writing"):
            raise Stop

    with pytest.raises(Stop):
        sweep(_base(tmp_path), grid={"learning_rate": [1e-3]}, write_files=True,
              notify=stop)  # fmt: skip
    (path,) = tmp_path.iterdir()
    text = (path / "sweep.yaml").read_text()
    # Cut short, a record can still parse, with a field left empty (None).
    meta = yaml.safe_load(text)
    meta["base"]["total_steps"] = None
    emptied = yaml.safe_dump(meta, sort_keys=False)
    for damaged in (text[: len(text) // 2], "status: running\n", "", emptied):
        (path / "sweep.yaml").write_text(damaged)
        with pytest.raises(pjd.ConfigError) as e:
            resume_sweep(path)
        assert str(e.value).startswith(f"{path / 'sweep.yaml'} is damaged")
        assert str(e.value).endswith("restore it from a copy, or start a new sweep.")
    from tests.sweeps.test_pbt_files import _check_not_damaged

    _check_not_damaged(path, "sweep.yaml", text, (resume_sweep, load_sweep))
    store = SweepStore(tmp_path)
    layout = Layout(1, 1, 1, 1, 10, 100)
    store.layout(0, layout)
    (tmp_path / "checkpoints" / "p0.layout.json").write_text("")
    (tmp_path / "checkpoints" / "p0-b0.done").write_text('{"runs": [0], "div')
    result = SweepResult(plan=None, histories=[[]], diverged=[None],
                         final_params=[None], final_stats=[None])  # fmt: skip
    for read, name in [
        (lambda: store.layout(0, layout), "p0.layout.json"),
        (lambda: store.load_finished(0, 0, result, [0]), "p0-b0.done"),
    ]:
        with pytest.raises(pjd.ConfigError) as e:
            read()
        message = str(e.value)
        assert message.startswith(f"{tmp_path / 'checkpoints' / name} is damaged")
        assert message.endswith("delete it and resume (what it recorded is then "
                                "trained again).")  # fmt: skip


def test_restore_says_which_checkpoints_it_skipped(tmp_path):
    mesh = jax.make_mesh((1,), ("sweep",))
    sharding = NamedSharding(mesh, P())
    states = {"w": jax.device_put(np.arange(4.0, dtype=np.float32), sharding)}
    result = SweepResult(plan=None, histories=[[]], diverged=[None],
                         final_params=[None], final_stats=[None])  # fmt: skip
    checkpoint = BatchCheckpoint(tmp_path, states, mesh)
    for step in (1, 2):
        checkpoint.save(step, checkpoint.pack(states), result, [0])
    checkpoint.close()
    for file in (tmp_path / "2").rglob("*"):
        if file.is_file() and file.stat().st_size > 0:
            file.write_bytes(b"damaged")
    checkpoint = BatchCheckpoint(tmp_path, states, mesh)
    said = []
    restored = checkpoint.restore(result, [0], said.append)
    checkpoint.close()
    assert restored[0] == 1
    (line,) = said
    assert line.startswith("sweep: checkpoint at update 2 skipped: ")
