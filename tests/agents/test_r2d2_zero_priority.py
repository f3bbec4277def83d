"""A sequence learnt perfectly keeps a positive priority (mut25 RN2).

Every earlier test drew random rewards, so no TD error was ever exactly 0,
and dropping R2D2's floor on written priorities failed nothing. Without it a
sequence whose TD errors are all 0 is written priority 0: it is never drawn
again, and a shard whose sequences all reach 0 has a sum tree of total 0.
"""

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.agents import RunShape
from purejaxdrl.agents.r2d2 import R2D2Config, make_r2d2
from purejaxdrl.replay import sum_tree
from tests.agents.test_r2d2 import OBS, _network, _trajectory


def test_all_zero_td_errors_keep_a_positive_priority_and_learning_stays_finite():
    num_envs, length = 2, 4
    config = R2D2Config(burn_in=0, n_step=1, gamma=0.9, buffer_size=4 * num_envs,
                        batch_size=num_envs, min_replay=num_envs, target_every=2,
                        updates_per_step=1)  # fmt: skip
    net = _network()
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=4)
    agent = make_r2d2(config, net, np.zeros(OBS, np.float32), run)
    state = agent.init(jax.random.key(0))
    # A Q-network of zeros on rewards of zeros: every TD error is exactly 0.
    zeros = jax.tree.map(jnp.zeros_like, state.params)
    state = state._replace(params=zeros, target_params=zeros)
    traj = _trajectory(net, length, num_envs, seed=0)
    traj = traj._replace(reward=np.zeros_like(traj.reward))
    update = jax.jit(agent.update)
    new, metrics = update(state, traj, jax.random.key(1))
    assert int(metrics["learner/grad_steps"]) == 1
    written = jax.vmap(sum_tree.leaves, (0, None))(new.buffer.nodes, jnp.arange(1))
    assert np.all(np.isfinite(written)) and np.all(np.asarray(written) > 0.0), written
    for k in range(2, 4):  # drawn again from those priorities: still finite
        new, metrics = update(new, traj, jax.random.key(k))
    flat = jax.flatten_util.ravel_pytree(new.params)[0]
    assert np.all(np.isfinite(np.asarray(flat)))
    assert all(np.isfinite(float(v)) for v in jax.tree.leaves(metrics))
