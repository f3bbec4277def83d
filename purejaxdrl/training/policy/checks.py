"""Checks of an exported policy folder against itself, made by `load_policy`.

A policy folder is two files written together (`policy.json`, then
`params.msgpack`); one copied by hand from another folder, or an interrupted
export of an older version, would otherwise act with the wrong preprocessing
or fail deep in flax at the first action. Each check raises a one-line
`ConfigError` that names the folder and the fix: export the run again.
"""

import os
import pathlib
import re
import typing
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config_types import ConfigError
from purejaxdrl.env.base import Box
from purejaxdrl.networks import TORSOS, NetworkConfig, torso_names
from purejaxdrl.networks.base import network_faults

# The fields `load_policy` reads without a default.
REQUIRED = ("algo", "env_id", "observation_shape", "action", "network")


# A SAC critic's own torso scope (`networks.heads._TwinQ`): q0_obs, q1_obs.
_CRITIC_TORSO = re.compile(r"\['q\d+_obs'\]")


def _again(path: pathlib.Path) -> str:
    return f"re-export the run: `purejaxdrl export RUN_DIR --out {path} --overwrite`"


def check_spec(path: pathlib.Path, spec: Any, spec_file: str, version: int) -> None:
    """Refuses a policy.json without the fields `load_policy` needs, or newer."""
    where = str(path / spec_file)
    if not isinstance(spec, dict):
        raise ConfigError(f"{where!r} holds no JSON object; {_again(path)}.")
    missing = [key for key in REQUIRED if key not in spec]
    if missing:
        raise ConfigError(
            f"{where!r} has no {', '.join(map(repr, missing))} field; {_again(path)}."
        )
    written = spec.get("version", 1)
    if not isinstance(written, int) or isinstance(written, bool):
        raise ConfigError(
            f"{where!r} has version {written!r}, not a whole number; {_again(path)}."
        )
    if written > version:
        raise ConfigError(
            f"{where!r} is policy format version {written}; this purejaxdrl "
            f"reads versions up to {version}: load it with the purejaxdrl "
            "version that wrote it, or upgrade purejaxdrl."
        )
    if not isinstance(spec["network"], dict) or "hidden_sizes" not in spec["network"]:
        raise ConfigError(
            f"{where!r}'s 'network' field has no 'hidden_sizes'; {_again(path)}."
        )


def _shapes(tree: Any) -> dict[str, tuple[int, ...]]:
    """{path: shape} of a tree's leaves, with every container as a dict."""
    import flax.serialization

    flat = jax.tree_util.tree_flatten_with_path(flax.serialization.to_state_dict(tree))
    return {jax.tree_util.keystr(p): tuple(np.shape(leaf)) for p, leaf in flat[0]}


def check_params(
    path: pathlib.Path,
    spec: dict[str, Any],
    blob: Any,
    network: Any,
    obs_spec: Box | dict,
) -> None:
    """Refuses params.msgpack unless it fits the network policy.json describes.

    Compares the parameters' tree and shapes with the network's own
    (`jax.eval_shape` of its init: nothing is computed), and the observation
    statistics with `normalize_observations`.
    """
    if not isinstance(blob, dict) or "params" not in blob:
        raise ConfigError(
            f"{str(path)!r}'s params.msgpack holds no parameters; {_again(path)}."
        )
    example = jax.tree.map(
        lambda box: jax.ShapeDtypeStruct(tuple(box.shape), jnp.float32),
        obs_spec,
        is_leaf=lambda x: isinstance(x, Box),
    )
    expected = _shapes(jax.eval_shape(network.init, jax.random.key(0), example))
    saved = _shapes(blob["params"])
    if saved != expected:
        wrong = sorted(set(saved) ^ set(expected)) or [
            k for k in sorted(expected) if saved[k] != expected[k]
        ]
        first = wrong[0]
        detail = (
            f"{first} has shape {saved[first]}, the network's {expected[first]}"
            if first in saved and first in expected
            else f"{first} is " + ("missing" if first in expected else "extra")
        )
        torso = spec["network"].get("torso", "mlp")
        if all(k not in saved and _CRITIC_TORSO.search(k) for k in wrong):
            # Only the critics' torsos missing: SAC's critics read the raw
            # observation before 0.1.0 (policy.json's format stayed the same).
            raise ConfigError(
                f"{str(path)!r}: params.msgpack has no parameters for the "
                f"critics' {torso!r} torsos ({detail}): an earlier purejaxdrl "
                "exported it, whose SAC critics read the raw observation; play "
                "it with that version, or train and export it again."
            )
        if torso not in TORSOS:
            # The user's torso as registered in this process, not the files,
            # is what differs: exporting again would write the same shapes.
            raise ConfigError(
                f"{str(path)!r}: the torso {torso!r} registered in this process "
                f"builds other parameters than the run's ({detail}; {len(wrong)} "
                "parameter(s) differ); register it as the run did: import "
                "policy.json's env_imports "
                f"{spec.get('env_imports', [])} and no other {torso!r}."
            )
        raise ConfigError(
            f"{str(path)!r}: params.msgpack does not fit the network policy.json "
            f"describes ({detail}; {len(wrong)} parameter(s) differ); "
            f"{_again(path)}."
        )
    normalizes = bool(spec.get("normalize_observations", False))
    if normalizes != ("obs_stats" in blob):
        has = "has" if "obs_stats" in blob else "has no"
        says = "normalises" if normalizes else "does not normalise"
        raise ConfigError(
            f"{str(path)!r}: policy.json says the policy {says} observations but "
            f"params.msgpack {has} observation statistics; {_again(path)}."
        )


def network_config(where: pathlib.Path, net: dict[str, Any]) -> NetworkConfig:
    """policy.json's `network` field as the NetworkConfig it was written from."""
    torso = net.get("torso", "mlp") if isinstance(net, dict) else "mlp"
    if isinstance(torso, str) and torso not in torso_names():
        # Registered in the training script itself, not in an env.imports
        # module that load_policy would have imported.
        raise ConfigError(
            f"{str(where.parent)!r} was trained with the torso {torso!r}, which "
            "is not registered in this process; register it before loading "
            f"(pjd.networks.register_torso({torso!r}, ...)), or train with the "
            "module that registers it in --env.imports, which loading imports."
        )
    try:
        config = NetworkConfig(
            **{
                **net,
                "hidden_sizes": tuple(net["hidden_sizes"]),
                "resnet_channels": tuple(
                    net.get("resnet_channels", NetworkConfig.resnet_channels)
                ),
                "head_sizes": tuple(net.get("head_sizes", ())),
            }
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(
            f"{str(where)!r}'s 'network' field is not a network ({e}); "
            f"{_again(where.parent)}."
        ) from None
    _check_field_types(where, net)
    for rule, _ in network_faults(config):
        # The rule alone: the fix names a setting, which eval does not take;
        # what is wrong is the file's value.
        raise ConfigError(
            f"{str(where)!r}: {rule}; set it back, or {_again(where.parent)}."
        )
    return config


def _check_field_types(where: pathlib.Path, net: dict[str, Any]) -> None:
    """Refuses a `network` field of another JSON type than export writes."""
    hints = typing.get_type_hints(NetworkConfig)
    for field, value in net.items():
        if not _fits(value, hints[field]):
            raise ConfigError(
                f"{str(where)!r}: network.{field}={value!r} is not "
                f"{_kind(hints[field])} (policy.json edited?); set it back, or "
                f"{_again(where.parent)}."
            )


def _fits(value: Any, hint: Any) -> bool:
    """Whether JSON's `value` is of the NetworkConfig field type `hint`."""
    if typing.get_origin(hint) is tuple:
        item = typing.get_args(hint)[0]
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if typing.get_args(hint):  # str | None
        return any(_fits(value, option) for option in typing.get_args(hint))
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _kind(hint: Any) -> str:
    """How a refusal names the JSON values of the field type `hint`."""
    if typing.get_origin(hint) is tuple:
        return "a list of integers"
    names = {int: "an integer", str: "a string", bool: "true or false"}
    return " or ".join(names.get(t, "null") for t in typing.get_args(hint) or [hint])


def write_together(out: pathlib.Path, parts: dict[str, bytes]) -> None:
    """Writes files into `out` whole, under temporary names, then renames them.

    An interrupted export leaves the previous files, never a half-written one;
    a failed write (a full disk) removes its temporary files and raises.
    """
    try:
        for name, data in parts.items():
            (out / f".{name}.tmp").write_bytes(data)
    except OSError:
        for name in parts:
            (out / f".{name}.tmp").unlink(missing_ok=True)
        raise
    for name in parts:
        os.replace(out / f".{name}.tmp", out / name)
