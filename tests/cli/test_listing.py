"""`purejaxdrl list`: flags that would be ignored are refused in one line."""

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
