"""checkpoint.* refusals give their fix in both spellings (reviews/ck17.md #5).

`pjd.resume_config(run, {"checkpoint": {"keep": 0}})` says the same line as
`--checkpoint.keep 0`: a flag alone leaves the Python user to translate it.
"""

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.checkpoint_config import CheckpointConfig


@pytest.mark.parametrize(
    "field, value, fix",
    [
        ("every", -1, "pass e.g. --checkpoint.every 1 (checkpoint.every=1 in Python)."),
        ("keep", 0, "pass e.g. --checkpoint.keep 3 (checkpoint.keep=3 in Python)."),
    ],
)
def test_a_bad_checkpoint_field_names_both_spellings(field, value, fix):
    with pytest.raises(pjd.ConfigError) as refused:
        CheckpointConfig(**{field: value}).check()
    assert str(refused.value).startswith(f"checkpoint.{field}={value} must be")
    assert str(refused.value).endswith(fix)
