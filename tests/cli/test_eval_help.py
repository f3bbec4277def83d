"""Every option of `eval --help` and `plot --help` says what it does."""

import pytest

from purejaxdrl import cli


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        ("eval", ["how many episodes to play", "seeds the fresh environments"]),
        ("plot", ["run, sweep or PBT directories", "its extension picks the format"]),
    ],
)
def test_help_explains_each_option(capsys, command, wanted):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in wanted:
        assert text in out, (text, out)
