"""The Q-learners' (DQN, Ape-X, R2D2, PQN) networks, actors, target step and rules."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from purejaxdrl.agents.actor_critic import core_value
from purejaxdrl.agents.base import Acting, RunShape, feed_forward
from purejaxdrl.agents.optim import check_scalar_loss, local_copy, total_and_td
from purejaxdrl.config import check
from purejaxdrl.config_docs import field_example
from purejaxdrl.networks import Network, NetworkConfig, RecurrentNetwork, make_q_network
from purejaxdrl.rl.exploration import actor_epsilons, annealed_epsilon, epsilon_greedy
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.types import Params, PRNGKey, PyTree


def q_networks(
    config: Any, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[Network, Network]:
    """A Q-network (dueling if `config.dueling`), twice: to act and to learn."""
    q = make_q_network(network, obs_spec, action_spec, dueling=config.dueling)
    return q, q


def mean_actor_epsilon(config: Any, num_envs: int) -> jax.Array:
    """The mean of Ape-X's per-actor rates ε_i over `num_envs` environments."""
    ids = jnp.arange(num_envs, dtype=jnp.int32)
    return actor_epsilons(config.epsilon, config.epsilon_alpha, ids, num_envs).mean()


def final_epsilon(config: Any, updates: int, num_updates: int, num_envs: int) -> float:
    """The ε a Q-learner ended training with, for its exported policy's `act`.

    `exploration`'s ε of the run after `updates` of its `num_updates`: the
    annealed ε (what its acting parameters held: `epsilon_end` once the
    anneal is over, more for a run stopped earlier), or, with
    `per_actor_epsilon`, the mean of Ape-X's ε_i over its `num_envs`
    environments: what it logs as `epsilon`, since an exported policy acts
    without an environment index to pick one ε_i by.
    """
    epsilon_now, _ = exploration(config, num_updates, num_envs)
    return float(epsilon_now(jnp.asarray(updates, jnp.int32)))


def epsilon_greedy_sampler(epsilon: float) -> Callable[[jax.Array, Any], jax.Array]:
    """(Q-values [*batch, A], one key) -> ε-greedy actions [*batch], ε fixed."""

    def sample(q: jax.Array, key: Any) -> jax.Array:
        flat = q.reshape(-1, q.shape[-1])
        keys = jax.random.split(key, flat.shape[0])
        actions = jax.vmap(epsilon_greedy, (0, 0, None))(keys, flat, epsilon)
        return actions.reshape(q.shape[:-1])

    return sample


def exported_epsilon(config: Any, shape: RunShape, updates: int) -> dict[str, float]:
    """A Q-learner's `Algorithm.policy_extras`: policy.json's `epsilon`.

    `final_epsilon` after `updates` of the run's `shape.num_updates`, over
    its `shape.num_envs` environments.
    """
    num_updates, num_envs = shape.num_updates, shape.num_envs
    return {"epsilon": final_epsilon(config, updates, num_updates, num_envs)}


def exported_epsilon_greedy(
    config: Any, spec: dict[str, Any], distribution: Any
) -> Callable[[jax.Array, Any], jax.Array]:
    """A Q-learner's `Algorithm.exported_sampler`: ε-greedy on its Q-values.

    With the ε it ended training with (policy.json's `epsilon`), not a
    softmax over the values. A policy.json from before it kept its ε acts
    as it did then: with `epsilon_end`, or with Ape-X's per-actor rates,
    their mean over the run's `num_envs` environments.
    """
    del distribution  # a Q-network's head: values, not logits
    epsilon = spec.get("epsilon")
    if epsilon is None:
        epsilon = float(config.epsilon_end)
        if config.per_actor_epsilon and spec.get("num_envs"):
            epsilon = float(mean_actor_epsilon(config, spec["num_envs"]))
    return epsilon_greedy_sampler(float(epsilon))


def exploration(
    config: Any, num_updates: int, num_envs: int
) -> tuple[Callable[[jax.Array], jax.Array], Callable[..., jax.Array]]:
    """(update -> the run's ε, (that ε, env_ids [B]) -> each env's ε [B]).

    ε goes from `epsilon_start` to `epsilon_end` over `epsilon_fraction` of the
    `num_updates`; with `per_actor_epsilon`, each of the `num_envs`
    environments explores with Ape-X's fixed ε_i instead (Horgan et al., 2018),
    and the run's ε (what is logged) is their mean.
    """

    def annealed(step: jax.Array) -> jax.Array:
        if config.per_actor_epsilon:
            return mean_actor_epsilon(config, num_envs)
        start, end = config.epsilon_start, config.epsilon_end
        return annealed_epsilon(start, end, config.epsilon_fraction, step, num_updates)

    def per_env(epsilon: jax.Array, env_ids: jax.Array) -> jax.Array:
        if config.per_actor_epsilon:
            alpha = config.epsilon_alpha
            return actor_epsilons(config.epsilon, alpha, env_ids, num_envs)
        return jnp.broadcast_to(epsilon, env_ids.shape)

    return annealed, per_env


def epsilon_greedy_acting(
    network: Network, epsilons: Callable[[jax.Array, jax.Array], jax.Array]
) -> Acting:
    """ε-greedy actors on a feed-forward Q-network, acting params (params, ε).

    Args:
      network: the Q-network (Q-values where a policy's logits stand).
      epsilons: (annealed ε, env_ids) -> each environment's ε (`exploration`).

    Each environment's value is its max Q (over the legal actions, with a
    mask). The recurrent form is `make_q_acting`.

    """

    def act(
        acting: tuple[Params, jax.Array], obs: jax.Array, key: Any, env_id: jax.Array
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        params, epsilon = acting
        q, _ = network.apply(params, obs)
        action = epsilon_greedy(key, q, epsilons(epsilon, env_id))
        return action, {"log_prob": jnp.zeros((), jnp.float32), "env_action": action}

    def value(acting: tuple[Params, jax.Array], obs: jax.Array) -> jax.Array:
        return network.apply(acting[0], obs)[0].max(axis=-1)

    return feed_forward(act, value, per_env=True)


def make_q_acting(
    network: RecurrentNetwork, epsilons: Callable[[jax.Array, jax.Array], jax.Array]
) -> Acting:
    """ε-greedy actors on a recurrent Q-network, acting params (params, ε).

    The recurrent form of `epsilon_greedy_acting` (R2D2's; PQN's with a core).

    Args:
      network: the Q-network (Q-values in the policy's place, max Q as value).
      epsilons: (annealed ε, env_ids [B]) -> each environment's ε [B].

    """

    def step(
        acting: tuple[Params, jax.Array],
        state: PyTree,
        obs: jax.Array,
        reset: jax.Array,
        keys: PRNGKey,
        env_ids: jax.Array,
    ) -> tuple[PyTree, jax.Array, dict[str, jax.Array]]:
        params, epsilon = acting
        state, (q, value) = network.step(params, state, obs, reset)
        action = jax.vmap(epsilon_greedy)(keys, q, epsilons(epsilon, env_ids))
        zeros = jnp.zeros(action.shape, jnp.float32)
        extras = {"log_prob": zeros, "env_action": action, "value": value}
        return state, action, extras

    values = core_value(network)

    def value(
        acting: tuple[Params, jax.Array], state: PyTree, obs: jax.Array
    ) -> jax.Array:
        return values(acting[0], state, obs)

    return Acting(network.initial_state, step, value, values_while_acting=True)


def target_network_step(
    state: Any,
    loss_fn: Callable[[Params], tuple[jax.Array, jax.Array]],
    optimizer: optax.GradientTransformation,
    ready: jax.Array,
    *,
    target_every: int,
    target_tau: jax.Array | float,
    axis_name: str | None,
) -> tuple[Any, jax.Array, dict[str, jax.Array]]:
    """One gradient step of a Q-learner with a target network (DQN, R2D2).

    Args:
      state: has `params`, `target_params`, `opt_state` and `grad_steps`.
      loss_fn: params -> (scalar loss, TD errors: [B], or [T, B] for
        sequences) on this device's batch
        (another output, or a loss of another shape, is refused as it
        traces: `total_and_td`, `check_scalar_loss`).
      optimizer: the optax transformation.
      ready: bool []; before learning starts the four fields stay as they were.
      target_every: gradient steps between target updates.
      target_tau: each target update moves this fraction of the way (1: copy).
      axis_name: the mesh axis gradients and metrics are averaged over.

    Returns:
      (state with the four fields updated, TD errors as loss_fn gave them,
      metrics `loss/total` and `td/abs_mean`, 0 before `ready`).

    """

    def checked(params: Params) -> tuple[jax.Array, jax.Array]:
        loss, td = total_and_td(loss_fn(params))
        check_scalar_loss(loss)  # before JAX's error, which names no loss
        return loss, td

    own = local_copy(state.params, axis_name)
    (loss, td), grads = jax.value_and_grad(checked, has_aux=True)(own)
    metrics = {"loss/total": loss, "td/abs_mean": jnp.abs(td).mean()}
    if axis_name is not None:
        grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    grad_steps = state.grad_steps + 1
    tau = jnp.where(grad_steps % target_every == 0, target_tau, 0)
    target = optax.incremental_update(params, state.target_params, tau)
    # Before `ready` the learner state stays as it was. A select of these small
    # trees, not a `lax.cond`: a cond around the step would copy the whole
    # replay shard (tens of MB) on every update.
    params, target, opt_state, grad_steps = jax.tree.map(
        lambda new, old: jnp.where(ready, new, old),
        (params, target, opt_state, grad_steps),
        (state.params, state.target_params, state.opt_state, state.grad_steps),
    )
    state = state._replace(
        params=params, target_params=target, opt_state=opt_state, grad_steps=grad_steps
    )
    metrics = jax.tree.map(lambda m: jnp.where(ready, m, 0.0), metrics)
    return state, td, metrics


def check_n_step_fits(name: str, config: Any, shape: RunShape | None) -> None:
    """That a replay learner's n-step targets fit in one unroll (or sequence).

    Targets stop at the unroll's end: a longer n would silently be the unroll.
    """
    if shape is not None:
        check(
            config.n_step <= shape.unroll_length,
            f"{name}.n_step={config.n_step} is longer than unroll_length="
            f"{shape.unroll_length}: targets stop at the unroll's end; pass at "
            f"most {field_example(f'{name}.n_step', shape.unroll_length)}, or "
            f"raise {field_example('unroll_length', config.n_step)}.",
        )


def warn_target_never_used(
    name: str, config: Any, shape: RunShape, per_update: int
) -> None:
    """Warns once when the run ends before a target update is ever used.

    `per_update` is the items each update stores over all devices
    (`Algorithm.replay_items`: DQN's transitions, R2D2's sequences). The
    target moves after gradient steps `target_every`, 2 `target_every`, ...;
    with `target_every` at least the run's gradient steps, every TD target
    bootstraps from the initial, random network. A warning, not a refusal:
    a short smoke run at the default cadence (250, R2D2's 2500) is
    legitimate, and a finished run read back (eval, export) must still load.
    """
    # Learning starts at the update whose add stores `min_replay` items
    # (`replay_sizes.learning_updates`); each then takes updates_per_step steps.
    first = -(-config.min_replay // per_update) - 1
    steps = max(shape.num_updates - first, 0) * config.updates_per_step
    every = config.target_every
    if steps == 0 or every < steps:
        return  # no learning at all is `check_learning_starts`'s to refuse
    # The updates that take more than `every` steps.
    updates = first + every // config.updates_per_step + 1
    total = updates * shape.num_envs * shape.unroll_length
    # target_every is at least 1: a run of one gradient step has only the budget.
    lower = f"lower it, e.g. {field_example(f'{name}.target_every', steps - 1)}, or "
    warn_once(
        f"{name}.target_every={every} is not less than the run's {steps} gradient "
        "steps: no TD target would use an updated target network, all would "
        f"bootstrap from the initial one; {lower if steps > 1 else ''}raise the "
        f"budget to at least {field_example('total_steps', total)}.",
        key=("target never used", name),
    )
