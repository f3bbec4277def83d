"""R2D2's parts: stored sequences, their burn-in, and their TD errors."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.config_docs import field_example
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.rl.nstep import n_step_targets
from purejaxdrl.rl.value_rescaling import rescale, unscale
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.types import Params, PyTree, Transition


class Sequence(NamedTuple):
    """One environment's stored unroll: leaves [T, ...], the state [...]."""

    observation: jax.Array
    action: jax.Array
    reward: jax.Array
    discount: jax.Array
    truncated: jax.Array
    reset: jax.Array
    final_observation: jax.Array
    core_state: PyTree


def stateless(network: Network) -> RecurrentNetwork:
    """A feed-forward network as a recurrent one with an empty state."""

    def step(params, state, obs, reset):
        return state, network.apply(params, obs)

    def final_outputs(params, state, obs, reset, final_obs):
        return network.apply(params, final_obs)

    def unroll_final(params, state, obs, reset, final_obs):
        fixed = jax.lax.stop_gradient(params)
        return network.apply(params, obs), network.apply(fixed, final_obs)

    return RecurrentNetwork(
        init=network.init,
        initial_state=lambda batch: (),
        step=step,
        unroll=step,
        distribution=network.distribution,
        final_outputs=final_outputs,
        unroll_final=unroll_final,
    )


def sequence_td(
    network: RecurrentNetwork,
    params: Params,
    target_params: Params,
    seq: Sequence,
    *,
    burn_in: int,
    n_step: int,
    gamma: float | jax.Array,
    rescale_eps: float | jax.Array | None,
) -> jax.Array:
    """TD errors δ [T - burn_in, S] of S time-major sequences.

    The online network unrolls the sequence from its stored state; the burn-in
    steps run with stopped gradients and only give the state the rest starts
    from. Targets: n-step returns G with γ_boot (cut at episode ends and at the
    sequence's end, `rl.n_step_targets`) bootstrapping from the target
    network's Q at the final observation of the bootstrap step, at the action
    the online network prefers there (double Q); with `rescale_eps`, through
    the value rescaling h: h(G + γ_boot h^-1(Q')).

    Args:
      network: the (recurrent) Q-network.
      params: the online parameters (differentiated).
      target_params: the target network's.
      seq: the sequences, leaves [T, S, ...] and the stored states [S, ...].
      burn_in: steps at the start that only warm up the state.
      n_step: the targets' horizon.
      gamma: the discount γ.
      rescale_eps: ε of h, or None for no rescaling.

    """
    b = burn_in
    head = jax.tree.map(lambda x: x[:b], seq)
    tail = jax.tree.map(lambda x: x[b:], seq)
    start = seq.core_state
    if b:
        frozen = jax.lax.stop_gradient(params)
        start, _ = network.unroll(frozen, start, head.observation, head.reset)
        start = jax.lax.stop_gradient(start)
    # The online network's Q at each step's final observation (no gradient)
    # comes from the same unroll, stepped from the states after each step.
    (q, _), (online, _) = network.unroll_final(
        params, start, tail.observation, tail.reset, tail.final_observation
    )
    q_taken = jnp.take_along_axis(q, tail.action[..., None], axis=-1)[..., 0]
    # The target network's, from its own burn-in over the whole sequence.
    target, _ = network.final_outputs(
        target_params, seq.core_state, seq.observation, seq.reset, seq.final_observation
    )
    target = jax.lax.stop_gradient(target[b:])
    best = jnp.argmax(online, axis=-1)[..., None]
    q_next = jnp.take_along_axis(target, best, axis=-1)[..., 0]  # [T - b, S]
    nstep = jax.vmap(n_step_targets, in_axes=(1, 1, 1, None, None), out_axes=1)
    ret, boot, index = nstep(tail.reward, tail.discount, tail.truncated, n_step, gamma)
    bootstrap = jnp.take_along_axis(q_next, index, axis=0)
    # `where`, not a product with γ_boot = 0: a terminated step's final
    # observation may be anything, inf included, and 0 * inf is NaN.
    bootstrap = jnp.where(boot == 0, 0.0, bootstrap)
    if rescale_eps is not None:
        eps = rescale_eps
        target_q = rescale(ret + boot * unscale(bootstrap, eps), eps)
    else:
        target_q = ret + boot * bootstrap
    return target_q - q_taken


def to_sequences(traj: Transition) -> Sequence:
    """An unroll [T, E] as one stored sequence per environment, leaves [E, T, ...]."""
    steps = Sequence(
        traj.observation,
        traj.action.astype(jnp.int32),
        traj.reward.astype(jnp.float32),
        traj.discount.astype(jnp.float32),
        traj.truncated,
        traj.reset,
        traj.final_observation,
        (),
    )
    per_env = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), steps)
    return per_env._replace(core_state=traj.core_state)


def with_burn_in(
    network: RecurrentNetwork,
    params: Params,
    tail: Sequence,
    traj: Transition,
    first: jax.Array,
) -> tuple[Sequence, Sequence]:
    """An unroll's stored sequences, each led by the unroll before's last steps.

    R2D2 stores sequences that overlap by their burn-in: each environment's
    sequence is the last `burn_in` steps of its previous unroll (`tail`,
    leaves [E, burn_in, ...], with the core state its actor had before them)
    followed by this unroll (`traj`, [T, E]), so the burn-in warms the state
    up on steps already trained on and every step of the unroll is trained
    on. The new tail is this unroll's last `burn_in` steps (at most T), with
    the state the actors had before them: re-unrolled from the unroll's
    stored start state with the acting `params` (that start state itself
    when the burn-in is the whole unroll).

    Args:
      network: the recurrent Q-network.
      params: the parameters the actors acted with.
      tail: the previous unroll's last steps and state (`empty_tail` before
        the first).
      traj: the unroll, [T, E].
      first: bool [], whether this is the run's first unroll: its tail is
        no experience, so the sequence's state is zeroed where the unroll
        starts (the actors' start state is the zero state).

    Returns:
      (sequences [E, burn_in + T, ...], the next tail).

    """
    burn_in = tail.reward.shape[1]
    steps = to_sequences(traj)
    if burn_in == 0:
        return steps, tail
    reset = steps.reset.at[:, 0].set(steps.reset[:, 0] | first)
    joined = jax.tree.map(
        lambda a, b: jnp.concatenate([a, b], axis=1),
        tail._replace(core_state=()),
        steps._replace(core_state=(), reset=reset),
    )
    length = traj.reward.shape[0]
    if burn_in == length:
        # The whole unroll is the next burn-in: its state is the unroll's own
        # start state, with nothing to re-unroll (a zero-length scan).
        before = traj.core_state
    else:
        before = network.unroll(
            params,
            traj.core_state,
            traj.observation[: length - burn_in],
            traj.reset[: length - burn_in],
        )[0]
    new_tail = jax.tree.map(
        lambda x: x[:, length - burn_in :], steps._replace(core_state=())
    )
    return (
        joined._replace(core_state=tail.core_state),
        new_tail._replace(core_state=before),
    )


def empty_tail(
    obs_example: jax.Array, burn_in: int, network: RecurrentNetwork, num_envs: int
) -> Sequence:
    """The tail before a run's first unroll: `num_envs` x `burn_in` zero steps."""
    example = sequence_example(obs_example, burn_in, network)
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (num_envs, *x.shape)), example)


def time_major(item: Sequence) -> Sequence:
    """Sampled sequences [S, T, ...] as the learner takes them, [T, S, ...]."""
    swap = {
        field: jnp.swapaxes(getattr(item, field), 0, 1)
        for field in Sequence._fields
        if field != "core_state"
    }
    return item._replace(**swap)


def sequence_example(
    obs_example: jax.Array, length: int, network: RecurrentNetwork
) -> Sequence:
    """One stored sequence of `length` steps, all zeros: a buffer's example."""
    obs = jnp.asarray(obs_example)
    steps = jnp.zeros((length,), jnp.float32)
    return Sequence(
        observation=jnp.zeros((length, *obs.shape), obs.dtype),
        action=steps.astype(jnp.int32),
        reward=steps,
        discount=steps,
        truncated=steps.astype(bool),
        reset=steps.astype(bool),
        final_observation=jnp.zeros((length, *obs.shape), obs.dtype),
        core_state=jax.tree.map(lambda x: x[0], network.initial_state(1)),
    )


def warn_burn_in_without_core(burn_in: int, recurrent: bool) -> None:
    """Warns once that a burn-in does nothing for a network with no core.

    It only warms up a core's state; a feed-forward Q-network has none, yet
    the steps are still stored with each sequence and unrolled by the
    learner (50% more for 8 of 16). A warning, not a refusal, as for the
    other settings that do nothing (a preset's burn-in with
    `--network.core none` still trains).
    """
    if burn_in == 0 or recurrent:
        return
    warn_once(
        f"r2d2.burn_in={burn_in} has no effect without a recurrent core "
        "(network.core='none'): it only warms up a core's state, yet each "
        f"sequence stores and unrolls {burn_in} more steps; drop it, "
        f"{field_example('r2d2.burn_in', 0)}.",
        key=("r2d2", "burn_in without a core"),
    )
