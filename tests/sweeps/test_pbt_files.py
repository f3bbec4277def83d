"""A PBT directory: marked finished last, its mesh recorded, damage named."""

import re

import jax
import numpy as np
import pytest
import yaml
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.sweeps.pbt import files as pbt_files
from purejaxdrl.sweeps.pbt.lineage import PBTResult, load_pbt
from purejaxdrl.sweeps.pbt.operators import PBTConfig
from purejaxdrl.sweeps.pbt.population import pbt, resume_pbt
from purejaxdrl.sweeps.pbt.store import PBTCheckpoint

pytestmark = pytest.mark.timeout(600)

SPACE = {"learning_rate": ("loguniform", 1e-4, 1e-2)}


class Stop(Exception):
    """Raised where the process would have been killed."""


def _base(root, updates=2, devices=1):
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    return pjd.apply_overrides(
        config,
        {
            "total_steps": config.steps_per_update * updates,
            "num_logs": updates,
            "devices": devices,
            "run_dir": str(root),
        },
    )


def _status(path) -> str:
    return yaml.safe_load((path / "pbt.yaml").read_text())["status"]


def test_a_run_killed_while_writing_its_results_resumes_and_writes_them(
    tmp_path, monkeypatch
):
    def killed(*args, **kwargs):
        raise Stop  # after members/, params/ and lineage, before the policy

    with monkeypatch.context() as patch:
        patch.setattr(pbt_files, "export_member", killed)
        with pytest.raises(Stop):
            pbt(_base(tmp_path), explore=SPACE, population=2, ready=1, write_files=True)
    (path,) = tmp_path.iterdir()
    # Not marked finished: its checkpoints are kept, and resume is allowed.
    assert _status(path) == "running"
    assert (path / "checkpoints").is_dir()
    with pytest.raises(pjd.ConfigError, match="has not finished"):
        load_pbt(path)
    from purejaxdrl.training.run_files import RunLock

    with RunLock(path), pytest.raises(pjd.ConfigError, match="is being trained by"):
        resume_pbt(path)  # another process trains it: refused
    messages = []
    resumed = resume_pbt(path, notify=messages.append)
    assert "pbt: resumed at update 1" in messages
    assert _status(path) == "finished"
    assert not (path / "checkpoints").exists()
    assert (path / "lineage.csv").is_file() and (path / "policy").is_dir()
    assert load_pbt(path).lineage == resumed.lineage
    # Written as a sweep's runs are (`write_records`): counts stay integers.
    line = (path / "members" / "member-0000.jsonl").read_text().splitlines()[0]
    assert line.startswith('{"env_steps": 512, "updates": 1, "time": ')
    with pytest.raises(pjd.ConfigError, match="this PBT run finished"):
        resume_pbt(path)


def _started(tmp_path, devices=1):
    """A PBT directory as a run killed right after it was made leaves it."""

    def stop(line):
        if line.startswith("pbt: writing"):
            raise Stop

    with pytest.raises(Stop):
        pbt(
            _base(tmp_path, devices=devices),
            explore=SPACE,
            population=2,
            write_files=True,
            notify=stop,
        )
    (path,) = tmp_path.iterdir()
    return path


def _record_mesh(path, mesh):
    meta = yaml.safe_load((path / "pbt.yaml").read_text())
    meta["mesh"] = mesh
    (path / "pbt.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))


def test_resume_on_too_few_devices_is_refused_naming_cpu_and_gpu_fixes(tmp_path):
    path = _started(tmp_path)
    assert yaml.safe_load((path / "pbt.yaml").read_text())["mesh"] == [1, 1]
    _record_mesh(path, [4, 4])  # as a machine with 16 devices laid it out
    with pytest.raises(pjd.ConfigError) as e:
        resume_pbt(path)
    assert str(e.value) == (
        f"{path}: this PBT run was laid out on 4 x 4 (sweep x data) devices and "
        "this process sees 8; its checkpoints hold that layout, so resume it "
        "where at least 16 local devices are visible (on CPU: "
        "JAX_NUM_CPU_DEVICES=16 before the command; on GPUs: CUDA_VISIBLE_DEVICES "
        "naming 16, e.g. CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,"
        "15); nothing was changed."
    )


def test_a_resume_under_too_small_a_budget_is_offered_only_what_a_resume_takes(
    tmp_path,
):
    # `pbt --resume` takes a budget and nothing else: the population, its
    # settings and the recorded mesh are the checkpoints' (rd21 #5).
    path = _started(tmp_path)
    with pytest.raises(pjd.ConfigError) as e:
        resume_pbt(path, device_memory=1)
    assert re.fullmatch(
        r"population=2 needs ~.* per device, more than the 1 byte of "
        r"device_memory available, and PBT needs every member in memory at each "
        r"ready step: resume with --device-memory \S+ \(device_memory=\d+ in "
        r"Python\), or without it\.",
        str(e.value),
    ), str(e.value)


def test_resume_where_more_devices_are_visible_keeps_the_recorded_mesh(tmp_path):
    # Laid out by itself (devices: 0) where 2 devices were visible; resumed
    # here, on 8, it trains on the first 2 (all 8 would be 2 x 4) and says so.
    path = _started(tmp_path, devices=0)
    _record_mesh(path, [2, 1])
    messages = []

    def stop(line):
        messages.append(line)
        if line.startswith("pbt: 2 members on"):
            raise Stop  # laid out: the rest is any PBT run's

    with pytest.raises(Stop):
        resume_pbt(path, notify=stop)
    assert (
        "pbt: resuming on 2 of 8 cpu devices: the PBT run's checkpoints hold its "
        "2 x 1 (sweep x data) layout."
    ) in messages
    assert messages[-1].startswith("pbt: 2 members on 2 x 1 (sweep x data) cpu")


def test_a_damaged_pbt_yaml_is_named_in_one_line(tmp_path):
    path = _started(tmp_path)
    text = (path / "pbt.yaml").read_text()
    # Cut short, a record can still parse, with a field left empty (None).
    meta = yaml.safe_load(text)
    meta["base"]["total_steps"] = None
    emptied = yaml.safe_dump(meta, sort_keys=False)
    for damaged in (text[: len(text) // 2], "status: running\n", "", emptied):
        (path / "pbt.yaml").write_text(damaged)
        # Reading results, a file that still says running is unfinished.
        for read in (resume_pbt, load_pbt) if damaged == "" else (resume_pbt,):
            with pytest.raises(pjd.ConfigError) as e:
                read(path)
            message = str(e.value)
            assert message.startswith(f"{path / 'pbt.yaml'} is damaged or incomplete")
            assert message.endswith("restore it from a copy, or start a new PBT run.")
            assert "\n" not in message
    _check_not_damaged(path, "pbt.yaml", text, (resume_pbt, load_pbt))


def _check_not_damaged(path, name, text, reads):
    """A record this process cannot read is no damage; a refusal is whole.

    `reads`: the resume (of a running record) and the load (a finished one).
    """
    base = yaml.safe_load(text)["base"]
    host = {**base["env"], "id": "gymnasium:CartPole-v1"}
    cases = [
        # A module or an algorithm this process lacks: the record is whole,
        # and restoring it from a copy would change nothing.
        ({"env": {**base["env"], "imports": ["no_such_module_runs3"]}},
         f"{name}'s env.imports: no module named 'no_such_module_runs3'"),
        ({"algo": "my_algo_runs3", "my_algo_runs3": {}},
         f"{name}: the run's algorithm 'my_algo_runs3' is not registered in this "
         "process; import the module that registers it first"),
        # Damage, with the config's refusal whole (it was cut at 160 characters).
        ({"env": {**host, "normalize_observations": True}},
         f"{path / name} is damaged or incomplete (RefusedValue: its config: "
         "env.normalize_observations=true applies to device environments, not "
         "to env.id='gymnasium:CartPole-v1', whose observations reach the agent "
         "as the environment makes them; pass --env.normalize-observations "
         "false (env.normalize_observations=False in Python), and normalise "
         "inside the environment where it needs it); it is "
         "replaced whole"),
    ]  # fmt: skip
    cut = (
        f"{path / name} is damaged or incomplete (RefusedValue: its config is a "
        "NoneType, not a mapping)"
    )
    for change, start in [*cases, (None, cut)]:  # None: a base left empty
        for read, status in zip(reads, ("running", "finished"), strict=True):
            meta = yaml.safe_load(text)
            meta["base"] = None if change is None else {**meta["base"], **change}
            meta["status"] = status  # what each read takes
            (path / name).write_text(yaml.safe_dump(meta, sort_keys=False))
            with pytest.raises(pjd.ConfigError) as e:
                read(path)
            assert str(e.value).startswith(start), str(e.value)
            assert ("damaged" in str(e.value)) == ("damaged" in start)
    (path / name).write_text(text)


def test_restore_says_which_checkpoints_it_skipped(tmp_path):
    mesh = jax.make_mesh((1,), ("sweep",))
    sharding = NamedSharding(mesh, P())
    hps = jax.device_put(np.zeros(2, np.float32), sharding)
    states = {"w": jax.device_put(np.arange(4.0, dtype=np.float32), sharding)}
    result = PBTResult(
        base=pjd.TrainConfig(), fields=(), config=PBTConfig(), population=2,
        histories=[[], []], diverged=[None, None], lineage=[],
        final_params=[None, None],
    )  # fmt: skip
    checkpoint = PBTCheckpoint(tmp_path, hps, states, mesh)
    for step in (1, 2):
        checkpoint.save(step, checkpoint.pack(hps, states), result)
    checkpoint.close()
    for file in (tmp_path / "checkpoints" / "2").rglob("*"):
        if file.is_file() and file.stat().st_size > 0:
            file.write_bytes(b"damaged")
    checkpoint = PBTCheckpoint(tmp_path, hps, states, mesh)
    said = []
    restored = checkpoint.restore(result, said.append)
    checkpoint.close()
    assert restored[0] == 1
    (line,) = said
    assert line.startswith("pbt: checkpoint at update 2 skipped: ")
    assert "moved to" in line
