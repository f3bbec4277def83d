"""Torsos: observations to features, before the heads.

`mlp` flattens the observation; `cnn` adds one 3x3 conv layer (MinAtar);
`nature` and `impala_resnet` put an Atari conv stack (`pixels.py`) first; a
user's own is registered by name (`register_torso`). Every torso
ends in the dense layers of `hidden_sizes`, each with a LayerNorm before its
activation when `norm` is `layer_norm`. On dict observations a torso reads
one entry (`pick`): the policy's `policy_obs_key`, the critic's `value_obs_key`.
"""

import dataclasses
import difflib
import inspect
from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import field_example
from purejaxdrl.env.base import Box
from purejaxdrl.networks.base import (
    ACTIVATIONS,
    CORES,
    NORMS,
    PIXEL_TORSOS,
    TORSOS,
    NetworkConfig,
    check_network,
    dense,
)
from purejaxdrl.networks.conv import _Conv
from purejaxdrl.networks.pixels import (
    ImpalaResNet,
    NatureCNN,
    channels_first,
    frames,
    min_size,
)
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.types import PyTree

# The torsos of the user's own, by name (`register_torso`).
_USER_TORSOS: dict[str, Callable[[NetworkConfig], nn.Module]] = {}


def register_torso(name: str, make: Callable[[NetworkConfig], nn.Module]) -> None:
    """Makes `network.torso=name` build the user's own torso, `make(config)`.

    The module maps observations with one batch axis, float32 [N, *obs_shape],
    to features [N, ...]; they are flattened, then go through the dense layers
    of `hidden_sizes` and the heads, as a built-in torso's do. Registering a
    name again replaces it. A run names the module that registers it in
    `env.imports` for the command line, `eval`, `export` and resumes.

    Not pure: it changes this process's registry.

    Raises:
      ConfigError: a name that is a built-in torso's or not an identifier
        (as `agents.register` and `env.register` refuse theirs; a
        ConfigError is a ValueError); a `make` that cannot be called as
        make(config): a module class whose first field is not the config, a
        module instance, or a function of other arguments.

    """
    if not isinstance(name, str) or name in TORSOS or not name.isidentifier():
        raise ConfigError(
            f"torso name {name!r} must be an identifier that is no built-in "
            f"torso's {TORSOS}; e.g. 'my_torso'."
        )
    _check_make(name, make)
    _USER_TORSOS[name] = make


def _check_make(name: str, make: Any) -> None:
    """That `make` is called as make(config) -> nn.Module, as `Torso` calls it."""
    said = f"register_torso({name!r}, {getattr(make, '__name__', type(make).__name__)})"
    rule = "make is called as make(config), the run's NetworkConfig, for a module"
    if isinstance(make, type) and issubclass(make, nn.Module):
        # A class is called with the config as its first field: right for a
        # module whose first field is the config, wrong for any other.
        if _takes_config_first(make):
            return
        raise ConfigError(
            f"{said}: {rule}, but {make.__name__} is the module class; pass "
            f"lambda config: {make.__name__}(...)."
        )
    if isinstance(make, nn.Module):  # callable, but on observations
        raise ConfigError(
            f"{said}: {rule}, but it is a {type(make).__name__} module; pass "
            f"lambda config: {type(make).__name__}(...)."
        )
    if not callable(make):
        raise ConfigError(
            f"{said}: {rule}, but it is a {type(make).__name__}; pass a "
            "function, e.g. lambda config: MyTorso(...)."
        )
    try:
        inspect.signature(make).bind(None)
    except TypeError:
        raise ConfigError(
            f"{said}: {rule}, but it takes {inspect.signature(make)}; pass "
            "lambda config: MyTorso(...)."
        ) from None
    except ValueError:
        return  # no signature Python can read (a builtin): the call will tell


def _takes_config_first(module: type) -> bool:
    """Whether `module`'s first init field is the config (named or typed so)."""
    fields = [f for f in dataclasses.fields(module) if f.init and f.name != "parent"]
    if not fields:
        return False
    first = fields[0]
    typed = first.type in (NetworkConfig, "NetworkConfig")
    return first.name == "config" or typed


def torso_names() -> tuple[str, ...]:
    """The torsos `network.torso` may name: the built-in ones, then the user's."""
    return (*TORSOS, *_USER_TORSOS)


class Torso(nn.Module):
    """The network config's torso and dense layers: the body every head stands on.

    `network.torso` (a built-in or a registered one) over the observation's
    last `obs_ndim` axes, then `network.hidden_sizes` dense layers with
    `network.activation` (and LayerNorm where `network.norm` asks). Heads of
    one's own (a quantile head, a twin critic) put their output layer on it:
    `x = Torso(config, obs_ndim, name="torso")(obs)`; naming it keeps the
    parameter tree the same whatever module holds it.

    Attributes:
      config: the run's `NetworkConfig`.
      obs_ndim: how many trailing axes of an observation are one
        observation (1 for vectors, 3 for frames); leading ones are batch.
      dense_layers: False: the torso's own layers alone, flattened (SAC's
        critics add the action before their dense layers).

    """

    config: NetworkConfig
    obs_ndim: int
    dense_layers: bool = True

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.config.activation]
        batch_shape = obs.shape[: obs.ndim - self.obs_ndim]
        x = obs
        torso = self.config.torso
        if torso != "mlp":
            x = x.reshape((-1, *obs.shape[-self.obs_ndim :]))
        if torso == "cnn":
            x = nn.relu(_Conv(self.config.conv_features)(x))
        elif torso == "nature":
            x = NatureCNN()(frames(x))
        elif torso == "impala_resnet":
            x = ImpalaResNet(self.config.resnet_channels)(frames(x))
        elif torso != "mlp":
            x = _USER_TORSOS[torso](self.config)(x)
        x = x.reshape((*batch_shape, -1))
        for width in self.config.hidden_sizes if self.dense_layers else ():
            x = dense(width, np.sqrt(2.0))(x)
            if self.config.norm == "layer_norm":
                # Only when asked: a LayerNorm's parameters would change every
                # other network's parameter tree.
                x = nn.LayerNorm()(x)
            x = act(x)
        return x


def pick(obs: PyTree, key: str | None) -> jax.Array:
    """The entry `key` of a dict observation; an array observation for None."""
    return obs if key is None else obs[key]


def value_key(config: NetworkConfig) -> str | None:
    """The observation entry the critics read: `value_obs_key`, else the policy's."""
    if config.value_obs_key is None:
        return config.policy_obs_key
    return config.value_obs_key


def check_no_entry_keys(config: NetworkConfig, observations: str) -> None:
    """Refuses entry keys (`policy_obs_key`, `value_obs_key`) on array observations.

    `observations` says what they are ("the environment's are an array of
    shape (4,)"); a host run says its Dict space was flattened.

    Raises:
      ConfigError: naming the keys set, what the observations are, and the fix.

    """
    names = [n for n in ("policy_obs_key", "value_obs_key") if getattr(config, n)]
    if not names:
        return
    flags = " and ".join(f"--network.{n.replace('_', '-')}" for n in names)
    python = ", ".join(f"network.{n}=None" for n in names)
    raise ConfigError(
        f"network.policy_obs_key={config.policy_obs_key!r} and "
        f"value_obs_key={config.value_obs_key!r} pick entries of dict "
        f"observations, but {observations}; drop {flags} ({python} in Python)."
    )


def obs_specs(config: NetworkConfig, obs_spec: Box | dict) -> tuple[Box, Box]:
    """(the policy's, the critic's) observation spaces, for array or dict ones.

    Raises:
      ConfigError: (one line) an entry key on array observations, none or one
        the dict lacks on dict observations, or a shared torso over two.

    """
    keys = {"policy_obs_key": config.policy_obs_key, "value_obs_key": value_key(config)}
    if not isinstance(obs_spec, dict):
        check_no_entry_keys(
            config, f"the environment's are an array of shape {obs_spec.shape}"
        )
        return obs_spec, obs_spec
    names = ", ".join(sorted(obs_spec))
    if config.policy_obs_key is None:
        first = "state" if "state" in obs_spec else sorted(obs_spec)[0]
        second = "privileged_state" if "privileged_state" in obs_spec else first
        raise ConfigError(
            f"network.policy_obs_key=None, but the environment observes a dict "
            f"({names}); pick the policy's entry and the critic's, e.g. "
            f"--network.policy-obs-key {first} --network.value-obs-key {second} "
            f"(network={{'policy_obs_key': {first!r}, 'value_obs_key': {second!r}}} "
            "in Python)."
        )
    for field, key in keys.items():
        if key not in obs_spec:
            raise ConfigError(
                f"network.{field}={key!r} is not an entry of the environment's "
                f"observations ({names}); pick one of them."
            )
    if config.shared_torso and len(set(keys.values())) > 1:
        raise ConfigError(
            f"network.shared_torso=True needs one observation for both towers, "
            f"got {keys}; pass --network.shared-torso false."
        )
    return obs_spec[keys["policy_obs_key"]], obs_spec[keys["value_obs_key"]]


def choices(path: str) -> tuple[str, ...]:
    """The names a categorical network field (`network.activation`) may take.

    () for any other field path.
    """
    return {
        "network.torso": torso_names(),
        "network.activation": tuple(ACTIVATIONS),
        "network.norm": NORMS,
        "network.core": CORES,
    }.get(path, ())


def check_names(config: NetworkConfig) -> None:
    """Raises ConfigError (one line) for what no environment is needed to refuse.

    `base.check_network`'s sizes, cores and keys, then an unknown torso,
    activation or norm; each name's refusal offers one of the names it takes,
    both ways (a sweep's grid puts its own spelling there).
    """
    check_network(config)
    for field, value in (
        ("torso", config.torso),
        ("activation", config.activation),
        ("norm", config.norm),
    ):
        taken = choices(f"network.{field}")
        if value not in taken:
            own = (
                ", or register your own (networks.register_torso) in a module "
                "of env.imports"
                if field == "torso"
                else ""
            )
            raise ConfigError(
                f"network.{field}={value!r} is not one of {taken}; pick one of "
                f"them, e.g. {name_example(f'network.{field}', taken, value)}{own}."
            )


def name_example(path: str, taken: tuple[str, ...], value: Any = None) -> str:
    """`--network.norm layer_norm (network.norm='layer_norm' in Python)`.

    The name of `taken` closest to the refused `value` (`relu` for `Relu`:
    case first, then spelling); else the last (not a default that is the
    first, `none`).
    """
    folded = {name.casefold(): name for name in taken}
    close = difflib.get_close_matches(str(value).casefold(), list(folded), n=1)
    name = folded[close[0]] if close else taken[-1]
    return field_example(path, name, repr(name))


def check_torso(config: NetworkConfig, obs_spec: Box | dict) -> tuple[Box, Box]:
    """Raises ConfigError (one line: value, rule, fix) for a torso that cannot be.

    Bad sizes, cores or keys (`base.check_network`), an unknown torso,
    activation or norm, a conv torso on observations that are not images,
    frames too small for the Nature CNN, or the `obs_specs` errors.

    Returns:
      `obs_specs`: the policy's and the critic's observation spaces.

    """
    check_names(config)
    specs = obs_specs(config, obs_spec)
    for obs_spec in dict.fromkeys(specs):
        _check_shape(config, obs_spec)
    return specs


def _check_shape(config: NetworkConfig, obs_spec: Box) -> None:
    if config.torso == "cnn" and len(obs_spec.shape) != 3:
        raise ConfigError(
            f"network.torso='cnn' needs image observations [H, W, C], got shape "
            f"{obs_spec.shape}; use --network.torso mlp."
        )
    if config.torso in PIXEL_TORSOS and len(obs_spec.shape) != 3:
        raise ConfigError(
            f"network.torso={config.torso!r} needs image observations [H, W, C] "
            f"(or [C, H, W]), got shape {obs_spec.shape}; use --network.torso mlp."
        )
    if config.torso == "cnn" and obs_spec.shape[0] < min(obs_spec.shape[1:]):
        # `cnn` convolves over the first two axes as they come: on EnvPool's
        # [C, H, W] stacks it would read the frames as rows and a column as a
        # channel, silently.
        raise ConfigError(
            f"network.torso='cnn' reads observations as [H, W, C], but shape "
            f"{obs_spec.shape} looks channels-first [C, H, W] (its first axis is "
            "the smallest, as in EnvPool's frames); "
            "use --network.torso nature or impala_resnet, which transpose raw "
            "0..255 frames and scale them, or give the environment [H, W, C] "
            "observations."
        )
    if config.torso in PIXEL_TORSOS:
        shape = sorted(obs_spec.shape)[1:]  # H and W, whichever end C is at
        if min(shape) < min_size(config.torso):
            # Small [H, W, C] frames (MinAtar's 0/1 planes) are not raw 0..255
            # pixels, which impala_resnet scales too: `cnn` fits them. `cnn`
            # refuses channels-first frames, which impala_resnet transposes.
            fits = (
                "impala_resnet (it scales by 1/255: for raw 0..255 frames)"
                if obs_spec.shape[0] < min(obs_spec.shape[1:])
                else "cnn"
            )
            raise ConfigError(
                f"network.torso={config.torso!r} needs frames of at least "
                f"{min_size(config.torso)}x{min_size(config.torso)}, got "
                f"{obs_spec.shape}; use --network.torso {fits}."
            )
        first = channels_first(obs_spec.shape, config.torso)  # or refuses
        if not first and shape[0] < min_size("nature"):
            # Only impala_resnet gets here (`nature` refused them above).
            warn_once(
                f"network.torso={config.torso!r} on [H, W, C] frames of shape "
                f"{obs_spec.shape}, smaller than Atari's: if they are in [0, 1] "
                "(MinAtar's 0/1 planes) it scales them again, to [0, 1/255]; "
                "use --network.torso cnn there.",
                key=("small frames", config.torso),
            )
