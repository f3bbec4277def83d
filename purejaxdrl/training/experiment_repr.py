"""A one-line repr of an `Experiment`: what it trains, where, on how many devices.

The dataclass's own repr printed every field, the networks' flax modules and
the runner's functions among them (about 3,500 characters in a notebook cell).
"""

from typing import Any


def experiment_repr(experiment: Any) -> str:
    """`Experiment(ppo on CartPole-v1, AnakinRunner, 1 device, 500,000 steps)`.

    `experiment` is a `training.experiment.Experiment` (not imported: that
    module names this as its `__repr__`).
    """
    config, mesh = experiment.config, experiment.runner.mesh
    devices = f"{mesh.size} device{'s' * (mesh.size != 1)}"
    return (
        f"Experiment({config.algo} on {config.env.id}, "
        f"{type(experiment.runner).__name__}, {devices}, "
        f"{config.total_steps:,} steps)"
    )
