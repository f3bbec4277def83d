"""Which config fields leave a run's updates as they are.

One list each, read by every place that asks: a resume (which changes it may
make without `--override`: `FREE_ON_RESUME`), the preset-target verdict
(which runs its target judges) and the plots (which runs are seeds of one
setting). Dotted paths; a path ending in "." is a whole section. The last two
also look past the fields a config reads nowhere (`ignored_fields`).
"""

# Fields that say where and how the same updates run, not which updates, free
# wherever asked. Environments and the learner are re-split over a new device
# count with the same global sizes (see README); the modules imported first
# (`env.imports`) register names, which the run's own are.
FREE_TO_CHANGE = ("devices", "run_dir", "env.imports", "checkpoint.", "eval.")

# Fields that lay the same updates out otherwise without changing them: the
# scan's unrolling, and the host runner's device split and EnvPool threads.
# A preset's target (cli/target.py) and a plot's seeds (observe/curves.py)
# look past them as past FREE_TO_CHANGE.
LAYOUT_ONLY = (
    "scan_unroll",
    "host.actor_devices",
    "host.learner_devices",
    "host.env_threads",
)

# Fields a resume may change without `--override`: FREE_TO_CHANGE, the chunks
# the updates run in (`num_logs`: where they are logged, evaluated and
# checkpointed; every update's keys come from the one before, not from its
# chunk) and the rollout's unrolling. A device run resumed with other values
# ends with the parameters of the run straight through, bit for bit on CPU
# (tests/training/test_resume_free_fields.py). A preset's target still
# counts `num_logs` (its return is the last chunk's mean: cli/target.py). The
# host runner's fields of LAYOUT_ONLY stay bound: its actor devices set the
# actor pools, whose keys sample other actions, and a host run resumed is
# not the run straight through anyway, so nothing can show a change harmless.
FREE_ON_RESUME = (*FREE_TO_CHANGE, "num_logs", "scan_unroll")


def ignored_fields(core: str) -> tuple[str, ...]:
    """The dotted fields a config with the recurrent core `core` reads nowhere.

    With a core (`network.core` other than "none") the policy and the value
    share the torso and the core whatever `network.shared_torso` says
    (networks/recurrent.py; docs/guide/recurrent.md): a run that sets it
    trains as one that does not. A preset's target (cli/target.py) and a
    plot's seeds (observe/curves.py) look past these fields too.

    Args:
      core: the config's `network.core`.

    Returns:
      The fields' dotted names; () for a feed-forward network.

    """
    return () if core == "none" else ("network.shared_torso",)
