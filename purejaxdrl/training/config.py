"""The config of one training run: environment, algorithm, network, budget.

`TrainConfig` is the run's own fields (`RunFields`) and one section per
registered algorithm (`agents.registry.AlgorithmConfigs`); `validate` checks
the run's own rules and asks the selected algorithm's record to check its own.
"""

import dataclasses
import functools
from typing import Any, ClassVar

from purejaxdrl.agents.base import Algorithm, RunShape
from purejaxdrl.agents.host_rules import host_refusal
from purejaxdrl.agents.registry import (
    DEFAULT_ALGO,
    AlgorithmConfigs,
    algorithm,
    algorithms,
    no_section,
    registered_by_user,
    reserve_names,
)
from purejaxdrl.agents.replay_sizes import check_learning_starts
from purejaxdrl.config import (
    ConfigError,
    Selection,
    check,
    require_config,
    to_dict,
)
from purejaxdrl.config_docs import document_fields, field_example
from purejaxdrl.config_types import check_types
from purejaxdrl.env.host import is_host_env
from purejaxdrl.networks import NetworkConfig
from purejaxdrl.networks.base import check_network
from purejaxdrl.observe.evaluation import EvalConfig
from purejaxdrl.rng import RNG_IMPLS, check_seed
from purejaxdrl.runners.placement import HostConfig
from purejaxdrl.training.checkpoint_config import CheckpointConfig
from purejaxdrl.training.presets.choice import section_fix, switched_algo
from purejaxdrl.training.run_rules import (
    check_checkpoint_and_eval,
    check_env_multiple,
    check_host,
    check_observations,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvConfig:
    """Which environment to train on.

    Attributes:
      id: a name from `purejaxdrl.env.registered()`, e.g. CartPole-v1, brax/ant;
        or a host environment, `envpool:<task>` or `gymnasium:<id>` (trained
        by the actor-learner runner, placed by the `host` section). A
        Gymnasium id may name the module that registers it, as
        `gymnasium.make` takes it: `gymnasium:my_pkg.envs:MyCorridor-v0`
        imports `my_pkg.envs`, then makes `MyCorridor-v0`.
      imports: modules to import before `id` is resolved, e.g. ("my_corridor",):
        the user's own modules that register environments when imported
        (`purejaxdrl.env.register` for a JAX `Env`, `gymnasium.register`).
        The current folder is searched first, as `python -m` does. Every
        command that builds the environment (train, sweep, eval, export, a
        resumed run) imports them, so a run directory records them here.
      options: keyword arguments for the environment, its library's own:
        gymnax's parameters (e.g. memory_length=30, max_steps_in_episode=200),
        brax's backend and episode_length, Playground's episode_length or a
        field of the task's config (reward_config.scales.energy=0); for your
        own environment (a registered Env or Gymnasium class), its
        constructor's keywords (e.g. length=6). They are
        `id`'s: overriding `id` without them resets them (a preset's options
        are for its own environment).
      normalize_observations: standardise observations with running statistics.
      hide_observations: indices of vector-observation entries the agent does
        not see (`env.wrappers.HideObservations`); CartPole-v1 with (1, 3) is
        the `cartpole_masked` memory task. Like `options`, they are `id`'s:
        overriding `id` without them resets them (another environment's
        entries 1 and 3 are other quantities).

    """

    # apply_overrides resets these where `id` changes without them.
    TIED_FIELDS: ClassVar[dict[str, str]] = {"options": "id", "hide_observations": "id"}

    id: str = "CartPole-v1"
    imports: tuple[str, ...] = ()
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    normalize_observations: bool = False
    # Its refusals' example: indices, not the widths other lists take.
    hide_observations: tuple[int, ...] = dataclasses.field(
        default=(), metadata={"example": ("1 3", (1, 3))}
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunFields:
    """The fields of a training run that belong to no one algorithm.

    Attributes:
      env: the environment.
      algo: the algorithm, a name of `agents.registry`; its hyper-parameters
        are the section of that name (`config.ppo`), `TrainConfig.algo_config`.
      network: network architecture.
      checkpoint: when to save whole-run checkpoints (runs with a run directory).
      eval: evaluation episodes with the deterministic policy (off by default).
      host: actors and learner of runs on host environments (`env.id`
        `envpool:...` or `gymnasium:...`); ignored by device environments.
      num_envs: number of parallel environments.
      unroll_length: steps per environment between updates.
      total_steps: environment-step budget; training runs
        total_steps // (num_envs * unroll_length) updates.
      seed: random seed, in [0, 2**32).
      rng_impl: key implementation: `fused_threefry` (Threefry-2x32 as one fused
        kernel per call; fastest on CPU), or JAX's `threefry2x32` or `rbg`.
      num_logs: about how many times progress is reported (and metrics
        written): N/2 to 2N chunks of whole updates, all of one length but
        the last, at most one per update.
      scan_unroll: steps per iteration of the compiled rollout loop (device
        environments; a host run has none and refuses it); 0 (the default)
        picks by platform: 1 on CPU, 4 on accelerators (faster at small
        environment counts, where kernel launches dominate).
      devices: local devices to train on (per process, in a `train` across
        processes); 0 for as many as the run splits over evenly (num_envs,
        minibatches, replay), said if fewer.
      run_dir: directory under which each run writes its own folder; every
        process of a `train` across hosts must see the same one (a shared
        filesystem) unless --no-files.

    """

    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    algo: str = DEFAULT_ALGO
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    checkpoint: CheckpointConfig = dataclasses.field(default_factory=CheckpointConfig)
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    host: HostConfig = dataclasses.field(default_factory=HostConfig)
    num_envs: int = 4
    unroll_length: int = 128
    total_steps: int = 500_000
    seed: int = 0
    rng_impl: str = "fused_threefry"
    num_logs: int = 20
    scan_unroll: int = 0
    devices: int = 0
    run_dir: str = "runs"


@document_fields
@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainConfig(AlgorithmConfigs, RunFields):
    """A whole training run: its own fields and a section per algorithm.

    `RunFields` declares and describes what every run has (environment,
    algorithm, network, budget, ...), `agents.registry.AlgorithmConfigs` one
    hyper-parameter section per registered algorithm, named after it; the run
    reads the one `algo` names, `algo_config`. The fields come in that order:
    the run's, then the sections; `help(TrainConfig)` describes them all
    (`config_docs.document_fields`).
    """

    # Python's fix for a change to a section the run does not read, and the
    # warning for a change of `algo` alone, name the shipped preset's tuned run
    # of it (`preset_choice.section_fix`, `switched_algo`).
    SELECTION: ClassVar[Selection] = AlgorithmConfigs.SELECTION._replace(
        fix=section_fix, switched=switched_algo
    )

    @property
    def algo_config(self) -> Any:
        """The selected algorithm's section, the field `algo` names (`self.ppo`).

        Raises:
          ConfigError: for an unknown `algo`, naming the known ones.

        """
        algorithm(self.algo)
        if not hasattr(self, self.algo):  # a user's, registered after this was made
            raise ConfigError(no_section(self.algo, f"algo={self.algo!r}"))
        return getattr(self, self.algo)

    def __repr__(self) -> str:
        # The run's fields and its own algorithm's section: the other
        # sections (every registered algorithm's) are there, but not this run's.
        own = {f.name for f in dataclasses.fields(RunFields)} | {self.algo}
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if f.name in own
        ]
        return f"TrainConfig({', '.join(shown)})"

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # The class made for user algorithms is no module attribute pickle can
        # find: a config pickles as its fields, remade by `config_class()` in
        # the process that unpickles (which has registered the same ones).
        return _remake, (
            {f.name: getattr(self, f.name) for f in dataclasses.fields(self)},
        )

    @property
    def steps_per_update(self) -> int:
        """Environment steps per update: num_envs x unroll_length."""
        return self.num_envs * self.unroll_length

    @property
    def num_updates(self) -> int:
        """Number of updates the budget allows."""
        return self.total_steps // self.steps_per_update


def run_dict(config: TrainConfig) -> dict[str, Any]:
    """`config` as a run's config.yaml holds it: the run's fields, its section.

    Other algorithms' sections are left out: the run never reads them (nor
    does `config_from_dict`), and their defaults, not a preset's, would read
    as this run's settings.
    """
    unread = TrainConfig.SELECTION.others(config.algo)
    return {k: v for k, v in to_dict(config).items() if k not in unread}


# Names a user's algorithm may not take: the run's fields and TrainConfig's
# own attributes (`register` checks them before it stores the record).
reserve_names(
    {f.name for f in dataclasses.fields(RunFields)}
    | {n for n in dir(TrainConfig) if not n.startswith("_")}
)


def _remake(fields: dict[str, Any]) -> TrainConfig:
    """A pickled config again (`TrainConfig.__reduce__`)."""
    own = {f.name for f in dataclasses.fields(TrainConfig)}
    return (TrainConfig if set(fields) <= own else config_class())(**fields)


def config_class() -> type[TrainConfig]:
    """The run config class: `TrainConfig` and a section per user algorithm.

    `TrainConfig` itself until an algorithm is registered from outside the
    package (`agents.registry.register`); then a subclass with one more
    field per such algorithm, named after it and defaulting to its
    `default_config()`, made once per set of registrations. Every config the
    library makes from scratch (a preset, a saved run, the command line's)
    is of this class, so a user's section reads, saves and resumes as a
    built-in one does.

    """
    users = registered_by_user()
    if not users:
        return TrainConfig
    return _extended(tuple((r.name, r.config_type, r.default_config) for r in users))


@functools.cache
def _extended(sections: tuple[tuple[str, type, Any], ...]) -> type[TrainConfig]:
    fields = [
        (name, kind, dataclasses.field(default_factory=default))
        for name, kind, default in sections
    ]
    cls = dataclasses.make_dataclass(
        "TrainConfig",
        fields,
        bases=(TrainConfig,),
        frozen=True,
        kw_only=True,
        repr=False,  # TrainConfig's, which shows the run's own section
    )
    cls.__module__ = __name__
    names = [name for name, _, _ in sections]
    cls.__doc__ = (
        "A whole training run, with a section per registered algorithm "
        f"({', '.join(names)} registered by the user).\n\nAttributes:\n"
        + "".join(
            f"  {n}: {n}'s hyper-parameters, read when algo is {n}.\n" for n in names
        )
    )
    return document_fields(cls)


def validate(
    config: TrainConfig, *, budget: bool = True, normalised_before: bool = False
) -> TrainConfig:
    """Checks the config's own rules; returns `config` unchanged.

    Every range and divisibility rule, without making its environment:
    `pjd.validate` (`run_env.validate`) also asks, where one refuses, whether
    the algorithm can act in the environment's actions.

    With `budget`, also that a replay learner's budget stores its `min_replay`
    (`Algorithm.replay_items`) and that it does not normalise observations:
    rules for training to come, not for reading a saved run, whose budget a
    resume may raise; a run resumed that `normalised_before` is warned of.

    Raises:
      ConfigError: naming the value, the rule and the fix; or `config` is not
        a TrainConfig (a preset, its name).

    """
    if not isinstance(config, TrainConfig):
        require_config(config, "training")
        raise ConfigError(
            f"training takes a TrainConfig, not a {type(config).__name__}; e.g. "
            "pjd.load_preset('cartpole').config."
        )
    record = algorithm(config.algo)  # ConfigError for an unknown name
    check_types(config)
    if is_host_env(config.env.id):  # whether it runs, before advice on its sizes
        refusal = host_refusal(
            record, config.algo_config, config.env.id, training=budget
        )
        check(refusal is None, str(refusal))
    check(
        config.rng_impl in RNG_IMPLS,
        f"rng_impl={config.rng_impl!r} is not one of {RNG_IMPLS}; pick one of them.",
    )
    for name, example in (("num_envs", 4), ("unroll_length", 128), ("num_logs", 20)):
        value = getattr(config, name)
        fix = field_example(name, example)
        check(value >= 1, f"{name}={value} must be >= 1; pass e.g. {fix}.")
    check(
        config.scan_unroll >= 0,
        f"scan_unroll={config.scan_unroll} must be >= 0; pass 0 (by platform) "
        "or a positive unroll factor.",
    )
    check_checkpoint_and_eval(config)
    check_seed(config.seed)
    check(
        config.devices >= 0,
        f"devices={config.devices} must be >= 0 (0 uses every local device).",
    )
    for what, count in (
        ("num_envs x unroll_length", config.steps_per_update),
        ("updates (total_steps / (num_envs x unroll_length))", config.num_updates),
    ):
        check(
            count < 2**31,
            f"{what} = {count:,} must be < 2**31 (the run counts them in int32); "
            "lower --total-steps, --num-envs or --unroll-length (total_steps, "
            "num_envs or unroll_length in Python).",
        )
    check(
        config.total_steps >= config.steps_per_update,
        f"total_steps={config.total_steps} is less than one update "
        f"(num_envs x unroll_length = {config.steps_per_update}); raise it, e.g. "
        f"{field_example('total_steps', config.steps_per_update)}, or lower "
        "--num-envs / --unroll-length.",
    )
    _check_core(config, record)  # first: whether the run can exist at all
    shape = run_shape(config)
    record.validate(config.algo_config, shape)
    check_env_multiple(config, record, shape)
    if budget and record.replay_items is not None:
        section = config.algo_config
        items, unit = record.replay_items(section, shape)
        check_learning_starts(config.algo, section.min_replay, items, shape, unit)
    check_host(config.host)
    check_observations(config, record, budget, normalised_before)
    return config


def run_shape(config: TrainConfig) -> RunShape:
    """The shape of `config`'s run that its algorithm's config must fit."""
    # A host-env run's devices are its learner's (`host.learner_devices`).
    host = is_host_env(config.env.id)
    requested = config.host.learner_devices if host else config.devices
    return RunShape(
        num_envs=config.num_envs,
        unroll_length=config.unroll_length,
        recurrent=config.network.recurrent,
        num_updates=config.num_updates,
        requested_devices=max(1, requested),
        devices_field="host.learner_devices" if host else "devices",
    )


def _check_core(config: TrainConfig, record: Algorithm) -> None:
    net = config.network
    check_network(net)
    if not net.recurrent:
        return
    supported = tuple(r.name for r in algorithms() if r.recurrent)
    check(
        record.recurrent,
        f"network.core={net.core!r} needs an algorithm with recurrent learners "
        f"({', '.join(supported)}); {config.algo} has none yet: use "
        f"{field_example('algo', supported[0], repr(supported[0]))} or "
        f"{field_example('network.core', 'none', repr('none'))}.",
    )
