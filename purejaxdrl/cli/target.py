"""The summary's preset-target verdict: which runs a preset's target judges."""

import dataclasses
import math
import shlex
from typing import Any


def same_training(config: Any, preset: Any) -> bool:
    """Whether `config` trains and measures as `preset`'s settings do.

    A difference only in how the run is kept, seeded or laid out does not
    count: where and how it runs (`field_roles.FREE_TO_CHANGE`), the
    seeding, the layout (`field_roles.LAYOUT_ONLY`: the scan's unrolling, the host
    runner's devices and threads), the fields the config reads nowhere
    (`field_roles.ignored_fields`: `network.shared_torso` with a recurrent
    core), and a `total_steps` that rounds to the same updates. What the
    target's return is measured over does: `num_logs` for a training target
    (the return compared is the last chunk's mean, and `num_logs` sets the
    chunk: one chunk is a mean over the whole run), and
    `eval.max_steps` for an evaluation one (a cap below the target's length
    can never reach it).
    """
    return not changed_settings(config, preset)


def changed_settings(config: Any, preset: Any) -> list[str]:
    """The dotted fields where `config` trains or measures otherwise than `preset`.

    Empty where `same_training` holds; the summary names them so a run on
    another budget or setting is told why its target is not judged.
    """
    from purejaxdrl.field_roles import FREE_TO_CHANGE, LAYOUT_ONLY, ignored_fields

    expected = preset.config
    free = [f.rstrip(".") for f in FREE_TO_CHANGE] + ["seed", "rng_impl"]
    free += [*LAYOUT_ONLY, *ignored_fields(config.network.core)]
    changed = []
    if config.num_updates == expected.num_updates:
        free.append("total_steps")
    if preset.target_of == "evaluation":
        free.append("num_logs")
        if config.eval.max_steps != expected.eval.max_steps:
            changed.append("eval.max_steps")
    for name in free:
        config = _keep(config, expected, name)
    return changed + _differences(config, expected, "")


def _differences(value: Any, expected: Any, prefix: str) -> list[str]:
    """The dotted names under `prefix` where `value` is not `expected`."""
    if value == expected:
        return []
    found = []
    if dataclasses.is_dataclass(value) and type(value) is type(expected):
        for field in dataclasses.fields(value):
            found += _differences(
                getattr(value, field.name),
                getattr(expected, field.name),
                f"{prefix}{field.name}.",
            )
    # Unequal with no field to name (a NaN, say): name the whole.
    return found or [prefix.rstrip(".") or "the settings"]


def _keep(config: Any, expected: Any, field: str) -> Any:
    """`config` with its dotted `field` set to `expected`'s."""
    name, _, rest = field.partition(".")
    value = getattr(expected, name)
    if rest:
        value = _keep(getattr(config, name), value, rest)
    return dataclasses.replace(config, **{name: value})


def run_preset(config: Any) -> Any:
    """The preset with a target that `config`'s run was started from, or None.

    A resumed run names no preset (nor does its folder): this takes, among
    the presets of its environment (`env.id`) with a target for its
    algorithm, the one whose settings it changes least (none where it trains
    as one), so that its summary judges it, or says what changed, as the run
    did when it began.
    """
    from purejaxdrl.config import ConfigError
    from purejaxdrl.setup_warnings import quiet_setup_warnings
    from purejaxdrl.training.presets.load import load_preset, preset_names

    found = []
    for name in preset_names():
        try:  # a user's algorithm is warned of each preset lacking its section
            with quiet_setup_warnings():
                preset = load_preset(name, config.algo)
        except ConfigError:  # no section for this algorithm
            continue
        if preset.target_return is not None and preset.config.env.id == config.env.id:
            found.append((len(changed_settings(config, preset)), len(found), preset))
    return min(found)[2] if found else None


def target_line(config: Any, preset: Any, result: Any) -> str | None:
    """The preset's target and whether the run reached it, or None.

    None for a run without a target, or on another environment than the
    preset's (its `--env.id`: the target is another task's). A run trained or
    measured otherwise than its preset (`same_training`), or on an environment
    of the user's registered under the preset's id, is not judged, and
    told which settings changed, rather than the line vanishing unexplained.
    The return compared is the one the target is of: training's mean return,
    or the final evaluation's. A target no run here has measured yet
    (`measured: false`) says so.
    """
    from purejaxdrl.training.presets.load import CHECK_EVALUATION, UNMEASURED

    if not preset or preset.target_return is None:
        return None
    if config.env.id != preset.config.env.id:
        return None
    from purejaxdrl.env.registry import registering_module

    of = preset.target_of
    ret = result.eval_return if of == "evaluation" else result.mean_return
    if module := registering_module(config.env.id):  # the user's, not the preset's
        verdict = f"not judged ({config.env.id} registered by module {module!r})"
    elif changed := changed_settings(config, preset):
        shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
        verdict = f"not judged ({shown} changed)"
    elif math.isnan(ret) and of == "evaluation" and not config.eval.episodes:
        verdict = f"no evaluation ran; {_evaluation_check(result, CHECK_EVALUATION)}"
    elif math.isnan(ret):
        verdict = f"no {of} return to compare"
    else:
        verdict = "reached" if ret >= preset.target_return else "NOT reached"
    unmeasured = "" if preset.target_measured else f" {UNMEASURED}"
    return (
        f"  preset target      {preset.target_return} ({of} return) within "
        f"{preset.target_steps:,} steps{unmeasured}: {verdict}"
    )


def _evaluation_check(result: Any, flag: str) -> str:
    """How to check an evaluation target the run did not evaluate.

    `eval RUN_DIR --episodes N` plays what the run's final evaluation would
    have (the saved final policy's mode, on fresh environments, capped at the
    run's `eval.max_steps`), without training again; a run without a folder
    can only be trained again with `flag` (`--eval.episodes 32`).
    """
    if getattr(result, "run_dir", None) is None:
        return f"run with {flag} to check"
    episodes = flag.split()[-1]
    played = f"purejaxdrl eval {shlex.quote(str(result.run_dir))} --episodes {episodes}"
    return (
        f"check it with `{played}` (the same evaluation, of the saved policy), "
        f"or train with {flag}"
    )
