"""Hints for unknown command-line words: the flag or preset they likely mean."""

import dataclasses
import difflib
import pathlib

from purejaxdrl.agents.registry import algorithms
from purejaxdrl.config_docs import FIELD_ALIASES

_ALIASES = {
    key.replace("_", "-"): field.replace("_", "-")
    for key, field in FIELD_ALIASES.items()
}


def flag_hint(flag: str, flags: list[str], env_id: str | None = None) -> str:
    """What to say of the unknown `flag`: the flag it likely means, if any.

    `env_id`: the run's environment, whose own options an `--env.X` may mean.
    """
    if flag != flag.lower() and not flag.startswith("--env."):  # --LR, --Seed
        lower = flag.lower()  # (an environment's options keep their case)
        if lower in flags:
            return f"did you mean {lower}? (flags are lower case) "
        return flag_hint(lower, flags, env_id)
    section, dot, leaf = flag.removeprefix("--").rpartition(".")
    # Config files, --grid and the API spell fields with underscores.
    dashed = "--" + flag.removeprefix("--").replace("_", "-")
    if dashed in flags:
        return f"did you mean {dashed}? (flags spell words with dashes) "
    # `--eps` for --ppo.eps: the one section's field of that name.
    owned = [f for f in flags if f.count(".") == 1 and f.endswith(f".{dashed[2:]}")]
    if not dot and len(owned) == 1:
        return f"did you mean {owned[0]}? "
    alias = _ALIASES.get(leaf.replace("_", "-"))
    if alias and not dot and f"--{alias}" in flags:  # --budget: --total-steps
        return f"did you mean --{alias}? "
    if alias:
        meant = [f for f in flags if f.endswith(f".{alias}")]
        meant = [f for f in meant if f.startswith(f"--{section}{dot}")] or meant
        if len(meant) == 1:
            return f"did you mean {meant[0]}? "
    # `--tot` for --total-steps: a prefix of one flag only.
    # Not when the word is a whole word of another flag of its section:
    # --sac.alpha is no abbreviation of --sac.alpha-learning-rate but
    # --sac.init-alpha's kin (another section's --x.max-y says nothing of it).
    prefixed = [f for f in flags if f.startswith(dashed)]
    head, _, word = dashed.rpartition(".")
    word = word.removeprefix("--")
    whole = [
        f
        for f in flags
        if f.rpartition(".")[0] == head
        and word in f.rpartition(".")[2].strip("-").split("-")
    ]
    if len(prefixed) == 1 and len(dashed) > 3 and set(whole) <= set(prefixed):
        return f"did you mean {prefixed[0]}? "
    # `--num` for one of --num-envs, --num-logs, ...: none is likelier, unless
    # one is the start of the others (`--en`: --env, not --envs).
    shortest = min(prefixed, key=len, default="")
    many = 1 < len(prefixed) <= 4 and len(dashed) > 3
    many = many and not flag.startswith("--env.")  # the environment's options
    if many and not all(f.startswith(shortest) for f in prefixed):
        return f"did you mean one of {', '.join(sorted(prefixed))}? "
    # An --env.X that is no typo of a flag (--env.randomize true) is an
    # environment's own option, which --env.option KEY=VALUE sets.
    env_option = flag.startswith("--env.") and "--env.option" in flags
    # `--envs` for --num-envs, `--unroll` for --scan-unroll or --unroll-length:
    # the flags of its section that have it as a whole word.
    # Without a section (`--hidden`), any section's (--network.hidden-sizes).
    whole = whole or [
        f
        for f in flags
        if not dot and word in f.rpartition(".")[2].strip("-").split("-")
    ]
    foreign = _foreign_flag_hint(flag, flags)  # --env.activation: network's
    if not env_option and not foreign and len(word) > 2 and 1 <= len(whole) <= 3:
        named = " or ".join(sorted(whole))
        named = named if len(whole) < 3 else f"one of {', '.join(sorted(whole))}"
        return f"did you mean {named}? "
    cutoff = 0.85 if env_option else 0.6
    # A one-letter word (`--t`) is close to too many flags to say.
    close = difflib.get_close_matches(flag, flags, n=1, cutoff=cutoff)
    close = close if len(word) > 1 else []
    hint = foreign or (f"did you mean {close[0]}? " if close else "")
    if env_option and not close and not foreign:
        name = flag.removeprefix("--env.").replace("-", "_")
        hint = env_option_hint(name, env_id)
    return hint


def env_option_hint(name: str, env_id: str | None) -> str:
    """For `--env.NAME`: `--env.option NAME=VALUE`, or the option `env_id` takes.

    Where `env_id`'s options are known here (a Playground task's) and NAME is
    none of them, the closest one is named instead of a NAME it would refuse.
    """
    from purejaxdrl.env.playground_names import offered_options

    offered = offered_options(env_id) if env_id else None
    if offered is None or name in offered:
        return f"an environment's own option? {_option(name)}. "
    close = difflib.get_close_matches(name, offered, n=1)
    fix = f"did you mean {_option(close[0])}? " if close else ""
    fix = fix or f"its options are {', '.join(offered)}. "
    return f"{name!r} is not an option of {env_id} either; {fix}"


def _option(name: str) -> str:
    """Both spellings of setting option `name`, its value a placeholder."""
    return f"--env.option {name}=VALUE (env.options={{{name!r}: VALUE}} in Python)"


def word_hint(words: list[str], flags: list[str]) -> str:
    """For `train cartpole` or `train envs/cartpole.yaml`: a preset without --env."""
    from purejaxdrl.training.presets.files import shipped_like
    from purejaxdrl.training.presets.load import preset_names

    if "--env" not in flags or not words:
        return ""
    if words[0] in preset_names():
        return f"a preset is named by a flag: did you mean --env {words[0]}? "
    if words[0].endswith((".yaml", ".yml")):
        # Outside a clone, envs/cartpole.yaml is not there: the shipped preset is.
        exists = pathlib.Path(words[0]).is_file()
        meant = words[0] if exists else shipped_like(words[0]) or words[0]
        return f"a preset file is passed with a flag: did you mean --env {meant}? "
    return ""


def _foreign_flag_hint(flag: str, flags: list[str]) -> str:
    """For --dqn.num-minibatches: the sections whose field it is, if any."""
    section, dot, leaf = flag.removeprefix("--").partition(".")
    field = leaf.replace("-", "_")
    leaf = field.replace("_", "-")  # how the flags spell it
    # Every algorithm's section (a run's parser has only its own algorithm's
    # flags), then the other sections the parser has (eval.episodes).
    owners = [
        record.name
        for record in algorithms()
        if field in {f.name for f in dataclasses.fields(record.config_type)}
    ]
    owners += [
        owner
        for f in flags
        if f.endswith(f".{leaf}")
        and f.count(".") == 1
        and (owner := f.removeprefix("--").split(".")[0]) not in owners
    ]
    # Never claim a field is not the section's own when the section has it:
    # this command just takes no flags of that section (eval, export, or a
    # resume of another algorithm's run).
    if section in owners:
        if any(f.startswith(f"--{section}.") for f in flags):
            return ""
        return (
            f"{field} is {section}'s, but this command takes no --{section}.* flags. "
        )
    owners = [owner for owner in owners if owner != section]
    if not dot or not leaf or not owners:
        return ""
    # The example is a flag this command takes where one is (a resume of dqn
    # refuses --ppo.*), else the first owner's (a new run of it takes it).
    example = next((o for o in owners if f"--{o}.{leaf}" in flags), owners[0])
    return (
        f"{field} is a field of {', '.join(owners)}, not "
        f"{section}'s (e.g. --{example}.{leaf}). "
    )
