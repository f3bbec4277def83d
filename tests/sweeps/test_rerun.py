"""A sweep's best run, trained alone from what the sweep wrote."""

import importlib
import json
import pathlib
import shlex
import shutil
import sys
import warnings

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.cli.args import preset_run
from purejaxdrl.cli.train import parser
from purejaxdrl.sweeps.rerun import best_run_text, run_command, train_command

pytestmark = pytest.mark.timeout(600)

CARTPOLE = pjd.load_preset("cartpole").config  # PPO


def _parsed(command: str) -> pjd.TrainConfig:
    """The config `purejaxdrl train` builds from `command` (it trains nothing)."""
    words = shlex.split(command)
    assert words[:4] == ["purejaxdrl", "train", "--env", words[3]]
    argv = words[2:]
    algo = argv[argv.index("--algo") + 1]
    return preset_run(argv, words[3], algo, parser)[2]


def test_the_command_gives_the_config_flag_by_flag():
    config = pjd.apply_overrides(
        CARTPOLE,
        {
            "seed": 7,
            "total_steps": 4096,
            "network": {"hidden_sizes": (32,), "head_sizes": ()},
            "ppo": {"learning_rate": 3e-3, "anneal_lr": False, "gamma": 0.9},
            "eval": {"stop_at": None},
        },
    )
    command = train_command(config)
    # Only what differs from cartpole's preset, in its field order; the
    # other algorithms' sections are no flags of a ppo run.
    assert command == (
        "purejaxdrl train --env cartpole --algo ppo --seed 7 "
        "--network.hidden-sizes 32 --total-steps 4096 "
        "--ppo.learning-rate 0.003 --ppo.gamma 0.9 --ppo.anneal-lr false"
    )
    assert _parsed(command) == config
    # A negative value goes after '=', or it would read as a flag.
    clipped = pjd.apply_overrides(CARTPOLE, {"eval": {"stop_at": -5.0}})
    assert "--eval.stop-at=-5.0" in train_command(clipped)


def test_no_command_where_no_shipped_preset_has_the_environment():
    # cartpole's hides nothing, cartpole_masked's entries 1 and 3.
    hidden = pjd.apply_overrides(CARTPOLE, {"env": {"hide_observations": (0,)}})
    assert train_command(hidden) is None
    masked = pjd.apply_overrides(pjd.load_preset("cartpole_masked").config, {"seed": 3})
    assert train_command(masked).startswith(
        "purejaxdrl train --env cartpole_masked --algo ppo --seed 3"
    )


def test_the_best_run_is_trained_alone_from_what_the_sweep_wrote(tmp_path, monkeypatch):
    base = pjd.apply_overrides(
        CARTPOLE,
        {
            "total_steps": CARTPOLE.steps_per_update * 2,
            "num_logs": 2,
            "devices": 1,
            "run_dir": str(tmp_path),
        },
    )
    result = pjd.sweep(
        base,
        grid={"learning_rate": [1e-3, 3e-3]},
        seeds=[4, 9],
        write_files=True,
        notify=(said := []).append,
    )
    path = result.run_dir
    best = yaml.safe_load((path / "sweep.yaml").read_text())["best_run"]
    run = result.best_run
    setting, seed = result.plan.run(run)
    assert {k: best[k] for k in ("run", "setting", "seed")} == {
        "run": run,
        "setting": setting,
        "seed": seed,
    }
    assert best["values"] == result.plan.settings[setting]
    assert best["final_return"] == pytest.approx(result.final_return[run])
    # The policy folder says which seed (and, in algo_config, which values).
    spec = json.loads((path / best["policy"] / "policy.json").read_text())
    assert spec["seed"] == seed
    lr = best["values"]["ppo.learning_rate"]
    assert spec["algo_config"]["learning_rate"] == lr
    # Python: the line written trains the run's config.
    trained = []
    monkeypatch.setattr(pjd, "train", trained.append)
    exec(best["python"], {"pjd": pjd})  # noqa: S102 (the sweep's own line)
    (config,) = trained
    assert config == result.plan.run_config(run)
    assert (config.seed, config.ppo.learning_rate) == (seed, lr)
    # The command line builds that same config.
    assert _parsed(best["command"]) == config
    text = (path / "summary.md").read_text()
    assert f"The best setting's best run: run {run} (setting {setting}, seed " in text
    # Not "the same run": a member and its run alone part after some updates.
    alone = "alone (the same run in distribution, not bit for bit)"
    assert f"Train it {alone}: `{best['command']}`, or in Python: " in text
    assert f"sweep: train it {alone} with: {best['command']}" in said  # and says it
    # One data device: no fake devices' setting before the command.
    assert best["command"].startswith("purejaxdrl train ")
    assert _parsed(best["command"]).devices == 1


def test_a_member_on_two_data_devices_is_trained_alone_on_two(tmp_path):
    # One DQN run on 2 devices: its environments and replay shards split over
    # both (data axis 2), and a replay learner draws per shard, so the run
    # alone is the same run only on 2 devices; the command names them as the
    # resume line does.
    dqn = pjd.load_preset("cartpole", "dqn").config
    base = pjd.apply_overrides(
        dqn,
        {
            "total_steps": dqn.steps_per_update * 4,
            "num_logs": 1,
            "devices": 2,
            "run_dir": str(tmp_path),
            "network": {"hidden_sizes": (16,)},
            "dqn": {"min_replay": 128, "batch_size": 16, "dueling": False},
        },
    )
    result = pjd.sweep(base, seeds=[5], write_files=True, console=False)
    assert [(x.sweep, x.data) for x in result.layouts] == [(1, 2)]
    best = yaml.safe_load((result.run_dir / "sweep.yaml").read_text())["best_run"]
    setting, command = best["command"].split(" ", 1)
    assert setting == "JAX_NUM_CPU_DEVICES=2"
    assert "--devices 2" in command
    assert _parsed(command) == result.plan.run_config(0)
    assert f"`{best['command']}`" in (result.run_dir / "summary.md").read_text()
    # Read back, the same command: once load_sweep kept no layout, and gave
    # the command without the fake devices' setting and --devices 2.
    assert run_command(pjd.load_sweep(result.run_dir), 0) == best["command"]
    # A sweep.yaml without layouts (written before they were recorded) loads;
    # with none it gives the config's command alone, as it did.
    file = result.run_dir / "sweep.yaml"
    meta = yaml.safe_load(file.read_text())
    del meta["layouts"]
    file.write_text(yaml.safe_dump(meta, sort_keys=False, width=10_000))
    assert run_command(pjd.load_sweep(result.run_dir), 0) == train_command(
        result.plan.run_config(0)
    )


def test_a_single_data_device_is_named_where_the_command_would_see_more():
    dqn = pjd.apply_overrides(pjd.load_preset("cartpole", "dqn").config, {"seed": 1})
    assert train_command(dqn) == "purejaxdrl train --env cartpole --algo dqn --seed 1"
    # The tests fake 8 CPU devices: a plain `train` would use all of them.
    assert train_command(dqn, data=1) == (
        "purejaxdrl train --env cartpole --algo dqn --seed 1 --devices 1"
    )
    assert train_command(dqn, data=4) == (
        "JAX_NUM_CPU_DEVICES=4 purejaxdrl train --env cartpole --algo dqn "
        "--seed 1 --devices 4"
    )


def test_other_algorithms_sections_give_no_flags():
    import dataclasses

    # A ppo run never reads its dqn section (a base from a user's copy of
    # cartpole.yaml may hold another one), so a change there is no flag.
    dqn = dataclasses.replace(CARTPOLE.dqn, learning_rate=0.01)
    config = dataclasses.replace(CARTPOLE, seed=2, dqn=dqn)
    config = pjd.apply_overrides(config, {"ppo": {"gamma": 0.9}})
    assert train_command(config) == (
        "purejaxdrl train --env cartpole --algo ppo --seed 2 --ppo.gamma 0.9"
    )


def test_of_presets_with_the_environment_the_one_needing_fewest_flags_is_named(
    monkeypatch,
):
    from types import SimpleNamespace

    from purejaxdrl.sweeps import rerun

    # Two presets of cartpole's environment: "far" differs from the run in
    # two fields (gamma, learning rate), "near" in one (learning rate).
    near = pjd.apply_overrides(CARTPOLE, {"ppo": {"gamma": 0.9}})
    presets = {"far": CARTPOLE, "near": near}
    monkeypatch.setattr(rerun, "presets_with", lambda algo: list(presets))
    monkeypatch.setattr(
        rerun, "load_preset", lambda name, algo: SimpleNamespace(config=presets[name])
    )
    config = pjd.apply_overrides(near, {"ppo": {"learning_rate": 1e-3}})
    assert train_command(config) == (
        "purejaxdrl train --env near --algo ppo --seed 0 --ppo.learning-rate 0.001"
    )


def test_the_python_line_names_the_data_devices_a_plain_train_would_not_use(
    tmp_path, monkeypatch
):
    # devices=0 trains alone on every local device (8 here); the sweep split
    # them between its 2 settings, each member's environments over the rest.
    base = pjd.apply_overrides(
        CARTPOLE,
        {
            "total_steps": CARTPOLE.steps_per_update,
            "num_logs": 1,
            "devices": 0,
            "run_dir": str(tmp_path),
        },
    )
    result = pjd.sweep(
        base, grid={"learning_rate": [1e-3, 3e-3]}, write_files=True, console=False
    )
    [layout] = result.layouts
    assert layout.data not in (None, 8) and result.plan.run_config(0).devices == 0
    best = yaml.safe_load((result.run_dir / "sweep.yaml").read_text())["best_run"]
    trained = []
    monkeypatch.setattr(pjd, "train", trained.append)
    exec(best["python"], {"pjd": pjd})  # noqa: S102 (the sweep's own line)
    (config,) = trained
    assert (
        config.devices
        == layout.data
        == _parsed(best["command"].split(" ", 1)[1]).devices
    )
    assert config == pjd.apply_overrides(
        result.plan.run_config(result.best_run), {"devices": layout.data}
    )


EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "docs/examples/reinforce.py"


@pytest.fixture
def reinforce_module(tmp_path, monkeypatch):
    """docs/examples/reinforce.py as the user's module `reinforce`, importable."""
    shutil.copy(EXAMPLE, tmp_path / "reinforce.py")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delitem(sys.modules, "reinforce", raising=False)
    with registry.registered():  # what importing it registers is gone after
        yield
    sys.modules.pop("reinforce", None)


def test_modules_to_import_are_a_flag_not_another_environment(reinforce_module):
    importlib.import_module("reinforce")  # as the command's --env.imports does
    ppo = pjd.load_preset("cartpole").config  # (a reinforce section too, now)
    imported = pjd.apply_overrides(ppo, {"env": {"imports": ("reinforce",)}})
    command = train_command(imported)
    assert command == (
        "purejaxdrl train --env cartpole --algo ppo --seed 0 --env.imports reinforce"
    )
    assert _parsed(command) == imported


def test_a_users_algorithm_an_imported_module_registers_has_a_command(
    reinforce_module,
):
    importlib.import_module("reinforce")
    with pytest.warns(pjd.SetupWarning, match="no reinforce section"):
        preset = pjd.load_preset("cartpole", algo="reinforce").config
    config = pjd.apply_overrides(
        preset,
        {"env": {"imports": ("reinforce",)}, "seed": 3, "total_steps": 4096},
    )
    with warnings.catch_warnings():  # none per shipped preset read (mut15 #9)
        warnings.simplefilter("error", pjd.SetupWarning)
        command = train_command(config)
    assert command.startswith(
        "purejaxdrl train --env cartpole --algo reinforce --seed 3 "
        "--env.imports reinforce"
    )
    assert _parsed(command) == config
    # Registered in Python only: no command line can import it.
    alone = pjd.apply_overrides(config, {"env": {"imports": ()}})
    assert train_command(alone) is None


def test_the_summary_says_why_no_command_line_trains_a_run():
    record = {"run": 0, "setting": 0, "seed": 1, "final_return": 9.0}
    text = best_run_text({**record, "python": "pjd.train(c)", "command": None})
    assert text.endswith(
        "in Python: `pjd.train(c)` (no `purejaxdrl train` line gives it: no "
        "shipped preset has its environment, its algorithm is registered in "
        "Python, not by an --env.imports module, or a value of it has no flag).\n"
    )
