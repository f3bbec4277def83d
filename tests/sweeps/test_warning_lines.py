"""A sweep's and a population's setup warnings point at the user's line.

`warnings.warn` at a fixed stack level pointed into purejaxdrl for most
callers (a sweep reaches `base_and_target` through `sweep` and `pbt`);
`setup_warnings.user_stacklevel` walks to the caller's frame.
"""

import dataclasses

import pytest

import purejaxdrl as pjd


def _refused_after_warning(call):
    """Runs `call`, refused by a bad device_memory after its setup warnings."""
    refused = pytest.raises(pjd.ConfigError, match="device_memory")
    with pytest.warns(pjd.SetupWarning) as caught, refused:
        call()
    return caught


@pytest.mark.parametrize("entry", ["sweep", "pbt"])
def test_a_setting_sweeps_do_not_honour_is_warned_at_the_users_line(entry):
    config = pjd.load_preset("cartpole", algo="ppo").config
    base = dataclasses.replace(config, eval=dataclasses.replace(config.eval, every=7))
    space = {"ppo.learning_rate": ("log_uniform", 1e-4, 1e-3)}
    kwargs = {"grid": {"ppo.learning_rate": [1e-3]}}
    kwargs = kwargs if entry == "sweep" else {"explore": space, "population": 2}
    caught = _refused_after_warning(
        lambda: getattr(pjd, entry)(base, device_memory="lots", **kwargs)
    )
    [warning] = [w for w in caught if "sweeps do not play" in str(w.message)]
    assert warning.filename == __file__


def test_a_preset_that_cannot_be_judged_is_warned_at_the_users_line():
    caught = _refused_after_warning(
        lambda: pjd.sweep(
            "cartpole",
            algo="pqn",
            grid={"pqn.learning_rate": [1e-3]},
            device_memory="lots",
        )
    )
    [warning] = [w for w in caught if "not judged" in str(w.message)]
    assert warning.filename == __file__
