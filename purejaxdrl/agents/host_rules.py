"""Which algorithm configs the host-env runner trains, and why not the others."""

from typing import Any

from purejaxdrl.agents.base import Algorithm
from purejaxdrl.agents.registry import algorithm, algorithms, without_replay
from purejaxdrl.agents.replay_sizes import host_replay_refusal


def host_refusal(
    record: Algorithm, section: Any, env_id: str, *, training: bool
) -> str | None:
    """Why the host-env runner refuses `section` on `env_id`, or None.

    `record` is the algorithm's `Algorithm`, `section` its config. A replay
    buffer split over the devices is refused always: the runner has none.
    What the algorithm's own `Algorithm.host_refusal` refuses (IMPALA's
    policy lag) only for `training`: a run trained so before that rule still
    reads back, to be evaluated or exported.
    """
    if record.keeps_replay(section):
        # The message lists the algorithms that run: made only when it is said.
        return host_replay_refusal(record, section, env_id, host_choices())
    return record.host_refusal(section, env_id) if training else None


def host_choices() -> tuple[str, ...]:
    """`without_replay`'s algorithms, to suggest before the actions are known.

    A config is checked before its environments are made: one that acts in a
    single kind says which ("pqn (discrete actions)"), so the refusal never
    suggests one that cannot act there (`registry.acting_refusal`, once the
    actions are known, suggests no replay algorithm on a host env).
    """
    every = set().union(*(r.action_kinds for r in algorithms()))
    return tuple(
        r.name
        if set(r.action_kinds) >= every
        else f"{r.name} ({' or '.join(r.action_kinds)} actions)"
        for r in map(algorithm, without_replay())
    )
