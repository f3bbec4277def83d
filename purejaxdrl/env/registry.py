"""Environment registry: `make(name, **options)` over the built-in and user envs."""

import difflib
import functools
import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.env.base import (
    Env,
    UnknownEnvironmentError,
    check_option_types,
    keyword_defaults,
    keyword_names,
)
from purejaxdrl.setup_warnings import warn_once

_FACTORIES: dict[str, Callable[..., Env]] = {}
# Names registered through `register` (users' code), each with the module
# whose code called it: the one `env.imports` must name for another process.
_USERS: dict[str, str] = {}


def register(name: str, factory: Callable[..., Env]) -> None:
    """Registers `factory(**options) -> Env` under `name` (replacing any).

    A name of gymnax's registry is replaced too (yours wins, as in
    Gymnasium's registry), with a `SetupWarning`: a preset's target for that
    id is no longer about your environment. The libraries' prefixed names
    are refused.

    Args:
      name: the id `make` and `--env.id` take.
      factory: a callable (a class, a function) of the environment's options
        (`--env.option key=value`) that returns an Env.

    Raises:
      ConfigError: `factory` is not callable (an instance, say, where its
        class or a function that makes one is wanted), or `name` begins with
        a prefix the library adapters own (`brax/`, `playground/`,
        `Craftax-`) or that routes to the host path (`envpool:`, `gymnasium:`).

    """
    for prefix, owner in RESERVED_PREFIXES.items():
        if name.startswith(prefix):
            raise ConfigError(
                f"register({name!r}): names beginning {prefix!r} belong to "
                f"{owner}, which make() builds itself; register yours under a "
                f"name of your own, e.g. {('my-' + name.removeprefix(prefix))!r}."
            )
    if not callable(factory):
        raise ConfigError(
            f"register({name!r}, {type(factory).__name__} instance): the factory "
            "must make the environment, not be one; pass its class or a "
            f"function, e.g. register({name!r}, {type(factory).__name__})."
        )
    built_in = name in _FACTORIES and name not in _USERS
    _FACTORIES[name] = factory
    _USERS[name] = sys._getframe(1).f_globals.get("__name__", "")
    if built_in or name in getattr(sys.modules.get("gymnax"), "registered_envs", ()):
        warn_shadowed(name)


def warn_shadowed(name: str) -> None:
    """Says that the user's `name` replaces gymnax's id of that name."""
    warn_once(
        f"register({name!r}) by module {_USERS[name]!r} replaces gymnax's {name} "
        "in this process; the shipped presets' targets for it no longer apply "
        "(register yours under a name of your own, e.g. "
        f"{('my-' + name)!r}, to keep both)",
        ("shadowed", name),
    )


def _check_user_options(
    name: str, factory: Callable[..., Env], options: dict
) -> dict[str, Any]:
    """One line, not a TypeError from the call, for options `factory` can't take.

    Options whose keyword has a number or bool default are type-checked as
    the adapters' are (`check_option_types`): `length=abc` would otherwise
    fail inside the environment's first trace, and `length=2.5` train with
    a length of 2.

    Returns:
      `options`, as `check_option_types` returns them.

    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable: let the call say
        return options
    try:
        signature.bind(**options)
    except TypeError as e:
        takes = sorted(keyword_names(factory)[0])
        if takes:
            fix = (
                f"it takes {', '.join(takes)}; pass only those (--env.option "
                "KEY=VALUE, env.options in Python)."
            )
        else:
            fix = (
                "its factory takes no keywords; give it some to take options, "
                "e.g. lambda goal=0.8: ... (docs: Bring your own environment)."
            )
        raise ConfigError(
            f"env.options {options} do not fit {name!r} ({e}): {fix}"
        ) from None
    return check_option_types(name, options, keyword_defaults(factory), user=True)


def registered_by_user(name: str) -> bool:
    """Whether `name` came from `register` (the user's code), not an adapter."""
    return name in _USERS


def registering_module(name: str) -> str:
    """The module whose code registered user name `name` ("" if none did).

    `__main__` for a script's or a notebook's own `register` call.
    """
    return _USERS.get(name, "")


BRAX_PREFIX = "brax/"
PLAYGROUND_PREFIX = "playground/"
# What `register` refuses: names the adapters or the host path own.
RESERVED_PREFIXES = {
    BRAX_PREFIX: "the brax adapter",
    PLAYGROUND_PREFIX: "the MuJoCo Playground adapter",
    "envpool:": "EnvPool's host path",
    "gymnasium:": "Gymnasium's host path",
    "Craftax-": "the Craftax adapter",
}


@functools.cache
def _register_gymnax() -> None:
    import gymnax  # imported on first use: it costs about a second

    from purejaxdrl.env.gymnax_env import GymnaxEnv

    for env_id in gymnax.registered_envs:
        if env_id in _USERS:  # registered before gymnax was imported
            warn_shadowed(env_id)
        _FACTORIES.setdefault(env_id, functools.partial(GymnaxEnv, env_id))


@functools.cache
def _register_brax() -> None:
    # brax pulls in MuJoCo: seconds and hundreds of MB, so only when asked for.
    from purejaxdrl.env.brax_env import BraxEnv, import_brax_envs

    # brax has no public listing of its environments; `_envs` is its registry.
    for env_id in import_brax_envs()._envs:
        _FACTORIES.setdefault(BRAX_PREFIX + env_id, functools.partial(BraxEnv, env_id))


@functools.cache
def _register_playground() -> None:
    # Playground's registry imports all its tasks (~8 s), and the package is an
    # optional extra: without it, its names are not listed, and making one says
    # how to install it.
    from purejaxdrl.env.playground_env import PlaygroundEnv, import_registry

    try:
        names = import_registry().ALL_ENVS
    except ConfigError:
        names = ()
    for name in names:
        env_id = PLAYGROUND_PREFIX + name
        _FACTORIES.setdefault(env_id, functools.partial(PlaygroundEnv, env_id))


@functools.cache
def _register_craftax() -> None:
    # Listed whether or not the optional package is installed: making one
    # without it says how to install it.
    from purejaxdrl.env.craftax_env import CRAFTAX_IDS, CraftaxEnv

    for env_id in CRAFTAX_IDS:
        _FACTORIES.setdefault(env_id, functools.partial(CraftaxEnv, env_id))


def _register_builtins(name: str | None = None) -> None:
    if name is not None and name in _FACTORIES:
        return
    _register_craftax()
    # A brax name needs no gymnax (whose import, through seaborn and scipy,
    # costs about 3 s); an unknown name registers everything for the hint.
    if name is None or name.startswith(BRAX_PREFIX):
        _register_brax()
    if name is None or name.startswith(PLAYGROUND_PREFIX):
        _register_playground()
    if name is None or name not in _FACTORIES:
        _register_gymnax()


def _close_names(name: str) -> list[str]:
    """Registered names near `name`, for the unknown-name hint.

    Those alike without their library's prefix, case and underscores
    (`CheetahRun`, `cheetah_run`: `playground/CheetahRun`), else those
    spelled alike.
    """

    def bare(n: str) -> str:
        return n.rsplit("/", 1)[-1].lower().replace("_", "").replace("-", "")

    same = sorted(n for n in _FACTORIES if bare(n) == bare(name))
    return same or difflib.get_close_matches(name, _FACTORIES, n=3)


def registered() -> list[str]:
    """All names `make` accepts: gymnax, brax/, playground/, Craftax and user names.

    `playground/<Name>` names are listed where the playground extra is
    installed; the four Craftax ids (`Craftax-Classic-Symbolic-v1`...) always,
    and making one without the craftax extra says how to install it.
    """
    _register_builtins()
    return sorted(_FACTORIES)


def make(name: str, **options: Any) -> Env:
    """Builds the environment registered as `name` with backend `options`.

    Args:
      name: a registered id (`purejaxdrl list --envs` lists them).
      **options: keyword options of its backend or factory (`--env.option
        key=value`).

    Examples: `make("CartPole-v1")`, `make("brax/ant", backend="positional",
    episode_length=1000)`.

    Raises:
      UnknownEnvironmentError: nobody registered `name`.
      ConfigError: for a user's environment, options its factory does not
        take, or of another type than its defaults, or a factory that
        assigns `default_params` (a property).

    """
    _register_builtins(name)
    if name not in _FACTORIES and name.startswith(PLAYGROUND_PREFIX):
        # Playground's names are listed only where it imports: say why not
        # (not installed, or MuJoCo's OpenGL library missing) in one line.
        from purejaxdrl.env.playground_env import import_registry

        import_registry(name)
    if name not in _FACTORIES:
        _register_builtins()  # every library's names, for the count and hint
        _check_host_spelling(name)
        close = _close_names(name)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        advice = (
            " If a module of your own registers it (purejaxdrl.env.register), "
            "import that first: "
            f"{both_ways('--env.imports', 'env.imports', 'MODULE', ['MODULE'])}."
        )
        error = UnknownEnvironmentError(
            f"Unknown environment {name!r}: it must be one of "
            f"purejaxdrl.env.registered() ({len(_FACTORIES)} names, e.g. "
            f"'CartPole-v1', 'brax/ant').{hint}{advice}"
        )
        error.imports_advice = advice
        raise error
    if name not in _USERS:
        return _FACTORIES[name](**options)
    options = _check_user_options(name, _FACTORIES[name], options)
    try:
        return _FACTORIES[name](**options)
    except AttributeError as e:
        # `self.default_params = ...` in `__init__` meets Env's read-only
        # property: one line naming the rule, not the user's traceback.
        message = str(e)
        assigned = "setter" in message or "can't set" in message
        if "'default_params'" in message and assigned:
            raise ConfigError(
                f"{name}: its factory assigns default_params ({message}); make it "
                "a @property returning the params pytree (e.g. store them as "
                "self._params and return those), as every purejaxdrl.env.Env does."
            ) from None
        raise


_HOSTS = {"gymnasium": "Gymnasium", "envpool": "EnvPool"}


# An Atari game as EnvPool (`Breakout-v5`) or Gymnasium's ALE (`ALE/Breakout-v5`)
# names it.
_ATARI = re.compile(r"(?:ALE/)?([A-Z][A-Za-z]*-v5)")


def _check_host_spelling(name: str) -> None:
    """Refuses a host id spelt as a device one, naming the host id to pass.

    An id that an imported host library registers (`--env.imports` made
    Gymnasium's): its prefix is missing. `envpool/X` or `gymnasium/X`:
    device ids take a slash (`brax/ant`), so a host id written so is
    natural, and the closest device name (gymnax's `CartPole-v1`) would
    switch backends. `Breakout-v5` or `ALE/Breakout-v5`: an Atari game,
    which runs on the host through EnvPool (the closest device name, a
    MinAtar game, is named beside it).
    """
    library, slash, task = name.partition("/")
    atari = _ATARI.fullmatch(name)
    host = _host_library(name)
    if host:  # registered, but in a host library's registry, not ours
        fixed = f"{host}:{name}"
        why = f"{name} is {_HOSTS[host]}'s, a host environment"
    elif slash and library in _HOSTS:
        fixed = f"{library}:{task}"
        why = "Host ids take a colon: envpool:<task>, gymnasium:<id>"
    elif atari:
        fixed = f"envpool:{atari[1]}"
        why = "Atari games run on the host, through EnvPool"
    else:
        return
    close = _close_names(name) if atari else []
    kin = f" The closest device environment is {close[0]}." if close else ""
    raise UnknownEnvironmentError(
        f"Unknown environment {name!r}: did you mean {fixed}? {why}; pass "
        f"{both_ways('--env.id', 'env.id', fixed, repr(fixed))}.{kin}"
    )


def _host_library(name: str) -> str:
    """The host library ("gymnasium", "envpool") that registers `name`, or "".

    Only a library already imported is asked: the module of `--env.imports`
    that registered `name` there imported it, and a device run need not pay
    for importing one.
    """
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is not None and name in getattr(gymnasium, "registry", {}):
        return "gymnasium"
    envpool = sys.modules.get("envpool")
    if envpool is not None and name in getattr(envpool, "list_all_envs", list)():
        return "envpool"
    return ""
