"""Learning curves of results in memory: `train`'s and `sweep`'s, files or not.

`pjd.train` writes no run directory unless asked (`write_files=True`), yet its
result holds every chunk's record; a sweep's result holds every run's. These
make the curves `load_curves` makes of their directories, from memory.
"""

from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.curve import Curve, setting_label


def is_result(item: Any) -> bool:
    """Whether `item` is a train, sweep or PBT result rather than a path."""
    return hasattr(item, "history") or hasattr(item, "histories")


def result_curves(result: Any) -> list[Curve]:
    """The curves `load_curves` makes of `result`'s directory, from memory.

    A `TrainResult` gives one curve, labelled by its algorithm and
    environment; a `SweepResult` one per setting, labelled as its directory's
    are (`setting_label`), its seeds the setting's runs; a `PBTResult` one of
    its population, as `pbt_curve` draws it.
    """
    histories = [result.history] if hasattr(result, "history") else result.histories
    if not any(histories):
        raise ConfigError(
            "this result has no records to plot: it stopped before its first "
            "chunk ended; train it further (its resume) and plot that"
        )
    if hasattr(result, "history"):
        config = result.config
        label = f"{config.algo} on {config.env.id}" if config is not None else "run"
        return [Curve(label, (list(result.history),))]
    if hasattr(result, "lineage"):  # PBT: members are no seeds of one setting
        label = f"PBT population ({result.population} members)"
        return [Curve(label, tuple(list(h) for h in histories))]
    plan = result.plan
    runs: list[list[list[dict[str, Any]]]] = [[] for _ in plan.settings]
    for i, history in enumerate(histories):
        runs[plan.run(i)[0]].append(list(history))
    return [  # each setting's runs are its seeds, in `plan.seeds`' order
        Curve(setting_label(values, plan.base.algo), tuple(each), tuple(plan.seeds))
        for values, each in zip(plan.settings, runs, strict=True)
    ]
