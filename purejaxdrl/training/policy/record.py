"""What an exported policy is made of: policy.json's record and the parameters' bytes.

`PolicySource.files` makes both from a run's config, parameters and statistics
(`policy_source` reads those from a run's state, once for every exporter);
`export_policy` writes them to a folder and `load_policy` reads them back, and
`eval RUN --sample` plays them without a folder (`exported.restored_policy`).
"""

import dataclasses
import json
from typing import Any, NamedTuple

import flax.serialization
import jax

from purejaxdrl.agents.registry import algorithm
from purejaxdrl.config import to_dict
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.normalization import statistics_to_host
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import Experiment
from purejaxdrl.training.policy.folder import PARAMS_FILE, SPEC_FILE
from purejaxdrl.training.policy.sampling import policy_extras

FORMAT = "purejaxdrl-policy"
VERSION = 1


class PolicySource(NamedTuple):
    """What an exported policy is made of: a run's parameters and their context.

    Attributes:
      config: the TrainConfig the parameters were trained with.
      params: the learner's network parameters (host or device arrays).
      stats: the observation statistics (`RunningStatistics`), or None.
      updates: updates done (recorded with the env steps).
      specs: (observation spec, action spec) of one environment.
      steps_per_update: environment steps per update (None: the config's).
      action_bounds: (low, high) per dimension, the environment's own bounds
        its Box actions in [-1, 1] are mapped to (`Experiment.action_bounds`),
        recorded as the action's `env_low` and `env_high`; None: not recorded.

    """

    config: Any
    params: Any
    stats: Any
    updates: int
    specs: tuple[Any, Any]
    steps_per_update: int | None = None
    action_bounds: tuple[Any, Any] | None = None

    def files(self) -> dict[str, bytes]:
        """The exported policy's files, {name: bytes}, as `load_policy` reads them.

        policy.json's JSON text, and params.msgpack: the parameters and
        statistics.
        """
        config, params, stats, updates, specs, steps_per_update, bounds = self
        obs_spec, action_spec = specs
        steps_per_update = steps_per_update or config.steps_per_update
        action = (
            # policy.json holds sizes, not code: a policy of an environment with
            # illegal actions rebuilds its `legal` from the environment at load.
            {
                "discrete": action_spec.num_values,
                "masked": action_spec.legal is not None,
            }
            if isinstance(action_spec, Discrete)
            else {"box": list(action_spec.shape), "low": -1.0, "high": 1.0}
        )
        if bounds is not None and isinstance(action_spec, Box):
            # The policy acts in [low, high]; the environment in these (deployed
            # elsewhere: env_low + (a + 1) / 2 * (env_high - env_low)).
            action["env_low"], action["env_high"] = map(list, bounds)
        spec = {
            "format": FORMAT,
            "version": VERSION,
            "env_id": config.env.id,
            "env_options": config.env.options,
            # The modules that register the environment, to build it again.
            "env_imports": list(config.env.imports),
            # Observations the agent never saw: the policy takes the others.
            "env_hide_observations": list(config.env.hide_observations),
            "algo": config.algo,
            # The acting network's architecture may depend on it (DQN's dueling head).
            "algo_config": to_dict(config.algo_config),
            "updates": updates,
            "env_steps": updates * steps_per_update,
            "seed": config.seed,  # with algo_config, which of a sweep's runs it is
            # Ape-X's per-actor ε_i are spread over the run's environments.
            "num_envs": config.num_envs,
            # A list, or {entry: list} for dict observations.
            "observation_shape": jax.tree.map(
                lambda box: list(box.shape), obs_spec, is_leaf=_is_box
            ),
            "action": action,
            "network": dataclasses.asdict(config.network),
            "normalize_observations": stats is not None,
        }
        # What the record's `exported_sampler` reads: a Q-learner's ε.
        spec.update(policy_extras(algorithm(config.algo), config, updates, spec))
        blob: dict[str, Any] = {"params": jax.device_get(params)}
        if stats is not None:
            blob["obs_stats"] = statistics_to_host(stats)
        return {
            PARAMS_FILE: flax.serialization.msgpack_serialize(blob),
            SPEC_FILE: (json.dumps(spec, indent=2) + "\n").encode(),
        }


def policy_source(
    config: TrainConfig, exp: Experiment, state: Any, updates: int
) -> PolicySource:
    """The policy of `state`, a runner state of `exp` after `updates` updates.

    For a run that finished training (`train`'s `TrainResult.export`) and a
    run restored from its checkpoint (`export_policy`, `eval RUN --sample`):
    the learner's parameters, the observation statistics if the run
    normalised observations, the experiment's specs and steps per update.
    """
    return PolicySource(
        config,
        state.agent.params,
        getattr(getattr(state, "env_params", None), "obs_stats", None),
        updates,
        (exp.obs_spec, exp.action_spec),
        exp.runner.steps_per_update,
        exp.action_bounds,
    )


def _is_box(x: Any) -> bool:
    return isinstance(x, Box)
