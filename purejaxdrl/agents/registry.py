"""The algorithms: one record per algorithm module, found by name.

A built-in algorithm is one module under `agents/` that defines its
`ALGORITHM` record (see `agents.base.Algorithm`), one line in `_ALGORITHMS`
below and one field in `AlgorithmConfigs` (its section of a `TrainConfig`).
A user's algorithm, defined outside the package, is registered with
`register(record)`; the run's config then has a section for it
(`training.config.config_class`). The config, command line, sweeps and runners
learn of either from here.
"""

import contextlib
import dataclasses
import difflib
import keyword
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import jax

from purejaxdrl.agents import a2c, apex, dqn, impala, ppo, pqn, r2d2, sac
from purejaxdrl.agents.a2c import A2CConfig
from purejaxdrl.agents.action_kinds import action_kind, kind_refusal
from purejaxdrl.agents.base import Agent, Algorithm, RunShape
from purejaxdrl.agents.dqn_config import DQNConfig
from purejaxdrl.agents.impala import IMPALAConfig
from purejaxdrl.agents.ppo import PPOConfig
from purejaxdrl.agents.pqn import PQNConfig
from purejaxdrl.agents.r2d2 import R2D2Config
from purejaxdrl.agents.record_checks import check_signatures, warn_softmax_export
from purejaxdrl.agents.sac import SACConfig
from purejaxdrl.agents.section_checks import check_config, check_preset_section
from purejaxdrl.config import ConfigError, Selection
from purejaxdrl.config_docs import document_fields
from purejaxdrl.env.host import is_host_env
from purejaxdrl.networks import Network

_ALGORITHMS: dict[str, Algorithm] = {
    record.name: record
    for record in (
        ppo.ALGORITHM,
        impala.ALGORITHM,
        a2c.ALGORITHM,
        dqn.ALGORITHM,
        apex.ALGORITHM,
        r2d2.ALGORITHM,
        sac.ALGORITHM,
        pqn.ALGORITHM,
    )
}
_BUILT_IN = frozenset(_ALGORITHMS)
# help() and the API reference describe every field of a config, its bases' too.
for _config in {r.config_type for r in _ALGORITHMS.values()}:
    document_fields(_config)
DEFAULT_ALGO = "ppo"
"""The algorithm a config, preset, command or sweep trains unless told another."""
_RESERVED: set[str] = set()  # the run config's own names (`reserve_names`)

# What a name must look like: a config section and a command-line flag prefix.
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def names() -> tuple[str, ...]:
    """The registered algorithms' names (`--algo` values)."""
    return tuple(_ALGORITHMS)


def unread_section(what: str, section: str, algo: str, fix: str) -> str:
    """The refusal of `what`, a setting of another algorithm's section than the run's.

    One wording wherever a run's algorithm meets another's setting: from
    Python (`apply_overrides`, fix `algo='ppo'`) and the command line
    (`--ppo.learning-rate` in a run of dqn, fix `--algo ppo`).
    """
    return (
        f"{what} sets {section}'s hyper-parameters, but this run trains "
        f"{algo}; pass {fix}, or drop it."
    )


def no_section(name: str, what: str = "") -> str:
    """Why a config has no section for the registered algorithm `name`, and the fix.

    `what` names what asked for it (default: the name), e.g. "algo='mine'".
    """
    return (
        f"{what or repr(name)} has no section in this config: it was made as a "
        "TrainConfig, which holds the built-in algorithms' only. Make it after "
        f"registering {name!r}: pjd.load_preset(..., algo={name!r}).config, or "
        "pjd.training.config_class()(...)."
    )


def action_refusal(name: str, sections: Any, env_id: str) -> str | None:
    """Why algorithm `name` cannot act in the actions of a preset's environment.

    The environment's action space is read off the algorithms a preset file
    has sections for (`sections`: its top-level keys), without making it:
    where they all act in one kind (a dqn section: discrete), that is its
    kind. None where `name` acts in it, or the kind is not known.
    """
    taken = [_ALGORITHMS[s] for s in sections if s in _ALGORITHMS and s != name]
    kinds = set.intersection(*(set(r.action_kinds) for r in taken)) if taken else set()
    if len(kinds) != 1 or (kind := kinds.pop()) in algorithm(name).action_kinds:
        return None
    fits = [r.name for r in taken if kind in r.action_kinds]
    wanted = algorithm(name).action_kinds
    return kind_refusal(name, wanted, kind, env_id, fits, "another of its")


def acting_refusal(name: str, action_spec: Any, env_id: str) -> str | None:
    """Why algorithm `name` cannot act in `action_spec`, an environment's actions.

    Read off its record's `action_kinds` before its networks are made, for
    every algorithm alike (a user's too), in `action_refusal`'s words; None
    where it acts in them.
    """
    kind, wanted = action_kind(action_spec), algorithm(name).action_kinds
    if kind is None or kind in wanted:
        return None
    fits = [r.name for r in algorithms() if kind in r.action_kinds]
    if is_host_env(env_id):  # nor one the host-env runner refuses (hr15 #2)
        fits = [n for n in fits if n in without_replay()]
    return kind_refusal(name, wanted, kind, env_id, fits, "another that acts in them")


def stale_section(name: str, section: Any) -> str:
    """Why `section`, a config's section for algorithm `name`, is out of date; or "".

    Registering `name` again (a notebook cell or a reloaded module run again)
    makes a new config class; a section made before is of the old one, of
    the same name, whose fields may no longer be the algorithm's. One wording
    for a run (`make_agent`) and an override (`config.apply_overrides`).
    """
    kind = algorithm(name).config_type
    if type(section).__qualname__ != kind.__qualname__ or isinstance(section, kind):
        return ""
    return (
        f"algo={name!r}: this config's section was made before {name!r} was "
        "registered again (a reloaded module makes a new config class); make "
        "the config again, e.g. from pjd.load_preset."
    )


def _section(name: str) -> Any:
    """A field whose default is algorithm `name`'s `default_config()`."""
    return dataclasses.field(default_factory=_ALGORITHMS[name].default_config)


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlgorithmConfigs:
    """One hyper-parameter section per registered algorithm, named after it.

    `training.TrainConfig` inherits these fields, so editors and type checkers
    see `config.ppo` as a `PPOConfig`; a run reads the section its `algo`
    names (`TrainConfig.algo_config`) and leaves the others at their defaults.
    Written out, one field per entry of `_ALGORITHMS`, in the same order (a
    test checks they agree), each defaulting to its record's `default_config()`.

    Attributes:
      ppo: PPO's hyper-parameters, read when algo is ppo.
      impala: IMPALA's hyper-parameters, read when algo is impala.
      a2c: A2C's hyper-parameters, read when algo is a2c.
      dqn: DQN's hyper-parameters, read when algo is dqn.
      apex: Ape-X's hyper-parameters (DQN's config with Ape-X's defaults),
        read when algo is apex.
      r2d2: R2D2's hyper-parameters, read when algo is r2d2.
      sac: SAC's hyper-parameters, read when algo is sac.
      pqn: PQN's hyper-parameters, read when algo is pqn.

    """

    # How `config.apply_overrides` tells these sections from the run's own
    # fields, and words a change to one the run's `algo` does not read.
    SELECTION: ClassVar[Selection] = Selection(
        by="algo",
        names=names,
        missing=no_section,
        unread=unread_section,
        stale=stale_section,
    )

    ppo: PPOConfig = _section("ppo")
    impala: IMPALAConfig = _section("impala")
    a2c: A2CConfig = _section("a2c")
    dqn: DQNConfig = _section("dqn")
    apex: DQNConfig = _section("apex")
    r2d2: R2D2Config = _section("r2d2")
    sac: SACConfig = _section("sac")
    pqn: PQNConfig = _section("pqn")


def reserve_names(names_: set[str]) -> None:
    """Names no algorithm may take: the run config's own fields and attributes.

    `training.config` reserves them when it is imported (this module cannot
    import it: it builds the config's sections from here).
    """
    _RESERVED.update(names_)


def register(record: Algorithm) -> None:
    """Makes a user's algorithm trainable by name, as the built-in ones are.

    After `register(ALGORITHM)`, `algo=<record.name>` trains it from Python
    (`pjd.train`, `pjd.sweep`, `pjd.pbt`), the command line (`--algo NAME`,
    with `--env.imports MODULE` naming the module that registers it) and a
    resumed, evaluated or exported run; the run's config holds its section
    (`training.config.config_class`). Registering a name again replaces the
    record (a notebook cell run twice).

    Not pure: it changes this process's registry, and the caller's own config
    class: `record.config_type.__doc__` is rewritten to describe the fields
    it inherits too (`config_docs.document_fields`, as the built-in configs'
    are; the docstring as written is kept in its `_declared_doc`). Warns
    (`SetupWarning`) where a config with ε fields leaves `exported_sampler`
    at its default (`record_checks.warn_softmax_export`).

    Raises:
      ConfigError: for a record that is not an `Algorithm`, a name that is a
        built-in algorithm's, a run field's, a Python keyword or not a
        lowercase identifier, a function (`make_agent`, ...) that cannot take
        the library's arguments (`record_checks`), a bad `default_config`
        (unhashable, taking arguments, not of `config_type`), a `config_type`
        that is not a pytree dataclass, has a field configs cannot read or a
        dynamic field that is not `float | jax.Array` (mark it static)
        (`section_checks`), a `preset_section` that is no built-in's name; or
        a section the run config class cannot take. Nothing is registered
        then.

    Warns (a SetupWarning, once) of config fields that no `Attributes:`
    entry describes (`section_checks`): `--help` lists them bare.

    """
    if not isinstance(record, Algorithm):
        raise ConfigError(
            f"register takes an agents.base.Algorithm record, not "
            f"{type(record).__name__}; build one as docs/examples/reinforce.py's "
            "ALGORITHM."
        )
    name = record.name
    if name in _BUILT_IN:
        raise ConfigError(
            f"Algorithm name {name!r} is a built-in algorithm's; give yours "
            f"another name, e.g. {name + '_mine'!r}."
        )
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name in _RESERVED:
        raise ConfigError(
            f"Algorithm name {name!r} must be a lowercase identifier that is no "
            "run field's or TrainConfig attribute's (seed, env, eval, ...): it "
            "names a config section and its flags, e.g. 'reinforce'."
        )
    if keyword.iskeyword(name):
        # A config section is a dataclass field, which a keyword cannot name.
        raise ConfigError(
            f"Algorithm name {name!r} is a Python keyword, which cannot name its "
            f"config section; give it another name, e.g. {name + '_ac'!r}."
        )
    check_signatures(record)
    try:
        hash(record.default_config)
    except TypeError:
        raise ConfigError(
            f"Algorithm {name!r}: default_config must be a function or a class "
            f"(hashable), not a {type(record.default_config).__name__} instance."
        ) from None
    check_config(name, record)
    check_preset_section(record, _BUILT_IN)
    _trial(record)
    document_fields(record.config_type)
    warn_softmax_export(record)


@contextlib.contextmanager
def registered(*records: Algorithm) -> Iterator[None]:
    """Within it, `records` are registered (`register`, in order); after, none is.

    For a test of your own algorithm that leaves no trace in the process:
    on leaving, the registry is as it was on entering, so what was
    registered within (by `records`, or by a module imported there) is gone
    and a name registered before is back to its earlier record.

        with pjd.agents.registered(ALGORITHM):
            pjd.train(pjd.load_preset("cartpole", algo=ALGORITHM.name).config)

    Not pure: it changes this process's registry while it lasts.
    """
    before = dict(_ALGORITHMS)
    try:
        for record in records:
            register(record)
        yield
    finally:
        _ALGORITHMS.clear()
        _ALGORITHMS.update(before)


def _trial(record: Algorithm) -> None:
    """Stores `record`, and takes it back out if the sections cannot be a class.

    The run config class with every user's section is built when a config is
    next made (any algorithm's, a built-in one's too): a record it cannot
    take would break every later config of the process, and there is no
    unregistering. So its sections are built here first, on its base
    `AlgorithmConfigs`, as `training.config.config_class` builds them on
    `TrainConfig` (whose other fields `reserve_names` keeps from users).
    """
    previous = _ALGORITHMS.get(record.name)
    _ALGORITHMS[record.name] = record
    sections = [
        (r.name, r.config_type, dataclasses.field(default_factory=r.default_config))
        for r in registered_by_user()
    ]
    try:
        dataclasses.make_dataclass(
            "TrainConfig",
            sections,
            bases=(AlgorithmConfigs,),
            frozen=True,
            kw_only=True,
        )
    except Exception as e:
        if previous is None:
            del _ALGORITHMS[record.name]
        else:
            _ALGORITHMS[record.name] = previous
        raise ConfigError(
            f"Algorithm {record.name!r}: the run config cannot take its section "
            f"({type(e).__name__}: {e}); nothing is registered. Check its name and "
            "config_type."
        ) from None


def registered_by_user() -> tuple[Algorithm, ...]:
    """The records `register` added, in registration order."""
    return tuple(r for r in _ALGORITHMS.values() if r.name not in _BUILT_IN)


def algorithms() -> tuple[Algorithm, ...]:
    """Every registered algorithm's record, in registration order."""
    return tuple(_ALGORITHMS.values())


def without_replay() -> tuple[str, ...]:
    """The algorithms whose default configs keep no replay: the host-env runner's."""
    return tuple(r.name for r in algorithms() if not r.keeps_replay(r.default_config()))


def algorithm(name: str) -> Algorithm:
    """The record of the algorithm called `name`.

    Raises:
      ConfigError: for an unknown name, listing the known ones.

    """
    if name not in _ALGORITHMS:
        # --algo PPO, --algo ppp: the name meant, ahead of the list.
        lower = str(name).lower()
        close = [lower] if lower in _ALGORITHMS else []
        close = close or difflib.get_close_matches(lower, names(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"algo={name!r} is not a known algorithm; {hint}use one of {names()}, or "
            "import the module that registers yours (--env.imports MODULE)."
        )
    return _ALGORITHMS[name]


def make_agent(
    algo: str,
    algo_config: Any,
    network: Network | Any,
    obs_example: jax.Array,
    run: RunShape,
) -> Agent:
    """Builds the agent of the registered algorithm `algo` (`names()`).

    The other arguments are its factory's (`base.AgentFactory`).

    Raises:
      ConfigError: for an unknown algorithm, a config of the wrong type, or a
        value out of range.

    """
    record = algorithm(algo)
    stale = stale_section(algo, algo_config)
    if stale:
        raise ConfigError(stale)
    if not isinstance(algo_config, record.config_type):
        raise ConfigError(
            f"algo={algo!r} takes a config of type {record.config_type.__name__}, "
            f"got {type(algo_config).__name__}; pass the TrainConfig's {algo!r} "
            "field."
        )
    return record.make_agent(algo_config, network, obs_example, run)
