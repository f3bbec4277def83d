"""`purejaxdrl sweep` and `pbt`: their flags reach the library, or fail in one line."""

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.sweeps import program
from purejaxdrl.sweeps.pbt import population
from purejaxdrl.sweeps.pbt.inputs import check_keep_buffer
from purejaxdrl.sweeps.pbt.operators import PBTConfig
from tests.helpers import cli_error_line

SMALL = ["--num-envs", "8", "--total-steps", "2048", "--num-logs", "2"]
SWEEP = ["sweep", "--no-files", "--quiet", "--no-compile-cache", *SMALL]
PBT = ["pbt", "--no-files", "--quiet", "--no-compile-cache", *SMALL]
LR = "learning_rate=loguniform:1e-4:1e-2"


class _Called(Exception):
    """Raised by a stand-in for the library's function: the kwargs it got."""


def _capture(monkeypatch, module, name: str) -> dict:
    """Replaces `module.name` with a function that keeps its kwargs and stops."""
    seen: dict = {}

    def stand_in(*args, **kwargs):
        seen.update(kwargs)
        raise _Called

    monkeypatch.setattr(module, name, stand_in)
    return seen


def _one_line_error(argv: list[str], capsys) -> str:
    """`cli_error_line`, without its `purejaxdrl: error: ` prefix."""
    return cli_error_line(argv, capsys).removeprefix("purejaxdrl: error: ")


def test_pbt_perturb_reaches_pbt_and_the_paper_setting_is_two_flags(monkeypatch):
    seen = _capture(monkeypatch, population, "pbt")
    argv = [*PBT, "--explore", LR, "--pbt.perturb", "0.8,1.2", "--pbt.quantile", "0.2"]
    with pytest.raises(_Called):
        cli.main(argv)
    assert seen["perturb"] == (0.8, 1.2) and seen["quantile"] == 0.2
    with pytest.raises(_Called):  # the default: 1.25 = 1 / 0.8
        cli.main([*PBT, "--explore", LR])
    assert seen["perturb"] == (0.8, 1.25) == PBTConfig().perturb


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # sw19 #6: the example was the paper's 0.8,1.2, not the default.
        (
            "1.2",
            "--pbt.perturb '1.2' is not two factors LOW,HIGH; e.g. --pbt.perturb "
            "0.8,1.25 (perturb=(0.8, 1.25) in Python).",
        ),
        ("0.8,1.2,1.5", "--pbt.perturb '0.8,1.2,1.5' is not two factors LOW,HIGH"),
        ("0.8,up", "--pbt.perturb '0.8,up' is not two factors LOW,HIGH"),
        ("0.8,nan", "--pbt.perturb 0.8,nan must be two finite positive factors"),
        ("0,1.2", "--pbt.perturb 0.0,1.2 must be two finite positive factors"),
    ],
)
def test_a_bad_pbt_perturb_is_one_line(value, message, capsys):
    argv = [*PBT, "--explore", LR, "--pbt.perturb", value]
    assert message in _one_line_error(argv, capsys)


@pytest.mark.parametrize("target", ["nan", "-inf", "inf"])
@pytest.mark.parametrize("command", [SWEEP, [*PBT, "--explore", LR]])
def test_a_target_that_is_not_finite_is_one_line(command, target, capsys):
    # NaN judged every run short of it (0/1), -inf every run past it (1/1).
    error = _one_line_error([*command, f"--target={target}"], capsys)
    assert (
        error == f"--target {float(target)} must be a finite return; e.g. --target "
        "475 (target_return=475 in Python)."
    )


@pytest.mark.parametrize("command", [SWEEP, [*PBT, "--explore", LR]])
def test_a_target_that_is_no_number_gets_both_spellings(command, capsys):
    # sw19 #9: argparse's refusal gave no example, nor the Python spelling.
    error = _one_line_error([*command, "--target", "abc"], capsys)
    assert error == (
        "argument --target: invalid float value: 'abc'; pass a number, e.g. "
        "--target 475 (target_return=475 in Python); "
        f"`purejaxdrl {command[0]} --help` lists every option."
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [*SWEEP, "--grid", "eval.every=1,2"],
            "sweep field 'eval.every' cannot be swept: sweeps and PBT play no "
            "evaluation episodes; drop it.",
        ),
        (
            [*SWEEP, "--grid", "host.queue_size=1,2"],
            "sweep field 'host.queue_size' cannot be swept: sweeps and PBT train "
            "device environments only; drop it.",
        ),
        (
            [*SWEEP, "--sample", "eval.stop_at=uniform:1:2", "--samples", "2"],
            "sweep field 'eval.stop_at' cannot be swept: sweeps and PBT play no",
        ),
        (
            [*SWEEP, "--grid", "scan_unroll=1,4"],
            "sweep field 'scan_unroll' cannot be swept: it changes only speed, not "
            "what a run learns; pass --scan-unroll N (scan_unroll=N in Python) once.",
        ),
        (
            [*PBT, "--explore", "eval.stop_at=uniform:1:2"],
            "--explore field 'eval.stop_at' cannot be swept: sweeps and PBT play no",
        ),
        (
            [*PBT, "--explore", LR, "--explore", "ppo." + LR],
            "--explore field 'ppo.learning_rate' is given twice (under two names); "
            "pick one.",
        ),
        (
            [*PBT, "--explore", LR, "--pbt.keep-buffer"],
            "--pbt.keep-buffer: ppo keeps no replay buffer in this config, so "
            "there is none to keep (members copy their parent's whole learner "
            "state); drop --pbt.keep-buffer.",
        ),
    ],
)
def test_input_that_would_change_nothing_is_one_line(argv, message, capsys):
    assert message in _one_line_error(argv, capsys)


def test_a_sweeps_fields_are_refused_from_python_too():
    with pytest.raises(pjd.ConfigError, match="'eval.every' cannot be swept"):
        program.sweep("cartpole", grid={"eval.every": [1, 2]}, console=False)


def test_keep_buffer_is_for_learners_that_keep_replay(monkeypatch):
    config = pjd.load_preset("cartpole").config
    keep = PBTConfig(keep_buffer=True)
    for algo, overrides in [("ppo", {}), ("pqn", {}), ("impala", {})]:
        base = pjd.apply_overrides(config, {"algo": algo, **overrides})
        with pytest.raises(pjd.ConfigError, match=f"{algo} keeps no replay buffer"):
            check_keep_buffer(keep, base)
        check_keep_buffer(PBTConfig(), base)  # without the flag: nothing to say
    for algo, overrides in [("dqn", {}), ("impala", {"impala": {"replay_ratio": 0.5}})]:
        check_keep_buffer(
            keep, pjd.apply_overrides(config, {"algo": algo, **overrides})
        )
    # The command line passes it on for a replay learner.
    seen = _capture(monkeypatch, population, "pbt")
    with pytest.raises(_Called):
        cli.main(
            [*PBT, "--algo", "dqn", "--dqn.min-replay", "64"]
            + ["--explore", LR, "--pbt.keep-buffer"]
        )
    assert seen["keep_buffer"] is True


@pytest.mark.parametrize("command", [SWEEP, PBT])
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--checkpoint.keep-best"], "checkpoint.keep_best=true: sweeps and PBT keep"),
        (["--checkpoint.keep", "5"], "checkpoint.keep=5: sweeps and PBT keep their"),
        (["--checkpoint.wait"], "checkpoint.wait=true: sweeps and PBT always write"),
        (["--host.actor-threads", "2"], "host.actor_threads=2: sweeps and PBT train"),
        (["--eval.every", "2"], "eval.every=2: sweeps do not play evaluation"),
    ],
)
def test_flags_a_population_ignores_are_refused_in_one_line(
    command, flags, message, capsys, monkeypatch
):
    # Refused before anything trains (the stand-in would be reached otherwise).
    _capture(monkeypatch, population, "pbt")
    _capture(monkeypatch, program, "sweep")
    argv = [*command, *flags] + (["--explore", LR] if command is PBT else [])
    assert _one_line_error(argv, capsys).startswith(message)


@pytest.mark.parametrize("name", ["sweep", "pbt"])
def test_population_help_lists_no_flag_it_ignores(name, capsys):
    with pytest.raises(SystemExit):
        cli.main([name, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    ignored = ("--checkpoint.keep ", "--checkpoint.keep-best", "--checkpoint.wait")
    for flag in (*ignored, "--host.", "--eval."):
        assert flag not in out
    assert "--checkpoint.every" in out
    ready = "saved after every N-th ready step (every N x --pbt.ready chunks)"
    assert (ready in out) == (name == "pbt")


def test_seed_with_a_list_of_seeds_is_one_line_and_with_a_count_the_first(
    capsys, monkeypatch
):
    # A list names every seed: --seed would be silently ignored (and recorded
    # as the base's seed in sweep.yaml), so it is refused.
    error = _one_line_error([*SWEEP, "--seed", "5", "--seeds", "0,1"], capsys)
    assert error == (
        "--seed 5 with --seeds 0,1: a list names every seed, so --seed is not "
        "used; drop --seed, or pass a count (--seeds 2 trains 5, 6)."
    )
    seen = _capture(monkeypatch, program, "sweep")
    with pytest.raises(_Called):  # a count starts at --seed
        cli.main([*SWEEP, "--seed", "5", "--seeds", "2"])
    assert seen["seeds"] == 2
    with pytest.raises(_Called):  # a list alone
        cli.main([*SWEEP, "--seeds", "0,1"])
    assert seen["seeds"] == [0, 1]
    # A trailing comma keeps a list (`5,`: seed 5 alone); an empty item before
    # it (`1,,2`) is refused (tests/cli/test_bad_input.py).
    for text, seeds in (("5,", [5]), ("1,2,", [1, 2]), ("4", 4)):
        with pytest.raises(_Called):
            cli.main([*SWEEP, "--seeds", text])
        assert seen["seeds"] == seeds
