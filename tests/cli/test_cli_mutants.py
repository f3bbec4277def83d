"""What reaches the config, the player and the screen from the command line.

Written against mutants of cli/args.py, target.py, eval.py, listing.py and
hints.py that the other CLI tests let pass (reviews/mutants7_M7B.md): which
value wins (library default < preset file < flags), which flags eval hands to
its player, and the numbers of its summary line. No training: eval's run is a
recording stand-in, the presets are small YAML files.
"""

import types

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.cli.args import UsageError, preset_run
from purejaxdrl.cli.train import parser

# A preset file of one's own: its env block and a ppo section.
PRESET = """\
env: {id: CartPole-v1, options: {tau: 0.03, gravity: 9.0}}
ppo: {num_envs: 16, total_steps: 4096, ppo: {learning_rate: 2.0e-3, num_minibatches: 2}}
"""


@pytest.fixture
def preset(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(PRESET)
    return str(path)


def _run(preset, *argv):
    return preset_run(list(argv), preset, "ppo", parser)[2]


def test_flags_beat_the_preset_file_which_beats_the_library_defaults(preset):
    config = _run(preset)
    assert config.env.options == {"tau": 0.03, "gravity": 9.0}
    assert (config.num_envs, config.total_steps) == (16, 4096)
    assert (config.ppo.learning_rate, config.ppo.num_minibatches) == (2e-3, 2)
    assert config.num_logs == 20  # TrainConfig's default: the file sets none
    # A flag replaces its field only; the file's other values stay.
    config = _run(preset, "--env.option", "tau=2e-2", "--num-envs", "8")
    assert config.env.options == {"tau": 0.02, "gravity": 9.0}
    assert (config.num_envs, config.total_steps) == (8, 4096)
    assert (config.ppo.learning_rate, config.ppo.num_minibatches) == (2e-3, 2)
    config = _run(
        preset, "--ppo.learning-rate", "1e-3", "--seed", "3", "--num-logs", "2"
    )
    assert (config.ppo.learning_rate, config.seed, config.num_logs) == (1e-3, 3, 2)
    assert (config.num_envs, config.ppo.num_minibatches) == (16, 2)


def test_env_options_follow_the_environment_they_were_written_for(preset, capsys):
    # --env.id naming the preset's own environment keeps its options.
    config = _run(preset, "--env.id", "CartPole-v1", "--env.option", "force_mag=5")
    assert config.env.options == {"tau": 0.03, "gravity": 9.0, "force_mag": 5}
    assert capsys.readouterr().err == ""
    # Another environment takes only the options given for it.
    argv = ["--env.id", "Acrobot-v1", "--env.option", "max_steps_in_episode=100"]
    config = _run(preset, *argv)
    assert config.env.id == "Acrobot-v1"
    assert config.env.options == {"max_steps_in_episode": 100}
    assert capsys.readouterr().err == (
        "purejaxdrl: the preset's env.options (tau=0.03, gravity=9.0) are "
        "CartPole-v1's, so not passed to Acrobot-v1\n"
    )


def test_an_option_splits_at_its_first_equals_sign_and_needs_a_key(preset):
    config = _run(preset, "--env.option", "label=a=b")
    assert config.env.options["label"] == "a=b"
    with pytest.raises(UsageError, match=r"^--env.option '=3' is not KEY=VALUE"):
        _run(preset, "--env.option", "=3")


def test_a_half_bracketed_list_is_refused_not_cut_short():
    # "[1," "3" is no list: an unmatched bracket, named as such. Stripping
    # one bracket and the last character would leave (1,).
    with pytest.raises(UsageError, match=r"hide-observations '\[1, 3' has unmatched"):
        preset_run(["--env.hide-observations", "[1,", "3"], "cartpole", "ppo", parser)
    config = preset_run(["--env.hide-observations", "[1,", "3]"], "cartpole", "ppo",
                        parser)[2]  # fmt: skip
    assert config.env.hide_observations == (1, 3)


# --- eval: which flags reach the player, and what its line says -------------


class _Player:
    """A stand-in player that records what eval asks of it."""

    def __init__(self, returns, lengths, ended, metrics=None):
        self.calls = []
        self.result = types.SimpleNamespace(
            returns=np.asarray(returns, np.float32),
            lengths=np.asarray(lengths),
            ended=np.asarray(ended, bool),
            metrics=metrics or {},
        )

    def check_render(self, path):
        self.calls.append(("check_render", path))

    def evaluate(self, state, *, episodes, max_steps, seed):
        self.calls.append(("evaluate", state, episodes, max_steps, seed))
        return self.result

    def render(self, state, path, *, max_steps, seed, episodes):
        self.calls.append(("render", state, path, max_steps, seed, episodes))
        return types.SimpleNamespace(length=7, episode_return=7.0, path=path)


@pytest.fixture
def fake_run(monkeypatch, tmp_path):
    """A run directory whose restore is a recording stand-in (no checkpoint)."""
    from purejaxdrl.training import restored

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {"eval": {"max_steps": 321}}
    )
    run = types.SimpleNamespace(dir=tmp_path / "run", restores=[], closed=[])
    run.dir.mkdir()
    run.player = _Player([1.0, 2.0, 3.0, 6.0], [10, 20, 5, 321], [1, 1, 1, 0])

    def restore_run(run_dir, purpose, checkpoint="latest"):
        run.restores.append((str(run_dir), purpose, checkpoint))
        exp = types.SimpleNamespace(
            player=run.player,
            runner=types.SimpleNamespace(close=lambda: run.closed.append(True)),
        )
        return config, exp, types.SimpleNamespace(state="STATE", step=1234)

    monkeypatch.setattr(restored, "restore_run", restore_run)
    return run


def test_eval_plays_the_chosen_checkpoint_with_the_runs_cap_and_closes(
    fake_run, capsys
):
    argv = ["eval", str(fake_run.dir), "--episodes", "4", "--seed", "9"]
    assert cli.main([*argv, "--checkpoint", "7"]) == 0, capsys.readouterr().err
    assert fake_run.restores == [(str(fake_run.dir), "evaluate", 7)]
    # No --max-steps: the player caps the returns at the run's eval.max_steps
    # (it alone works the default out: tests/observe/test_player_defaults.py).
    assert fake_run.player.calls == [("evaluate", "STATE", 4, None, 9)]
    assert fake_run.closed == [True]
    # Returns 1, 2, 3, 6: mean 3, population std sqrt(14/4) = 1.87 (below 10:
    # three significant digits);
    # lengths 5 to 321, one episode (the 4th) did not end: cut at the cap.
    assert capsys.readouterr().out == (
        "ppo on CartPole-v1, update 1,234: mean return 3.00 ± 1.87 (std) over 4 "
        "episode(s) (deterministic policy), lengths 5-321; 1 cut at the run's "
        "eval.max_steps 321 (their returns partial: pass a larger --max-steps for "
        "whole episodes)\n"
    )


def test_eval_hands_max_steps_and_seed_to_both_evaluate_and_render(
    fake_run, tmp_path, capsys
):
    gif = str(tmp_path / "e.gif")
    argv = ["eval", str(fake_run.dir), "--episodes", "3", "--seed", "5"]
    argv += ["--max-steps", "50", "--render", gif, "--checkpoint", "best"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert fake_run.restores == [(str(fake_run.dir), "evaluate", "best")]
    # The drawing is checked before the episodes are played, then drawn.
    assert fake_run.player.calls == [
        ("check_render", gif),
        ("evaluate", "STATE", 3, 50, 5),
        ("render", "STATE", gif, 50, 5, 3),
    ]
    assert fake_run.closed == [True]
    out = capsys.readouterr().out
    assert "; 1 cut at --max-steps 50 (their returns partial: raise it for " in out
    # Without --max-steps, the player's own default (1,000 steps) draws.
    fake_run.player.calls.clear()
    assert cli.main(["eval", str(fake_run.dir), "--render", gif]) == 0
    assert fake_run.player.calls[-1] == ("render", "STATE", gif, None, 0, 5)


def test_evals_metrics_line_is_the_mean_of_each_episode_sum(fake_run, capsys):
    fake_run.player.result.metrics = {
        "hits": np.array([1.0, 2.0, 6.0]),
        "cost": np.array([0.5, 0.25, 0.0]),
    }
    assert cli.main(["eval", str(fake_run.dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Means: (1 + 2 + 6) / 3 = 3 and 0.75 / 3 = 0.25.
    assert lines[1] == (
        "  environment's metrics, episode sums (mean over episodes): hits 3, cost 0.25"
    )


def test_eval_out_of_memory_with_few_episodes_suggests_one(monkeypatch, capsys):
    from purejaxdrl.training.policy import evaluate as policy_eval

    def evaluate(state, *, episodes, max_steps, seed):
        raise MemoryError

    player = types.SimpleNamespace(evaluate=evaluate)
    config = types.SimpleNamespace(eval=types.SimpleNamespace(max_steps=10))
    monkeypatch.setattr(policy_eval, "is_policy_folder", lambda path: True)
    monkeypatch.setattr(
        policy_eval, "policy_player", lambda path, *_: (config, player, None, 1)
    )
    assert cli.main(["eval", "pol", "--episodes", "5"]) == 2
    # 5 // 10 is 0, which eval would refuse: at least one.
    assert "pass fewer, e.g. --episodes 1, and" in capsys.readouterr().err


def test_eval_refuses_a_cap_of_two_to_the_31(capsys):
    assert cli.main(["eval", "run", "--max-steps", str(2**31)]) == 2
    assert f"--max-steps {2**31} must be <= 2**31-1" in capsys.readouterr().err


# --- the preset target's verdict --------------------------------------------


def test_a_return_equal_to_the_target_reaches_it():
    from purejaxdrl.cli.target import target_line

    ppo = pjd.load_preset("cartpole", "ppo")
    run = types.SimpleNamespace(mean_return=float(ppo.target_return), eval_return=0.0)
    assert target_line(ppo.config, ppo, run).endswith(": reached")


def test_a_run_of_a_preset_without_a_target_finds_none():
    from purejaxdrl.cli.target import run_preset

    untargeted = pjd.load_preset("cheetah_run", "ppo")
    assert untargeted.target_return is None
    assert run_preset(untargeted.config) is None


def test_a_commands_refusal_comes_before_the_config_is_built_and_checked():
    # `refuse(args)` (sweep's and PBT's flags they do not honour) sees the
    # parsed flags, and speaks before a value the config would refuse.
    def refuse(args):
        raise UsageError(f"refused num_envs={args.num_envs}")

    with pytest.raises(UsageError, match=r"^refused num_envs=0$"):
        preset_run(["--num-envs", "0"], "cartpole", "ppo", parser, refuse)
    seen = []
    config = preset_run(["--num-envs", "8"], "cartpole", "ppo", parser, seen.append)[2]
    assert config.num_envs == 8 and seen[0].num_envs == "8"


def test_a_sweep_refuses_a_checkpoint_setting_it_would_ignore(capsys):
    argv = ["sweep", "--no-files", "--no-compile-cache", "--checkpoint.keep", "3"]
    argv += ["--total-steps", "512", "--num-logs", "1", "--quiet"]  # if it ran
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: checkpoint.keep=3: sweeps and PBT keep their newest 2 "
        "checkpoints (all a resume needs); drop it.\n"
    )


def test_list_refuses_a_preset_file_it_does_not_ship(preset, capsys):
    # A file of one's own loads (it is a valid preset), but list shows only
    # the shipped ones: one line, exit 2, not the file's sections.
    assert cli.main(["list", "--env", preset]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"purejaxdrl: error: list --env {preset!r}: list shows shipped presets "
        "only; pass one's name (`purejaxdrl list` lists them) or read the file "
        "itself.\n"
    )


def test_a_registered_algorithm_with_an_underscore_has_its_flags_refused_too():
    # Flags spell `ppo_mine` as --ppo-mine: the section is found all the same.
    import dataclasses

    from purejaxdrl.agents import registry
    from purejaxdrl.cli.args import reject_other_algorithms

    mine = dataclasses.replace(registry.algorithm("ppo"), name="ppo_mine")
    with registry.registered(mine):
        with pytest.raises(UsageError, match=r"^--ppo-mine.learning-rate sets ppo_m"):
            reject_other_algorithms(["--ppo-mine.learning-rate=1e-3"], "ppo")
        reject_other_algorithms(["--ppo-mine.learning-rate", "1e-3"], "ppo_mine")


def test_help_says_which_tuple_flags_take_integers_and_which_strings():
    preset = pjd.load_preset("cartpole")
    help_ = " ".join(parser(preset.config, preset.name).format_help().split())
    assert "--env.hide-observations [INT ...]" in help_
    assert "--network.hidden-sizes [INT ...]" in help_
    assert "--env.imports [STR ...]" in help_


def test_an_underscored_flag_is_named_with_dashes_and_says_why(capsys):
    argv = ["train", "--no-files", "--no-compile-cache", "--ppo.clip_eps", "0.1"]
    assert cli.main(argv) == 2
    assert (
        "did you mean --ppo.clip-eps? (flags spell words with dashes)"
        in capsys.readouterr().err
    )


def test_a_preset_word_is_hinted_as_env_only_where_the_command_takes_env(capsys):
    assert cli.main(["list", "cartpole"]) == 2
    assert "did you mean --env cartpole?" in capsys.readouterr().err
    # eval and export take a run, not a preset: no --env to suggest.
    assert cli.main(["export", "runs/RUN", "cartpole", "--out", "o"]) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: unrecognized arguments: cartpole; `purejaxdrl export "
        "--help` lists every option.\n"
    )


def test_eval_refuses_a_checkpoint_word_before_restoring_the_run(fake_run, capsys):
    argv = ["eval", str(fake_run.dir), "--checkpoint", "newest"]
    assert cli.main(argv) == 2
    assert "checkpoint 'newest' is not 'latest', 'best' or an update count" in (
        capsys.readouterr().err
    )
    assert fake_run.restores == []  # nothing loaded for a word that is no choice


def test_comma_separated_modules_are_several_modules():
    # `--env.imports json,csv` (the --grid spelling) imports two modules.
    config = preset_run(["--env.imports", "json,csv"], "cartpole", "ppo", parser)[2]
    assert config.env.imports == ("json", "csv")
