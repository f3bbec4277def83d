"""Playground 0.2.0's `jp.clip(a_max=...)`, a keyword current JAX removed."""

import math
import pathlib
import re
import types

import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")

from purejaxdrl.env import playground_compat, playground_env  # noqa: E402

# A rotation by THETA about z, and the identity: their orientation error is THETA.
THETA = 0.7
TURNED = jnp.array([math.cos(THETA / 2), 0.0, 0.0, math.sin(THETA / 2)])
STILL = jnp.array([1.0, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def registry():
    return playground_env.import_registry()  # patches, as making a task does


def test_the_cube_tasks_orientation_errors_run_on_this_jax(registry):
    from mujoco_playground._src.manipulation.franka_emika_panda_robotiq import (
        push_cube,
    )
    from mujoco_playground._src.manipulation.leap_hand import reorient

    panda = push_cube.PandaRobotiqPushCube._orientation_error(None, TURNED, STILL)
    np.testing.assert_allclose(panda, THETA, rtol=1e-5)
    cube = types.SimpleNamespace(
        get_cube_orientation=lambda data: TURNED,
        get_cube_goal_orientation=lambda data: STILL,
    )
    leap = reorient.CubeReorient._cube_orientation_error(cube, None)
    np.testing.assert_allclose(leap, THETA, rtol=1e-5)


def test_only_those_modules_see_the_old_keywords(registry):
    from mujoco_playground._src.manipulation.leap_hand import reorient

    x = jnp.array([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(reorient.jp.clip(x, a_max=1.0), [-2.0, 0.5, 1.0])
    np.testing.assert_array_equal(reorient.jp.clip(x, a_min=0.0), [0.0, 0.5, 3.0])
    np.testing.assert_array_equal(reorient.jp.clip(x, -1.0, 1.0), [-1.0, 0.5, 1.0])
    assert reorient.jp.asin is jnp.asin
    if not playground_compat.clip_takes_old_keywords():
        with pytest.raises(TypeError):
            jnp.clip(x, a_max=1.0)  # jax.numpy itself is untouched
    assert playground_compat.patch_removed_keywords() == []  # once is enough


def test_every_call_with_the_old_keywords_is_patched():
    import mujoco_playground

    root = pathlib.Path(mujoco_playground.__file__).parent
    calls = re.compile(r"\bjp\.clip\((?:[^()]|\([^()]*\))*\ba_m(?:in|ax)\s*=")
    found = {
        "mujoco_playground." + ".".join(path.relative_to(root).with_suffix("").parts)
        for path in root.rglob("*.py")
        if calls.search(path.read_text())
    }
    assert found, "the scan finds the two known calls"
    assert found <= set(playground_compat.MODULES)
