"""Gymnasium spaces beyond a flat Box: what the host path makes of each.

Observations that are not a Box are flattened to float32 (a Discrete one to its
one-hot vector); a Discrete action space's `start` offsets the policy's
actions; spaces a policy cannot act in, options the run sets itself and
Gymnasium's own construction errors end in one line each.
"""

import numpy as np
import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import make_host_env
from purejaxdrl.observe.render import record_host_episode
from tests.observe.test_render_host import linear_network

gym = pytest.importorskip("gymnasium")
spaces = gym.spaces


class Probe(gym.Env):
    """Observes `observation_space.sample()` seeded by the step; records actions.

    The class attribute `resets` counts resets of every instance.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}
    resets = 0

    def __init__(self, obs_space=None, act_space=None, render_mode=None, fail=None):
        if fail is not None:
            raise fail
        self.observation_space = obs_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = act_space or spaces.Discrete(3)
        self.render_mode, self.t, self.actions = render_mode, 0, []

    def _obs(self):
        self.observation_space.seed(self.t)
        return self.observation_space.sample()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        type(self).resets += 1
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.actions.append(action)
        self.t += 1
        return self._obs(), 1.0, self.t == 3, False, {}

    def render(self):
        return np.full((4, 4, 3), 40 * self.t, np.uint8)


gym.register("SpaceProbe-test", entry_point=Probe)
DICT = spaces.Dict({"a": spaces.Box(0.0, 1.0, (2,)), "b": spaces.Discrete(3)})


def _probe(num_envs=2, **options):
    return make_host_env("gymnasium:SpaceProbe-test", num_envs, 0, **options)


def test_discrete_and_dict_observations_are_flattened_to_float32():
    env = _probe(obs_space=spaces.Discrete(4, start=1))
    assert env.spec.observation.shape == (4,) and env.spec.observation_dtype == "f4"
    obs = env.reset().observation
    space = spaces.Discrete(4, start=1)
    space.seed(0)
    one_hot = np.eye(4, dtype=np.float32)[space.sample() - 1]  # by hand
    np.testing.assert_array_equal(obs, [one_hot, one_hot])
    env.close()
    env = _probe(obs_space=DICT)
    assert env.spec.observation.shape == (2 + 3,)
    obs = env.reset().observation
    DICT.seed(0)
    sample = DICT.sample()
    expected = np.concatenate([sample["a"], np.eye(3)[sample["b"]]]).astype("f4")
    np.testing.assert_array_equal(obs[0], expected)
    assert obs.dtype == np.float32
    env.close()


def test_a_discrete_action_space_with_a_start_gets_offset_actions():
    env = _probe(act_space=spaces.Discrete(3, start=-1))
    env.reset()
    env.step(np.array([0, 2], np.int32))
    sent = [e.unwrapped.actions for e in env.vec.unwrapped.envs]
    assert [int(a[0]) for a in sent] == [-1, 1]
    env.close()


@pytest.mark.parametrize(
    "space, what",
    [
        (spaces.MultiBinary(3), "is a MultiBinary"),
        (spaces.MultiDiscrete([2, 3]), "is a MultiDiscrete"),
        (spaces.Tuple([spaces.Discrete(2)] * 2), "is a Tuple"),
        (spaces.Box(-1.0, 1.0, (2, 3)), "is not flat"),
    ],
)
def test_action_spaces_a_policy_cannot_act_in_are_one_line(space, what):
    with pytest.raises(ConfigError, match=rf"{what}; .*gymnasium.ActionWrapper"):
        _probe(act_space=space)


def test_options_the_run_sets_and_bad_modes_are_one_line():
    for option, flag in [("seed", "--seed"), ("num_envs", "--num-envs")]:
        with pytest.raises(ConfigError, match=rf"{option}=5: .*pass {flag} instead"):
            make_host_env("gymnasium:SpaceProbe-test", 1, 0, **{option: 5})
    with pytest.raises(ConfigError, match="'vector_entry_point'.*'sync'"):
        _probe(vectorization_mode="vector_entry_point")
    missing = gym.error.DependencyNotInstalled("Box2D is not installed")
    with pytest.raises(ConfigError, match="needs a package that is not installed"):
        _probe(fail=missing)


def test_the_environments_are_reset_once_before_the_first_step():
    Probe.resets = 0
    env = _probe(num_envs=2)
    env.reset()
    env.step(np.zeros(2, np.int32))
    assert Probe.resets == 2  # one per environment
    env.reset()  # a later reset reaches them
    assert Probe.resets == 4
    env.close()


def test_a_flattened_run_draws_with_its_render_mode_option():
    # The run's own render_mode gives way to rgb_array; the policy sees the
    # observations flattened as in training (its linear layer takes 4).
    episode = record_host_episode(
        "gymnasium:SpaceProbe-test",
        {"obs_space": spaces.Discrete(4), "render_mode": "rgb_array"},
        linear_network(),
        np.zeros((4, 3), np.float32),
        seed=0,
        max_steps=10,
    )
    assert episode.length == 3 and episode.episode_return == 3.0


def test_envpool_options_the_run_sets_or_of_the_wrong_type_are_one_line():
    pytest.importorskip("envpool")
    with pytest.raises(ConfigError, match=r"env_seed=3: .*pass --seed"):
        make_host_env("envpool:CartPole-v1", 2, 0, env_seed=3)
    with pytest.raises(ConfigError, match=r"img_height='abc' is not an integer"):
        make_host_env("envpool:Pong-v5", 2, 0, img_height="abc")


def test_a_missing_dependency_of_an_installed_library_is_named(monkeypatch):
    import importlib

    from purejaxdrl.env.host.base import import_optional

    def fake_import(name):
        # EnvPool installed, gymnasium (which it imports itself) missing.
        raise ModuleNotFoundError("No module named 'gymnasium'", name="gymnasium")

    monkeypatch.setattr(importlib, "import_module", fake_import)
    with pytest.raises(
        ConfigError,
        match="envpool is installed but cannot import gymnasium.*install gymnasium$",
    ):
        import_optional("envpool", "envpool")

    def absent(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", absent)
    with pytest.raises(ConfigError, match=r"^envpool is not installed"):
        import_optional("envpool", "envpool")
