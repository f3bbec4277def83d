"""Which algorithm configs the host-env runner trains, and why not the others."""

from typing import Any

from purejaxdrl.agents.base import Algorithm
from purejaxdrl.agents.registry import without_replay
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
        return host_replay_refusal(record, section, env_id, without_replay())
    return record.host_refusal(section, env_id) if training else None
