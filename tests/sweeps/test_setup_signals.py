"""A signal while a sweep or PBT run starts stops it before its first chunk.

Only once the sweep's or population's folder existed was a signal held: one
while the command read its flags or imported JAX, or while the library
compiled, was dropped in a gc callback (it trained to its end) or ended the
process with status 143 and no line (ck17 #1, as `train` had it). Each
signal here is sent from a gc callback at a fixed point: no timing race.
"""

import gc
import signal

import pytest

import purejaxdrl as pjd
from tests.helpers import assert_signal_stops_the_command_untouched

pytestmark = pytest.mark.timeout(300)

_PBT = ["pbt", "--population", "2", "--explore", "learning_rate=loguniform:1e-5:1e-3"]


# command_start: as the flags are read; use_compile_cache: as JAX is set up.
@pytest.mark.parametrize(
    "name, where, argv",
    [("SIGINT", "command_start", ["sweep", "--seeds", "2"]),
     ("SIGTERM", "use_compile_cache", ["sweep", "--no-files"]),
     ("SIGTERM", "command_start", _PBT),
     ("SIGINT", "use_compile_cache", _PBT)],
)  # fmt: skip
def test_a_signal_while_the_command_starts_stops_it_untouched(
    tmp_path, name, where, argv
):
    assert_signal_stops_the_command_untouched(
        tmp_path / "runs", "purejaxdrl.cli.population", name, where, argv
    )


def _signal_in_a_gc_callback(monkeypatch, module, where):
    """Makes `module.where` deliver SIGINT inside a gc callback, once."""
    real = getattr(module, where)

    def hook(phase, info):
        if phase == "start":
            gc.callbacks.remove(hook)
            signal.raise_signal(signal.SIGINT)
            for _ in range(3):
                pass

    def sending(*args, **kwargs):
        monkeypatch.setattr(module, where, real)
        gc.callbacks.append(hook)
        gc.collect()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, where, sending)


def _base(tmp_path, **more):
    config = pjd.load_preset("cartpole").config
    return pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * 4, "num_envs": 8, "num_logs": 4,
         "devices": 1, "run_dir": str(tmp_path / "runs"), **more},
    )  # fmt: skip


def test_a_sweep_without_files_stopped_while_it_compiles_trains_nothing(
    tmp_path, monkeypatch
):
    from purejaxdrl.sweeps import program

    _signal_in_a_gc_callback(monkeypatch, program, "make_programs")
    with pytest.raises(KeyboardInterrupt, match="before the first update; nothing"):
        program.sweep(_base(tmp_path), seeds=1, console=False)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_pbt_run_stopped_while_it_compiles_leaves_a_folder_to_resume(
    tmp_path, monkeypatch
):
    from purejaxdrl.sweeps.pbt import train

    _signal_in_a_gc_callback(monkeypatch, train, "_compile")
    explore = {"learning_rate": ("loguniform", 1e-4, 1e-3)}
    with pytest.raises(
        pjd.SweepStopped, match="by SIGINT after update 0 of "
    ) as stopped:
        pjd.pbt(_base(tmp_path), explore=explore, population=2, write_files=True,
                console=False)  # fmt: skip
    assert (stopped.value.path / "pbt.yaml").exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
