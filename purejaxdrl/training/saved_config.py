"""A resumed run's config beside the one it was saved with: checks and notes."""

import json
import pathlib
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.schedule import budget_note, eval_note

# A run's record of its --override resumes: one JSON line each, the update it
# resumed from and what it changed (`override_record`). A checkpoint at or
# before such an update holds the config from before the override, which its
# config.yaml then differs from by right.
OVERRIDES_FILE = "overrides.jsonl"


def override_record(resumed_at: int, saved: TrainConfig, config: TrainConfig) -> str:
    """The `OVERRIDES_FILE` line of an --override resume from update `resumed_at`.

    `{"resumed_at": N, "changes": [{"field": ..., "old": ..., "new": ...}]}`:
    each field `config` changes from `saved` (the config.yaml it resumed),
    those that leave the updates alone included; `run_dir` is left out (a
    resumed run writes into its own folder). Changes an edit of config.yaml
    made before the resume are in `saved` already: only the checkpoint's
    meta record holds the values before them. Tuples are written as lists.
    """
    from purejaxdrl.training.resume import changed_fields

    changes = [
        {"field": path, "old": old, "new": new}
        for path, old, new in changed_fields(saved, config)
        if path != "run_dir"
    ]
    record = {"resumed_at": resumed_at, "changes": changes}
    return json.dumps(record, default=repr) + "\n"


def setup_notes(config: TrainConfig, resume: str | pathlib.Path | None) -> list[str]:
    """What a run says of `config` before it trains, once per condition.

    The notes are the budget's rounding and evaluation asked for without
    episodes. A new run says each; a resumed one each that its config.yaml
    (the config it was saved with, read before the resume rewrites it) did
    not bring: a changed `eval.*`, or `total_steps` with --override, can make
    a note new at a resume.
    """
    from purejaxdrl.training.resume import load_run_config

    notes = [budget_note(config), eval_note(config)]
    said: list[str | None] = []
    if resume is not None:
        try:
            saved = load_run_config(resume)
            said = [budget_note(saved), eval_note(saved)]
        except ConfigError:  # unreadable: the resume's checks say so
            pass
    return [note for note in notes if note is not None and note not in said]


def overridden_since(run_dir: pathlib.Path, step: int) -> bool:
    """Whether an --override resume from update `step` or later changed the config."""
    try:
        lines = (run_dir / OVERRIDES_FILE).read_text().splitlines()
    except OSError:
        return False
    return any(json.loads(line).get("resumed_at", -1) >= step for line in lines if line)


def check_newest_config(
    run_dir: pathlib.Path, checkpointer: Any, config: TrainConfig, allow_changes: bool
) -> None:
    """`check_saved_config` on the newest checkpoint's meta, before any state.

    Read without the state (`Checkpointer.newest_meta`): a config.yaml edited
    by hand to change a size (num_envs, the network, the algorithm) would
    otherwise meet the checkpointer's layout check first, which can only
    blame another version or config. A checkpoint that cannot be read is
    left to the restore, which says so.
    """
    try:
        meta = checkpointer.newest_meta()
        step = int(meta["updates"])
    except Exception:  # none, or unreadable: the restore decides
        return
    misfit = checkpointer.layout_difference(step)
    check_saved_config(run_dir, config, meta, step, allow_changes, misfit)


def check_saved_config(
    run_dir: pathlib.Path,
    config: TrainConfig,
    meta: dict[str, Any],
    step: int,
    allow_changes: bool = False,
    misfit: str | None = None,
) -> None:
    """Refuses a config.yaml edited by hand to change the run since `step`.

    The resume check compares the command's config with config.yaml; the
    checkpoint's own record of its config (`meta["config"]`) catches an edit
    of the file itself, which would otherwise change the updates of a
    "resumed" run silently. An --override resume from `step` or later
    (`OVERRIDES_FILE`) explains them: one that stopped before its first
    checkpoint continues with a plain resume. With --override
    (`allow_changes`) only what no resume can change is refused (another
    algorithm or environment, `cannot_continue`); the other changes are the
    caller's choice. `misfit`: the checkpoint's `layout_difference` with
    this run, said with the changes that cause it.

    Raises:
      ConfigError: run-changing differences between `config` and the
        checkpoint's.

    """
    from purejaxdrl.training.resume import (
        binding_changes,
        cannot_continue,
        config_from_dict,
    )

    if not isinstance(meta.get("config"), dict) or overridden_since(run_dir, step):
        return
    try:
        saved = config_from_dict(meta["config"], f"checkpoint {step}")
    except ConfigError:  # another version's fields: the layout check decides
        return
    where = f"--resume {run_dir}: its checkpoint at update {step:,} was saved"
    back = "put config.yaml back to continue the run, or start a new run"
    for field, old, new in (
        ("algo", saved.algo, config.algo),
        ("env.id", saved.env.id, config.env.id),
    ):
        if old != new:
            raise ConfigError(
                f"{where} with {field}: {old}, and config.yaml now says {field}: "
                f"{new}, changed by hand since; a {saved.algo} checkpoint of "
                f"{saved.env.id} cannot continue as {config.algo} on "
                f"{config.env.id}: {back} (nothing was moved or deleted)."
            )
    if why := cannot_continue(saved, config):
        raise ConfigError(
            f"{where} with another config than its config.yaml now holds, "
            f"changed by hand since: {why}; {back} with the change (nothing "
            "was moved or deleted)."
        )
    binding = binding_changes(saved, config)
    if binding and misfit and not allow_changes:
        raise ConfigError(
            f"{where} with another config than its config.yaml now holds ("
            + "; ".join(binding)
            + f"), changed by hand since, and its state does not fit this "
            f"run's ({misfit}); {back} with the changes (nothing was moved or "
            "deleted)."
        )
    if binding and not allow_changes:
        raise ConfigError(
            f"{where} with another config than its config.yaml now holds ("
            + "; ".join(binding)
            + "), changed by hand since; put config.yaml back to continue the "
            "same run, or add --override to continue with the changes (in "
            "Python, allow_changes=True)."
        )


def check_config_to_read(
    run_dir: pathlib.Path, checkpointer: Any, config: TrainConfig, purpose: str
) -> None:
    """Refuses a config.yaml edited so that eval / export would misread the run.

    Before any state is read (as `check_newest_config` does for a resume):
    the layout check alone could only blame another version or config, once
    per checkpoint. Another algorithm or environment is refused; other edits
    only where the newest checkpoint's state no longer fits (a learning rate
    or a budget edited by hand plays the same policy).

    Raises:
      ConfigError: naming the edit, once.

    """
    from purejaxdrl.training.resume import binding_changes, config_from_dict

    try:
        meta = checkpointer.newest_meta()
        step = int(meta["updates"])
        saved = config_from_dict(meta["config"], f"checkpoint {step}")
    except Exception:  # none, unreadable, another version's: the restore decides
        return
    if overridden_since(run_dir, step):
        return
    changes = [
        f"{field}: {old!r} -> {new!r}"
        for field, old, new in (
            ("algo", saved.algo, config.algo),
            ("env.id", saved.env.id, config.env.id),
        )
        if old != new
    ]
    if not changes and checkpointer.layout_difference(step):
        changes = binding_changes(saved, config)
    if changes:
        raise ConfigError(
            f"{str(run_dir)!r}: its config.yaml was changed by hand since its "
            f"checkpoint at update {step:,} was saved ({'; '.join(changes)}), and "
            f"the checkpoint cannot be read to {purpose} with it; put config.yaml "
            "back as the run saved it."
        )
