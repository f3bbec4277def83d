"""The MuJoCo Playground adapter: registry, options, and episode boundaries.

The episode-boundary tests replay one scripted run of CartpoleBalance (time
limit 3) by hand with Playground's raw `MjxEnv`: which steps end, what they
return, and which state each new episode starts in. DM Control tasks end
only when the physics goes NaN, so a NaN action is the probe's termination.
"""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")

from purejaxdrl import env as envs  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.env import (  # noqa: E402
    menagerie,
    playground_env,
    playground_nan,
    playground_options,
)
from purejaxdrl.rl.bootstrap import bootstrap_values  # noqa: E402
from tests.helpers import count_traces, trace_reset_and_steps  # noqa: E402

NAN = float("nan")
# Steps 1-3: episode A, truncated at the limit (3). Step 4: episode B's first
# step, a NaN action terminates it. Steps 5-7: episode C, terminated by NaN on
# the limit's step: a termination.
ACTIONS = jnp.array([[0.5], [-0.5], [1.0], [NAN], [0.3], [-0.2], [NAN]])


@pytest.fixture(scope="module")
def run():
    """The adapter's TimeSteps of the script, and the raw env's replay of it.

    One compiled program (MJX compiles slowly on CPU: ~40 s on 2 cores).
    """
    env = envs.make("playground/CartpoleBalance", episode_length=3)
    raw = env.env
    keys = jax.random.split(jax.random.key(7), len(ACTIONS) + 1)

    def program(keys):
        state, first = env.reset(keys[0], ())

        def body(state, x):
            key, action = x
            state, ts = env.step(key, state, action, ())
            return state, (ts, state.steps)

        _, (ts, steps) = jax.lax.scan(body, state, (keys[1:], ACTIONS))
        # By hand: each episode starts from Playground's reset with the key the
        # adapter draws (the first from reset's key, the others from the reset
        # half of the ending step's key), and steps with the script's actions.
        reset_keys = jnp.stack(
            [jax.random.split(k)[1] for k in (keys[3], keys[4], keys[7])]
        )
        starts = [keys[0], *reset_keys]
        raw_keys = jnp.stack([playground_env._raw_key(k) for k in starts])
        inner = jax.vmap(raw.reset)(raw_keys)

        def replay(inner, actions):
            def one(inner, action):
                inner = raw.step(inner, action)
                return inner, inner.obs

            return jax.lax.scan(one, inner, actions)[1]

        episodes = jnp.stack([ACTIONS[0:3], ACTIONS[3:6], ACTIONS[4:7]])
        obs = jax.vmap(replay)(jax.tree.map(lambda x: x[:3], inner), episodes)
        return first, ts, steps, inner.obs, obs

    return jax.device_get(jax.jit(program)(keys))


def test_every_playground_task_is_registered():
    from mujoco_playground import registry

    names = envs.registered()
    assert len(registry.ALL_ENVS) >= 54
    for name in registry.ALL_ENVS:
        assert f"playground/{name}" in names


def test_truncation_returns_the_true_final_observation(run):
    _, ts, steps, reset_obs, obs = run
    # Steps 1-2 continue episode A; step 3 reaches the limit: truncated, not
    # terminated, its final observation Playground's after the third action.
    np.testing.assert_allclose(ts.observation[:2], obs[0, :2], rtol=1e-5, atol=1e-6)
    assert not ts.truncated[:2].any() and (ts.discount[:2] == 1).all()
    assert bool(ts.truncated[2]) and float(ts.discount[2]) == 1.0
    np.testing.assert_allclose(ts.final_observation[2], obs[0, 2], rtol=1e-5, atol=1e-6)
    # ...and its observation the next episode's first, from a fresh reset.
    np.testing.assert_allclose(ts.observation[2], reset_obs[1], rtol=1e-5, atol=1e-6)
    assert list(steps) == [1, 2, 0, 0, 1, 2, 0]


def test_termination_is_discount_zero_and_not_truncation(run):
    _, ts, _, reset_obs, _ = run
    assert float(ts.discount[3]) == 0.0 and not bool(ts.truncated[3])
    # The NaN action blew the physics up: the step ends its episode, zeroed
    # and counted, so no NaN reaches the learner.
    assert np.isfinite(ts.final_observation).all() and np.isfinite(ts.reward).all()
    assert float(ts.reward[3]) == 0.0
    blew_up = ts.info["metrics"][playground_nan.PHYSICS_NAN]
    assert list(blew_up) == [0, 0, 0, 1, 0, 0, 1]
    np.testing.assert_allclose(ts.observation[3], reset_obs[2], rtol=1e-5, atol=1e-6)


# One second per physics step: CartpoleBalance's state turns NaN within a few
# steps of random actions. Each blow-up ends its episode with reward 0, a
# zeroed observation and `physics_nan` 1; nothing non-finite comes out.
def test_a_physics_blow_up_ends_the_episode_zeroed_and_counted():
    env = envs.make(
        "playground/CartpoleBalance", ctrl_dt=1.0, sim_dt=1.0, episode_length=50
    )
    B, T = 8, 40

    def program(key):
        keys = jax.random.split(key, B)
        state, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, ())

        def body(state, key):
            actions = jax.random.uniform(key, (B, 1), minval=-1, maxval=1)
            return env.step_batch(jax.random.split(key, B), state, actions, ())

        return jax.lax.scan(body, state, jax.random.split(key, T))[1]

    ts = jax.device_get(jax.jit(program)(jax.random.key(0)))
    blew_up = ts.info["metrics"][playground_nan.PHYSICS_NAN] > 0
    assert blew_up.sum() > 0
    assert (ts.discount[blew_up] == 0).all() and (ts.reward[blew_up] == 0).all()
    for leaf in jax.tree.leaves(ts):
        assert np.isfinite(leaf).all()


def test_termination_on_the_time_limit_step_is_a_termination(run):
    _, ts, _, reset_obs, obs = run
    np.testing.assert_allclose(ts.observation[4:6], obs[2, :2], rtol=1e-5, atol=1e-6)
    assert float(ts.discount[6]) == 0.0 and not bool(ts.truncated[6])
    np.testing.assert_allclose(ts.observation[6], reset_obs[3], rtol=1e-5, atol=1e-6)


def test_ended_episodes_restart_from_fresh_random_states(run):
    first, ts, _, reset_obs, _ = run
    np.testing.assert_allclose(first.observation, reset_obs[0], rtol=1e-5, atol=1e-6)
    starts = np.stack([first.observation, *ts.observation[[2, 3, 6]]])
    # Four different starting states: no episode repeats the first one's.
    distances = np.abs(starts[:, None] - starts[None]).sum(-1)
    assert (distances[~np.eye(4, dtype=bool)] > 1e-4).all(), distances


def test_truncation_bootstraps_from_the_final_observation_termination_not(run):
    ts = jax.tree.map(jnp.asarray, run[1])

    def value(params, obs):  # a made-up critic: the sum of the observation
        return jnp.nan_to_num(obs.sum(-1))

    next_values = value(None, ts.observation)[:, None]
    boot = np.asarray(
        bootstrap_values(
            value,
            None,
            next_values,
            ts.discount[:, None],
            ts.truncated[:, None],
            ts.final_observation[:, None],
        )[:, 0]
    )
    final = ts.final_observation
    np.testing.assert_allclose(boot[2], final[2].sum(), rtol=1e-5, atol=1e-6)
    assert abs(boot[2] - ts.observation[2].sum()) > 1e-3  # not the reset's
    assert boot[3] == 0.0 and boot[6] == 0.0  # terminations bootstrap nothing
    np.testing.assert_allclose(boot[[0, 1, 4, 5]], next_values[[0, 1, 4, 5], 0])


def test_reset_and_step_emit_the_same_structure_and_dtypes(run):
    first, ts, _, _, _ = run
    one = jax.tree.map(lambda x: x[0], ts)
    assert jax.tree.structure(first) == jax.tree.structure(one)
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(one), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
    assert ts.reward.dtype == jnp.float32 and ts.truncated.dtype == jnp.bool_


def test_the_reward_components_logged_are_the_steps_own(run):
    # CartpoleBalance's reward is the product of four of its components
    # (dm_control's cartpole): at a truncation too, where the environment has
    # already restarted, the components are the transition's, not the reset's.
    first, ts, _, _, _ = run
    assert set(first.info["metrics"]) >= {"reward/upright", "reward/centered"}
    assert all(float(v) == 0.0 for v in first.info["metrics"].values())
    metrics = ts.info["metrics"]
    parts = ("upright", "centered", "small_control", "small_velocity")
    product = np.prod([metrics[f"reward/{p}"] for p in parts], axis=0)
    assert bool(ts.truncated[2])
    np.testing.assert_allclose(product[:3], ts.reward[:3], rtol=1e-5)


def test_cached_first_state_reset_returns_to_the_first_state():
    env = envs.make(
        "playground/CartpoleBalance", episode_length=2, auto_reset="cached_first_state"
    )
    keys = jax.random.split(jax.random.key(1), 5)

    def program(keys):
        state, first = env.reset(keys[0], ())

        def body(state, key):
            state, ts = env.step(key, state, jnp.full(1, 0.4), ())
            return state, ts

        # Reference: Playground's own episode from the first key's reset, two
        # steps long; the obs after its second step ends each truncated one.
        inner = env.env.reset(playground_env._raw_key(keys[0]))
        ended = jax.lax.scan(  # a loop: one copy of the physics to compile
            lambda inner, _: (env.env.step(inner, jnp.full(1, 0.4)), None),
            inner,
            length=2,
        )[0]
        return first, jax.lax.scan(body, state, keys[1:])[1], ended.obs

    first, ts, final = jax.jit(program)(keys)
    assert list(ts.truncated) == [False, True, False, True]
    # A truncated step keeps its true final observation, not the first state's.
    np.testing.assert_allclose(ts.final_observation[1], final, rtol=1e-5, atol=1e-6)
    assert not np.allclose(final, first.observation)  # the check's point
    # Each episode restarts where the first started, and, the dynamics being
    # deterministic, repeats it.
    np.testing.assert_allclose(ts.observation[1], first.observation, rtol=1e-6)
    np.testing.assert_allclose(
        ts.observation[2], ts.observation[0], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        ts.final_observation[3], ts.final_observation[1], rtol=1e-5
    )


def test_physics_is_jax_wherever_the_run_is_even_where_warp_is_installed(
    monkeypatch,
):
    # Playground's configs name Warp, whose step and reset fail to trace in
    # one vmapped program (the adapter's auto-reset): MJX's JAX physics on a
    # CPU and on an accelerator with warp-lang alike.
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "warp" else None,
    )
    assert playground_options.default_physics("warp") == "jax"


def test_physics_is_jax_on_cpu_and_config_overrides_reach_the_task():
    # 50.0: a whole float, as YAML or a sweep may give it; Playground's typed
    # config refuses a float for an int field, so the adapter passes 50.
    env = envs.make("playground/CartpoleBalance", episode_length=50.0, ctrl_dt=0.02)
    assert env.env.mjx_model.impl.value == "jax"
    assert env.episode_length == 50 and env.env._config.episode_length == 50
    assert env.env.dt == 0.02 and env.env.n_substeps == 2
    assert env.observation_spec(()).shape == (5,)
    assert env.action_spec(()).shape == (1,)


def test_physics_is_traced_once_however_often_a_program_calls_it(monkeypatch):
    # MJX takes seconds to trace: the spec, the first reset and every step's
    # auto-reset reuse one trace of the task's reset, as steps do of its step.
    from mujoco_playground._src.dm_control_suite import cartpole

    traced = count_traces(monkeypatch, cartpole.Balance, ("reset", "step"))
    env = envs.make("playground/CartpoleBalance", episode_length=3)
    trace_reset_and_steps(env)
    assert env.observation_spec(()).shape == (5,)
    assert traced == {"reset": 1, "step": 1}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"episode_lenght": 3}, "did you mean 'episode_length'?"),
        ({"auto_reset": "cached"}, "auto_reset='cached' is not one of fresh"),
        ({"episode_length": 0}, "episode_length=0 must be >= 1"),
        ({"action_repeat": 2}, "pass --env.option action_repeat=1"),
        ({"impl": "warp"}, "impl='warp': the playground adapter steps MJX's JAX"),
        (
            {"impl": "foo"},
            "pass --env.option impl=jax (env.options={'impl': "
            "'jax'} in Python) or leave it out",
        ),
        ({"vision": True}, "pixel observations are not supported"),
        ({"randomizer": "generic"}, "without randomize=true draws nothing"),
        ({"sim_dt": 0.02}, "ctrl_dt / sim_dt = 0.5 times per action, which must"),
        ({"ctrl_dt": 0.015}, "= 1.5 times per action, which must be a whole"),
        ({"sim_dt": 0.0}, "ctrl_dt=0.01, sim_dt=0: both must be > 0 (seconds)"),
        ({"njmax": -5}, "njmax=-5: njmax is a count (playground/CartpoleBalance's"),
        ({"menagerie_path": "/x"}, "CartpoleBalance loads no MuJoCo Menagerie"),
        (
            {"vision_config": 5},
            "option vision_config.cam_active=[true, false] "
            "(env.options={'vision_config.cam_active': [True, False]} in Python).",
        ),
        ({"vision_config.cam_res": "abc"}, "cam_res='abc' is not a list"),
        ({"vision_config.cam_res": ["a", 2]}, "cam_res[0]='a' is not an integer"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(ConfigError) as error:
        envs.make("playground/CartpoleBalance", **options)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_action_repeat_is_credited_to_where_it_came_from(monkeypatch):
    # A value the user passed was credited to "the CartpoleBalance config's".
    with pytest.raises(ConfigError) as error:
        envs.make("playground/CartpoleBalance", action_repeat=2)
    assert str(error.value) == (
        "env.options action_repeat=2: the playground adapter steps once per "
        "action; pass --env.option action_repeat=1 (env.options={'action_repeat': "
        "1} in Python)."
    )
    # A task config's own value other than 1 is still named as the config's.
    registry = playground_env.import_registry()

    class Registry:
        @staticmethod
        def get_default_config(name):
            config = registry.get_default_config(name)
            config.action_repeat = 3
            return config

    monkeypatch.setattr(playground_env, "import_registry", lambda *_: Registry)
    with pytest.raises(ConfigError, match=r"action_repeat=3 \(the CartpoleBalance "):
        envs.make("playground/CartpoleBalance")


def test_an_unknown_option_lists_the_usable_ones_and_names_the_refused():
    # The list held vision, 8 vision_config.* entries and menagerie_path, all
    # refused or of no use on CartpoleBalance, and impl / action_repeat as if
    # any value ran.
    with pytest.raises(ConfigError) as error:
        envs.make("playground/CartpoleBalance", foo=1)
    message = str(error.value)
    assert "\n" not in message
    assert (
        "its options are action_repeat (1 only), auto_reset, ctrl_dt, "
        "episode_length, impl (jax only), naconmax, njmax, observation_key, "
        "randomize, randomizer, sim_dt; not usable here: vision and "
        "vision_config.* (pixel observations), menagerie_path (the task loads "
        "no Menagerie model); fix the name"
    ) in message
    # A task on Menagerie's models takes menagerie_path; no pixels, no note.
    listed = playground_options.listed_options({"menagerie_path", "impl"}, True)
    assert listed == "impl (jax only), menagerie_path"


def test_a_nested_integer_weight_may_be_negative():
    # AlohaHandOver's reward_config.scales.box_handover=-4 is a weight, not a
    # count (as -4.0 is); its models need Menagerie, so its check alone here.
    from purejaxdrl.env.playground_options import check_physics

    name = "reward_config.scales.box_handover"
    check_physics("playground/AlohaHandOver", {name: -4}, {name: 4})
    with pytest.raises(ConfigError, match="njmax=-4: njmax is a count"):
        check_physics("playground/AlohaHandOver", {"njmax": -4}, {"njmax": 4})


def test_a_list_option_reaches_the_task_as_its_defaults_type():
    env = envs.make("playground/CartpoleBalance", **{"vision_config.cam_res": [32, 32]})
    assert env.env._config.vision_config.cam_res == (32, 32)


def test_an_observation_key_on_array_observations_is_refused():
    env = envs.make("playground/CartpoleBalance", observation_key="state")
    with pytest.raises(ConfigError, match="observes one array, not a dict of them"):
        env.observation_spec(())


def test_missing_menagerie_is_a_one_line_error_without_a_clone(no_menagerie):
    with pytest.raises(ConfigError) as error:
        envs.make("playground/Go1JoystickFlatTerrain", menagerie_path="/no/such")
    message = str(error.value)
    assert "\n" not in message and "needs MuJoCo Menagerie" in message
    assert "/no/such" in message and "menagerie_path=DIR" in message


def test_without_the_package_making_one_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mujoco_playground", None)
    with pytest.raises(ConfigError, match=r"pip install 'purejaxdrl\[playground\]'"):
        playground_env.import_registry()


def test_a_menagerie_path_is_where_playground_looks(monkeypatch, tmp_path):
    from mujoco_playground._src import mjx_env

    monkeypatch.setattr(mjx_env, "MENAGERIE_PATH", mjx_env.MENAGERIE_PATH)
    monkeypatch.setenv(menagerie.MENAGERIE_VARIABLE, str(tmp_path))
    (tmp_path / "unitree_go1").mkdir()  # a checkout's robot folder
    menagerie.use_menagerie("playground/Go1JoystickFlatTerrain", None)
    assert str(mjx_env.MENAGERIE_PATH) == str(tmp_path)


def test_a_folder_that_is_no_menagerie_is_named_as_such(no_menagerie, tmp_path):
    # An existing folder without Menagerie's robots (a mistyped path) was
    # taken for it, and MuJoCo failed opening '../../unitree_go1/...stl'.
    with pytest.raises(ConfigError) as error:
        envs.make("playground/Go1JoystickFlatTerrain", menagerie_path=str(tmp_path))
    message = str(error.value)
    assert f"{tmp_path} (no robot folder such as unitree_go1/ there)" in message


class _DictObservations:
    """A Playground task observing `{'state', 'privileged_state'}`, offline.

    Locomotion tasks observe this layout but need Menagerie's models; here
    CartpoleBalance's physics shows its first 3 entries as `state` and all 5
    as `privileged_state`.
    """

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def _dict(self, state):
        return state.replace(
            obs={"state": state.obs[:3], "privileged_state": state.obs}
        )

    def reset(self, rng):
        return self._dict(self.env.reset(rng))

    def step(self, state, action):
        return self._dict(self.env.step(state.replace(obs=state.obs["state"]), action))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dict_observations_pass_through_both_auto_resets():
    made = {
        mode: envs.make("playground/CartpoleBalance", episode_length=2, auto_reset=mode)
        for mode in playground_env.AUTO_RESETS
    }
    for env in made.values():
        env.env = _DictObservations(env.env)
        assert env.observation_spec(()) == {
            "state": envs.Box((3,)),
            "privileged_state": envs.Box((5,)),
        }
    keys = jax.random.split(jax.random.key(3), 2)

    def program(env):
        states, first = jax.vmap(env.reset, in_axes=(0, None))(keys, ())

        def body(states, key):
            actions = jnp.full((2, 1), 0.4)
            states, ts = env.step_batch(jax.random.split(key, 2), states, actions, ())
            return states, ts

        return first, jax.lax.scan(body, states, jax.random.split(keys[0], 3))[1]

    for mode, env in made.items():
        first, ts = jax.device_get(jax.jit(program, static_argnums=0)(env))
        assert ts.truncated[:, 0].tolist() == [False, True, False]
        for obs in (ts.observation, ts.final_observation):
            np.testing.assert_array_equal(
                obs["state"], obs["privileged_state"][..., :3]
            )
        restarted = jax.tree.map(lambda x: x[1], ts.observation)
        final = jax.tree.map(lambda x: x[1], ts.final_observation)
        assert not np.allclose(restarted["privileged_state"], final["privileged_state"])
        if mode == "cached_first_state":  # both entries back where they began
            for key in first.observation:
                np.testing.assert_allclose(
                    restarted[key], first.observation[key], rtol=1e-6
                )


def test_a_mujoco_gl_of_no_known_name_is_named_as_such():
    # MuJoCo reads MUJOCO_GL when imported: a fresh process.
    import os
    import subprocess
    import sys

    code = (
        "from purejaxdrl.env.playground_env import import_registry\n"
        "try:\n    import_registry()\nexcept Exception as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "MUJOCO_GL": "bogus"},
        timeout=120,
    ).stdout
    assert out.startswith("MUJOCO_GL=bogus is not one of egl, osmesa, glfw"), out


def test_a_named_menagerie_path_is_the_only_place_looked_in(
    no_menagerie, monkeypatch, tmp_path
):
    # A wrong --env.option menagerie_path fell back to $MUJOCO_MENAGERIE_PATH
    # (another copy) without a word.
    (tmp_path / "elsewhere" / "unitree_go1").mkdir(parents=True)
    monkeypatch.setenv(menagerie.MENAGERIE_VARIABLE, str(tmp_path / "elsewhere"))
    with pytest.raises(ConfigError, match="not found in /no/such;"):
        envs.make("playground/Go1JoystickFlatTerrain", menagerie_path="/no/such")


def test_a_menagerie_without_the_tasks_robot_is_one_line_naming_the_file(
    no_menagerie, tmp_path
):
    # A copy with Go1's folder alone passed the check for the LEAP hand's task,
    # and MuJoCo's "Error opening file" came 43 lines deep.
    (tmp_path / "unitree_go1").mkdir()
    with pytest.raises(ConfigError) as error:
        envs.make("playground/LeapCubeReorient", menagerie_path=str(tmp_path))
    message = str(error.value)
    assert (
        "\n" not in message and f"Menagerie at {tmp_path} has no leap_hand/" in message
    )
    assert "a partial or older copy?" in message and "menagerie_path=DIR" in message
