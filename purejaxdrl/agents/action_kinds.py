"""The kinds of actions an algorithm acts in, and the refusal of the others.

`Algorithm.action_kinds` names them ("discrete", "continuous"); one wording
refuses an algorithm on an environment of another kind, wherever that is
found out: from a preset's sections (`registry.action_refusal`) or from the
environment's action spec, before the algorithm's networks are made
(`registry.acting_refusal`).
"""

from collections.abc import Sequence
from typing import Any

from purejaxdrl.config_docs import both_ways
from purejaxdrl.env.base import Box, Discrete


def action_kind(action_spec: Any) -> str | None:
    """The kind of an action space: "discrete" (`Discrete`), "continuous" (`Box`).

    None for a space of neither type.
    """
    kinds = {Discrete: "discrete", Box: "continuous"}
    return next((k for t, k in kinds.items() if isinstance(action_spec, t)), None)


def kind_refusal(
    name: str,
    wanted: Sequence[str],
    kind: str,
    env_id: str,
    fits: Sequence[str],
    others: str,
) -> str:
    """Algorithm `name` acts in `wanted` kinds, not `env_id`'s `kind`; `fits` do.

    `others` says whose the further `fits` are ("another of its": the
    preset's sections).
    """
    needs = " or ".join(wanted)
    more = f" or {others} ({', '.join(fits[1:])})" if fits[1:] else ""
    algo = both_ways("--algo", "algo", fits[0], repr(fits[0])) if fits else ""
    pick = f"pick {algo}{more}, or" if fits else "pick"
    return (
        f"{name} needs {needs} actions, {env_id}'s are {kind}; {pick} an --env "
        f"with {needs} actions"
    )
