import gzip
import struct

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs

GYMNAX_IDS = list(gymnax.registered_envs)


@pytest.fixture
def fake_mnist(tmp_path, monkeypatch):
    """Tiny MNIST files in the IDX format, so MNISTBandit needs no download."""
    from gymnax.utils import load_mnist

    rng = np.random.default_rng(0)
    for prefix, n in (("train", 20), ("t10k", 10)):
        images = rng.integers(0, 255, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        with gzip.open(tmp_path / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        with gzip.open(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    monkeypatch.setattr(load_mnist.load_mnist, "__defaults__", (str(tmp_path),))


def _structure(ts):
    return jax.tree.structure(ts), [(x.shape, x.dtype) for x in jax.tree.leaves(ts)]


def _random_actions(spec, key, n):
    if isinstance(spec, envs.Discrete):
        return jax.random.randint(key, (n,), 0, spec.num_values)
    return jax.random.uniform(key, (n, *spec.shape), minval=-1.0, maxval=1.0)


def test_every_gymnax_env_is_registered():
    names = envs.registered()
    assert set(GYMNAX_IDS) <= set(names)
    assert len(GYMNAX_IDS) >= 26


@pytest.mark.parametrize("env_id", GYMNAX_IDS)
def test_gymnax_adapter_jit_vmap_and_identical_structures(env_id, request):
    if env_id == "MNISTBandit-bsuite":
        request.getfixturevalue("fake_mnist")
    env = envs.EpisodeStatistics(envs.make(env_id))
    params = env.default_params
    n = 3
    keys = jax.random.split(jax.random.key(0), n)
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    state, ts0 = reset(keys, params)
    actions = _random_actions(env.action_spec(params), jax.random.key(1), n)
    state, ts1 = step(keys, state, actions, params)
    assert _structure(ts0) == _structure(ts1)
    obs_shape = env.observation_spec(params).shape
    for ts in (ts0, ts1):
        assert ts.observation.shape == (n, *obs_shape)
        assert ts.observation.dtype == jnp.float32
        assert ts.final_observation.shape == (n, *obs_shape)
        assert ts.reward.dtype == jnp.float32 and ts.reward.shape == (n,)
        assert ts.discount.dtype == jnp.float32
        assert ts.truncated.dtype == jnp.bool_
    # Structures of the state survive a scan (what the runner does).
    jax.lax.scan(
        lambda c, _: (step(keys, c[0], actions, params), None),
        (state, ts1),
        None,
        length=2,
    )


def test_gymnax_truncation_keeps_final_observation_and_is_not_termination():
    # Pendulum never terminates; its time limit is 200 steps.
    env = envs.make("Pendulum-v1")
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for t in range(200):
        state, ts = step(jax.random.key(t + 1), state, jnp.zeros(1), params)
        if t < 199:
            assert not ts.truncated
            np.testing.assert_array_equal(ts.observation, ts.final_observation)
    assert ts.truncated and ts.discount == 1.0
    # Auto-reset: the observation is a fresh one, the final one is kept.
    assert not np.allclose(ts.observation, ts.final_observation)


def test_gymnax_termination_sets_discount_zero_not_truncated():
    env = envs.make("CartPole-v1")
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for t in range(100):  # always pushing right topples the pole quickly
        state, ts = step(jax.random.key(t), state, jnp.array(1), params)
        if ts.discount == 0.0:
            break
    assert ts.discount == 0.0 and not ts.truncated


def test_continuous_actions_are_rescaled_from_unit_box():
    env = envs.make("Pendulum-v1")  # torque bounds [-2, 2]
    assert isinstance(env.action_spec(env.default_params), envs.Box)
    np.testing.assert_allclose(env._env_action(jnp.array([1.0])), [2.0])
    np.testing.assert_allclose(env._env_action(jnp.array([-1.0])), [-2.0])


def test_discrete_observation_space_is_one_hot():
    env = envs.make("FrozenLake-misc")
    _, ts = env.reset(jax.random.key(0), env.default_params)
    assert ts.observation.ndim == 1 and ts.observation.sum() == 1.0


def test_unknown_environment_names_the_rule_and_close_matches():
    with pytest.raises(envs.UnknownEnvironmentError, match="CartPole-v1"):
        envs.make("CartPole-v2")


@pytest.mark.parametrize(
    ("name", "fixed", "kin"),
    [
        ("Breakout-v5", "envpool:Breakout-v5", " The closest device environment is "),
        ("ALE/Pong-v5", "envpool:Pong-v5", ""),
        ("envpool/CartPole-v1", "envpool:CartPole-v1", ""),
    ],
)
def test_a_host_id_spelt_as_a_device_one_names_the_host_id_both_ways(name, fixed, kin):
    # Before: an Atari id got only "Did you mean Breakout-MinAtar?", and
    # `--env.imports` advice that cannot help.
    with pytest.raises(envs.UnknownEnvironmentError) as error:
        envs.make(name)
    message = str(error.value)
    assert f"did you mean {fixed}?" in message
    assert f"--env.id {fixed} (env.id={fixed!r} in Python)." in message
    assert "--env.imports" not in message and "\n" not in message
    assert (kin in message) if kin else ("closest device" not in message)


def test_an_atari_id_names_envpool_once_envpool_is_imported_too():
    # With EnvPool imported (another test, or the user's run, did), the id is
    # found in its registry: the same advice, not another wording.
    pytest.importorskip("envpool")
    with pytest.raises(envs.UnknownEnvironmentError) as error:
        envs.make("Breakout-v5")
    message = str(error.value)
    assert message.startswith(
        "Unknown environment 'Breakout-v5': did you mean envpool:Breakout-v5? "
        "Breakout-v5 is EnvPool's, a host environment; pass --env.id "
        "envpool:Breakout-v5 (env.id='envpool:Breakout-v5' in Python)."
    ), message
    assert "The closest device environment is Breakout-MinAtar." in message


def test_options_naming_env_params_fields_set_them():
    from purejaxdrl import env as envs

    env = envs.make("MemoryChain-bsuite", memory_length=20)
    assert int(env.default_params.memory_length) == 20
    assert int(envs.make("MemoryChain-bsuite").default_params.memory_length) == 5


def test_an_unknown_option_is_refused_listing_fields_and_constructor_arguments():
    from purejaxdrl.config import ConfigError

    env = envs.make("MemoryChain-bsuite", num_bits=2, memory_length=3)
    assert int(env.default_params.memory_length) == 3
    with pytest.raises(ConfigError) as error:
        envs.make("MemoryChain-bsuite", memory_lenght=3)
    message = str(error.value)
    assert "'memory_lenght' is not an option of MemoryChain-bsuite" in message
    assert "did you mean 'memory_length'?" in message
    assert "max_steps_in_episode, memory_length, num_bits" in message


@pytest.mark.parametrize(
    "env_id",
    ["Asterix-MinAtar", "Breakout-MinAtar", "Freeway-MinAtar", "SpaceInvaders-MinAtar"],
)
def test_minatar_games_trace_split_over_two_devices(env_id):
    # Inside shard_map each game's step must type-check, or say it does not
    # (`vma_checked`: Asterix's spawning loop starts from a constant carry).
    # The check is shard_map's, at trace time: lowering the training programs
    # makes it (compiling and running them is what the steps' own tests and
    # the Breakout preset's runs do).
    import purejaxdrl as pjd
    from purejaxdrl.parallel import make_mesh
    from purejaxdrl.rng import make_key

    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"env": {"id": env_id}, "num_envs": 4, "unroll_length": 4,
         "total_steps": 32, "num_logs": 1, "devices": 2,
         "ppo": {"num_minibatches": 1}},
    )  # fmt: skip
    exp = pjd.training.make_experiment(config, make_mesh(2))
    key = make_key(config.seed, config.rng_impl)
    abstract = jax.eval_shape(exp.runner.init, key)
    lowered = exp.runner.lower(abstract, key, [2], need_init=True)
    assert set(lowered) == {2, "init"}
    for lower in lowered.values():
        assert "mhlo.num_partitions = 2" in lower().as_text()


def test_option_values_of_the_wrong_kind_are_refused_naming_the_default():
    from purejaxdrl.config import ConfigError
    from purejaxdrl.env.base import check_option_types

    defaults = {"flag": False, "count": 5, "scale": 0.5, "name": "x", "arr": [1, 2]}
    # Values that fit: ints for floats, integral floats for ints, anything
    # where the default is not a number.
    coerced = check_option_types(
        "E", {"flag": True, "count": 3.0, "scale": 2, "name": 1}, defaults
    )
    assert coerced == {"flag": True, "count": 3, "scale": 2.0, "name": 1}
    assert type(coerced["count"]) is int and type(coerced["scale"]) is float
    check_option_types("E", {"arr": "anything", "unknown": "abc"}, defaults)
    for options, message in [
        ({"flag": 2}, "env.options flag=2 is not true or false (E's default: False); "
         "pass one, e.g. --env.option flag=false (env.options={'flag': False} in "
         "Python)."),
        ({"count": 2.5}, "env.options count=2.5 is not an integer (E's default: 5)"),
        ({"count": True}, "env.options count=True is not an integer"),
        ({"scale": "abc"}, "env.options scale='abc' is not a number (E's default: 0.5"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError) as error:
            check_option_types("E", options, defaults)
        assert str(error.value).startswith(message)
    with pytest.raises(ConfigError, match="memory_length='abc' is not an integer"):
        envs.make("MemoryChain-bsuite", memory_length="abc")


def test_an_integer_for_a_float_parameter_keeps_it_float():
    # 50 from the command line: an int32 leaf where gymnax computes with
    # float32 failed in its spaces (lax.select), or changed the params' types.
    assert envs.make("Pendulum-v1", max_torque=3).default_params.max_torque.dtype == (
        jnp.float32
    )
    env = envs.make("BernoulliBandit-misc", max_steps_in_episode=50)
    assert env.observation_spec(env.default_params).shape


def test_lengths_below_one_are_refused_naming_the_default():
    # Type-checked but not range-checked, these trained in silence with no
    # episode ever ending (memory_length -3) or each cut at once (a time limit 0).
    from purejaxdrl.config import ConfigError

    for env_id, option, value, default, what in [
        ("CartPole-v1", "max_steps_in_episode", 0, 500, "its time limit, in"),
        ("MemoryChain-bsuite", "memory_length", -3, 5, "the steps to remember"),
        ("UmbrellaChain-bsuite", "chain_length", 0, 10, "the chain's length, in"),
    ]:
        with pytest.raises(ConfigError) as error:
            envs.make(env_id, **{option: value})
        assert str(error.value).startswith(
            f"env.options {option}={value} must be >= 1 ({what}"
        )
        assert str(error.value).endswith(
            f"; {env_id}'s default: {default}); pass e.g. "
            f"--env.option {option}={default} "
            f"(env.options={{{option!r}: {default}}} in Python)."
        )
    env = envs.make("MemoryChain-bsuite", memory_length=1, max_steps_in_episode=1)
    assert int(env.default_params.memory_length) == 1


@pytest.mark.parametrize("env_id", ["MountainCar-v0", "BernoulliBandit-misc"])
def test_unknown_options_are_refused_where_the_constructor_is_objects(env_id):
    # These envs inherit object's `(*args, **kwargs)` constructor, which takes
    # nothing: an unknown option ended in a TypeError traceback, a wrong-typed
    # one in a raw TypeError from the length check, and chain_length=0 in a
    # made-up "default: 1".
    from purejaxdrl.config import ConfigError

    for value in (1, "abc", 0):
        with pytest.raises(ConfigError) as error:
            envs.make(env_id, chain_length=value)
        message = str(error.value)
        assert "\n" not in message
        assert message.startswith(
            f"env.options 'chain_length' is not an option of {env_id}: "
        )
        assert "max_steps_in_episode" in message
    env = envs.make(env_id, max_steps_in_episode=7)
    assert int(env.default_params.max_steps_in_episode) == 7


def test_length_checks_skip_names_the_environment_does_not_have():
    from purejaxdrl.env.base import check_lengths
    from purejaxdrl.env.gymnax_env import AT_LEAST

    check_lengths("E", {"chain_length": 0}, {"max_steps_in_episode": 200}, AT_LEAST)
