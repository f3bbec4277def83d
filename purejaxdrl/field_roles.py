"""Which config fields leave a run's updates as they are.

One list each, read by every place that asks: a resume (which changes it may
make without `--override`), the preset-target verdict (which runs its target
judges) and the plots (which runs are seeds of one setting). Dotted paths; a
path ending in "." is a whole section.
"""

# Fields a resume may change without `--override`: where and how the same
# updates run, not which updates. Environments and the learner are re-split
# over a new device count with the same global sizes (see README); the modules
# imported first (`env.imports`) register names, which the run's own are.
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
