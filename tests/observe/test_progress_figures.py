"""The progress line's ETA: said only where the record has one."""

from purejaxdrl.observe.progress_figures import figures, progress_text

RECORD = {
    "env_steps": 32,
    "steps_per_second": 0.36,
    "steps_per_second_per_device": 0.36,
    "episode/mean_return": 10.0,
}


def test_a_record_without_an_eta_says_none():
    # hr21 #3: the record a stop ended a run with (after an 88 s stall) said
    # "ETA 56557 s"; the loop now leaves its ETA out, and so does the line.
    with_eta = progress_text({**RECORD, "eta_seconds": 56557.2}, 20_000, 1)
    assert with_eta.endswith("return     10.0  ETA 56557 s"), with_eta
    text = progress_text(RECORD, 20_000, 1)
    assert text.endswith("return     10.0"), text
    assert "ETA" not in text
    # The live line keeps its place for it: a dash, as before the first record.
    assert ("ETA —", False) in figures(RECORD, 20_000, 1)
    assert ("ETA 15h42m", False) in figures({**RECORD, "eta_seconds": 56557.2}, 1, 1)
