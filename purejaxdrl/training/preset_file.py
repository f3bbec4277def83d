"""What a preset file may hold at its top level: the checks `read_preset` runs.

Apart from presets.py, which reads the file's sections: a misplaced key or a
run's config.yaml passed as a preset is refused here, before any section.
"""

import difflib
import pathlib
from typing import Any

from purejaxdrl.config import ConfigError


def check_top_level(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Refuses a top-level key that is neither env, description nor an algorithm."""
    from purejaxdrl.agents.registry import names

    allowed = ["env", "description", *names()]
    if "algo" in data and {"seed", "total_steps"} <= set(data):
        _refuse_run_config(path, data)
    for key in data:
        if key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"Preset {str(path)!r}: unknown top-level key {key!r}; {hint}"
            "top-level keys are env, description and algorithm names; run "
            "fields go inside an algorithm's section (ppo: {num_envs: ...})."
        )


def _refuse_run_config(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Refuses a run's config.yaml as a preset, saying how to rerun it."""
    run = str(path.parent) if path.name == "config.yaml" else "RUN_DIR"
    raise ConfigError(
        f"Preset {str(path)!r} is a run's resolved config (algo: {data['algo']}, "
        "seed, total_steps), not a preset; rerun it as a new run in Python "
        f"(`config, _ = pjd.resume_config({run!r}, {{'seed': 1}}, "
        "allow_changes=True); pjd.train(config)`), continue that run with "
        f"`purejaxdrl train --resume {run}`, or copy its env and fields into a "
        f"preset (env: {{id: ...}}, {data['algo']}: {{...}}) for --env."
    )
