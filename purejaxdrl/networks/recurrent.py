"""Recurrent networks: a torso, an LSTM, GRU or minGRU core (`cores.py`), then heads.

Actor-critics (policy and value heads) and Q-networks (Q-values where the
policy's logits stand, as `heads.make_q_network`'s) share the torso and core.

The core's state is reset where an observation starts an episode (`reset`,
from the previous step's end), so one unroll across auto-resets computes what
separate unrolls of each episode from a zero state would.
"""

import functools
from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.networks.base import (
    ACTIVATIONS,
    CORES,
    Network,
    NetworkConfig,
    dense,
    label_of,
)
from purejaxdrl.networks.core_scan import core_scan, core_step
from purejaxdrl.networks.cores import Core, zero_state
from purejaxdrl.networks.mingru import mingru_scan, mingru_step
from purejaxdrl.networks.torsos import Torso
from purejaxdrl.rl.distributions import Distribution
from purejaxdrl.scans import platform_scan
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
      final_outputs: (params, state [B], obs [T, B, ...], reset [T, B],
        final_obs [T, B, ...]) -> outputs (policy, value) [T, B] at each step's
        final observation, stepped from the state after that step: what a
        learner bootstraps from at truncations and episode ends (no gradient
        pass of its own: a plain scan).
      unroll_final: (params, state, obs, reset, final_obs) -> (outputs,
        final outputs): `unroll`'s outputs (with gradient) and
        `final_outputs`' (without: stopped parameters) from one unroll, for a
        learner that needs both from the same parameters (IMPALA, R2D2's
        online network): the states after each step are the unroll's.

    """

    init: Callable[[PRNGKey, jax.Array], Params]
    initial_state: Callable[[int], PyTree]
    step: Callable[[Params, PyTree, jax.Array, jax.Array], tuple[PyTree, Outputs]]
    unroll: Callable[[Params, PyTree, jax.Array, jax.Array], tuple[PyTree, Outputs]]
    distribution: Distribution
    final_outputs: Callable[..., Outputs] | None = None
    unroll_final: Callable[..., tuple[Outputs, Outputs]] | None = None

    def __repr__(self) -> str:
        # As `Network`'s (`base.labelled`, on `init`): the functions' reprs
        # print the whole flax module.
        said = label_of(self.init) or "init, step, unroll, ..."
        return f"RecurrentNetwork({said})"


AnyNetwork = Network | RecurrentNetwork
"""What an agent's factory takes: a feed-forward network or a recurrent one."""


class _RecurrentActorCritic(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    policy_size: int

    def setup(self) -> None:
        self.torso = Torso(self.config, self.obs_ndim)
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


class _RecurrentQ(_RecurrentActorCritic):
    # Q-values [A] where the policy's logits stand, and max Q as the value:
    # evaluation (argmax Q), rendering and export work unchanged.
    dueling: bool = True

    def setup(self) -> None:
        self.torso = Torso(self.config, self.obs_ndim)
        self.core = Core(self.config.core, self.config.core_size)
        self.tower = [dense(w, np.sqrt(2.0)) for w in self.config.head_sizes]
        self.advantage_head = dense(self.policy_size, 1.0)
        if self.dueling:
            self.value_head = dense(1, 1.0)

    def heads(self, y: jax.Array) -> Outputs:
        act = ACTIVATIONS[self.config.activation]
        for layer in self.tower:
            y = act(layer(y))
        q = self.advantage_head(y)
        if self.dueling:
            # Wang et al. (2016): Q = V + A - mean(A).
            q = self.value_head(y) + q - q.mean(axis=-1, keepdims=True)
        return q, q.max(axis=-1)


def make_recurrent_actor_critic(
    config: NetworkConfig,
    obs_ndim: int,
    policy_size: int,
    distribution: Distribution,
) -> RecurrentNetwork:
    """An actor-critic with the recurrent core `config.core` between torso and heads.

    Args:
      config: the architecture; `core` is `lstm`, `gru` or `mingru`, of
        `core_size` units.
      obs_ndim: the number of observation dimensions.
      policy_size: the policy head's width (logits, or Gaussian parameters).
      distribution: the policy head's distribution.

    Returns:
      The RecurrentNetwork; parameters {torso, core, policy_head, value_head},
      and with `head_sizes` also policy_tower_0.. and value_tower_0.. (one per
      width, before each head).

    Raises:
      ValueError: for a core that is not one of CORES.

    """
    _check_recurrent(config)
    module = _RecurrentActorCritic(config, obs_ndim, policy_size)
    return _recurrent_network(module, config, distribution)


def make_recurrent_q_network(
    config: NetworkConfig,
    obs_ndim: int,
    num_actions: int,
    distribution: Distribution,
    *,
    dueling: bool,
) -> RecurrentNetwork:
    """A Q-network with the recurrent core `config.core` (R2D2's).

    Kapturowski et al. (2019): torso, core, `head_sizes` layers, then Q-values
    [A] (dueling if `dueling`) in the policy's place and max Q as the value.

    Raises:
      ValueError: for a core that is not one of CORES.

    """
    _check_recurrent(config)
    module = _RecurrentQ(config, obs_ndim, num_actions, dueling=dueling)
    return _recurrent_network(module, config, distribution)


def _check_recurrent(config: NetworkConfig) -> None:
    if config.core not in CORES or config.core == "none":
        raise ValueError(
            f"network.core={config.core!r} is not a recurrent core; use lstm, gru "
            "or mingru."
        )


def _core_functions(config: NetworkConfig, params: Params) -> tuple[Callable, Callable]:
    """The core's (step, scan) with its parameters bound.

    step: (state [B], projection [B, G*H], reset [B]) -> (state, h [B, H]);
    scan: the same over [T, B] -> (final state, h [T, B, H]).
    """
    if config.core == "mingru":
        return mingru_step, mingru_scan
    core = params["params"]["core"]
    bias_n = core.get("recurrent_bias", jnp.zeros(config.core_size))
    bound = (config.core, core["recurrent"], bias_n)
    return functools.partial(core_step, *bound), functools.partial(core_scan, *bound)


def _recurrent_network(
    module: _RecurrentActorCritic, config: NetworkConfig, distribution: Distribution
) -> RecurrentNetwork:
    # The pure functions of a torso -> core -> heads module.

    def initial_state(batch: int) -> PyTree:
        return zero_state(config.core, config.core_size, batch)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, initial_state(1), obs[None], jnp.zeros(1, bool))

    def unroll(
        params: Params, state: PyTree, obs: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, Outputs]:
        # The torso, the core's input projection and the heads are
        # feed-forward: one pass over all T x B rows; only the core's recurrent
        # step runs step by step (`core_scan`, with its own backward pass), or,
        # for minGRU, as a loop on CPU and a parallel scan elsewhere
        # (`mingru_scan`).
        x = module.apply(params, obs, method="encode")
        _, scan = _core_functions(config, params)
        state, y = scan(state, x, reset)
        return state, module.apply(params, y, method="heads")

    def final_outputs(
        params: Params,
        state: PyTree,
        obs: jax.Array,
        reset: jax.Array,
        final_obs: jax.Array,
    ) -> Outputs:
        x = module.apply(params, obs, method="encode")
        after = _after_states(config, params, state, x, reset)
        return _final_step(module, config, params, after, final_obs)

    def unroll_final(
        params: Params,
        state: PyTree,
        obs: jax.Array,
        reset: jax.Array,
        final_obs: jax.Array,
    ) -> tuple[Outputs, Outputs]:
        x = module.apply(params, obs, method="encode")
        _, scan = _core_functions(config, params)
        _, y = scan(state, x, reset)
        fixed = jax.lax.stop_gradient(params)
        if config.core == "lstm":  # its outputs are h alone: c needs a scan
            after = _after_states(config, fixed, state, jax.lax.stop_gradient(x), reset)
        else:  # the state is h itself
            after = jax.lax.stop_gradient(y)
        final = _final_step(module, config, fixed, after, final_obs)
        return module.apply(params, y, method="heads"), final

    return RecurrentNetwork(
        init=init,
        initial_state=initial_state,
        step=module.apply,
        unroll=unroll,
        distribution=distribution,
        final_outputs=final_outputs,
        unroll_final=unroll_final,
    )


def _after_states(
    config: NetworkConfig, params: Params, state: PyTree, x: jax.Array, reset: jax.Array
) -> PyTree:
    """The core's state after each of T steps, before the next step's reset.

    For the GRU and minGRU that is the scan's outputs h; the LSTM's (c, h)
    needs a scan that keeps c too.
    """
    step, scan = _core_functions(config, params)
    if config.core != "lstm":
        return scan(state, x, reset)[1]

    def scan_step(state: PyTree, xs: tuple) -> tuple[PyTree, PyTree]:
        state, _ = step(state, *xs)
        return state, state

    return platform_scan(scan_step, state, (x, reset), prefetch=True)[1]


def _final_step(
    module: nn.Module,
    config: NetworkConfig,
    params: Params,
    after: PyTree,
    final_obs: jax.Array,
) -> Outputs:
    """The heads' outputs at each step's final observation, from `after` [T, B]."""
    step, _ = _core_functions(config, params)
    batch = jax.tree.leaves(after)[0].shape[:2]
    rows = jax.tree.map(lambda a: a.reshape(-1, a.shape[-1]), after)
    xf = module.apply(params, final_obs, method="encode")
    xf = xf.reshape(-1, xf.shape[-1])
    _, y = step(rows, xf, jnp.zeros(xf.shape[0], bool))
    return module.apply(params, y.reshape(*batch, -1), method="heads")
