"""What actor-critic learners share, feed-forward or recurrent.

Their networks, how they act, the rewards their losses see, and the outputs
and bootstrap values their learners recompute.
"""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.agents.base import Acting, feed_forward
from purejaxdrl.networks import (
    AnyNetwork,
    Network,
    NetworkConfig,
    RecurrentNetwork,
    make_actor_critic,
)
from purejaxdrl.rl.bootstrap import bootstrap_values
from purejaxdrl.rl.returns import episode_aware_gae
from purejaxdrl.types import Params, PRNGKey, PyTree, Transition

ActFn = Callable[[Params, jax.Array, PRNGKey], tuple[jax.Array, dict[str, jax.Array]]]
ValueFn = Callable[[Params, jax.Array], jax.Array]


def actor_critic_networks(
    config: Any, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[AnyNetwork, AnyNetwork]:
    """The acting and learner networks of an actor-critic: one network, twice.

    A recurrent one when `network.core` is not `none`.
    """
    del config  # the architecture is the run's, not the algorithm's
    actor_critic = make_actor_critic(network, obs_spec, action_spec)
    return actor_critic, actor_critic


def learning_rewards(
    reward: jax.Array, scale: jax.Array | float, clip: jax.Array | float
) -> jax.Array:
    """Rewards as the loss sees them: scaled, then clipped to [-clip, clip].

    `clip` 0 leaves them unclipped. Atari agents clip to 1 (Mnih et al., 2015;
    Espeholt et al., 2018) in the learner, so episode returns stay the game's.
    """
    reward = reward * scale
    return jnp.where(clip > 0, jnp.clip(reward, -clip, clip), reward)


def gae_targets(traj: Transition, config: Any) -> tuple[jax.Array, jax.Array]:
    """GAE(λ) advantages and value targets [T, B] of an on-policy unroll.

    From the values stored with the transitions, on the `learning_rewards`;
    `config` has reward_scale, reward_clip, gamma and gae_lambda.
    """
    return episode_aware_gae(
        learning_rewards(traj.reward, config.reward_scale, config.reward_clip),
        traj.discount,
        traj.truncated,
        traj.value,
        traj.bootstrap_value,
        config.gamma,
        config.gae_lambda,
    )


def make_act_value(network: Network) -> tuple[ActFn, ValueFn]:
    """The `act` and `value` functions of an Agent built on an actor-critic network.

    Args:
      network: the actor-critic network; its distribution samples the actions.

    Returns:
      (act, value): `act(params, obs [*obs_shape], key []) -> (action
      [*action_shape], extras)` for one environment (`feed_forward` vmaps it
      over environments), with extras `log_prob` [] (the behaviour
      log-probability, stored for importance weighting) and `env_action`
      (what the environment receives); `value(params, obs [...,
      *obs_shape]) -> values [...]`, for any leading axes.

    """
    dist = network.distribution

    def act(
        params: Params, obs: jax.Array, key: PRNGKey
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        # Only the policy output is used: XLA drops the critic tower here.
        policy, _ = network.apply(params, obs)
        action = dist.sample(policy, key)
        extras = {
            "log_prob": dist.log_prob(policy, action),
            "env_action": dist.to_env(action),
        }
        return action, extras

    def value(params: Params, obs: jax.Array) -> jax.Array:
        return network.apply(params, obs)[1]

    return act, value


def recurrent_acting(network: RecurrentNetwork) -> Acting:
    """How an agent on a recurrent actor-critic acts: the actors carry its core.

    `step` steps the core of B environments, samples each one's action with
    its own key and returns `log_prob`, `env_action` and `value` (the same
    pass); `value` evaluates final observations from the state after a step.
    """
    dist = network.distribution

    def step(
        params: Params,
        state: PyTree,
        obs: jax.Array,
        reset: jax.Array,
        keys: PRNGKey,
        env_ids: jax.Array,
    ) -> tuple[PyTree, jax.Array, dict[str, jax.Array]]:
        del env_ids  # every environment acts alike
        state, (policy, value) = network.step(params, state, obs, reset)
        action = jax.vmap(dist.sample)(policy, keys)
        extras = {
            "log_prob": dist.log_prob(policy, action),
            "env_action": dist.to_env(action),
            "value": value,
        }
        return state, action, extras

    return Acting(
        network.initial_state, step, core_value(network), values_while_acting=True
    )


def core_value(
    network: RecurrentNetwork,
) -> Callable[[Params, PyTree, jax.Array], jax.Array]:
    """`Acting.value` of a recurrent network whose outputs are (head, value).

    (params, state, obs [B, ...]) -> value [B]: one step of the core from the
    state after the last, without a reset, so a final observation is valued
    in its episode's context. Actor-critics' and recurrent Q-learners' alike
    (a Q-network's value output is its max Q).
    """

    def value(params: Params, state: PyTree, obs: jax.Array) -> jax.Array:
        no_reset = jnp.zeros(obs.shape[:1], bool)
        return network.step(params, state, obs, no_reset)[1][1]

    return value


def actor_critic_acting(network: AnyNetwork) -> Acting:
    """An actor-critic agent's `Acting`, with or without a recurrent core."""
    if isinstance(network, RecurrentNetwork):
        return recurrent_acting(network)
    return feed_forward(*make_act_value(network))


def learner_outputs(
    network: AnyNetwork, params: Params, traj: Transition
) -> tuple[jax.Array, jax.Array]:
    """(policy output, value) [T, B] of an unroll's observations.

    A recurrent network re-unrolls each trajectory from the core state its
    actor started it with (`traj.core_state`), resetting where `traj.reset`.
    `traj` may be anything with those fields and `observation` (PPO's batch).
    """
    if isinstance(network, RecurrentNetwork):
        start, obs, reset = traj.core_state, traj.observation, traj.reset
        return network.unroll(params, start, obs, reset)[1]
    return network.apply(params, traj.observation)


def learner_outputs_and_bootstrap(
    network: AnyNetwork, params: Params, traj: Transition
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """`learner_outputs` and, without gradient, `learner_bootstrap`, [T, B] each.

    A recurrent network unrolls once for both (`RecurrentNetwork.unroll_final`):
    the states its bootstrap values step from are the learner's own.
    """
    if isinstance(network, RecurrentNetwork):
        start, obs, reset = traj.core_state, traj.observation, traj.reset
        (policy, v_tm1), (_, v_final) = network.unroll_final(
            params, start, obs, reset, traj.final_observation
        )
        return policy, v_tm1, jnp.where(traj.discount == 0.0, 0.0, v_final)
    policy, v_tm1 = network.apply(params, traj.observation)
    fixed = jax.lax.stop_gradient(params)
    return policy, v_tm1, learner_bootstrap(network, fixed, traj, v_tm1)


def learner_bootstrap(
    network: AnyNetwork,
    fixed: Params,
    traj: Transition,
    v_tm1: jax.Array,
) -> jax.Array:
    """V of each step's final observation, [T, B], 0 where the step terminated.

    Without gradient (`fixed`: stopped parameters). Feed-forward: where step t
    continued its episode that observation is observation[t + 1], already
    evaluated (`v_tm1`): only the last step's B rows and the truncated steps'
    final observations need a pass (XLA drops the policy tower); a pass over
    all T x B of them cost Breakout-MinAtar 4-9% of steps/s. Recurrent: the
    final observations stepped from the state after each step
    (`RecurrentNetwork.final_outputs`).
    """
    if isinstance(network, RecurrentNetwork):
        _, v_final = network.final_outputs(
            fixed, traj.core_state, traj.observation, traj.reset, traj.final_observation
        )
        return jnp.where(traj.discount == 0.0, 0.0, v_final)

    def critic(params: Params, obs: jax.Array) -> jax.Array:
        return network.apply(params, obs)[1]

    v_last = critic(fixed, jax.tree.map(lambda x: x[-1], traj.final_observation))
    # Defensive: `actor_critic_loss` stops the gradient of the targets and
    # advantages these make anyway (mut25 AC1: dropping it changes nothing).
    next_values = jnp.concatenate([jax.lax.stop_gradient(v_tm1[1:]), v_last[None]])
    return bootstrap_values(
        critic,
        fixed,
        next_values,
        traj.discount,
        traj.truncated,
        traj.final_observation,
    )


def action_example(network: AnyNetwork, obs_example: jax.Array) -> jax.ShapeDtypeStruct:
    """The shape and dtype of one action the network's policy samples, unbatched.

    What rollouts store: int32 [] for a categorical (Discrete) policy, float32
    [A] (the pre-squash sample) for a tanh-Gaussian (Box) one. Traced
    abstractly (`jax.eval_shape`): no parameters are made and nothing runs.
    """
    acting = actor_critic_acting(network)

    def sample(key: PRNGKey) -> jax.Array:
        params = network.init(key, obs_example)
        obs = jax.tree.map(lambda x: jnp.asarray(x)[None], obs_example)
        start, reset = acting.initial_state(1), jnp.ones(1, bool)
        keys, env_ids = key[None], jnp.zeros(1, jnp.int32)
        return acting.step(params, start, obs, reset, keys, env_ids)[1][0]

    return jax.eval_shape(sample, jax.random.key(0))


def replay_example(
    network: AnyNetwork, obs_example: jax.Array
) -> tuple[Transition, PyTree]:
    """(one step, one start state) of a sequence buffer that replays unrolls.

    Zeros and no info. The action has the shape and dtype the policy samples
    (`action_example`), for discrete and continuous actions alike. The start
    state is () for a feed-forward network, whose steps have no `reset` flags.
    """
    action = action_example(network, obs_example)
    obs = jnp.asarray(obs_example, jnp.float32)
    scalar = jnp.zeros((), jnp.float32)
    example = Transition(
        observation=obs,
        action=jnp.zeros(action.shape, action.dtype),
        reward=scalar,
        discount=scalar,
        truncated=jnp.zeros((), bool),
        log_prob=scalar,
        value=scalar,
        bootstrap_value=scalar,
        final_observation=obs,
        info={},
    )
    if not isinstance(network, RecurrentNetwork):
        return example, ()
    start = jax.tree.map(lambda x: x[0], network.initial_state(1))
    return example._replace(reset=jnp.zeros((), bool)), start
