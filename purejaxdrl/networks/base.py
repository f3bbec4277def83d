"""What every network shares: its config, the pure Network pair, dense layers."""

import dataclasses
import difflib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from purejaxdrl.config_docs import field_example
from purejaxdrl.config_types import ConfigError
from purejaxdrl.networks import matmul
from purejaxdrl.rl.distributions import Distribution
from purejaxdrl.types import Params, PRNGKey


def silu(x: jax.Array) -> jax.Array:
    """SiLU (swish), x σ(x), with σ(x) written as (1 + tanh(x / 2)) / 2.

    The same function as `nn.silu` to float32 rounding (below x = -15 or so,
    where x σ(x) is under 2e-6 in size, it is 0), and cheaper on CPU:
    XLA:CPU computes σ as a division by 1 + exp(-x), tanh as one vectorised
    rational polynomial (PPO's update on Playground's 4 x 32 swish networks
    took 5% less time).
    """
    return x * (0.5 + 0.5 * jnp.tanh(0.5 * x))


ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "tanh": jnp.tanh,
    "relu": nn.relu,
    "gelu": nn.gelu,
    "silu": silu,
}
TORSOS = ("mlp", "cnn", "nature", "impala_resnet")
"""The torsos `NetworkConfig.torso` may name."""
PIXEL_TORSOS = ("nature", "impala_resnet")
CORES = ("none", "lstm", "gru", "mingru")
"""The recurrent cores `NetworkConfig.core` may name (`none`: feed-forward)."""
NORMS = ("none", "layer_norm")
"""The normalisations `NetworkConfig.norm` may name (`layer_norm`: PQN's)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class NetworkConfig:
    """Architecture of an actor-critic network.

    Attributes:
      torso: `mlp` (flattened input); `cnn` (one 3x3 conv layer, for MinAtar);
        `nature` (the Nature DQN CNN, Mnih et al., 2015) or `impala_resnet` (the
        IMPALA ResNet, Espeholt et al., 2018), for Atari frames; or a name
        the user registered (`networks.register_torso`).
      hidden_sizes: widths of the dense layers of each tower, after the conv
        layers for the conv torsos (Atari: [512] for `nature`, [256] for
        `impala_resnet`, as in the papers).
      activation: one of tanh, relu, gelu, silu (the dense layers'; conv
        layers use relu).
      norm: `none`, or `layer_norm`: each dense layer of `hidden_sizes` is
        followed by a LayerNorm (Ba et al., 2016) before its activation, as
        PQN's Q-network has it (Gallici et al., 2025): what keeps its
        replay-free, target-free TD learning stable.
      shared_torso: policy and value heads share one torso (else two towers);
        feed-forward networks only: with a `core`, policy and value always
        share the torso and the core, and only their heads are apart.
      conv_features: output channels of the conv layer (`cnn` only).
      resnet_channels: channels of the IMPALA ResNet's stacks (`impala_resnet` only).
      core: `none` (feed-forward), or a recurrent core after the torso, `lstm`
        or `gru` (flax's cells) or `mingru` (Feng et al., 2024; a linear
        recurrence, a parallel scan off CPU, `mingru.py`): the policy then has
        memory (`recurrent.py`).
      core_size: the recurrent core's hidden size.
      head_sizes: dense layers of each head (policy, value) after the core;
        () for linear heads (recurrent networks only).
      policy_obs_key: for environments whose observations are a dict (MuJoCo
        Playground's locomotion and manipulation tasks), the entry the policy
        reads (`state`); None for array observations (brax's
        `policy_obs_key`).
      value_obs_key: the entry the critics read (`privileged_state`: an
        asymmetric actor-critic, whose critic sees what the policy cannot);
        None: the policy's entry (brax's `value_obs_key`).

    """

    torso: str = "mlp"
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    norm: str = "none"
    shared_torso: bool = False
    conv_features: int = 16
    resnet_channels: tuple[int, ...] = (16, 32, 32)
    core: str = "none"
    core_size: int = 128
    head_sizes: tuple[int, ...] = ()
    policy_obs_key: str | None = None
    value_obs_key: str | None = None

    @property
    def recurrent(self) -> bool:
        """Whether the network has a recurrent core."""
        return self.core != "none"


def network_faults(net: NetworkConfig) -> Iterator[tuple[str, str]]:
    """Each way `net` is not a network, as a (rule, fix) pair.

    The rule names the field and its value; the fix spells a good value
    both ways, or says what to do.

    Two readers: `check_network` joins them for a config; loading a
    policy.json keeps only the rule, since what is wrong there is the file's
    value and no flag mends it.
    """
    if not (len(net.hidden_sizes) >= 1 and all(w >= 1 for w in net.hidden_sizes)):
        yield (
            f"network.hidden_sizes={list(net.hidden_sizes)} must be one or more "
            "positive widths",
            "pass e.g. " + field_example("network.hidden_sizes", "64 64", (64, 64)),
        )
    # Checked whatever the torso, as the other sizes are: a config that names
    # one of them is wrong before it is used (a 0 reached JAX's initialisers
    # as a division by zero).
    if net.conv_features < 1:
        yield (
            f"network.conv_features={net.conv_features} must be >= 1",
            "pass e.g. " + field_example("network.conv_features", 16),
        )
    if not (len(net.resnet_channels) >= 1 and all(w >= 1 for w in net.resnet_channels)):
        yield (
            f"network.resnet_channels={list(net.resnet_channels)} must be one or "
            "more positive widths",
            "pass e.g. "
            + field_example("network.resnet_channels", "16 32 32", (16, 32, 32)),
        )
    for field in ("policy_obs_key", "value_obs_key"):
        # "" would pass for "no key" where a test is truthiness and index a
        # dict where it is `is None`: refused, not given a meaning.
        if getattr(net, field) == "":
            yield (
                f"network.{field}='' names no entry",
                f"pass a dict observation's entry, e.g. "
                f"{field_example(f'network.{field}', 'state', repr('state'))}, "
                "or leave it unset (none) for array observations",
            )
    if net.core not in CORES:
        # --network.core LSTM, grue: the core meant, as --algo's refusal does.
        lower = str(net.core).lower()
        close = [lower] if lower in CORES else []
        close = close or difflib.get_close_matches(lower, CORES, n=1)
        advice = f"did you mean {close[0]!r}? Pass" if close else "pick one, e.g."
        core = (close or [CORES[-1]])[0]
        yield (
            f"network.core={net.core!r} is not one of {CORES}",
            f"{advice} {field_example('network.core', core, repr(core))}",
        )
    if net.core_size < 1:
        yield (
            f"network.core_size={net.core_size} must be >= 1",
            "pass e.g. " + field_example("network.core_size", 128),
        )
    yield from _head_faults(net)


def _head_faults(net: NetworkConfig) -> Iterator[tuple[str, str]]:
    """`network_faults` for `head_sizes`: one rule each, widths then the core."""
    heads = list(net.head_sizes)
    if not all(w >= 1 for w in heads):
        yield (
            f"network.head_sizes={heads} must be positive widths",
            "pass e.g. " + field_example("network.head_sizes", 64, (64,)),
        )
    elif heads and not net.recurrent:
        layers = [*net.hidden_sizes, *heads]
        yield (
            f"network.head_sizes={heads} needs a recurrent core "
            f"(network.core={net.core!r}): head layers follow the core",
            f"add one, e.g. {field_example('network.core', 'gru', repr('gru'))}, "
            "or put the layers in the torso instead, e.g. "
            + field_example(
                "network.hidden_sizes",
                " ".join(map(str, layers)),
                tuple(layers),
            )
            + " and --network.head-sizes with no width "
            "(network.head_sizes=() in Python)",
        )


def check_network(net: NetworkConfig) -> None:
    """Refuses sizes, cores and keys no network is built with, in one line each.

    `torsos.check_torso` runs it too, so networks built without a training
    config (`make_actor_critic`) are checked alike.

    Raises:
      ConfigError: the first of `network_faults`, naming the field, its value
        and what it takes.

    """
    for rule, fix in network_faults(net):
        raise ConfigError(f"{rule}; {fix}.")


class Network(NamedTuple):
    """A pure network: `apply(params, obs)` -> (policy head output, value).

    `obs` has shape `[*batch, *obs_shape]`; outputs have `[*batch, ...]`.
    Its repr says what it is where the builder said so on `init`
    (`labelled`), e.g. `Network(mlp 64x64 -> categorical[2] + value)`, and
    names its fields for one built by hand.
    """

    init: Callable[[PRNGKey, jax.Array], Params]
    apply: Callable[[Params, jax.Array], tuple[jax.Array, jax.Array]]
    distribution: Distribution

    def __repr__(self) -> str:
        # The fields' own reprs print the whole flax module (~900 characters).
        return f"Network({label_of(self.init) or 'init, apply, distribution'})"


def network_label(config: NetworkConfig, head: str) -> str:
    """What a network of `config` is, for its repr: `mlp 64x64 -> categorical[2]`.

    `head` is the output head, e.g. `categorical[2]`, `q[4]`; a recurrent
    core follows the torso's layers (`mlp 64 + lstm 128 -> ...`).
    """
    hidden = "x".join(map(str, config.hidden_sizes)) or "no hidden layers"
    core = f" + {config.core} {config.core_size}" if config.recurrent else ""
    return f"{config.torso} {hidden}{core} -> {head}"


_LABEL = "network_label"


def labelled(init: Callable, label: str) -> Callable:
    """`init`, marked as the init function of a network that `label` describes.

    The label lives on the function, not in a field of the record: a field
    would change `Network`'s arity (`init, apply, distribution = net`) and add
    a string leaf to its pytree. A network rebuilt from `init` (R2D2's
    `stateless`, a masked one's `_replace`) keeps it. Returns `init`, which
    must be a function the builder made for this network alone.
    """
    setattr(init, _LABEL, label)
    return init


def label_of(init: Callable) -> str:
    """The label `labelled` put on `init`; "" where none (a hand-built network)."""
    label = getattr(init, _LABEL, "")
    return label if isinstance(label, str) else ""


def dense(features: int, scale: float) -> nn.Dense:
    """A dense layer with orthogonal(scale) weights and zero biases.

    Its weight gradient runs as a packed dot on CPU (`matmul`, a
    `jax.custom_vjp`), so it is differentiable in reverse mode only: `jax.jvp`
    and `jax.jacfwd` raise; use reverse over reverse for Hessian-vector products.
    """
    return nn.Dense(
        features,
        kernel_init=orthogonal(scale),
        bias_init=nn.initializers.zeros,
        dot_general=matmul.dot_general,
    )


def orthogonal(scale: float = 1.0) -> nn.initializers.Initializer:
    """Flax's orthogonal initialiser, drawing one matrix at a time under `vmap`.

    Trap (JAX 0.10.2, CPU): the QR decomposition inside is a LAPACK custom
    call. Batched, as when a sweep's init vmaps agents over runs, jaxlib's
    kernel splits the batch into tasks on XLA's intra-op thread pool and blocks
    its own pool thread until they finish. When as many of these kernels run at
    once as the pool has threads (two on a 2-core machine), every thread waits
    for a task that no thread is free to run: the program hangs at 0% CPU in
    `block_until_ready` (Craftax sweeps of 2 seeds; no XLA flag avoided it).
    Under `vmap` this initialiser runs a `lax.map`, one unbatched QR per step,
    which stays on its thread; the values are the same, bit for bit.
    """
    base = nn.initializers.orthogonal(scale)

    def init(key: PRNGKey, shape: Any, dtype: Any = jnp.float32) -> jax.Array:
        @jax.custom_batching.custom_vmap
        def one(key: PRNGKey) -> jax.Array:
            return base(key, shape, dtype)

        @one.def_vmap
        def batched(
            _: int, in_batched: list[bool], key: PRNGKey
        ) -> tuple[jax.Array, bool]:
            if not in_batched[0]:
                return one(key), False
            return jax.lax.map(one, key), True

        return one(key)

    return init
