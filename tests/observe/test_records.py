"""A sweep's or PBT run's records read back: what `reading` and `present` say."""

import pytest
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.records import (
    RefusedValue,
    present,
    reading,
    restore_or_restart,
)


def test_present_names_a_missing_record_and_takes_no_folder_for_one(tmp_path):
    record = tmp_path / "run-0000.jsonl"
    record.write_text("{}\n")
    assert present(record, "sweep") == record
    for path in (tmp_path / "run-0001.jsonl", tmp_path / "runs"):
        path.parent.mkdir(exist_ok=True)
        if path.name == "runs":
            path.mkdir()  # a folder where the record should be
        with pytest.raises(ConfigError) as e:
            present(path, "sweep")
        assert str(e.value) == (
            f"{path} is missing (the sweep wrote it, so something removed it "
            "since): restore it from a copy, or start a new sweep."
        )


def test_reading_names_the_file_what_is_wrong_and_the_fix(tmp_path):
    path = tmp_path / "sweep.yaml"
    fix = restore_or_restart("sweep")
    with pytest.raises(ConfigError) as e, reading(path, fix):
        {}["settings"]
    assert str(e.value) == (
        f"{path} is damaged or incomplete (KeyError: 'settings'); it is replaced "
        "whole, so something else changed it: restore it from a copy, or start a "
        "new sweep."
    )
    # A parser's long text is cut to 160 characters; a refused value is whole.
    with pytest.raises(ConfigError) as e, reading(path, "fix"):
        yaml.safe_load("a: [" + "x, " * 200)
    assert len(str(e.value)) <= len(f"{path} is damaged or incomplete (); fix.") + 160
    long = "v" * 300
    whole = f"RefusedValue: {long}\\); fix.$"
    with pytest.raises(ConfigError, match=whole), reading(path, "fix"):
        raise RefusedValue(long)
    # A ConfigError of its own passes through as it is.
    with pytest.raises(ConfigError, match="^own$"), reading(path, "fix"):
        raise ConfigError("own")
