"""An --out that cannot be written: refused from its path before a checkpoint is read.

reviews/ex19.md #1: `export --out afile/sub` (or /proc/p) restored the
checkpoint, then ended in a traceback and exit 1. A write that fails after all
(a full disk) is one line too, and leaves an earlier export whole.
"""

import errno
import pathlib
import re

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.training.policy import checks as policy_checks
from purejaxdrl.training.policy import exported as policy
from purejaxdrl.training.policy import folder as policy_folder
from purejaxdrl.training.policy.folder import check_policy_folder
from purejaxdrl.training.policy.record import PolicySource

ANOTHER = "export elsewhere (another --out DIR, out=DIR in Python)."


def _unrestorable(monkeypatch):
    """Makes reading a checkpoint fail the test: nothing may be read first."""

    def restore(*args, **kwargs):
        raise AssertionError("the checkpoint was read before --out was checked")

    monkeypatch.setattr(policy, "restore_run", restore)


def test_export_under_a_file_is_one_line_before_the_checkpoint(
    tmp_path, capsys, monkeypatch
):
    _unrestorable(monkeypatch)
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub"
    assert cli.main(["export", str(tmp_path / "run"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"purejaxdrl: error: --out {str(out)!r}: {str(tmp_path / 'afile')!r} is "
        f"a file, not a folder; {ANOTHER}\n"
    )
    with pytest.raises(pjd.ConfigError, match=r"^out='.*deeper': '.*afile' is a file"):
        pjd.export_policy(tmp_path / "run", out / "deeper")


def test_a_folder_that_refuses_files_is_refused(tmp_path, monkeypatch):
    # /proc as root: access() says writable, the write fails.
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(policy_folder.tempfile, "TemporaryFile", refuse)
    with pytest.raises(pjd.ConfigError) as refused:
        check_policy_folder(tmp_path / "new" / "policy", overwrite=False)
    assert str(refused.value) == (
        f"--out {str(tmp_path / 'new' / 'policy')!r}: folder {str(tmp_path)!r} "
        f"refuses files (Read-only file system); {ANOTHER}"
    )


def test_a_writable_path_is_not_refused(tmp_path):
    check_policy_folder(tmp_path / "a" / "b", overwrite=False)
    check_policy_folder(pathlib.Path("."), overwrite=False)
    assert list(tmp_path.iterdir()) == []  # the probe left nothing


def _write(out: pathlib.Path) -> pathlib.Path:
    """A policy folder of a small made-up network (`write_policy`)."""
    params = {"w": np.arange(3, dtype=np.float32)}
    specs = (Box((4,)), Discrete(2))
    return policy.write_policy(
        out, PolicySource(pjd.TrainConfig(), params, None, 1, specs)
    )


def test_a_failed_write_is_one_line_and_keeps_the_earlier_export(tmp_path, monkeypatch):
    out = _write(tmp_path / "policy")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = pathlib.Path.write_bytes

    def full(self, data):
        if self.name == ".policy.json.tmp":  # the second file: the first is written
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(policy_checks.pathlib.Path, "write_bytes", full)
    with pytest.raises(pjd.ConfigError) as refused:
        _write(out)
    said = repr(str(out))
    assert str(refused.value) == (
        f"--out {said} (out={said} in Python): could not write it ([Errno 28] No "
        f"space left on device); {ANOTHER}"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no .tmp


def test_export_keeps_an_earlier_policy_unless_told_to_overwrite(
    tmp_path, capsys, monkeypatch
):
    out = _write(tmp_path / "policy")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _unrestorable(monkeypatch)
    said = f"out={str(out)!r} already holds an exported policy (policy.json, params."
    with pytest.raises(pjd.ConfigError, match=f"^{re.escape(said)}"):
        pjd.export_policy(tmp_path / "run", out)
    assert cli.main(["export", str(tmp_path / "run"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pass --overwrite (overwrite=True in" in err, err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    with pytest.raises(AssertionError, match="the checkpoint was read"):
        pjd.export_policy(tmp_path / "run", out, overwrite=True)  # asked: it goes on
