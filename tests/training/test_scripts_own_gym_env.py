"""A Gymnasium id that the training script registers (hr15 #5).

The run trains, and warns that no other process will find the id; `eval`,
`export` and `train --resume` of it then say to move the registration into a
module named in config.yaml's env.imports (they take no `--env.imports`).
"""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.setup_warnings import SetupWarning

gym = pytest.importorskip("gymnasium")


class Inline(gym.Env):
    """Reward 1 a step for 4 steps; as if defined in the training script."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 1.0, self.t >= 4, False, {}


Inline.__module__ = "__main__"  # what a script's own class says of itself


@pytest.mark.timeout(300)
def test_a_scripts_own_id_warns_at_train_and_eval_names_config_yaml(tmp_path, capsys):
    gym.register("ScriptsOwn-Inline-v0", entry_point=Inline)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool").config,
        {"env": {"id": "gymnasium:ScriptsOwn-Inline-v0"}, "num_envs": 4,
         "unroll_length": 8, "total_steps": 32, "num_logs": 1, "devices": 1,
         "run_dir": str(tmp_path / "runs")},
    )  # fmt: skip
    try:
        with pytest.warns(SetupWarning, match="registered by the script") as said:
            result = pjd.train(config, write_files=True, console=False)
    finally:
        del gym.registry["ScriptsOwn-Inline-v0"]  # as in another process
    (warning,) = [w for w in said if "__main__" in str(w.message)]
    assert str(warning.message) == (
        "env.id='gymnasium:ScriptsOwn-Inline-v0' is registered by the script "
        "that trains it (__main__), so `purejaxdrl eval`, `export` and `train "
        "--resume` of this run will not find it; register it in a module of its "
        "own and pass --env.imports MODULE (env.imports=['MODULE'] in Python)"
    )
    run = result.run_dir
    for argv in (["eval", str(run)], ["export", str(run), "--out", str(tmp_path / "p")],
                 ["train", "--resume", str(run)]):  # fmt: skip
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err == (
            f"purejaxdrl: error: {run}/config.yaml: env.id="
            "'gymnasium:ScriptsOwn-Inline-v0' is registered by no module this "
            "process imports (its env.imports: []); a gym.register in the script "
            "that trained it is not run here: move the registration into a module "
            f"and add that module to env.imports in {run}/config.yaml.\n"
        ), argv


def test_a_modules_own_id_is_no_scripts():
    from purejaxdrl.env.host.gymnasium import registered_in_main

    assert not registered_in_main("gymnasium:CartPole-v1")
    assert not registered_in_main("envpool:CartPole-v1")
    # Gymnasium's documented form, a string entry point: also the script's own.
    gym.register("ScriptsOwn-Str-v0", entry_point="__main__:Inline")
    gym.register("ScriptsOwn-Pkg-v0", entry_point="pkg.mod:Inline")
    try:
        assert registered_in_main("gymnasium:ScriptsOwn-Str-v0")
        assert not registered_in_main("gymnasium:ScriptsOwn-Pkg-v0")
    finally:
        del gym.registry["ScriptsOwn-Str-v0"], gym.registry["ScriptsOwn-Pkg-v0"]


def test_a_saved_module_colon_id_is_not_refused_as_unregistered():
    from purejaxdrl.training.resume import _check_gymnasium_id

    # `gymnasium:MODULE:Id` imports MODULE, which registers Id, when its pool
    # is made: not registered yet is no reason to refuse eval/export/resume.
    assert "Foo-v0" not in gym.registry
    _check_gymnasium_id("gymnasium:json:Foo-v0", ["x"], "run/config.yaml")
    with pytest.raises(pjd.ConfigError, match="registered by no module"):
        _check_gymnasium_id("gymnasium:Foo-v0", ["x"], "run/config.yaml")
