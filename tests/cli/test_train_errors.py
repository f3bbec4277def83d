"""How `train` ends when what it was given turns out bad once training runs.

A user's Gymnasium environment that breaks the API in its `step` is bad input,
as the same break in `reset` is: one line and exit status 2, not an actor's
wrapped failure (exit 1); a bug in the user's own `step` keeps its traceback. A
run in which no episode ended says so in its summary.
"""

import dataclasses
import types
import warnings

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.cli.host_errors import host_error
from purejaxdrl.runners.sebulba import HostEnvError

gym = pytest.importorskip("gymnasium")

# The smallest host run: one update of 4 environments x 8 steps.
TINY = ["--env", "cartpole_envpool", "--total-steps", "32", "--num-envs", "4",
        "--unroll-length", "8", "--num-logs", "1", "--devices", "1", "--quiet",
        "--no-files", "--no-compile-cache"]  # fmt: skip


class OldStep(gym.Env):
    """Resets as Gymnasium's API says; steps with Gym's old 4 values, or a bug."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, bug=False):
        self.bug = bug

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if self.bug:
            raise KeyError("a bug in the user's own step")
        return np.zeros(1, np.float32), 1.0, False, {}


class DictObs(OldStep):
    """Observes a Dict space; steps as Gymnasium's API says."""

    observation_space = gym.spaces.Dict(
        {"a": gym.spaces.Box(-1.0, 1.0, (2,), np.float32), "b": gym.spaces.Discrete(3)}
    )

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return {"a": np.zeros(2, np.float32), "b": 0}, {}

    def step(self, action):
        return {"a": np.zeros(2, np.float32), "b": 1}, 1.0, False, False, {}


gym.register("TrainErrors-DictObs-v0", entry_point=DictObs)
gym.register("TrainErrors-OldStep-v0", entry_point=OldStep)
gym.register("TrainErrors-Bug-v0", entry_point=OldStep, kwargs={"bug": True})


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("purejaxdrl:")]


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Gymnasium's, on 4 values
def test_a_step_that_breaks_gymnasiums_api_is_one_line_with_exit_2(capsys):
    env_id = "gymnasium:TrainErrors-OldStep-v0"
    assert cli.main(["train", *TINY, "--env.id", env_id]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = errors(err)
    assert line.startswith(
        f"purejaxdrl: error: {env_id}: Gymnasium could not take what its step "
        "returned (ValueError: not enough values to unpack"
    )
    # Not the actor's wrapping, nor a checkpoint the run could not have.
    assert line.endswith("check what step returns.")
    assert "actor 0" not in line and "checkpoint" not in line


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # JAX's, on os.fork
def test_an_async_pools_api_break_is_the_same_one_line_with_exit_2(capsys):
    # hr17 #1: 39 lines (a worker's traceback in ANSI colours, the actor's
    # traceback) and exit 1, naming neither the id nor the rule.
    env_id = "gymnasium:TrainErrors-OldStep-v0"
    mode = ["--env.option", "vectorization_mode=async"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cli.main(["train", *TINY, "--env.id", env_id, *mode]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and not [w for w in seen if "ERROR" in str(w.message)]
    (line,) = errors(err)
    assert line.startswith(
        f"purejaxdrl: error: {env_id}: Gymnasium could not take what its step "
        "returned (ValueError: not enough values to unpack"
    )
    assert line.endswith("check what step returns.")


@pytest.mark.timeout(300)
def test_a_bug_in_the_users_step_keeps_its_traceback_and_exit_1(capsys):
    env_id = "gymnasium:TrainErrors-Bug-v0"
    assert cli.main(["train", *TINY, "--env.id", env_id]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and ", in step\n" in err
    (line,) = errors(err)
    assert line.startswith(
        "purejaxdrl: error: actor 0's environments raised KeyError: "
        '"a bug in the user\'s own step"; no checkpoint was saved'
    )


def test_entry_keys_on_a_flattened_dict_space_say_the_host_flattened_it(capsys):
    # hr17 #7: "the environment's are an array", of an environment that returns
    # dicts, and no fix in either spelling.
    env_id = "gymnasium:TrainErrors-DictObs-v0"
    argv = ["train", *TINY, "--env.id", env_id, "--network.policy-obs-key", "a"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "purejaxdrl: error: network.policy_obs_key='a' and value_obs_key=None "
        f"pick entries of dict observations, but {env_id}'s observation space is "
        "not a Box, so the host adapter flattens its observations into one array "
        "of shape (5,), a Dict's entries concatenated (entries are picked on "
        "device environments only); drop --network.policy-obs-key "
        "(network.policy_obs_key=None in Python).\n"
    )


def test_an_uneven_actor_thread_split_is_a_config_error_from_python():
    # hr17 #8: a plain ValueError, which a notebook catching pjd.ConfigError
    # for bad input missed; host.actor_threads=0 beside it was a ConfigError.
    config = pjd.load_preset("cartpole_envpool", "ppo").config
    for host in ({"actor_threads": 3}, {"actor_devices": 2}):
        bad = pjd.apply_overrides(config, {"host": host, "devices": 1})
        with pytest.raises(pjd.ConfigError, match="num_envs=8 must split|do not fit"):
            pjd.train(bad, console=False)


def actor_error(cause: Exception, where: str) -> HostEnvError:
    """A HostEnvError as the training loop words it: the actor's, then WHERE."""
    error = HostEnvError(
        f"actor 0's environments raised {type(cause).__name__}: {cause}; {where}"
    )
    error.__cause__ = cause
    return error


def test_a_checkpoint_to_resume_from_is_kept_and_no_full_stop_comes_before_a_semicolon(
    capsys,
):
    config_error = pjd.ConfigError("gymnasium:X-v0: its step broke the API.")
    saved = "the last good checkpoint is update 4 in runs/r/checkpoints/4; resume "
    saved += "it with `purejaxdrl train --resume runs/r`"
    error = actor_error(config_error, saved)
    assert host_error(error) == (
        2,
        f"gymnasium:X-v0: its step broke the API; {saved}",
    )
    value_error = ValueError("a bad value.")
    error = actor_error(value_error, "no checkpoint was saved before it")
    assert host_error(error) == (
        1,
        "actor 0's environments raised ValueError: a bad value; no checkpoint "
        "was saved before it",
    )
    # A cause whose text is also in the words before it (actor 0's "0").
    error = actor_error(KeyError(0), "no checkpoint was saved before it")
    assert host_error(error) == (
        1,
        "actor 0's environments raised KeyError: 0; no checkpoint was saved before it",
    )
    capsys.readouterr()  # the ValueError's traceback: a user's code raised it


def test_a_run_in_which_no_episode_ended_says_why_its_return_is_missing():
    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    result = types.SimpleNamespace(
        mean_return=float("nan"), eval_return=float("nan"), stopped_by=None,
        run_dir=None, updates=8, num_devices=1, env_steps=4096,
        compile_seconds=1.0, steps_per_second=1e4, history=[],
        steps_per_second_per_device=1e4,
    )  # fmt: skip
    text = summary(config, None, result, wall=2.0)
    assert (
        "  final mean return  — (no episode ended in 4,096 steps; train longer or "
        "check the environment's time limit)\n"
    ) in text
    result.mean_return = 21.5
    assert "  final mean return  21.5\n" in summary(config, None, result, wall=2.0)
    # The return of an earlier chunk says so: none ended in the last ones.
    result.history = [
        {"updates": 4, "episode/mean_return": 21.5},
        {"updates": 6, "episode/mean_return": float("nan")},
        {"updates": 8, "episode/mean_return": None},  # as metrics.jsonl reads back
    ]
    assert (
        "  final mean return  21.5 (chunk ending at update 4: no episode ended "
        "after it)\n"
    ) in summary(config, None, result, wall=2.0)
    result.history.append({"updates": 8, "episode/mean_return": 30.0})
    result.mean_return = 30.0
    assert "  final mean return  30.0\n" in summary(config, None, result, wall=2.0)


def test_a_runs_config_as_env_says_how_to_rerun_it(tmp_path, capsys):
    import yaml

    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    saved = pjd.load_preset("cartpole").config
    (run / "config.yaml").write_text(yaml.safe_dump(pjd.config.to_dict(saved)))
    argv = ["train", "--env", str(run / "config.yaml"), "--seed", "1", "--no-files"]
    assert cli.main(argv) == 2
    (line,) = errors(capsys.readouterr().err)
    assert line == (
        f"purejaxdrl: error: Preset {str(run / 'config.yaml')!r} is a run's resolved "
        "config (algo: ppo, seed, total_steps), not a preset; rerun it as a new run "
        f"in Python (`config, _ = pjd.resume_config({str(run)!r}, {{'seed': 1}}, "
        "allow_changes=True); pjd.train(config)`), continue that run with "
        f"`purejaxdrl train --resume {run}`, or copy its env and fields into a "
        "preset (env: {id: ...}, ppo: {...}) for --env."
    )
    # The route it names gives the run's config with the change.
    config, changes = pjd.resume_config(str(run), {"seed": 1}, allow_changes=True)
    assert config == dataclasses.replace(saved, seed=1) and changes == ["seed: 0 -> 1"]


def test_a_host_env_runs_summary_counts_its_learners_devices_as_such():
    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole_envpool", "ppo").config
    result = types.SimpleNamespace(
        mean_return=20.0, eval_return=float("nan"), stopped_by=None,
        run_dir=None, updates=8, num_devices=1, env_steps=4096,
        compile_seconds=1.0, steps_per_second=1e4, history=[],
        steps_per_second_per_device=1e4,
    )  # fmt: skip
    text = summary(config, None, result, wall=2.0)
    assert ", 1 cpu learner device(s), seed 0" in text
    assert "10,000 (compile excluded), 10,000 per learner device" in text
    device_run = summary(pjd.load_preset("cartpole").config, None, result, wall=2.0)
    assert ", 1 cpu device(s), seed 0" in device_run


@pytest.mark.parametrize(
    "error, runtime",
    [
        # As one CI run's surviving process got it when its peer was killed.
        (
            ValueError(
                "UNKNOWN: Gloo all-reduce failed: [pair.cc:538] Read error "
                "[127.0.0.1]:28850: Connection reset by peer"
            ),
            True,
        ),  # fmt: skip
        (ValueError("  UNAVAILABLE: failed to connect to all addresses"), True),
        (ValueError("ppo.num_minibatches=3 must divide 8 x 16 samples; pass 2"), False),
        (ValueError("unknown field 'UNKNOWN: x'"), False),
    ],
)
def test_a_failed_collective_reads_as_a_peers_failure_not_as_bad_input(error, runtime):
    # In a run of several processes, train ends such an error as a peer's
    # failure (one line, exit 1), not as bad input (exit 2).
    from purejaxdrl.cli.train import runtime_failure

    assert runtime_failure(error) is runtime


def test_jaxs_runtime_errors_are_runtime_failures_whatever_they_say():
    import jax

    from purejaxdrl.cli.train import runtime_failure

    assert runtime_failure(jax.errors.JaxRuntimeError("Gloo all-reduce failed"))
