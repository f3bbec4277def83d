"""Every preset runs without flags on 1, 2, 3, 4 and 8 devices: the run takes
the most devices its work splits over and says so."""

import collections
import functools

import jax
import jax.numpy as jnp
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents.registry import algorithm, algorithms
from purejaxdrl.env.host import is_host_env
from purejaxdrl.parallel import make_mesh
from purejaxdrl.sweeps.layout import mesh_shape
from purejaxdrl.training.config import run_shape
from purejaxdrl.training.device_choice import choose_devices
from purejaxdrl.training.device_state import params_finite
from purejaxdrl.training.experiment import (
    check_fits,
    make_experiment,
    make_networks,
    zero_observation,
)
from purejaxdrl.training.presets.load import presets_dir
from purejaxdrl.training.run_env import make_env

COUNTS = (1, 2, 3, 4, 8)


def _sections():
    names = {r.name for r in algorithms()}
    for preset in pjd.preset_names():
        text = yaml.safe_load((presets_dir() / f"{preset}.yaml").read_text())
        for algo in sorted(names & set(text)):
            yield preset, algo


def _runs(host: bool):
    runs = []
    for preset, algo in _sections():
        env_id = pjd.load_preset(preset, algo).config.env.id
        if is_host_env(env_id) != host:
            continue
        # Playground's tasks load in half a minute each: CI checks one.
        slow = env_id.startswith("playground/") and preset != "cartpole_balance"
        runs.append(
            pytest.param(preset, algo, marks=pytest.mark.slow)
            if slow
            else (preset, algo)
        )
    return runs


def _skip_without_menagerie(env_id):
    """Skips a Playground task on Menagerie's robots where they are absent.

    tests/env/test_playground_presets.py checks what such a run says then.
    """
    if not env_id.startswith("playground/"):
        return
    from purejaxdrl.env.menagerie import find_menagerie, needs_menagerie

    if needs_menagerie(env_id.removeprefix("playground/")) and not find_menagerie():
        pytest.skip(f"{env_id} needs MuJoCo Menagerie's robot models, absent here")


@functools.cache
def _learner(preset, algo):
    config = pjd.load_preset(preset, algo).config
    env, env_params = make_env(config)
    _, learner = make_networks(config, env, env_params)
    return config, learner, zero_observation(env, env_params)


@pytest.mark.parametrize(("preset", "algo"), _runs(host=False))
def test_device_presets_take_the_most_devices_their_work_splits_over(preset, algo):
    if "craftax" in preset:
        pytest.importorskip("craftax")
    _skip_without_menagerie(pjd.load_preset(preset, algo).config.env.id)
    config, learner, observation = _learner(preset, algo)
    assert config.devices == 0  # no preset asks for a device count
    chosen = {}
    for available in COUNTS:
        n, note = choose_devices(
            0,
            lambda n: check_fits(config, learner, observation, n),
            available=available,
        )
        assert 1 <= n <= available
        assert (note is None) == (n == available), note
        if note:
            assert note.startswith(f"using {n} of {available} cpu devices: ")
        chosen[available] = n
    # The run builds on each chosen count (replay shards, minibatches and
    # environments split), and uses every device where the work divides.
    for n in set(chosen.values()):
        make_experiment(config, make_mesh(n))
    if config.num_envs % 8 == 0 and config.num_envs >= 64:
        assert chosen[8] == 8, chosen
    # A sweep of 2 or 5 seeds spreads runs over the sweep axis and splits
    # each one's environments over the rest (`sweep.layout.mesh_shape`).
    multiple = algorithm(algo).env_multiple(config.algo_config, run_shape(config))
    for available in COUNTS:
        for runs in (2, 5):
            sweep, data = mesh_shape(runs, available, config.num_envs, multiple)
            assert sweep * data <= available
            assert (config.num_envs // data) % multiple == 0
            assert config.num_envs % data == 0


def test_the_device_choice_keeps_ppos_minibatches_whole_per_device():
    # 8 envs x 4 steps in 8 minibatches: each minibatch takes 2 whole
    # environments, so a device needs an even share. 8 devices (1 each) fail
    # at compile, per device; 4 (2 each) train. The choice used to take 8.
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"num_envs": 8, "unroll_length": 4, "ppo": {"num_minibatches": 8}},
    )
    env, env_params = make_env(config)
    _, learner = make_networks(config, env, env_params)
    observation = zero_observation(env, env_params)
    n, note = choose_devices(
        0, lambda n: check_fits(config, learner, observation, n), available=8
    )
    assert n == 4 and note.startswith("using 4 of 8 cpu devices: ")
    assert (  # PPO's own words, naming its field
        "ppo.num_minibatches=8 with unroll_length=4 needs each device's "
        "environments to be a multiple of 2, got num_envs=8 over 8 devices = 1 each"
    ) in note, note


def test_a_chosen_device_count_is_checked_before_compiling():
    # --devices 8 with the run above: the per-device rule used to be met
    # only when the update traced, after "compiling…" was said.
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"num_envs": 8, "unroll_length": 4, "devices": 8,
         "ppo": {"num_minibatches": 8}},
    )  # fmt: skip
    with pytest.raises(pjd.ConfigError, match="1 each; pass --num-envs 16"):
        make_experiment(config, make_mesh(8))


# Each case starts the preset's EnvPool pool and builds its agent (5-20 s for
# Atari). CI places every preset on 8 devices (one acts, and 7 learners rarely
# split the batch: the fallback) and one preset on 1 (actors and learner share
# it: a placement that does not depend on the preset); the other counts and
# presets run with `-m slow`.
def _host_cases():
    for case in _runs(host=True):
        case = case if hasattr(case, "marks") else pytest.param(*case)
        for n in COUNTS:
            ci = n == 8 or (n == 1 and case.values[0] == "cartpole_envpool")
            marks = case.marks if ci else (*case.marks, pytest.mark.slow)
            yield pytest.param(*case.values, n, marks=marks)


@pytest.mark.parametrize(("preset", "algo", "devices"), _host_cases())
def test_host_presets_place_their_learner_on_any_device_count(preset, algo, devices):
    pytest.importorskip("envpool")
    from purejaxdrl.training.experiment import make_host_experiment

    config = pjd.apply_overrides(
        pjd.load_preset(preset, algo).config, {"devices": devices}
    )
    exp = make_host_experiment(config)
    try:
        learners = exp.runner.mesh.size
        assert config.num_envs % learners == 0
        most = 1 if devices == 1 else devices - 1  # one device acts
        assert (exp.device_note is None) == (learners == most), exp.device_note
    finally:
        exp.runner.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("preset", "line"),
    [
        ("cartpole", "using 4 of 8 cpu devices: num_envs=4 does not split over 8"),
        ("cartpole_envpool", "learner on 4 of 7 cpu devices: num_envs=8"),
    ],
)
def test_the_quickstart_runs_on_8_devices_and_says_which_it_uses(
    preset, line, tmp_path, monkeypatch, capsys
):
    if preset.endswith("envpool"):
        pytest.importorskip("envpool")
    # The command as typed, run in this process (8 CPU devices, as
    # conftest.py sets them): what is checked is the choice and its lines, not
    # the process (tests/cli/test_cli.py starts one), and a launch is ~3 s.
    assert jax.device_count() == 8
    monkeypatch.chdir(tmp_path)  # the runs/ folder the command writes
    argv = ["train", "--env", preset, "--total-steps", "4096", "--num-logs", "1"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert f"purejaxdrl: {line}" in err, err[-2000:]
    learner = " learner" if preset.endswith("envpool") else ""  # actors elsewhere
    assert f"4 cpu{learner} device(s)" in out, out[-2000:]


def test_a_state_is_placed_on_the_shardings_its_chunk_was_compiled_for():
    # A zero-size leaf (MJX's `Data.act` [B, 0]) comes out of a program
    # replicated, e.g. a restored checkpoint's or init's; a chunk compiled for
    # P("data") refuses it until the loop places it.
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from purejaxdrl.training.device_state import placed

    mesh = make_mesh(2)
    split = NamedSharding(mesh, P("data"))
    state = {"a": jax.numpy.zeros((4, 3)), "act": jax.numpy.zeros((4, 0))}
    state = jax.device_put(state, {"a": split, "act": NamedSharding(mesh, P())})
    spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), state)
    spec = jax.tree.map(
        lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=split), spec
    )
    chunk = jax.jit(lambda s: jax.tree.map(lambda x: x + 1, s)).lower(spec).compile()
    with pytest.raises(ValueError, match="compiled for input shardings"):
        chunk(state)
    moved = placed(state, chunk)
    assert moved["act"].sharding == split and moved["a"] is state["a"]
    chunk(moved)
    assert placed(state, lambda s: s) is state  # no shardings known: as it is


def test_params_are_finite_only_where_every_leaf_is():
    # The loop checks this before every checkpoint, so that it never saves
    # diverged parameters. A run that diverges makes every leaf NaN, but one
    # NaN layer beside finite ones is not finite either (not "any" leaf).
    state = collections.namedtuple("State", "agent")
    agent = collections.namedtuple("Agent", "params")

    def finite(a, b):
        params = {"a": jnp.array(a), "b": jnp.array(b)}
        return bool(params_finite(state(agent(params))))

    assert finite([1.0, 2.0], [3.0])
    assert not finite([1.0, jnp.nan], [3.0])
    assert not finite([jnp.inf], [jnp.nan])
