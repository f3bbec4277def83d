"""What the Anakin runner must carry between updates and count (mut22's survivors).

Each test kills a mutant no other test did: a key that stops advancing, a
step count of one device's environments, non-finite counts averaged rather
than summed over devices, the bootstrap observation left out of its update's
count.
"""

import jax
import numpy as np

import purejaxdrl as pjd
from tests.runners.test_anakin import BadAtStep, _experiment


def test_each_update_draws_new_keys():
    # A04: the carried key must advance, or every update repeats the same
    # action noise and minibatch shuffle.
    exp = _experiment()
    state = exp.runner.init(jax.random.key(0))
    chunk = exp.runner.chunk(1)
    keys = [np.asarray(jax.random.key_data(state.key)).copy()]
    for _ in range(2):
        state, _ = chunk(state)
        keys.append(np.asarray(jax.random.key_data(state.key)).copy())
    assert len({k.tobytes() for k in keys}) == 3


def test_the_observation_after_the_last_step_is_counted_in_its_update():
    # A06: step 16 ends update 1 (4 envs x 16 steps): its observation is the one
    # the unroll bootstraps from, counted there, and again at update 2 where
    # it is acted on.
    pjd.env.register("BadAtStep16-v0", lambda: BadAtStep(at=16))
    exp = _experiment(env={"id": "BadAtStep16-v0"})
    _, metrics = exp.runner.chunk(3)(exp.runner.init(jax.random.key(0)))
    np.testing.assert_array_equal(metrics["non_finite/observation"], [4, 4, 0])


def test_steps_per_update_counts_every_devices_environments():
    # A10: env_steps, steps/s and the budget use it; 8 envs on 2 devices.
    exp = _experiment(num_envs=8, unroll_length=4, total_steps=8 * 4 * 4, devices=2)
    assert exp.runner.mesh.size == 2
    assert exp.runner.steps_per_update == 32


def test_non_finite_counts_are_summed_over_devices():
    # A11: 8 envs on 2 devices, a NaN observation in each at step 20.
    pjd.env.register("BadAtStep20b-v0", lambda: BadAtStep())
    exp = _experiment(env={"id": "BadAtStep20b-v0"}, num_envs=8, devices=2)
    _, metrics = exp.runner.chunk(3)(exp.runner.init(jax.random.key(0)))
    np.testing.assert_array_equal(metrics["non_finite/observation"], [0, 8, 0])
