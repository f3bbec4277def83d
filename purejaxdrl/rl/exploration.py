"""ε-greedy exploration: the action choice and Ape-X's per-actor ε."""

import jax
import jax.numpy as jnp

from purejaxdrl.types import PRNGKey


def epsilon_greedy(key: PRNGKey, q: jax.Array, epsilon: jax.Array) -> jax.Array:
    """With probability ε a uniformly random legal action, else the greedy one.

    Actions whose value is -inf are illegal (a masked Q-network's,
    `distributions.mask_logits`): neither choice takes them. The random one is
    the k-th legal action for k uniform below their count: with every action
    legal that is k itself, the same draw as without a mask.

    Args:
      key: one key for this choice.
      q: action values of one state, float32 [A]; -inf where illegal.
      epsilon: exploration rate ε, scalar.

    Returns:
      The action, int32 [].

    """
    key_explore, key_action = jax.random.split(key)
    legal = q > -jnp.inf
    count = jnp.cumsum(legal, axis=-1)
    k = jax.random.randint(key_action, (), 0, jnp.maximum(count[..., -1], 1))
    random = jnp.argmax(count > k, axis=-1)
    explore = jax.random.uniform(key_explore) < epsilon
    return jnp.where(explore, random, jnp.argmax(q, axis=-1)).astype(jnp.int32)


def actor_epsilons(
    epsilon: jax.Array | float, alpha: jax.Array | float, env_id: jax.Array, n: int
) -> jax.Array:
    """Ape-X's ε_i = ε^(1 + α i / (N - 1)) for global environment indices i.

    Horgan et al. (2018), "Distributed Prioritized Experience Replay",
    https://arxiv.org/abs/1803.00933: environment 0 explores with ε, the last
    with ε^(1 + α), so actors cover a spread of exploration rates.

    Args:
      epsilon: the base rate ε (0.4 in the paper).
      alpha: the spread α (7 in the paper).
      env_id: global environment indices i, int32 [...].
      n: N, the number of environments.

    Returns:
      ε_i, float32 of `env_id`'s shape.

    """
    frac = env_id / max(n - 1, 1)
    return jnp.asarray(epsilon, jnp.float32) ** (1.0 + alpha * frac)


def annealed_epsilon(
    start: jax.Array | float,
    end: jax.Array | float,
    fraction: jax.Array | float,
    step: jax.Array,
    num_updates: int,
) -> jax.Array:
    """ε at update `step`: linear from `start` to `end` over `fraction` of training.

    Args:
      start: ε at update 0.
      end: ε from update `fraction * num_updates` on.
      fraction: the part of training the decay takes (0: `end` throughout).
      step: the update, int32 [].
      num_updates: updates in the whole run.

    Returns:
      ε, float32 [].

    """
    span = fraction * num_updates
    # A zero span (fraction 0) means no decay: `end` from update 0, not 0 / 0.
    frac = jnp.where(span > 0, step / jnp.where(span > 0, span, 1.0), 1.0)
    frac = jnp.minimum(frac, 1.0)
    return jnp.asarray(start + frac * (end - start), jnp.float32)
