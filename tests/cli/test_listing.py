"""`purejaxdrl list`: what --envs lists; flags it would ignore refused in one line."""

import sys

import pytest

from purejaxdrl import cli


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["list", "--env", ""], "list --env '': an empty preset name"),
        (["list", "--env", " "], "list --env ' ': an empty preset name"),
        (
            ["list", "--envs", "--env", "cartpole"],
            "list --envs lists environment ids, so --env cartpole has no effect",
        ),
    ],
    ids=repr,
)
def test_list_refuses_an_env_it_would_ignore(argv, message, capsys):
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


@pytest.mark.parametrize("empty", [[], ["[]"], [""]], ids=repr)
def test_list_envs_takes_the_empty_imports_spellings(empty, capsys):
    assert cli.main(["list", "--envs", "--env.imports", *empty]) == 0
    assert "CartPole-v1" in capsys.readouterr().out.split()


def test_list_envs_names_the_gymnasium_ids_the_imports_register(
    tmp_path, monkeypatch, capsys
):
    # `--env.id gymnasium:<id>` takes them, and list --envs left them out.
    gymnasium = pytest.importorskip("gymnasium")
    (tmp_path / "listed_gym_corridor.py").write_text(
        "import gymnasium\n"
        "from gymnasium.envs.classic_control import CartPoleEnv\n"
        "gymnasium.register(id='ListedGymCorridor-v0', entry_point=CartPoleEnv)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_modules adds cwd
    try:
        argv = ["list", "--envs", "--env.imports", "listed_gym_corridor"]
        assert cli.main(argv) == 0
    finally:
        sys.modules.pop("listed_gym_corridor", None)
        gymnasium.registry.pop("ListedGymCorridor-v0", None)
    *_, listed, host = capsys.readouterr().out.splitlines()
    assert listed == "gymnasium:ListedGymCorridor-v0"  # the module's, not all
    assert host.startswith("# and host environments")
    # Without imports, no Gymnasium id is listed.
    assert cli.main(["list", "--envs"]) == 0
    assert "gymnasium:CartPole-v1" not in capsys.readouterr().out


def test_list_shows_the_steps_a_preset_really_trains(capsys):
    # A run trains whole updates: cartpole's ppo section, 4 envs x 128 steps,
    # trains 500,000 // 512 = 976 updates = 499,712 steps, as its summary
    # says; dqn's, 16 x 4, 7,812 updates = 499,968. The target's 500,000 was
    # all list showed, though impala's line named what it trains.
    assert cli.main(["list", "--env", "cartpole"]) == 0
    lines = {x.split()[2]: x for x in capsys.readouterr().out.splitlines()}
    assert lines["ppo"].endswith("in 500,000 steps (trains 499,712)")
    assert lines["dqn"].endswith("in 500,000 steps (trains 499,968)")
    assert lines["impala"].endswith("in 1,000,000 steps (trains 327,680)")
