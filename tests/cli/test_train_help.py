"""`train --help` and the docs' index say what the flags and guides are."""

import pathlib
import re

import pytest
import yaml

from purejaxdrl import cli

ROOT = pathlib.Path(__file__).parents[2]


def test_env_option_help_names_each_librarys_options(capsys):
    # It named brax's options alone; the guides set gymnax's and Playground's.
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    help_text = out.split("--env.option KEY=VALUE ", 1)[1][:600]
    for wanted in ("gymnax", "max_steps_in_episode=200", "brax", "Playground"):
        assert wanted in help_text, wanted


def test_the_docs_index_links_every_guide_of_the_sites_navigation():
    nav = yaml.safe_load(
        re.sub(r"!!python/\S+", "", (ROOT / "mkdocs.yml").read_text())
    )["nav"]
    guides = next(item["Guides"] for item in nav if "Guides" in item)
    pages = [page if isinstance(page, str) else next(iter(page.values()))
             for page in guides]  # fmt: skip
    index = (ROOT / "docs" / "index.md").read_text()
    assert pages and [p for p in pages if f"]({p})" not in index] == []


def test_resume_help_says_what_a_resume_may_change(tmp_path, capsys):
    # It called the run a preset and said every field could be overridden.
    import purejaxdrl as pjd
    from purejaxdrl.config import to_dict

    run = tmp_path / "CartPole-v1_ppo_1"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump(to_dict(pjd.TrainConfig())))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--resume", str(run), "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "preset" not in out.split("options:")[0]
    # (argparse may wrap the path at its hyphens)
    assert "Continue the run in " in out and "CartPole-v1_ppo_1." in out
    assert "Defaults shown are its saved config" in out
    assert (
        "devices, run_dir, env.imports, checkpoint.*, eval.*, num_logs, "
        "scan_unroll may change, other " in out
    )
    assert "only with --override" in out
    # --resume's own help names eval.* too, which the evaluation guide relies on.
    resume_help = out.split("--resume RUN_DIR ", 1)[1][:300]
    assert "checkpoint.*, eval.*" in resume_help


def test_help_of_a_preset_without_the_section_says_train_refuses_it(capsys):
    # It said "every config field below can be overridden" of a2c's untuned
    # defaults on acrobot, which `train` then refused without saying how to run.
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--env", "acrobot", "--algo", "a2c", "--help"])
    assert exit_.value.code == 0
    description = " ".join(capsys.readouterr().out.split()).split("options:")[0]
    assert "can be overridden" not in description
    assert "which train, sweep and pbt refuse to run" in description
    fix = (
        "to train a2c on Acrobot-v1, copy that file to a .yaml of your own, add "
        "a section 'a2c:' ('a2c: {}' takes a2c's untuned defaults) and pass it "
        "as --env my.yaml; or pick another --algo, or an --env with one ("
    )
    assert fix in description
    # The refusal gives the same fix; the help of a trainable preset is as it was.
    assert cli.main(["train", "--env", "acrobot", "--algo", "a2c"]) == 2
    assert fix in " ".join(capsys.readouterr().err.split())
    with pytest.raises(SystemExit):
        cli.main(["train", "--env", "acrobot", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Every config field below can be overridden; defaults shown are the " in out


@pytest.mark.parametrize("command", ["sweep", "pbt"])
def test_a_population_resume_help_says_what_each_flag_is(command, capsys):
    # `--resume DIR --help` listed --resume and --device-memory with no text.
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--resume", "DIR", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    what = {"sweep": "sweep", "pbt": "PBT run"}[command]
    assert f"--resume DIR the {what}'s folder " in out
    # The usage names --resume once (sw21 #10: `sweep --resume [-h] --resume DIR`).
    assert out.startswith(f"usage: purejaxdrl {command} [-h] --resume DIR ")
    assert out.count("--resume DIR") == 2  # the usage's and the flag's help
    # On a resume a sweep keeps its started programs' batches (sw21 #1); PBT
    # lays its population out again, so its budget applies as on a start.
    memory = {
        "sweep": "--device-memory SIZE memory per device the programs not started "
        "yet may use",
        "pbt": "--device-memory SIZE memory per device it may use",
    }[command]
    assert memory in out
