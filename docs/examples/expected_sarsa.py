"""Expected SARSA on DQN's learner: the replay variant of "Adding an algorithm".

van Seijen et al. (2009), "A theoretical and empirical analysis of Expected
Sarsa". The TD target is the expected value of the next observation under an
ε-greedy policy of the online network, valued by the target network:
G + γ_boot Σ_a π(a|s') Q_target(s', a). At `target_epsilon` 0 that is DQN's
double Q-learning target. The rest is DQN's: replay, n-step returns through
time limits, the target network, exploration and the presets' dqn sections.

Importing it registers `--algo expected_sarsa`;
`tests/agents/test_example_replay.py` trains it and checks its loss in NumPy.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import optax

from purejaxdrl.agents import DQNConfig, algorithm, dqn, register
from purejaxdrl.config import check_ranges


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class ExpectedSarsaConfig(DQNConfig):
    """DQN's hyper-parameters, and the ε of the policy the targets follow.

    Attributes:
      target_epsilon: ε of the ε-greedy policy (of the online network) whose
        expected next value the targets take; 0: DQN's double Q-learning.

    """

    target_epsilon: float | jax.Array = 0.05


def loss(params, target_params, item, weights, *, apply, config):
    """Weighted Huber loss of δ = G + γ_boot Σ_a π(a|s') Q_target(s', a) - Q(s, a)."""
    q = apply(params, item.observation)  # [B, A]
    q_taken = jnp.take_along_axis(q, item.action[:, None], axis=-1)[:, 0]
    next_online = apply(params, item.next_observation)
    legal = jnp.isfinite(next_online)  # an action mask puts -inf on the others
    greedy = jax.nn.one_hot(jnp.argmax(next_online, -1), next_online.shape[-1])
    spread = legal / legal.sum(axis=-1, keepdims=True)
    pi = (1.0 - config.target_epsilon) * greedy + config.target_epsilon * spread
    q_next = jnp.where(legal, apply(target_params, item.next_observation), 0.0)
    # `where`, not γ_boot = 0 times it: after a termination the next
    # observation may be anything, and 0 * inf is NaN.
    bootstrap = jnp.where(item.discount == 0, 0.0, jnp.sum(pi * q_next, axis=-1))
    td = item.reward + item.discount * jax.lax.stop_gradient(bootstrap) - q_taken
    return jnp.mean(weights * optax.huber_loss(td, delta=1.0)), td


def validate(config, shape=None):
    """DQN's rules, named expected_sarsa, and target_epsilon in [0, 1]."""
    dqn.validate(config, shape, name="expected_sarsa")
    check_ranges("expected_sarsa", config, unit=("target_epsilon",))


ALGORITHM = dataclasses.replace(
    algorithm("dqn"),
    name="expected_sarsa",
    summary="Expected SARSA: DQN's learner, targets under an ε-greedy policy",
    config_type=ExpectedSarsaConfig,  # its default config follows the new type
    make_agent=functools.partial(dqn.make_dqn, name="expected_sarsa", loss_fn=loss),
    validate=validate,
    preset_section="dqn",  # a preset's dqn settings, where it has none of its own
)
register(ALGORITHM)
