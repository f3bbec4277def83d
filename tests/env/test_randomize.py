"""Domain randomisation: a model per environment, from the seed, in checkpoints."""

import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")

import purejaxdrl as pjd  # noqa: E402
from purejaxdrl import env as envs  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.env.playground_env import PlaygroundState, import_registry  # noqa: E402
from purejaxdrl.env.randomize import RANGES, draw, subtree_masses  # noqa: E402
from purejaxdrl.parallel import make_mesh  # noqa: E402
from purejaxdrl.rng import make_key  # noqa: E402
from purejaxdrl.training.checkpoint import Checkpointer  # noqa: E402

B = 4
GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs/guide/environments.md"


def _factors(models, base, name, column=None):
    """Each environment's scale factors of field `name`, where it is not 0."""
    value, own = np.asarray(models[name]), np.asarray(getattr(base, name))
    if column is not None:
        value, own = value[..., column], own[..., column]
    keep = own != 0
    return value[:, keep] / own[keep]


@pytest.mark.timeout(600)
def test_randomised_models_differ_per_environment_and_stay_with_it():
    env = envs.make("playground/CartpoleBalance", episode_length=2, randomize=True)
    base = env.env.mjx_model
    keys = jax.random.split(jax.random.key(0), B)
    push = jnp.full(1, 1.0)

    def program(keys):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, ())

        def body(states, key):
            actions = jnp.full((B, 1), 0.4)
            states, ts = env.step_batch(jax.random.split(key, B), states, actions, ())
            return states, ts.truncated

        after, truncated = jax.lax.scan(body, states, jax.random.split(keys[0], 3))
        # Environment 0's first state stepped under its model and under 1's.
        one = jax.tree.map(lambda x: x[0], states)
        other = one._replace(model=jax.tree.map(lambda x: x[1], states.model))
        own = env._step_no_reset(keys[0], one, push, ())[1].observation
        swapped = env._step_no_reset(keys[0], other, push, ())[1].observation
        return states.model, after.model, truncated, own, swapped

    models, later, truncated, own, swapped = jax.device_get(jax.jit(program)(keys))
    assert truncated[:, 0].tolist() == [False, True, False]
    for name, column, scale in [
        ("body_mass", None, "mass"),
        ("body_inertia", None, "mass"),
        ("geom_friction", 0, "friction"),
        ("actuator_gainprm", 0, "gain"),
    ]:
        factors = _factors(models, base, name, column)
        low, high = RANGES[scale]
        assert factors.size and np.all((factors >= low) & (factors <= high)), name
        # Every environment its own factors.
        assert len({tuple(np.round(f, 6)) for f in factors}) == B, name
    for name, value in models.items():
        # An episode's reset (step 2) keeps the environment's model.
        np.testing.assert_array_equal(later[name], value)
        # Drawn from the environment's reset key: the run's seed.
        for i in range(B):
            mine = draw(jax.random.split(keys[i])[1], base)[name]
            np.testing.assert_allclose(value[i], mine, rtol=1e-6)
    # The physics steps with the environment's own model.
    assert not np.allclose(own, swapped, rtol=1e-7, atol=0)


@pytest.mark.timeout(600)
def test_one_environments_step_restarts_it_with_its_own_model():
    # `Env.step`, which a user's own loop calls (runners call step_batch), on
    # a randomised task: the episode's restart keeps the environment's model.
    # A restart reset without it crashed at the first episode end, a pytree
    # structure error in the user's loop (mut26 PE1).
    env = envs.make("playground/CartpoleBalance", episode_length=1, randomize=True)
    state, _ = env.reset(jax.random.key(0), ())
    after, ts = jax.jit(env.step, static_argnums=3)(
        jax.random.key(1), state, jnp.zeros(1), ()
    )
    assert bool(ts.truncated) and int(after.steps) == 0  # ended and restarted
    assert set(after.model) == set(state.model)
    for name, value in state.model.items():
        np.testing.assert_array_equal(after.model[name], value)


def test_the_generic_ranges_are_the_ones_the_guide_states():
    # test_randomised_models_... checks draws against RANGES itself, so a
    # changed range would pass while the guide still promised its own: a
    # sim-to-real user choosing randomisation on its word would get another
    # (mut26 RA1, RA7).
    text = " ".join(GUIDE.read_text().split())
    found = re.search(
        r"masses \(and inertias, x([\d.]+)-([\d.]+)\), sliding frictions "
        r"\(x([\d.]+)-([\d.]+)\) and actuator gains \(x([\d.]+)-([\d.]+)\)",
        text,
    )
    assert found, "the guide's sentence on the generic randomiser moved"
    m0, m1, f0, f1, g0, g1 = map(float, found.groups())
    stated = {"mass": (m0, m1), "friction": (f0, f1), "gain": (g0, g1)}
    assert stated == RANGES


def test_subtree_masses_are_mujocos_and_follow_randomised_masses():
    # MJX divides by `body_subtreemass` for the subtreelinvel sensor that
    # CheetahRun rewards its speed from: a stale one scaled the reward.
    model = import_registry().load("CheetahRun").mjx_model
    mass = np.asarray(model.body_mass)
    # Unscaled: MuJoCo's own, from its compiler.
    np.testing.assert_allclose(
        subtree_masses(model, jnp.asarray(mass)), model.body_subtreemass, rtol=1e-6
    )
    # Scaled: each body's own mass plus its children's subtrees, by recursion.
    scaled = mass * np.linspace(0.8, 1.2, len(mass))
    parent = np.asarray(model.body_parentid)

    def subtree(j):
        return scaled[j] + sum(
            subtree(i) for i in range(1, len(parent)) if parent[i] == j
        )

    want = [subtree(j) for j in range(len(mass))]
    got = subtree_masses(model, jnp.asarray(scaled, jnp.float32))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    fields = draw(jax.random.key(0), model)
    np.testing.assert_allclose(
        fields["body_subtreemass"], subtree_masses(model, fields["body_mass"])
    )
    assert not np.allclose(fields["body_subtreemass"], model.body_subtreemass)


def _cartpole_randomize(model, rng):
    """A randomiser in Playground's convention (go1/randomize.py's shape)."""

    @jax.vmap
    def draw(rng):
        key_friction, key_mass = jax.random.split(rng)
        friction = model.geom_friction.at[:, 0].set(
            jax.random.uniform(key_friction, (model.ngeom,), minval=0.4, maxval=1.0)
        )
        mass = model.body_mass * jax.random.uniform(
            key_mass, model.body_mass.shape, minval=0.5, maxval=2.0
        )
        return friction, mass

    friction, mass = draw(rng)
    in_axes = jax.tree.map(lambda x: None, model)
    in_axes = in_axes.tree_replace({"geom_friction": 0, "body_mass": 0})
    return model.tree_replace({"geom_friction": friction, "body_mass": mass}), in_axes


@pytest.mark.timeout(600)
def test_a_task_with_its_own_randomiser_draws_with_it(monkeypatch):
    registry = import_registry()
    own = {"CartpoleBalance": _cartpole_randomize}
    monkeypatch.setattr(registry, "get_domain_randomizer", own.get)
    env = envs.make("playground/CartpoleBalance", episode_length=2, randomize=True)
    assert env.task_randomizer is _cartpole_randomize  # `auto` picks it
    base = env.env.mjx_model
    keys = jax.random.split(jax.random.key(1), B)
    push = jnp.full(1, 1.0)

    def program(keys):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, ())
        one = jax.tree.map(lambda x: x[0], states)
        other = one._replace(model=jax.tree.map(lambda x: x[1], states.model))
        own = env._step_no_reset(keys[0], one, push, ())[1].observation
        swapped = env._step_no_reset(keys[0], other, push, ())[1].observation
        return states.model, own, swapped

    models, own, swapped = jax.device_get(jax.jit(program)(keys))
    assert set(models) == {"geom_friction", "body_mass", "body_subtreemass"}
    # The subtree masses follow the randomiser's masses (cart + pole: world's).
    np.testing.assert_allclose(
        models["body_subtreemass"][:, 0], models["body_mass"].sum(1), rtol=1e-6
    )
    for i in range(B):
        # Each environment's fields: the randomiser's for its reset key.
        key = jax.random.split(keys[i])[1]
        mine, _ = _cartpole_randomize(base, key[None])
        for name in ("geom_friction", "body_mass"):
            np.testing.assert_allclose(models[name][i], getattr(mine, name)[0])
    assert len({tuple(m) for m in models["body_mass"]}) == B
    assert not np.allclose(own, swapped, rtol=1e-7, atol=0)
    generic = envs.make(
        "playground/CartpoleBalance", randomize=True, randomizer="generic"
    )
    assert generic.task_randomizer is None


@pytest.mark.parametrize(
    ("randomizer", "message"),
    [
        ("playground", "Playground has no randomiser for CartpoleBalance"),
        ("own", "randomizer='own' is not one of auto, playground, generic"),
    ],
)
def test_a_randomiser_that_cannot_be_had_is_a_one_line_error(randomizer, message):
    with pytest.raises(ConfigError) as error:
        envs.make("playground/CartpoleBalance", randomize=True, randomizer=randomizer)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_randomised_models_are_checkpointed_and_a_resume_is_exact(tmp_path):
    config = pjd.load_preset("cartpole_balance", "ppo").config
    config = pjd.apply_overrides(
        config,
        {
            "env": {"options": {"randomize": True, "episode_length": 20}},
            "num_envs": 8,
            "unroll_length": 8,
            "devices": 1,
            "ppo": {"num_epochs": 1, "num_minibatches": 1},
        },
    )
    exp = pjd.training.make_experiment(config, make_mesh(1))
    key = make_key(config.seed, config.rng_impl)
    abstract = jax.eval_shape(exp.runner.init, key)
    shardings = exp.runner.shardings(abstract)
    chunk = exp.runner.chunk(2)
    state, _ = chunk(exp.runner.init(key))
    ck = Checkpointer(tmp_path, abstract, shardings, exp.runner.mesh)
    ck.save(2, ck.pack(state), {"updates": 2})
    ck.close()
    models = _models(state)
    straight, _ = chunk(state)  # donates `state`
    ck = Checkpointer(tmp_path, abstract, shardings, exp.runner.mesh, read_only=True)
    restored = ck.restore_latest()
    ck.close()
    assert len({tuple(m) for m in np.asarray(models["body_mass"])}) == 8
    for name, value in _models(restored.state).items():
        np.testing.assert_array_equal(value, models[name])
    resumed, _ = chunk(restored.state)
    for x, y in zip(
        jax.tree.leaves(jax.device_get(resumed.agent.params)),
        jax.tree.leaves(jax.device_get(straight.agent.params)),
        strict=True,
    ):
        np.testing.assert_array_equal(x, y)


def _models(state):
    (playground,) = [
        s
        for s in jax.tree.leaves(
            state.actor.env_state, is_leaf=lambda x: isinstance(x, PlaygroundState)
        )
        if isinstance(s, PlaygroundState)
    ]
    return jax.device_get(playground.model)
