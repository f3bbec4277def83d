"""Learning curves of results in memory: `train`'s and `sweep`'s, files or not.

`pjd.train` writes no run directory unless asked (`write_files=True`), yet its
result holds every chunk's record; a sweep's result holds every run's. These
make the curves `load_curves` makes of their directories, from memory.
"""

from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.curve import Curve, setting_label


def is_result(item: Any) -> bool:
    """Whether `item` is a train or sweep result rather than a path."""
    return hasattr(item, "history") or hasattr(item, "histories")


def result_curves(result: Any) -> list[Curve]:
    """One curve for a `TrainResult`; one per setting for a `SweepResult`.

    A sweep's settings are labelled as its directory's are (`setting_label`),
    each curve's seeds the setting's runs; a run's curve is labelled by its
    algorithm and environment.
    """
    if hasattr(result, "history"):
        if not result.history:
            raise_empty()
        config = result.config
        label = f"{config.algo} on {config.env.id}" if config is not None else "run"
        return [Curve(label, (list(result.history),))]
    plan = result.plan
    if not any(result.histories):
        raise_empty()
    runs: list[list[list[dict[str, Any]]]] = [[] for _ in plan.settings]
    for i, history in enumerate(result.histories):
        runs[plan.run(i)[0]].append(list(history))
    return [
        Curve(setting_label(values, plan.base.algo), tuple(histories))
        for values, histories in zip(plan.settings, runs, strict=True)
    ]


def raise_empty() -> None:
    """A result without records: a one-line error."""
    raise ConfigError(
        "this result has no records to plot (its run logged no chunk); "
        "train with num_logs >= 1"
    )
