"""A signal in a `purejaxdrl train`'s first seconds stops it, with its line.

The hold began in `train()`: a Ctrl-C while the command read its flags or
imported JAX landed in a gc callback, was dropped, and the run trained to its
end; a SIGTERM ended it with status 143 and no line (reviews/ck17.md #1).
Each signal here is sent from a gc callback at a fixed point of the
command's setup: no timing race.
"""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(300)

# argv: the signal, the function of `cli.train` that sends it, the run folder.
_SIGNALLED = """
import gc, signal, sys
from purejaxdrl import cli
from purejaxdrl.cli import train

name, where, runs = sys.argv[1:]
real = getattr(train, where)

def hook(phase, info):
    if phase == "start":
        gc.callbacks.remove(hook)
        signal.raise_signal(getattr(signal, name))
        for _ in range(3):  # Python runs a handler at a loop's jump
            pass

def sending(*args, **kwargs):
    if hook not in gc.callbacks and not getattr(train, "sent", False):
        train.sent = True
        gc.callbacks.append(hook)
        gc.collect()
    return real(*args, **kwargs)

setattr(train, where, sending)
sys.exit(cli.main(["train", "--num-envs", "4", "--total-steps", "1024",
                   "--quiet", "--no-compile-cache", "--run-dir", runs]))
"""


# add_process_flags: before JAX is imported; _fresh: while the config is built.
@pytest.mark.parametrize(
    "name, where",
    [("SIGINT", "add_process_flags"), ("SIGTERM", "add_process_flags"),
     ("SIGINT", "_fresh"), ("SIGTERM", "_fresh")],
)  # fmt: skip
def test_a_signal_while_the_command_starts_stops_it_untrained(tmp_path, name, where):
    runs = tmp_path / "runs"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", _SIGNALLED, name, where, str(runs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    err = done.stderr.splitlines()
    assert done.returncode == 130, done.stderr
    assert err[-1] == "interrupted: stopped before the first update; nothing was saved"
    assert err[-2].startswith(f"purejaxdrl: {name} received: stopping before the")
    assert len(err) == 2, err
    assert not runs.exists()
