"""Trained policies outside training: export from a run, load as an act.

`export_policy` writes a run's newest good checkpoint (`restored.restore_run`)
as a policy, `load_policy` loads it jittable.

An exported policy is a folder with `policy.json` (the network description,
the observation and action spaces, the environment it was trained on) and
`params.msgpack` (network parameters and, if the run normalised observations,
the normaliser's statistics). Loading it needs no run directory, no optimiser,
no environment: only this package, and the modules of the run's env.imports
(policy.json's `env_imports`) where they register its torso or algorithm.
"""

import json
import pathlib
from collections.abc import Callable
from typing import Any, NamedTuple

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.agents.registry import algorithm, names
from purejaxdrl.config import ConfigError, apply_overrides
from purejaxdrl.env.imports import import_modules
from purejaxdrl.env.normalization import (
    normalize,
    per_entry,
    statistics_from_host,
)
from purejaxdrl.networks import RecurrentNetwork, torso_names
from purejaxdrl.setup_warnings import quiet_setup_warnings
from purejaxdrl.training.checkpoint import Restored
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import Experiment
from purejaxdrl.training.policy.checks import (
    check_params,
    check_spec,
    network_config,
    write_together,
)
from purejaxdrl.training.policy.folder import (
    ANOTHER,
    PARAMS_FILE,
    SPEC_FILE,
    check_loadable,
    check_policy_folder,
    out_example,
)
from purejaxdrl.training.policy.inputs import (
    as_acted_on,
    as_array,
    batched_step_inputs,
    check_key,
    checked_batch,
    with_all_entries,
)
from purejaxdrl.training.policy.record import (
    FORMAT,
    VERSION,
    PolicySource,
    policy_source,
)
from purejaxdrl.training.policy.sampling import exported_sampler
from purejaxdrl.training.policy.spaces import policy_spaces
from purejaxdrl.training.restored import restore_run
from purejaxdrl.types import Params, PRNGKey


class Policy(NamedTuple):
    """A trained policy as pure functions of (unbatched or batched) observations.

    Each function has its own docstring too (`help(policy.act)`). A
    NamedTuple's `count` and `index` come with it; they are of no use here.

    Attributes:
      act: `act(obs [*batch, *obs_shape], key) -> action [*batch, ...]`, a
        sample from the policy, as the purejaxdrl environment takes it (Box
        actions in [-1, 1]); jittable and vmappable. It samples as the
        algorithm's record says (`Algorithm.exported_sampler`): a
        Q-learner's (DQN, Ape-X, R2D2, PQN) is ε-greedy with the ε it ended
        training with (policy.json's `epsilon`), others sample their
        distribution. For a
        run on dict observations `obs` is the policy's entry
        (`network.policy_obs_key`), or a dict holding it: the critic's
        entries are not needed.
      mode: `mode(obs) -> action`, the most likely action (deterministic).
      params: the network parameters.
      spec: the contents of policy.json.
      initial_state: `initial_state(B)`, the core state of B episodes about to
        start; () for a policy without a recurrent core.
      step: `step(state, obs [B, ...], reset bool [B], key) -> (state, action
        [B, ...])`: a sample, carrying the core state from step to step (zeroed
        where `reset` marks an episode's first observation). Any policy has
        it; a recurrent one has only it and `step_mode` (its `act` and `mode`
        raise, as they hold no state).
      step_mode: `step_mode(state, obs, reset) -> (state, action)`, the most
        likely action.

    """

    act: Callable[[jax.Array, PRNGKey], jax.Array]
    mode: Callable[[jax.Array], jax.Array]
    params: Params
    spec: dict[str, Any]
    initial_state: Callable[[int], Any]
    step: Callable[..., tuple[Any, jax.Array]]
    step_mode: Callable[..., tuple[Any, jax.Array]]

    def __repr__(self) -> str:
        # What a notebook cell shows: which policy, not its parameter arrays.
        count = sum(int(np.size(x)) for x in jax.tree.leaves(self.params))
        return (
            f"Policy({self.spec['algo']} on {self.spec['env_id']}, "
            f"{self.spec.get('updates', 0):,} updates, {count:,} parameters)"
        )


def export_policy(
    run_dir: str | pathlib.Path,
    out: str | pathlib.Path,
    *,
    overwrite: bool = False,
    step: int | str = "latest",
) -> pathlib.Path:
    """Writes the policy of a checkpoint of `run_dir` to the folder `out`.

    The newest good checkpoint unless `step` names another.

    Not jittable: reads the checkpoint and writes files.

    Args:
      run_dir: the run directory.
      out: the folder to write (made if missing; other files in it stay).
      overwrite: replace a policy already exported to `out`.
      step: which checkpoint: "latest", "best" (`checkpoint.keep_best`'s) or
        an update count whose checkpoint is saved (`restore_run`).

    Returns:
      `out`, as a Path: `load_policy(out)` reads it back.

    Examples:
      More in docs/guide/evaluation.md.

      >>> import purejaxdrl as pjd
      >>> config = pjd.load_preset("cartpole").config
      >>> result = pjd.train(config, write_files=True)
      >>> pjd.export_policy(result.run_dir, "policy/")

    Raises:
      ConfigError: the run directory is missing or bad, or has no checkpoint
        that verifies (or none `step` names); or `out` holds a policy already
        and `overwrite` is False.

    """
    check_policy_folder(pathlib.Path(out), overwrite, "out")
    config, exp, restored = restore_run(run_dir, "export", step)  # quiet, as eval's
    return write_policy(out, _restored_source(config, exp, restored))


def restored_policy(
    config: TrainConfig, exp: Experiment, restored: Restored, where: pathlib.Path
) -> Policy:
    """The policy of a run `restore_run` restored from `where`, as its export loads.

    What `eval RUN --env.option ...` and `--sample` play (`run_policy`):
    the files `export_policy` would write, read back without a folder.
    """
    return _policy_from(_restored_source(config, exp, restored).files(), where)


def _restored_source(
    config: TrainConfig, exp: Experiment, restored: Restored
) -> PolicySource:
    exp.runner.close()
    return policy_source(config, exp, restored.state, restored.step)


def write_policy(out: str | pathlib.Path, source: PolicySource) -> pathlib.Path:
    """Writes a policy folder (`policy.json`, `params.msgpack`) for `load_policy`.

    Args:
      out: the folder (made if missing).
      source: what the policy is made of (`record.policy_source` reads it
        from a run's state).

    Returns:
      `out` as a path.

    Raises:
      ConfigError: the folder could not be written (the OS's reason named).

    """
    out = pathlib.Path(out)
    try:  # a full disk, or a folder that refuses writes though it looked writable
        out.mkdir(parents=True, exist_ok=True)
        write_together(out, source.files())
    except OSError as e:
        said = " ".join(str(e).split())[:160] or type(e).__name__
        raise ConfigError(
            f"{out_example(out)}: could not write it ({said}); export elsewhere "
            f"({ANOTHER})."
        ) from None
    return out


def load_policy(path: str | pathlib.Path) -> Policy:
    """Loads a policy written by `export_policy` (`purejaxdrl export`).

    Not pure: when the run's algorithm or torso is not registered in this
    process, it first imports the modules of policy.json's `env_imports`
    (searching the current folder first), which register them.

    Args:
      path: the folder `export_policy` (or `TrainResult.export`) wrote, or
        the `policy/` of a sweep's best run or a PBT's best member.

    Returns:
      The Policy: its `act` and `mode` functions (`step` and `step_mode`
      with a recurrent core), its parameters and policy.json's `spec`.

    Examples:
      More in docs/guide/evaluation.md.

      >>> import numpy as np
      >>> import purejaxdrl as pjd
      >>> policy = pjd.load_policy("policy/")  # a CartPole policy, say
      >>> obs = np.zeros((16, 4), np.float32)  # a batch of observations [B, ...]
      >>> action = policy.mode(obs)

    Raises:
      ConfigError: `path` is not an exported policy folder (a run, sweep or
        PBT directory: naming where its policy is), or a module of its
        env_imports does not import.

    """
    path = pathlib.Path(path)
    check_loadable(path)
    try:
        files = {name: (path / name).read_bytes() for name in (SPEC_FILE, PARAMS_FILE)}
    except OSError as e:
        raise ConfigError(_not_a_policy(path, e)) from None
    return _policy_from(files, path)


def _not_a_policy(path: pathlib.Path, e: Exception) -> str:
    return (
        f"{str(path)!r} is not an exported policy ({type(e).__name__}: "
        f"{e}); make one with `purejaxdrl export RUN_DIR --out {path}`."
    )


def _policy_from(files: dict[str, bytes], path: pathlib.Path) -> Policy:
    """The policy in `files` (`PolicySource.files`), read from `path` (for messages)."""
    try:
        spec = json.loads(files[SPEC_FILE])
        blob = flax.serialization.msgpack_restore(files[PARAMS_FILE])
    except ValueError as e:
        raise ConfigError(_not_a_policy(path, e)) from None
    if spec.get("format") != FORMAT:
        raise ConfigError(
            f"{str(path / SPEC_FILE)!r} is not a {FORMAT} file; make one with "
            "`purejaxdrl export RUN_DIR --out DIR`."
        )
    check_spec(path, spec, SPEC_FILE, VERSION)
    # The run's env.imports register what is the user's own: its algorithm,
    # its torso (for any algorithm), its environment. Imported first, as a
    # resume does, so a fresh process builds the network the run acted with;
    # a policy of the user's environment alone still loads without them.
    if spec["algo"] not in names() or _user_torso(spec["network"]):
        import_modules(spec.get("env_imports", []), "policy.json's env_imports")
    config = network_config(path / SPEC_FILE, spec["network"])
    obs_spec, action_spec = policy_spaces(spec)
    # The network the run acted with (actor-critic, Q-network, SAC's policy),
    # as the algorithm builds it.
    record = algorithm(spec["algo"])
    section = apply_overrides(record.default_config(), spec.get("algo_config", {}))
    with quiet_setup_warnings():  # as export_policy's
        network, _ = record.make_networks(section, config, obs_spec, action_spec)
    check_params(path, spec, blob, network, obs_spec)
    dist = network.distribution
    params = jax.tree.map(jnp.asarray, blob["params"])
    stats = blob.get("obs_stats")
    if stats is not None:
        stats = statistics_from_host(stats)

    def observe(obs: Any) -> Any:
        if isinstance(obs_spec, dict):
            obs = with_all_entries(obs, obs_spec, config.policy_obs_key, spec["env_id"])
        else:
            obs = as_acted_on(as_array(obs, spec), spec)
        obs = jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), obs)
        return obs if stats is None else per_entry(normalize, stats, obs)

    sample = exported_sampler(record, section, spec, dist)
    if isinstance(network, RecurrentNetwork):
        return _recurrent_policy(network, params, spec, observe, sample)

    def policy_output(obs: jax.Array) -> jax.Array:
        return network.apply(params, observe(obs))[0]

    def act(obs: jax.Array, key: PRNGKey) -> jax.Array:
        """A sampled action for `obs` [*batch, *obs_shape], as the env takes it."""
        check_key(key)
        return dist.to_env(sample(policy_output(obs), key))

    def mode(obs: jax.Array) -> jax.Array:
        """The most likely action for `obs` [*batch, *obs_shape] (deterministic)."""
        return dist.to_env(dist.mode(policy_output(obs)))

    def step(state: Any, obs: jax.Array, reset: jax.Array, key: PRNGKey) -> tuple:
        """`(state, act(obs, key))`: this policy has no core state to carry."""
        del reset
        return state, act(obs, key)

    def step_mode(state: Any, obs: jax.Array, reset: jax.Array) -> tuple:
        """`(state, mode(obs))`: this policy has no core state to carry."""
        del reset
        return state, mode(obs)

    return Policy(act, mode, params, spec, lambda batch: (), step, step_mode)


def _user_torso(network: dict[str, Any]) -> bool:
    """Whether policy.json's network names a torso not registered here yet."""
    return network.get("torso", "mlp") not in torso_names()


def _recurrent_policy(
    network: RecurrentNetwork,
    params: Params,
    spec: dict[str, Any],
    observe: Callable[[jax.Array], jax.Array],
    sample: Callable[[jax.Array, PRNGKey], jax.Array],
) -> Policy:
    dist = network.distribution

    def stateless(*args: Any) -> jax.Array:
        """Refuses: a recurrent policy acts through `step` and `step_mode`."""
        raise ConfigError(
            f"this policy has a recurrent core ({spec['network']['core']}): it "
            "acts on a state; use policy.step(state, obs, reset, key) from "
            "policy.initial_state(batch)."
        )

    def output(state: Any, obs: jax.Array, reset: jax.Array) -> tuple:
        given = jnp.shape(obs)  # as passed: `observe` drops any hidden entries
        obs, reset = batched_step_inputs(observe(obs), reset, state, spec, given)
        state, (policy, _) = network.step(params, state, obs, reset)
        return state, policy

    def step(state: Any, obs: jax.Array, reset: jax.Array, key: PRNGKey) -> tuple:
        """`(state, action [B, ...])`, sampled; `reset` [B] zeroes the state first."""
        check_key(key)
        state, policy = output(state, obs, reset)
        keys = jax.random.split(key, policy.shape[0])
        return state, dist.to_env(jax.vmap(sample)(policy, keys))

    def step_mode(state: Any, obs: jax.Array, reset: jax.Array) -> tuple:
        """`(state, action [B, ...])`, the most likely; `reset` as in `step`."""
        state, policy = output(state, obs, reset)
        return state, dist.to_env(dist.mode(policy))

    initial_state = checked_batch(network.initial_state)
    return Policy(stateless, stateless, params, spec, initial_state, step, step_mode)
