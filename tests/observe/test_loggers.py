"""Loggers write what they claim: read back JSONL and TensorBoard events."""

import json
import math
import pathlib
import re
import shlex
import signal
import time

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.observe.loggers import JsonlLogger, TensorBoardLogger, logger_flags

RECORDS = [
    # No episode ended in the first chunk: a gap, never a 0.
    {"env_steps": 512, "steps_per_second": 1000.0, "episode/mean_return": math.nan},
    {"env_steps": 1024, "steps_per_second": 1100.0, "episode/mean_return": 21.5},
    {"env_steps": 1536, "steps_per_second": 1200.0, "episode/mean_return": 30.0},
]


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _scalars(logdir, tag):
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_the_guide_says_a_python_sink_gets_nan_where_the_file_has_null(tmp_path):
    # pq18 #5: the guide said only `null`, but a `loggers=` sink and
    # result.history get NaN for a chunk in which no episode ended.
    jsonl = JsonlLogger(tmp_path / "m.jsonl")
    jsonl.write({"env_steps": 8, "episode/mean_return": math.nan})
    jsonl.close()
    assert _jsonl(tmp_path / "m.jsonl")[0]["episode/mean_return"] is None
    guide = pathlib.Path(__file__).parents[2] / "docs" / "guide" / "logging.md"
    text = " ".join(guide.read_text().split())
    assert "(`null` in metrics.jsonl, NaN in Python: `result.history`" in text
    sink = text[text.index("`loggers=` for sinks of your own") :]
    assert "`nan` where the chunk had none" in sink[:400]


def test_tensorboard_and_jsonl_hold_the_records(tmp_path):
    tb, jsonl = TensorBoardLogger(tmp_path / "tb"), JsonlLogger(tmp_path / "m.jsonl")
    for record in RECORDS:
        tb.write(record)
        jsonl.write(record)
    tb.close()
    jsonl.close()
    returns = _scalars(tmp_path / "tb", "episode/mean_return")
    assert returns == [(1024, 21.5), (1536, 30.0)]
    speed = _scalars(tmp_path / "tb", "steps_per_second")
    assert [step for step, _ in speed] == [512, 1024, 1536]
    back = _jsonl(tmp_path / "m.jsonl")
    assert back[0]["episode/mean_return"] is None  # NaN is written as null
    assert back[1:] == RECORDS[1:]


def test_a_resumed_run_purges_what_a_killed_session_wrote_past_its_checkpoint(
    tmp_path,
):
    # Killed after steps 512..1536 were logged, its checkpoint at 1024: the
    # resumed session writes 1536 again, and TensorBoard keeps one value.
    killed = TensorBoardLogger(tmp_path / "tb")
    for record in RECORDS:
        killed.write(record)
    killed.close()
    time.sleep(1.1)  # event files are named by the second they are opened in
    resumed = TensorBoardLogger(tmp_path / "tb", resumed_at=1024)
    resumed.write({**RECORDS[2], "steps_per_second": 7.0})
    resumed.close()
    speed = _scalars(tmp_path / "tb", "steps_per_second")
    assert [step for step, _ in speed] == [512, 1024, 1536]
    assert speed[-1][1] == 7.0
    # A resume without a usable checkpoint trains from update 0: all goes.
    from purejaxdrl.training.result import close, open_sinks
    from purejaxdrl.training.run import Run

    time.sleep(1.1)
    (tmp_path / "tb").rename(tmp_path / "tensorboard")
    run = Run(config=pjd.TrainConfig(), run_dir=tmp_path, main=True)
    sinks = open_sinks(run, [], [], None, ["tensorboard"], None)
    sinks[1].write({**RECORDS[0], "steps_per_second": 9.0})
    close(sinks, None)
    assert _scalars(tmp_path / "tensorboard", "steps_per_second") == [(512, 9.0)]


def test_train_with_the_tensorboard_logger(tmp_path, capsys):
    argv = ["train", "--no-compile-cache", "--quiet", "--logger", "tensorboard",
            "--total-steps", str(512 * 8), "--num-logs", "4", "--devices", "1",
            "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    (run,) = tmp_path.iterdir()
    history = _jsonl(run / "metrics.jsonl")
    want = [
        (r["env_steps"], r["episode/mean_return"])
        for r in history
        if r["episode/mean_return"] is not None
    ]
    got = _scalars(run / "tensorboard", "episode/mean_return")
    assert [s for s, _ in got] == [s for s, _ in want]
    assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-6)


def test_a_logger_that_edits_its_record_edits_only_its_own(tmp_path):
    class Editing:
        def write(self, record):
            record.pop("env_steps")
            record["injected"] = 1.0

        def close(self):
            pass

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 64, "num_logs": 2,
         "devices": 1, "run_dir": str(tmp_path)},
    )  # fmt: skip
    result = pjd.train(
        config, console=False, write_files=True, loggers=[Editing()],
        log_to=["tensorboard"],
    )  # fmt: skip
    history = _jsonl(result.run_dir / "metrics.jsonl")
    assert [r["env_steps"] for r in history] == [32, 64]
    assert all("injected" not in r for r in (*history, *result.history))
    with pytest.raises(pjd.ConfigError, match="is one logger; pass a list of them"):
        pjd.train(config, console=False, loggers=Editing())
    # None reads as no loggers and no sinks, as a Python user writes it.
    alone = pjd.train(config, console=False, loggers=None, log_to=None)
    assert [r["env_steps"] for r in alone.history] == [32, 64]


def test_train_with_the_wandb_logger_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    argv = ["train", "--no-compile-cache", "--quiet", "--logger", "wandb",
            "--logger", "tensorboard", "--total-steps", str(512 * 4),
            "--num-logs", "2", "--devices", "1",
            "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    (run,) = tmp_path.iterdir()
    assert (run / "tensorboard").is_dir()  # several sinks at once
    (offline,) = (run / "wandb").glob("offline-run-*")
    (log,) = offline.glob("run-*.wandb")
    # W&B's binary log holds the run's config and each metric by name.
    data = log.read_bytes()
    for name in (b"episode/mean_return", b"steps_per_second", b"CartPole-v1"):
        assert name in data
    # A resume refused by the checkpoint's config starts no W&B run.
    edited = (run / "config.yaml").read_text().replace("seed: 0", "seed: 5")
    (run / "config.yaml").write_text(edited)
    resume = ["train", "--no-compile-cache", "--quiet", "--logger", "wandb",
              "--resume", str(run)]  # fmt: skip
    assert cli.main(resume) == 2
    assert "changed by hand since" in capsys.readouterr().err
    assert list((run / "wandb").glob("offline-run-*")) == [offline]
    # A resume goes on in the same W&B run (the id its first session saved).
    (run / "config.yaml").write_text(edited.replace("seed: 5", "seed: 0"))
    assert cli.main([*resume, "--override", "--total-steps", str(512 * 6)]) == 0
    ids = {p.name.rsplit("-", 1)[1] for p in (run / "wandb").glob("offline-run-*")}
    assert ids == {(run / "wandb" / "purejaxdrl-run-id").read_text()}


def test_logger_needs_a_run_directory(capsys):
    assert cli.main(["train", "--no-files", "--logger", "tensorboard"]) == 2
    assert "drop --no-files" in capsys.readouterr().err
    assert cli.main(["train", "--logger", "wandb9"]) == 2
    assert "invalid choice: 'wandb9'" in capsys.readouterr().err


def test_wandb_without_a_login_is_one_line(tmp_path, capsys, monkeypatch):
    wandb = pytest.importorskip("wandb")

    def refuse(**kwargs):
        raise wandb.errors.UsageError("No API key configured. Use `wandb login`.")

    monkeypatch.setattr(wandb, "init", refuse)
    argv = ["train", "--no-compile-cache", "--quiet", "--logger", "wandb",
            "--total-steps", str(512 * 4), "--num-logs", "2", "--devices", "1",
            "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    (run,) = tmp_path.iterdir()
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for part in ("wandb login", "WANDB_API_KEY", "WANDB_MODE=offline", str(run)):
        assert part in err, (part, err)


# Four updates of 64 steps, one per chunk: compiled in seconds.
_TINY = ["--total-steps", "256", "--num-envs", "4", "--unroll-length", "16",
         "--num-logs", "4", "--devices", "1"]  # fmt: skip


def _printed_command(text):
    # The command between the backquotes after "continue it with".
    return _without_fake_devices(
        shlex.split(re.search(r"continue it with `([^`]*)`", text).group(1))
    )


def _without_fake_devices(words):
    # The runs here train on one device: however many CPU devices the tests
    # fake, the command needs no JAX_NUM_CPU_DEVICES setting.
    assert words[0] == "purejaxdrl", words
    return words


def test_the_wandb_refusal_names_a_resume_that_logs_again(
    tmp_path, capsys, monkeypatch
):
    # Loggers are not in the saved config: the printed resume carries every
    # --logger of the session, and a resume without them says so.
    wandb = pytest.importorskip("wandb")

    def refuse(**kwargs):
        raise wandb.errors.UsageError("No API key configured. Use `wandb login`.")

    monkeypatch.setattr(wandb, "init", refuse)
    argv = ["train", "--no-compile-cache", "--quiet", "--logger", "tensorboard",
            "--logger", "wandb", *_TINY, "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    (run,) = tmp_path.iterdir()
    assert _printed_command(err) == [
        "purejaxdrl", "train", "--resume", str(run), "--logger", "tensorboard",
        "--logger", "wandb",
    ]  # fmt: skip
    # Resumed without --logger wandb (no history yet), it warns in one line.
    assert (
        cli.main(["train", "--no-compile-cache", "--quiet", "--resume", str(run)]) == 0
    )
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "--logger wandb" in line]
    assert warned == [
        "purejaxdrl: this run used --logger wandb before (its wandb/ folder); it "
        "does not now: pass --logger wandb with --resume to go on"
    ], err


def test_a_stopped_runs_resume_command_keeps_its_logger(tmp_path, capsys, monkeypatch):
    # Ctrl-C while the first chunk is logged: the printed command, run as
    # printed, goes on writing TensorBoard to the run's end.
    write = TensorBoardLogger.write

    def interrupted(self, record):
        write(self, record)
        if record["updates"] == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(TensorBoardLogger, "write", interrupted)
    argv = ["train", "--no-compile-cache", "--quiet", "--logger", "tensorboard",
            *_TINY, "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    (run,) = tmp_path.iterdir()
    hint = re.search(r"continue with: (.*)", out).group(1)
    words = _without_fake_devices(shlex.split(hint))
    assert words == ["purejaxdrl", "train", "--resume", str(run), "--logger",
                     "tensorboard"], out  # fmt: skip
    monkeypatch.setattr(TensorBoardLogger, "write", write)
    assert cli.main([*words[1:], "--no-compile-cache", "--quiet"]) == 0
    steps = [step for step, _ in _scalars(run / "tensorboard", "steps_per_second")]
    assert steps[-1] == 256, steps


# What the fast suite let change in the sinks (mutants7_M7A), without training.


def test_sinks_leave_out_infinities_and_flags(tmp_path):
    record = {"env_steps": 64, "loss": 0.5, "up": math.inf, "down": -math.inf,
              "stopped": True, "updates": 2}  # fmt: skip
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text('{"env_steps": 32}\n')  # a resumed run's history
    sink = JsonlLogger(jsonl)
    sink.write(record)
    sink.close()
    lines = jsonl.read_text().splitlines()
    assert lines[0] == '{"env_steps": 32}'  # appended after it, not replaced

    def strict(name):
        raise ValueError(f"not strict JSON: {name}")

    back = json.loads(lines[1], parse_constant=strict)
    assert back == {**record, "up": None, "down": None}
    tb = TensorBoardLogger(tmp_path / "tb")
    tb.write(record)
    tb.close()
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    assert sorted(acc.Tags()["scalars"]) == ["loss", "updates"]
    assert _scalars(tmp_path / "tb", "updates") == [(64, 2.0)]


def test_logger_flags_name_each_logger_once():
    assert logger_flags(["tensorboard", "wandb", "tensorboard"]) == (
        " --logger tensorboard --logger wandb"
    )
    assert logger_flags([]) == ""


class _FakeWandb:
    """The part of the wandb module WandbLogger uses, recording its calls."""

    class errors:
        class UsageError(Exception):
            pass

        class AuthenticationError(Exception):
            pass

    def __init__(self, refuse=None):
        self.inits, self.logged, self.metrics, self.refuse = [], [], [], refuse

    def init(self, **kwargs):
        if self.refuse:
            raise self.refuse
        self.inits.append(kwargs)
        fake = self

        class Run:
            id = "run1d"

            def define_metric(self, name, **kwargs):
                fake.metrics.append((name, kwargs))

            def log(self, data):
                fake.logged.append(data)

            def finish(self):
                pass

        return Run()


def test_wandb_logs_finite_numbers_against_env_steps_and_resumes_its_run(
    tmp_path, monkeypatch
):
    import sys

    from purejaxdrl.observe.loggers import WandbLogger

    fake = _FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    monkeypatch.setenv("WANDB_PROJECT", "mine")
    logger = WandbLogger(tmp_path, "ppo", {"seed": 0})
    assert fake.metrics == [("env_steps", {}), ("*", {"step_metric": "env_steps"})]
    logger.write({"env_steps": 64, "updates": 2, "loss": 0.5, "ret": math.nan,
                  "up": math.inf, "stopped": True, "env": "CartPole-v1"})  # fmt: skip
    logger.close()
    assert fake.logged == [{"env_steps": 64, "updates": 2, "loss": 0.5}]
    (first,) = fake.inits
    assert first["id"] is None and first["resume"] is None
    assert first["project"] == "mine" and first["dir"] == str(tmp_path)
    # A second session of the run goes on in the W&B run of the first.
    assert (tmp_path / "wandb" / "purejaxdrl-run-id").read_text() == "run1d"
    WandbLogger(tmp_path, "ppo", {"seed": 0}).close()
    assert fake.inits[1]["id"] == "run1d" and fake.inits[1]["resume"] == "allow"


def test_a_wandb_refusal_resumes_with_every_logger_and_wandb(tmp_path, monkeypatch):
    import sys

    from purejaxdrl.observe.loggers import WandbLogger

    refusal = _FakeWandb.errors.UsageError("No API key configured.\nMore text.")
    monkeypatch.setitem(sys.modules, "wandb", _FakeWandb(refusal))
    with pytest.raises(pjd.ConfigError) as e:
        WandbLogger(tmp_path, "ppo", {}, log_to=("tensorboard",))
    message = str(e.value)
    assert "(UsageError: No API key configured.);" in message
    assert "More text" not in message
    assert message.endswith(
        f"`purejaxdrl train --resume {tmp_path} --logger tensorboard --logger wandb`"
    )


def test_a_wandb_refusal_resumes_on_the_run_s_devices(tmp_path, monkeypatch):
    # A run on 2 faked CPU devices: the command starts with their setting
    # (run as printed without it, the process sees 1 and the resume is refused).
    import sys

    import jax

    from purejaxdrl.observe.loggers import WandbLogger

    refusal = _FakeWandb.errors.AuthenticationError("bad key")
    monkeypatch.setitem(sys.modules, "wandb", _FakeWandb(refusal))
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    with pytest.raises(pjd.ConfigError) as e:
        WandbLogger(tmp_path, "ppo", {}, devices=2)
    assert str(e.value).endswith(
        f"`JAX_NUM_CPU_DEVICES=2 purejaxdrl train --resume {tmp_path} --logger wandb`"
    )
