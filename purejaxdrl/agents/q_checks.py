"""The Q-learners' setting checks: unused ε and priority fields, a rising ε.

DQN, Ape-X, R2D2 and PQN read one of two exploration modes, and DQN reads its
priority fields only with prioritised replay: fields of the mode not in use
are named in a warning. A rising ε schedule is refused, and a priority
exponent above 1 warned of, by what the papers use.
"""

import dataclasses
from typing import Any

import jax
import numpy as np

from purejaxdrl.config import check
from purejaxdrl.config_docs import field_example
from purejaxdrl.setup_warnings import warn_once

# The ε fields of each exploration mode: one annealed ε, or Ape-X's ε_i.
ANNEALED = ("epsilon_start", "epsilon_end", "epsilon_fraction")
PER_ACTOR = ("epsilon", "epsilon_alpha")
# The fields only prioritised replay reads (DQN's `prioritised`).
PRIORITISED = ("priority_alpha", "beta_start", "priority_eps")


def set_fields(name: str, config: Any, fields: tuple[str, ...]) -> list[str]:
    """`name.field` of each of `fields` whose value is not the config type's default.

    Set means an override or a preset set it: a field set to its default is
    not told apart. Traced values (a sweep's, under vmap) are skipped: they
    were checked one by one before they were stacked.
    """
    defaults = {f.name: f.default for f in dataclasses.fields(config)}
    named = []
    for field in fields:
        value = getattr(config, field)
        if isinstance(value, jax.core.Tracer):
            continue
        if np.any(np.asarray(value) != defaults[field]):
            named.append(f"{name}.{field}")
    return named


def warn_unused_epsilons(name: str, config: Any) -> None:
    """Warns once when ε fields of the mode not in use are set.

    Set as `set_fields` says. Those fields do nothing: `per_actor_epsilon`
    picks one mode. The warning says so, not that they are wrong (a preset
    may set them for the other mode), and is shown once per algorithm and
    fields, whatever their values: a sweep over one of them warns once.
    """
    per_actor = config.per_actor_epsilon
    unused = set_fields(name, config, ANNEALED if per_actor else PER_ACTOR)
    if not unused:
        return
    flag = f"--{name.replace('_', '-')}.per-actor-epsilon"
    mode, fix = (
        (
            "each actor explores with Ape-X's fixed ε_i (epsilon, epsilon_alpha)",
            f"pass {flag} false to anneal one ε instead",
        )
        if per_actor
        else (
            "one ε anneals from epsilon_start to epsilon_end",
            f"pass {flag} true for Ape-X's per-actor ε_i instead",
        )
    )
    setting = f"{name}.per_actor_epsilon={str(per_actor).lower()}"
    warn_unused(unused, setting, f"{mode}; {fix}", key=("unused ε", name))


def warn_unused_priorities(name: str, config: Any) -> None:
    """Warns once when prioritised-replay fields are set under uniform replay.

    As `warn_unused_epsilons`: `priority_alpha`, `beta_start` and
    `priority_eps` set away from their defaults do nothing while
    `prioritised` is false, and the warning names them, once per algorithm
    and fields.
    """
    if config.prioritised:
        return
    unused = set_fields(name, config, PRIORITISED)
    if not unused:
        return
    fix = f"pass --{name.replace('_', '-')}.prioritised true for prioritised replay"
    why = f"replay is uniform; {fix}"
    warn_unused(unused, f"{name}.prioritised=false", why, ("unused priorities", name))


def warn_unused(
    unused: list[str], setting: str, why_and_fix: str, key: tuple[str, ...]
) -> None:
    """Warns once per `key` and fields that `unused` do nothing with `setting`."""
    verb = "is" if len(unused) == 1 else "are"
    warn_once(
        f"{' and '.join(unused)} {verb} set (by a preset or by you) but unused: "
        f"with {setting}, {why_and_fix}.",
        key=(*key, *unused),
    )


def check_epsilon_falls(name: str, config: Any) -> None:
    """That the annealed ε falls, or holds: epsilon_start >= epsilon_end.

    DQN (Mnih et al., 2015), R2D2 and PQN anneal ε down, from exploring to
    exploiting; a rising ε explores more as the agent learns, and exports
    its large end value with the policy: swapped values, not a schedule.
    Checked only where the annealed ε is read: `per_actor_epsilon` leaves
    both unused (`warn_unused_epsilons`), and `epsilon_fraction` 0 holds
    epsilon_end from the start. A sweep's traced values were checked one by
    one before they were stacked.

    Raises:
      ConfigError: naming both values and the swap, both ways.

    """
    values = (config.epsilon_start, config.epsilon_end, config.epsilon_fraction)
    if config.per_actor_epsilon or any(isinstance(v, jax.core.Tracer) for v in values):
        return
    start, end, fraction = map(float, values)
    check(
        fraction == 0 or start >= end,
        f"{name}.epsilon_start={start} is below {name}.epsilon_end={end}: ε "
        "would rise over the run, exploring more as the agent learns; swap "
        f"them, {field_example(f'{name}.epsilon_start', end)} and "
        f"{field_example(f'{name}.epsilon_end', start)}, or pass equal values "
        "for a fixed ε.",
    )


def warn_greedy_priorities(name: str, config: Any) -> None:
    """Warns once when the prioritised replay's exponent α is above 1.

    P(i) ∝ p_i^α is defined for any α >= 0, so it is taken; but Schaul et al.
    (2016) use α in [0, 1] (0 uniform, 1 in proportion to |TD error|; Ape-X
    0.6, R2D2 0.9), and above 1 replay turns greedy, towards the few largest
    errors. Silent under uniform replay, where α is unused
    (`warn_unused_priorities`).
    """
    alpha = float(config.priority_alpha)
    if alpha <= 1 or not getattr(config, "prioritised", True):
        return
    default = type(config).priority_alpha
    warn_once(
        f"{name}.priority_alpha={alpha} is above 1: replay draws almost greedily "
        "by priority, where prioritised replay uses α in [0, 1] (1: in "
        "proportion to |TD error|); taken as given, else pass e.g. "
        f"{field_example(f'{name}.priority_alpha', default)}.",
        key=("priority_alpha above 1", name),
    )
