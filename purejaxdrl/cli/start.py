"""What a fresh command starts from: its preset and algorithm, said where chosen."""

import argparse

from purejaxdrl.config_types import ConfigError


def command_start(known: argparse.Namespace) -> tuple[str, str, str | None]:
    """(preset, algorithm, note) a fresh command starts from (`pre_parse`'s flags).

    `--algo`, else the one algorithm a preset with a single section (`--env`)
    trains, else ppo. `--env`, else `starting_preset`'s for `--env.id`, which
    the note names, for the command to say once its flags are checked (as
    `--help` does; a note, as --quiet leaves them); None with `--env`.
    """
    from purejaxdrl.agents.registry import DEFAULT_ALGO
    from purejaxdrl.training.presets.choice import starting_note, starting_preset
    from purejaxdrl.training.presets.files import preset_algorithms

    algo = known.algo
    if algo is None and known.env is not None:
        try:
            sections = preset_algorithms(known.env)
        except (ConfigError, OSError):  # refused, naming why, when it loads
            sections = []
        algo = sections[0] if len(sections) == 1 else None
    algo, env_id = algo or DEFAULT_ALGO, getattr(known, "env.id")
    env = starting_preset(known.env, env_id, algo)
    return env, algo, None if known.env else starting_note(env_id, algo, env)
