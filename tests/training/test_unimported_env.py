"""A run's environment registered outside env.imports (review fh18 #1, #2).

Registered by a module the session imported (a notebook's `import chase`),
the run trains but no other process finds its id: training warns, naming the
module, and eval/export say to add it to the run's config.yaml (they take no
`--env.imports`), which then works. A module that registers a gymnax id is
warned of, and the summary does not judge it against the preset's target.
"""

import sys
import types

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.env import registry
from purejaxdrl.setup_warnings import SetupWarning
from tests.helpers import env_registrations_undone

MODULE = """\
from purejaxdrl import env as envs
from purejaxdrl.env.gymnax_env import GymnaxEnv

envs.register("Session-v0", lambda: GymnaxEnv("CartPole-v1"))
"""


@pytest.fixture
def own_registry():
    """Registrations made in the test are undone after it."""
    with env_registrations_undone():
        yield


def _forget(module: str) -> None:
    """As in another process: neither the module nor its id is known."""
    del sys.modules[module]
    del registry._FACTORIES["Session-v0"], registry._USERS["Session-v0"]


@pytest.mark.timeout(300)
def test_an_id_registered_outside_env_imports_warns_and_eval_names_config_yaml(
    tmp_path, monkeypatch, capsys, own_registry
):
    (tmp_path / "session_env.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("session_env")  # the notebook's `import session_env`
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"env": {"id": "Session-v0"}, "num_envs": 4, "unroll_length": 8,
         "total_steps": 64, "num_logs": 1, "devices": 1,
         "run_dir": str(tmp_path / "runs")},
    )  # fmt: skip
    with pytest.warns(SetupWarning, match="which env.imports") as said:
        run = pjd.train(config, write_files=True, console=False).run_dir
    (warning,) = [w for w in said if "Session-v0" in str(w.message)]
    assert str(warning.message) == (
        "env.id='Session-v0' is registered by module 'session_env', which "
        "env.imports ([]) does not name, so `purejaxdrl eval`, `export` and "
        "`train --resume` of this run will not find it; pass --env.imports "
        "session_env (env.imports=['session_env'] in Python)"
    )
    _forget("session_env")
    export = ["export", str(run), "--out", str(tmp_path / "p")]
    for argv, verb in ((["eval", str(run)], "evaluate"), (export, "export")):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith("purejaxdrl: error: Unknown environment 'Session-v0'")
        assert err.endswith(
            f" It is {run}/config.yaml's env.id; if a module of your own registers "
            "it, add that module to env.imports there (imports: [MODULE], under "
            f"env:) and {verb} the run from the folder the module imports in.\n"
        ), argv
        assert "--env.imports" not in err  # a flag eval and export refuse
    # The way out it names works.
    saved = yaml.safe_load((run / "config.yaml").read_text())
    saved["env"]["imports"] = ["session_env"]
    (run / "config.yaml").write_text(yaml.safe_dump(saved))
    assert cli.main(["eval", str(run), "--episodes", "2"]) == 0
    _forget("session_env")


def test_a_module_of_env_imports_or_its_package_is_no_warning():
    from purejaxdrl.training.run import _imports

    assert _imports("pkg.envs", "pkg.envs")
    assert _imports("pkg", "pkg.envs")  # importing pkg ran pkg.envs
    assert _imports("pkg.envs", "pkg")  # importing pkg.envs ran pkg first
    assert not _imports("pkg.envs", "pkg.other")
    assert not _imports("pk", "pkg")


def test_registering_a_gymnax_id_warns_and_the_target_is_not_judged(own_registry):
    from purejaxdrl.cli.target import target_line

    pjd.env.registered()  # gymnax's names known, as after any listing
    with pytest.warns(SetupWarning) as said:
        pjd.env.register("CartPole-v1", lambda: None)
    assert [str(w.message) for w in said] == [
        f"register('CartPole-v1') by module {__name__!r} replaces gymnax's "
        "CartPole-v1 in this process; the shipped presets' targets for it no "
        "longer apply (register yours under a name of your own, e.g. "
        "'my-CartPole-v1', to keep both)"
    ]
    preset = pjd.load_preset("cartpole")
    result = types.SimpleNamespace(mean_return=500.0, eval_return=float("nan"))
    assert target_line(preset.config, preset, result) == (
        "  preset target      475 (training return) within 500,000 steps: not "
        f"judged (CartPole-v1 registered by module {__name__!r})"
    )
