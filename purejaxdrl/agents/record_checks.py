"""Checks of an algorithm record's functions: their signatures, what `update` returns.

A user's record (`registry.register`) is first called deep inside a run: a
factory that takes other arguments, an `update` that returns its state
alone, an acting network of the wrong output shape or a replay buffer the
state's layout does not split would fail there with a traceback through the
library that names neither the record's field nor what it must be (or,
for a layout the record does not own up to, not at all). These say both, in
one line, when the record is registered, when its networks and agent are
built, or when `update` first traces.
"""

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.base import Agent, Algorithm, distribution_sample
from purejaxdrl.agents.fields import EpsilonFields
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import RecurrentNetwork
from purejaxdrl.rl.distributions import tanh_gaussian
from purejaxdrl.setup_warnings import warn_once

# Each callable field of a record: its arguments as the library passes them
# (all positionally), and where that signature is written down.
SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "make_agent": (
        ("config", "network", "obs_example", "run"),
        " (agents.base.AgentFactory)",
    ),
    "make_networks": (
        ("config", "network_config", "observation_spec", "action_spec"),
        "",
    ),
    "validate": (("config", "shape"), " (shape: a RunShape or None)"),
    "keeps_replay": (("config",), ""),
    "replay_items": (("config", "shape"), ""),
    "env_multiple": (("config", "shape"), ""),
    "host_refusal": (("config", "env_id"), ""),
    "policy_extras": (("config", "shape", "updates"), " (shape: a RunShape)"),
    "exported_sampler": (("config", "spec", "distribution"), ""),
}


def takes(function: Callable[..., Any], count: int) -> bool | None:
    """Whether `function` can be called with `count` positional arguments.

    None where Python cannot say (a builtin without a signature): the call
    itself will tell.
    """
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def describe(function: Callable[..., Any]) -> str:
    """`function`'s name and parameters, as a message shows them: `make(a, *, b)`."""
    name = getattr(function, "__name__", type(function).__name__)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return name
    # The parameters alone: annotations would spell out module paths.
    empty = inspect.Parameter.empty
    bare = [p.replace(annotation=empty) for p in signature.parameters.values()]
    return f"{name}{signature.replace(parameters=bare, return_annotation=empty)}"


def check_signatures(record: Algorithm) -> None:
    """That each of `record`'s functions takes the arguments the library passes.

    Raises:
      ConfigError: naming the algorithm, the field, the signature it must
        have and the one it has.

    """
    for field, (arguments, where) in SIGNATURES.items():
        function = getattr(record, field)
        if function is None and field == "replay_items":
            continue  # an algorithm that learns from the first update
        required = f"({', '.join(arguments)}){where}"
        if not callable(function):
            raise ConfigError(
                f"Algorithm {record.name!r}: {field} must be a function taking "
                f"{required}, not a {type(function).__name__}."
            )
        if takes(function, len(arguments)) is False:
            raise ConfigError(
                f"Algorithm {record.name!r}: {field} is called as {field}"
                f"{required}, but {describe(function)} cannot take those "
                f"{len(arguments)} arguments, by position; give it that signature."
            )


def warn_softmax_export(record: Algorithm) -> None:
    """Warns once when a record with ε fields would export a softmax over Q.

    A config with `EpsilonFields` is a Q-learner's that explores ε-greedily;
    a record that leaves `exported_sampler` at its default (the network's
    distribution's sample) exports a policy that samples a softmax over its
    Q-values: another policy than the one it trained with.
    """
    if not (
        isinstance(record.config_type, type)
        and issubclass(record.config_type, EpsilonFields)
        and record.exported_sampler is distribution_sample
    ):
        return
    warn_once(
        f"Algorithm {record.name!r}: its config has ε fields (EpsilonFields) "
        "but its record leaves exported_sampler at the default, so its "
        "exported policy samples a softmax over the acting network's output, "
        "not ε-greedy; set exported_sampler=exported_epsilon_greedy and "
        "policy_extras=exported_epsilon (purejaxdrl.agents.q_learning) as "
        "DQN's record does.",
        key=("softmax export", record.name),
    )


def check_acting_network(
    algo: str, network: Any, obs_spec: Any, action_spec: Discrete | Box
) -> None:
    """That `make_networks`' acting network gives what acting reads, per observation.

    Its first output is what ε-greedy acting, evaluation and exported
    policies read: a Q-value or logit per action, [A], for `Discrete(A)`;
    for `Box((d,))` its distribution's parameters, [2d] for the library's
    tanh-Gaussian (mean and raw log-std per dimension), and for a
    distribution of the user's, an output whose `mode` is an action [d].
    Traced with `jax.eval_shape` on one observation: nothing is computed.

    Raises:
      ConfigError: naming the algorithm, make_networks, the shape given and
        the shape expected.

    """
    given = _first_output(network, obs_spec)
    if isinstance(action_spec, Discrete):
        space = f"Discrete({action_spec.num_values})"
        expected, what = (action_spec.num_values,), "a Q-value or logit per action"
    elif not isinstance(action_spec, Box) or not action_spec.shape:
        return
    elif network.distribution.sample is tanh_gaussian().sample:
        space, (*lead, dims) = f"Box({action_spec.shape})", action_spec.shape
        expected = (*lead, 2 * dims)
        what = "the tanh-Gaussian's mean and log-std per action dimension"
    else:
        space = f"Box({action_spec.shape})"
        as_output = jax.ShapeDtypeStruct(given, jnp.float32)
        mode = jax.eval_shape(network.distribution.mode, as_output).shape
        if tuple(mode) == action_spec.shape:
            return
        expected = "an output whose distribution's mode is an action of shape "
        expected += f"{action_spec.shape} (its mode is {tuple(mode)})"
        what = "an action's distribution"
    if given != expected:
        raise ConfigError(
            f"Algorithm {algo!r}: make_networks' acting network gives {given} per "
            f"observation; it must give {expected} for {space} ({what}), what "
            "acting, evaluation and exported policies read as its first output."
        )


def _first_output(network: Any, obs_spec: Any) -> tuple[int, ...]:
    """The shape of `network`'s first output for one observation, traced only."""
    obs = jax.tree.map(
        lambda box: jax.ShapeDtypeStruct(box.shape, jnp.float32),
        obs_spec,
        is_leaf=lambda x: isinstance(x, Box),
    )
    batch = jax.tree.map(lambda o: jax.ShapeDtypeStruct((1, *o.shape), o.dtype), obs)
    params = jax.eval_shape(network.init, jax.random.key(0), obs)
    if isinstance(network, RecurrentNetwork):
        reset = jax.ShapeDtypeStruct((1,), jnp.bool_)

        def first(params: Any, obs: Any, reset: Any) -> jax.Array:
            start = network.initial_state(1)
            return network.step(params, start, obs, reset)[1][0]

        return tuple(jax.eval_shape(first, params, batch, reset).shape[1:])
    first_ff = lambda params, obs: network.apply(params, obs)[0]  # noqa: E731
    return tuple(jax.eval_shape(first_ff, params, batch).shape[1:])


def check_state_spec(agent: Agent, algo: str, keeps_replay: bool) -> None:
    """That `agent.state_spec` splits its state exactly where the record keeps replay.

    A replay buffer in the agent's state is one shard per device, which the
    state's layout (`Agent.state_spec`) says; the record's `keeps_replay`
    says it to the rules that read it without building an agent (resumes,
    observation normalisation, sweeps' layouts). A buffer left replicated
    fails on several devices with JAX's many-line carry-type error; a layout
    the record does not own up to trains, with those rules misled.

    Raises:
      ConfigError: naming the algorithm, Agent.state_spec and DQN's as the model.

    """
    split = [
        "state" + "".join(map(str, path))
        for path, spec in jax.tree_util.tree_flatten_with_path(
            agent.state_spec, is_leaf=lambda x: isinstance(x, P)
        )[0]
        if isinstance(spec, P) and any(axis is not None for axis in spec)
    ]
    model = "DQN's DQNState(P(), P(), P(), P(), P(), P('data')), its buffer last"
    if keeps_replay and not split:
        raise ConfigError(
            f"algo={algo!r}: its record's keeps_replay(config) is True, but its "
            "agent's Agent.state_spec splits nothing over the devices (P(): "
            "the whole state replicated); give state_spec the state's layout "
            "with the replay buffer's field P('data'), one shard per device, "
            f"as {model}."
        )
    if split and not keeps_replay:
        raise ConfigError(
            f"algo={algo!r}: its agent's Agent.state_spec splits {', '.join(split)} "
            "over the devices (a replay buffer), but its record's "
            "keeps_replay(config) is False, which resumes, normalisation and "
            "sweeps read; set the record's keeps_replay to say True for this "
            "config (as DQN's record: keeps_replay=lambda config: True, with "
            f"{model}), or give Agent.state_spec P() if it keeps no replay."
        )


def checked_agent(agent: Agent, algo: str, keeps_replay: bool) -> Agent:
    """`agent`, whose `init` and `update` say so when they return the wrong kind.

    See `checked_init` and `checked_update`; both checks run in Python where
    the functions trace, adding nothing to the compiled program. First that
    `agent` is an `Agent` at all (a factory that forgets its `return` gives
    None), then its `state_spec` against `keeps_replay`, its record's
    `keeps_replay(config)` (`check_state_spec`).

    Raises:
      ConfigError: for another value than an `Agent`, naming the algorithm
        and what its factory returned, and from `check_state_spec`.

    """
    if not isinstance(agent, Agent):
        got = "None" if agent is None else _kind(agent)
        raise ConfigError(
            f"algo={algo!r}: its record's make_agent returned {got}, not an "
            "agents.base.Agent (agents.base.AgentFactory); e.g. return "
            "Agent(init=init, acting=acting, update=update)."
        )
    check_state_spec(agent, algo, keeps_replay)
    return checked_update(checked_init(agent, algo), algo)


def checked_init(agent: Agent, algo: str) -> Agent:
    """`agent`, whose `init` says so when its state has no `params` field.

    The library reads the learner's parameters as `state.params` (to act,
    evaluate, export and save them); an `init` that returns a dict or a tuple
    would fail there with an AttributeError deep in a runner.
    """
    init = agent.init

    def init_checked(key: Any) -> Any:
        state = init(key)
        if not hasattr(state, "params"):
            raise ConfigError(
                f"algo={algo!r}: its agent's init returned {_kind(state)}, but it "
                "must return a state with a `params` field (agents.base.Agent."
                "init); e.g. return AgentState(params, opt_state, "
                "jnp.zeros((), jnp.int32))."
            )
        return state

    return agent._replace(init=init_checked)


def checked_update(agent: Agent, algo: str) -> Agent:
    """`agent`, whose `update` says so when it returns other than (state, metrics).

    The runners unpack what `update` returns; an `update` that returns its
    state alone would fail there with Python's "too many values to unpack",
    which names no function. The check runs where `update` traces, in Python:
    nothing is added to the compiled program.
    """
    update = agent.update

    def update_checked(state: Any, batch: Any, key: Any) -> Any:
        try:
            out = update(state, batch, key)
        except TypeError as error:
            _raise_if_constant_carry(error, algo, agent.axis_name)
            raise
        # A NamedTuple is a state (AgentState), never the (state, metrics) pair.
        if not (
            type(out) in (tuple, list) and len(out) == 2 and isinstance(out[1], Mapping)
        ):
            raise ConfigError(
                f"algo={algo!r}: its agent's update returned {_kind(out)}, but it "
                "must return (state, metrics), metrics a dict of arrays "
                "(agents.base.Agent.update); e.g. return state, {'loss': loss}."
            )
        leaves = jax.tree_util.tree_flatten_with_path(dict(out[1]))[0]
        shaped = {
            "/".join(str(getattr(k, "key", k)) for k in path): jnp.shape(leaf)
            for path, leaf in leaves
            if jnp.shape(leaf) != ()
        }
        if shaped:
            name, shape = next(iter(shaped.items()))
            raise ConfigError(
                f"algo={algo!r}: its agent's update returned metric {name!r} of "
                f"shape {shape}, but each metric must be a scalar (the runners "
                "log one number per metric); return its mean, e.g. jnp.mean(x)."
            )
        return out

    return agent._replace(update=update_checked)


def _raise_if_constant_carry(error: TypeError, algo: str, axis: str | None) -> None:
    """A ConfigError for JAX's many-line varying-type error of a loop's carry.

    On several devices the update traces inside `shard_map` with its check of
    varying types: a loop whose carry starts from a constant but takes values
    of the batch fails to trace, with a message of 8 lines under a traceback
    through the runner. None of the library's agents hits it; a user's may.
    """
    text = str(error)
    if "manual axis types do not match" not in text:
        return
    found = re.search(r"input carry component (\S+) has type", text)
    component = f" ({found[1]})" if found else ""
    raise ConfigError(
        f"algo={algo!r}: its agent's update has a lax.scan / fori_loop / "
        f"while_loop whose carry{component} starts from a constant but takes "
        f"values that differ per device over axis {axis!r}; start that carry "
        "from the batch (jnp.zeros_like(traj.reward[0]), not jnp.zeros(B)) or "
        f"make it varying, jax.lax.pcast(x, {axis!r}, to='varying') (guide "
        "'Adding an algorithm', 'The update on several devices')."
    ) from None


def _kind(value: Any) -> str:
    """What `value` is, in a few words: "an AgentState", "a tuple of 3"."""
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if type(value) in (tuple, list):
        inner = ", ".join(type(v).__name__ for v in value)
        return f"{article} {name} of {len(value)} ({inner})"
    return f"{article} {name}"
