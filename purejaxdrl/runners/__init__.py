"""Runners: how experience meets the learner.

`base`: the `Runner` interface both runners implement, so that one recipe
(`training.train`) drives either. `anakin`: environments, rollout and update
compiled together as `jit(shard_map(scan(train_step)))`, the environments
split over the `data` axis of a mesh and the learner replicated (Podracer's
Anakin). `rollout`: `unroll`, the `lax.scan` over time and `vmap` over
environments that produces time-major Transitions. `sebulba` (with `actor`,
`trajectories`, `host_batches`, `host_waits` and `placement`): host-env actor threads
feeding a learner sharded over its own devices (Podracer's Sebulba). A runner may import
`agents`, `env`, `rl`, `networks` and the shared modules below them; never
`training`, `sweeps`, `observe` or `cli`.
"""

from purejaxdrl.runners.anakin import AnakinRunner, RunnerState, make_runner
from purejaxdrl.runners.base import Runner
from purejaxdrl.runners.rollout import ActorState, reset_actors, unroll

__all__ = [
    "ActorState",
    "AnakinRunner",
    "Runner",
    "RunnerState",
    "make_runner",
    "reset_actors",
    "unroll",
]
