"""What no resume can change, even with --override; hand edits named first.

A run counts its progress and budget in updates, so a resume that changed
the environment steps per update (num_envs x unroll_length) would report
steps it never trained; a device run continues the random keys its
checkpoint saved, so another seed or key implementation would only be
recorded. A config.yaml edited by hand is compared with the checkpoint's
config before the state's layout is, so the edit is what the line names.
"""

import pathlib
import shutil

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.training.resume import cannot_continue
from tests.helpers import cartpole_run


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> pathlib.Path:
    return cartpole_run(tmp_path_factory.mktemp("runs"), total_steps=64)


@pytest.fixture
def run(trained, tmp_path) -> pathlib.Path:
    copy = tmp_path / "runs" / trained.name
    shutil.copytree(trained, copy)
    return copy


def _one_line(capsys) -> str:
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def _unchanged(run: pathlib.Path, config_yaml: str) -> None:
    assert (run / "config.yaml").read_text() == config_yaml
    assert not (run / "overrides.jsonl").exists()
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["2"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--unroll-length", "16"], "unroll_length=16 changes the environment "
         "steps per update (num_envs x unroll_length: 32 -> 64), and a run "
         "counts its progress and budget in updates of its own size"),
        (["--seed", "3"], "seed=3 differs from the checkpoint's, and a resumed "
         "device run continues the random keys its checkpoint saved (seed=0, "
         "rng_impl='fused_threefry'), not new ones"),
        (["--rng-impl", "threefry2x32"], "rng_impl='threefry2x32' differs "
         "from the checkpoint's"),
    ],
)  # fmt: skip
def test_the_command_line_refuses_them_with_and_without_override(
    run, capsys, flags, says
):
    config_yaml = (run / "config.yaml").read_text()
    for override in (["--override"], []):
        argv = ["train", "--resume", str(run), "--quiet", *flags, *override]
        assert cli.main(argv) == 2
        line = _one_line(capsys)
        assert line.startswith(f"purejaxdrl: error: --resume {run}: {says}"), line
        assert line.endswith(
            "; refused even with --override: drop the change to continue the "
            "run, or start a new run with it (nothing was moved or deleted)."
        )
        _unchanged(run, config_yaml)


@pytest.mark.parametrize(
    "change", [{"unroll_length": 16}, {"seed": 3}, {"num_envs": 8, "seed": 1}]
)
def test_python_refuses_them_with_allow_changes(run, change):
    config_yaml = (run / "config.yaml").read_text()
    changed = pjd.apply_overrides(pjd.resume_config(run, {})[0], change)
    with pytest.raises(ConfigError, match="refused even with --override") as e:
        pjd.train(changed, resume=run, console=False, allow_changes=True)
    assert "\n" not in str(e.value)
    _unchanged(run, config_yaml)
    # resume_config with allow_changes still gives the config, for a new run.
    config, changes = pjd.resume_config(run, change, allow_changes=True)
    assert config == changed and len(changes) == len(change)


def test_python_without_allow_changes_names_why_no_resume_takes_it(trained):
    # `pjd.resume_config(run, {"seed": 1})` gives the reason no resume can
    # take it, as the command line does, not the generic "add --override"
    # (allow_changes=True): that advice leads to a config train(resume=)
    # refuses anyway.
    with pytest.raises(ConfigError, match="refused even with --override") as e:
        pjd.resume_config(trained, {"seed": 1})
    assert "seed=1 differs from the checkpoint's" in str(e.value)


def test_a_host_env_run_takes_another_seed_but_not_another_update_size():
    # Its keys and environment seeds are drawn from (seed, update) at each
    # resume (runners/placement.py), so there the seed changes the run.
    saved = pjd.load_preset("cartpole_envpool", "ppo").config
    for change in ({"seed": saved.seed + 1}, {"rng_impl": "threefry2x32"}):
        assert cannot_continue(saved, pjd.apply_overrides(saved, change)) is None
    longer = pjd.apply_overrides(saved, {"unroll_length": saved.unroll_length * 2})
    assert "changes the environment steps per update" in cannot_continue(saved, longer)
    device = pjd.load_preset("cartpole").config
    assert cannot_continue(device, device) is None
    assert cannot_continue(device, pjd.apply_overrides(device, {"seed": 1}))


def _edit(run: pathlib.Path, **fields) -> None:
    data = yaml.safe_load((run / "config.yaml").read_text())
    data.update(fields)
    (run / "config.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"num_envs": 8}, "was saved with another config than its config.yaml "
         "now holds, changed by hand since: num_envs=8 changes the environment "
         "steps per update"),
        ({"num_envs": 8, "unroll_length": 4}, "was saved with another config "
         "than its config.yaml now holds (num_envs: 4 -> 8; unroll_length: 8 "
         "-> 4), changed by hand since, and its state does not fit this run's "
         "("),
        ({"algo": "a2c"}, "was saved with algo: ppo, and config.yaml now says "
         "algo: a2c, changed by hand since; a ppo checkpoint of CartPole-v1 "
         "cannot continue as a2c on CartPole-v1: put config.yaml back"),
    ],
)  # fmt: skip
def test_a_size_edited_by_hand_is_named_before_the_layout_check(
    run, capsys, fields, says
):
    _edit(run, **fields)
    config_yaml = (run / "config.yaml").read_text()
    for override in ([], ["--override"]):
        assert cli.main(["train", "--resume", str(run), "--quiet", *override]) == 2
        line = _one_line(capsys)
        if override and "algo" not in fields and "unroll_length" in fields:
            # Only what no resume can take is refused with --override; the
            # state's layout check then names the misfit.
            # The layout check's own words (checkpoint.MISFIT's line), not
            # the hand-edit refusal's, which says "does not fit" too.
            assert "its state does not fit this run's (" in line, line
            assert "another purejaxdrl version or config saved it" in line, line
            assert "changed by hand" not in line, line
            continue
        where = f"purejaxdrl: error: --resume {run}: its checkpoint at update 2 "
        assert line.startswith(where + says), line
        assert "skipped" not in line and "another purejaxdrl version" not in line
        assert (run / "config.yaml").read_text() == config_yaml
        assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["2"]
