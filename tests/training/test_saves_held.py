"""The advice when checkpoint saves held training back: its usual cause first."""

import dataclasses

from .test_loop import _loop


def _held_with(wait: bool) -> str:
    """What a run that waited 1.5 s of its 2 s on saves says."""
    loop = _loop([])
    config = loop.run.config
    checkpoint = dataclasses.replace(config.checkpoint, wait=wait)
    loop.run.config = dataclasses.replace(config, checkpoint=checkpoint)
    loop.elapsed = lambda: 2.0
    loop.say_if_saves_held(1.5)
    (line,) = loop.run.messages
    return line


def test_saves_held_by_checkpoint_wait_say_to_drop_it():
    # Without it a single process's saves never hold training (a save that
    # falls due while one waits replaces it): the flag is the cause to name.
    assert _held_with(wait=True) == (
        "checkpoint saves held training for 1.5 s of its 2.0 s (a save every 1 "
        "chunk(s)); pass --checkpoint.wait false (checkpoint.wait=False in "
        "Python: a save that falls due while one waits then replaces it), or "
        "--checkpoint.every 10 (checkpoint.every=10 in Python) to save less "
        "often, 0 only at the end and on Ctrl-C."
    )


def test_saves_held_in_a_resumed_run_say_to_resume_with_the_flag():
    # Its settings are in config.yaml: no flag to drop (reviews/ck17.md #4).
    from purejaxdrl.training.faults import saves_held_advice

    checkpoint = dataclasses.replace(_loop([]).run.config.checkpoint, wait=True)
    line = saves_held_advice(1.5, 2.0, checkpoint, 1, resumed=True)
    assert line.endswith(
        "; resume with --checkpoint.wait false (checkpoint.wait=False in Python: "
        "a save that falls due while one waits then replaces it), or with "
        "--checkpoint.every 10 (checkpoint.every=10 in Python) to save less "
        "often, 0 only at the end and on Ctrl-C."
    )


def test_saves_held_in_several_processes_do_not_blame_checkpoint_wait(monkeypatch):
    # There saves are written in order on the loop's thread, wait or not.
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module.jax, "process_count", lambda: 2)
    line = _held_with(wait=True)
    assert "--checkpoint.wait" not in line
    assert line.endswith(
        "--checkpoint.every 10 (checkpoint.every=10 in Python) to save less "
        "often, 0 only at the end and on Ctrl-C."
    )


def test_saves_held_without_checkpoint_wait_name_checkpoint_every():
    assert "--checkpoint.wait" not in _held_with(wait=False)
