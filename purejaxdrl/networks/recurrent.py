"""Recurrent actor-critics: a torso, an LSTM or GRU core (`cores.py`), then heads.

The core's state is reset where an observation starts an episode (`reset`,
from the previous step's end), so one unroll across auto-resets computes what
separate unrolls of each episode from a zero state would.
"""

from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.networks.base import ACTIVATIONS, CORES, NetworkConfig, dense
from purejaxdrl.networks.core_scan import core_scan
from purejaxdrl.networks.cores import Core, zero_state
from purejaxdrl.networks.torsos import _Torso
from purejaxdrl.rl.distributions import Distribution
from purejaxdrl.types import Params, PRNGKey, PyTree

# (policy output, value): the heads' outputs, as a feed-forward Network's apply.
Outputs = tuple[jax.Array, jax.Array]


class RecurrentNetwork(NamedTuple):
    """A pure recurrent network over batches of environments.

    Attributes:
      init: (key, obs [*obs_shape]) -> params.
      initial_state: batch size B -> the zero core state, leaves [B, H].
      step: (params, state [B], obs [B, ...], reset bool [B]) -> (state,
        (policy [B, ...], value [B])): one step of B environments; the state is
        zeroed where `reset` before it is used.
      unroll: (params, state [B], obs [T, B, ...], reset bool [T, B]) ->
        (state, (policy [T, B, ...], value [T, B])): `step` scanned over T, with
        the torso and heads applied to all T x B rows at once.
      distribution: the policy head's distribution.

    """

    init: Callable[[PRNGKey, jax.Array], Params]
    initial_state: Callable[[int], PyTree]
    step: Callable[[Params, PyTree, jax.Array, jax.Array], tuple[PyTree, Outputs]]
    unroll: Callable[[Params, PyTree, jax.Array, jax.Array], tuple[PyTree, Outputs]]
    distribution: Distribution


class _RecurrentActorCritic(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    policy_size: int

    def setup(self) -> None:
        self.torso = _Torso(self.config, self.obs_ndim)
        self.core = Core(self.config.core, self.config.core_size)
        widths = self.config.head_sizes
        self.policy_tower = [dense(w, np.sqrt(2.0)) for w in widths]
        self.value_tower = [dense(w, np.sqrt(2.0)) for w in widths]
        self.policy_head = dense(self.policy_size, 0.01)
        self.value_head = dense(1, 1.0)

    def encode(self, obs: jax.Array) -> jax.Array:
        # Torso and the core's input projection: feed-forward, any batch shape.
        return self.core.project(self.torso(obs))

    def core_step(
        self, state: PyTree, projected: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, jax.Array]:
        return self.core.step(state, projected, reset)

    def heads(self, y: jax.Array) -> Outputs:
        act = ACTIVATIONS[self.config.activation]
        policy, value = y, y
        for layer in self.policy_tower:
            policy = act(layer(policy))
        for layer in self.value_tower:
            value = act(layer(value))
        return self.policy_head(policy), self.value_head(value)[..., 0]

    def __call__(
        self, state: PyTree, obs: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, Outputs]:
        state, y = self.core_step(state, self.encode(obs), reset)
        return state, self.heads(y)


def make_recurrent_actor_critic(
    config: NetworkConfig,
    obs_ndim: int,
    policy_size: int,
    distribution: Distribution,
) -> RecurrentNetwork:
    """An actor-critic with the recurrent core `config.core` between torso and heads.

    Args:
      config: the architecture; `core` is `lstm` or `gru`, of `core_size` units.
      obs_ndim: the number of observation dimensions.
      policy_size: the policy head's width (logits, or Gaussian parameters).
      distribution: the policy head's distribution.

    Returns:
      The RecurrentNetwork; parameters {torso, core, policy_head, value_head}.

    Raises:
      ValueError: for a core that is not one of CORES.

    """
    if config.core not in CORES or config.core == "none":
        raise ValueError(
            f"network.core={config.core!r} is not a recurrent core; use lstm or gru."
        )
    module = _RecurrentActorCritic(config, obs_ndim, policy_size)

    def initial_state(batch: int) -> PyTree:
        return zero_state(config.core, config.core_size, batch)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, initial_state(1), obs[None], jnp.zeros(1, bool))

    def unroll(
        params: Params, state: PyTree, obs: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, Outputs]:
        # The torso, the core's input projection and the heads are
        # feed-forward: one pass over all T x B rows; only the core's recurrent
        # step runs step by step (`core_scan`, with its own backward pass).
        x = module.apply(params, obs, method="encode")
        core = params["params"]["core"]
        bias_n = core.get("recurrent_bias", jnp.zeros(config.core_size))
        state, y = core_scan(config.core, core["recurrent"], bias_n, state, x, reset)
        return state, module.apply(params, y, method="heads")

    return RecurrentNetwork(
        init=init,
        initial_state=initial_state,
        step=module.apply,
        unroll=unroll,
        distribution=distribution,
    )
