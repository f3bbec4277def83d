"""Field groups that algorithms share, each field declared and documented once.

An algorithm's config inherits the groups it uses, so its fields stay flat: the
flags (`--ppo.learning-rate`) and preset keys (`ppo: {learning_rate: ...}`) are
the field names. A group's defaults are the ones most of its algorithms use; a
config whose algorithm differs redeclares just that field with its own default
(same type, same static or dynamic kind) and keeps the group's description.

Static fields change shapes or program structure, so changing them recompiles;
the others are array leaves that can be traced, vmapped and swept. A group is
not a pytree itself: each algorithm's config registers its own fields. A config
lists its groups most specific first: dataclasses put the fields of the last
base first, so `--help` and config.yaml read from the general (learning rate,
discount) to the algorithm's own.
"""

import dataclasses

import jax


@dataclasses.dataclass(frozen=True, kw_only=True)
class LearnerFields:
    """What every learner has.

    Attributes:
      learning_rate: the optimiser's step size.
      gamma: discount γ of the returns the agent learns (the environment's own
        discount is 0 only at a termination).

    """

    learning_rate: float | jax.Array = 2.5e-4
    gamma: float | jax.Array = 0.99


@dataclasses.dataclass(frozen=True, kw_only=True)
class OptimizerFields(LearnerFields):
    """A learner with gradient clipping and an optional learning-rate decay.

    Attributes:
      anneal_lr: decay the learning rate linearly to 0 over training (A3C's
        and IMPALA's schedule; a replay learner's over the updates from the
        one that fills min_replay): `learning_rate` is then the initial one.
      max_grad_norm: gradients are rescaled to at most this global norm before
        each optimiser step; inf: not clipped.

    """

    # Static.
    anneal_lr: bool = jax.tree.static(default=True)
    # Dynamic.
    max_grad_norm: float | jax.Array = 0.5


@dataclasses.dataclass(frozen=True, kw_only=True)
class RewardFields:
    """How rewards are scaled before they reach the loss.

    Attributes:
      reward_scale: rewards are multiplied by this before learning (returns
        logged are the environment's own).

    """

    reward_scale: float | jax.Array = 1.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class ActorCriticFields(RewardFields, OptimizerFields):
    """What the on-policy actor-critic learners (PPO, A2C, IMPALA) share.

    Attributes:
      reward_clip: rewards (after scaling) are clipped to [-c, c] before
        learning; 0: not clipped (Atari: 1, as DQN and IMPALA do).
      entropy_cost: weight of the entropy bonus in the loss.
      value_cost: weight of the value (baseline) loss 0.5 (G - V(s))²,
        CleanRL's convention (and OpenAI baselines' ppo2's). Baselines' A2C
        weighs (G - V(s))² itself, without the 0.5: its vf_coef c is
        value_cost 2c here (its default 0.5 is value_cost 1.0).
      eps: ε of the optimiser's denominator (Adam's, or RMSProp's where the
        algorithm can choose it); PureJaxRL and CleanRL use 1e-5 with Adam,
        optax's default is 1e-8.

    """

    # Dynamic.
    reward_clip: float | jax.Array = 0.0
    entropy_cost: float | jax.Array = 0.01
    value_cost: float | jax.Array = 0.5
    eps: float | jax.Array = 1e-5


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdvantageFields:
    """Generalised advantage estimation (Schulman et al., 2016, arXiv:1506.02438).

    Attributes:
      normalize_advantages: standardise the advantages (PPO: each minibatch's,
        A2C: the whole batch's) over all devices.
      gae_lambda: λ of GAE(λ); 1 gives A3C's n-step returns, bootstrapped at
        the end of the unroll.

    """

    # Static.
    normalize_advantages: bool = jax.tree.static(default=True)
    # Dynamic.
    gae_lambda: float | jax.Array = 0.95


@dataclasses.dataclass(frozen=True, kw_only=True)
class OptimizerChoiceFields:
    """The optimiser, for learners that can choose it.

    Attributes:
      optimizer: rmsprop (A3C's and IMPALA's: no momentum, ε inside the square
        root), adam, radam (Rectified Adam) or sgd.
      rms_decay: RMSProp's decay of its squared-gradient average, in [0, 1).

    """

    # Static.
    optimizer: str = jax.tree.static(default="rmsprop")
    # Dynamic.
    rms_decay: float | jax.Array = 0.99


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplayFields:
    """A replay buffer's sizes and how often the learner draws from it.

    Sizes are global, over all devices (each device keeps its share), and count
    what the algorithm stores: transitions, or R2D2's sequences.

    Attributes:
      buffer_size: transitions (R2D2: sequences) the replay holds.
      batch_size: transitions (R2D2: sequences) per gradient step.
      min_replay: transitions (R2D2: sequences) stored before learning starts.
      updates_per_step: gradient steps per runner update (the replay ratio's
        knob).

    """

    # Static.
    buffer_size: int = jax.tree.static(default=100_000)
    batch_size: int = jax.tree.static(default=256)
    min_replay: int = jax.tree.static(default=1_000)
    updates_per_step: int = jax.tree.static(default=1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class EpsilonFields:
    """ε-greedy exploration: one annealed ε, or Ape-X's fixed ε per actor.

    Attributes:
      per_actor_epsilon: environment i of N explores with its own fixed
        ε_i = epsilon^(1 + epsilon_alpha i / (N - 1)) (Ape-X, Horgan et al.,
        2018); else every environment uses one ε annealed from epsilon_start
        to epsilon_end.
      epsilon_start: the annealed ε at the start of training.
      epsilon_end: the annealed ε from `epsilon_fraction` of training on.
      epsilon_fraction: the fraction of training, in [0, 1], over which the
        annealed ε falls linearly from epsilon_start to epsilon_end.
      epsilon: Ape-X's base ε of the per-actor rates (0.4 in the paper).
      epsilon_alpha: Ape-X's α, how far the per-actor rates spread (7 in the
        paper).

    """

    # Static.
    per_actor_epsilon: bool = jax.tree.static(default=False)
    # Dynamic.
    epsilon_start: float | jax.Array = 1.0
    epsilon_end: float | jax.Array = 0.05
    epsilon_fraction: float | jax.Array = 0.5
    epsilon: float | jax.Array = 0.4
    epsilon_alpha: float | jax.Array = 7.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class QLearningFields(EpsilonFields, ReplayFields, OptimizerFields):
    """What the double Q-learners from replay (DQN, Ape-X, R2D2) share.

    Attributes:
      n_step: n of the n-step double Q-learning targets, which stop at the
        unroll's end (R2D2's: its sequence's), so DQN's and Ape-X's must be
        at most unroll_length.
      dueling: a dueling Q head (Q = V + A - mean A; Wang et al., 2016).
      target_every: gradient steps between target-network updates; one at
        least the run's gradient steps warns (the target would stay the
        initial network).
      priority_alpha: prioritisation exponent α of the prioritised replay
        (P(i) ∝ p_i^α).
      target_tau: in (0, 1]: each target update moves the target network
        this fraction of the way to the online one (1: a copy, DQN's; 0.005
        with target_every 1: Polyak averaging).

    """

    # Static.
    anneal_lr: bool = jax.tree.static(default=False)
    n_step: int = jax.tree.static(default=3)
    dueling: bool = jax.tree.static(default=True)
    target_every: int = jax.tree.static(default=250)
    priority_alpha: float = jax.tree.static(default=0.6)
    # Dynamic.
    max_grad_norm: float | jax.Array = 10.0
    target_tau: float | jax.Array = 1.0
