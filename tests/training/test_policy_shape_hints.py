"""A policy's observation-shape error hints at what the run's env did to it."""

import numpy as np
import pytest

import purejaxdrl as pjd
from tests.training.test_policy_checks import _edit, _export


def test_an_unmasked_gymnasium_policy_is_not_told_to_append_a_mask(tmp_path):
    # Two short of [4], as many as the actions: a masked policy's tell-tale,
    # but this one has no mask (hr15 #3), so the hint is the flattening.
    folder = _export(tmp_path / "p")
    _edit(folder, env_id="gymnasium:CartPole-v1")
    policy = pjd.load_policy(folder)
    assert policy.spec["action"] == {"discrete": 2, "masked": False}
    with pytest.raises(ValueError, match=r"shape \[4\]") as raised:
        policy.mode(np.zeros((1, 2), np.float32))
    assert "action_mask" not in str(raised.value)
    assert "gymnasium.spaces.flatten(env.observation_space, obs)" in str(raised.value)


def test_a_dict_or_tuple_observation_is_told_to_flatten_it(tmp_path):
    # hr17 #6: a Dict space's own observation raised numpy's bare TypeError
    # ("float() argument must be ... not 'dict'"); a host run flattened it.
    folder = _export(tmp_path / "p")
    _edit(folder, env_id="gymnasium:CartPole-v1")
    policy = pjd.load_policy(folder)
    for obs, kind in [
        ({"a": np.zeros(2), "b": 1}, "dict"),
        ((np.zeros(2), 1), "tuple"),
    ]:
        with pytest.raises(ValueError) as raised:
            policy.mode(obs)
        assert str(raised.value) == (
            "gymnasium:CartPole-v1's policy takes observations of shape [4] after "
            f"any batch axes, one array; got a {kind} (a space that is not a Box "
            "is flattened, as the run saw it: gymnasium.spaces.flatten("
            "env.observation_space, obs), a Discrete one one-hot)."
        )
    assert policy.mode((0.0, 0.0, 0.0, 0.0)) in (0, 1)  # numbers: one array
